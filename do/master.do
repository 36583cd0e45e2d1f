* lapbias: the protocol's Steps 3-5 on the panels exported by lapbias panel. The pairs bootstrap is
* do/04_bootstrap.do, run on its own (after this file) so that its failure keeps these tables.
* Every path is an argument, so the do-files work from an installed package too (lapbias stata-install prints them):
*   stata-mp -b do do/master.do "data/derived" "results" "logs" "ado" "do"
* 1 = folder of panel_pre.dta / panel_post.dta, 2 = results folder, 3 = log folder, 4 = folder of the lapbias ado
* files (put first on the adopath: adopath ++), 5 = folder of these do-files, 6 = Newey-West lag of a single time
* series ([estimate] newey_lag; -1 = floor(4 (T/100)^(2/9)), as the Python engine). Defaults: a source checkout's
* layout and -1.
* The estimator is chosen per regression, as in the Python engine: a sample (or validation half) whose rows hold one
* entity is one time series (lapbias and lapvalid with entity() time(): ado/_lapbias_single.ado).
* A step that stops is written to <results>/stata_notes.csv (read by the Python driver) and the next step runs.
* Run from an interactive session, it leaves that session as it found it: the data in memory come back at the end
* (preserve), only its own log is closed, its stored estimates are dropped after export, and the lapbias programs
* in memory are reloaded from the ado folder given (program drop, not clear all).
version 15
args data results logs ado dofiles lag
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if `"`logs'"' == "" local logs "logs"
if `"`ado'"' == "" local ado "ado"
if `"`dofiles'"' == "" local dofiles "do"
if "`lag'" == "" local lag -1
confirm integer number `lag'
preserve
local more `c(more)'
set more off
capture log close lapbias_steps
adopath ++ `"`ado'"'
foreach program in lapbias lapvalid lapplacebo lapboot lapbias_p _lapbias_check _lapbias_deps _lapbias_export _lapbias_fit _lapbias_fitnotes _lapbias_note _lapbias_omitted _lapbias_onesided _lapbias_pyboot _lapbias_rows _lapbias_sample _lapbias_single _lapbias_zscore {
	capture program drop `program'
}
capture mkdir `"`results'"'
capture mkdir `"`logs'"'
log using `"`logs'/stata_steps.log"', replace text name(lapbias_steps)
* Not captured: a missing reghdfe/ftools/require/estout stops here with the ssc install line (r(199)), which the
* Python driver shows, instead of every model below being noted "not estimable, r(199)".
_lapbias_deps
capture erase `"`results'/stata_notes.csv"'
capture noisily do `"`dofiles'/01_validation.do"' `"`data'"' `"`results'"' pre validation `lag'
if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(validation) kind(error) detail("do/01_validation.do stopped with r(`=_rc')")
capture noisily do `"`dofiles'/02_detection.do"' `"`data'"' `"`results'"' pre detection `lag'
if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(detection) kind(error) detail("do/02_detection.do stopped with r(`=_rc')")
capture noisily do `"`dofiles'/03_placebo.do"' `"`data'"' `"`results'"' `"`dofiles'"' `lag'
if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(placebo) kind(error) detail("do/03_placebo.do stopped with r(`=_rc')")
log close lapbias_steps
set more `more'

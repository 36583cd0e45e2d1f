* lapbias: the protocol's Steps 3-5 on the panels exported by lapbias panel. The pairs bootstrap is
* do/04_bootstrap.do, run on its own (after this file) so that its failure keeps these tables.
* Every path is an argument, so the do-files work from an installed package too (lapbias stata-install prints them):
*   stata-mp -b do do/master.do "data/derived" "results" "logs" "ado" "do"
* 1 = folder of panel_pre.dta / panel_post.dta, 2 = results folder, 3 = log folder, 4 = folder of the lapbias ado
* files (put first on the adopath: adopath ++), 5 = folder of these do-files, 6 = Newey-West lag of a single time
* series ([estimate] newey_lag; -1 = floor(4 (T/100)^(2/9)), as the Python engine), 7 = the cluster variables of
* every regression ([estimate] cluster: "entity_num", the protocol's, or "entity_num date_num", two-way by entity and
* target date as reghdfe takes it). Defaults: a source checkout's layout, -1 and entity_num.
* The estimator is chosen per regression, as in the Python engine: a sample (or validation half) whose rows hold one
* entity is one time series (lapbias and lapvalid with entity() time(): ado/_lapbias_single.ado).
* A step that stops is written to <results>/stata_notes.csv (read by the Python driver) and the next step runs; Break
* stops the run. reghdfe is checked first on a toy regression (_lapbias_deps): an installation problem stops the run
* with reghdfe's own message instead of making every model "not estimable".
* Run from an interactive session, it leaves that session as it found it, also when it stops: the data in memory
* (preserve) and the active estimates (_estimates hold) come back, the adopath is restored and the lapbias programs it
* loaded from the ado folder are dropped (program drop, not clear all: the next lapbias call loads the copy the
* restored adopath finds), only its own log is opened and closed, set more is restored. The steps -- and the opening
* of the log, which can fail -- run in one capture block so that this happens on every exit; its return code is then
* raised again.
version 15
args data results logs ado dofiles lag cluster
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if `"`logs'"' == "" local logs "logs"
if `"`ado'"' == "" local ado "ado"
if `"`dofiles'"' == "" local dofiles "do"
if "`lag'" == "" local lag -1
confirm integer number `lag'
if `"`cluster'"' == "" local cluster entity_num
if !inlist(`"`cluster'"', "entity_num", "entity_num date_num") {
	display as error `"cluster variables "`cluster'": give "entity_num" or "entity_num date_num""'
	exit 198
}
local programs lapbias lapvalid lapplacebo lapboot lapbias_p _lapbias_absvars _lapbias_bootcheck _lapbias_check _lapbias_datarc _lapbias_deps _lapbias_direction _lapbias_export _lapbias_fit _lapbias_fitnotes _lapbias_halfabsorb _lapbias_halfstd _lapbias_halves _lapbias_informative _lapbias_lapsd _lapbias_note _lapbias_omitted _lapbias_onesided _lapbias_pyboot _lapbias_rows _lapbias_sample _lapbias_single _lapbias_versions _lapbias_wildnote _lapbias_zscore
local adopath `"$S_ADO"'
local more `c(more)'
tempname held
_estimates hold `held', restore nullok
preserve
set more off
capture log close lapbias_steps
adopath ++ `"`ado'"'
foreach program of local programs {
	capture program drop `program'
}
capture mkdir `"`results'"'
capture mkdir `"`logs'"'
capture noisily {
	log using `"`logs'/stata_steps.log"', replace text name(lapbias_steps)
	_lapbias_deps
	_lapbias_versions using `"`results'/stata_versions.csv"'
	capture erase `"`results'/stata_notes.csv"'
	capture noisily do `"`dofiles'/01_validation.do"' `"`data'"' `"`results'"' pre validation `lag' `"`cluster'"'
	if (_rc == 1) exit 1
	if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(validation) kind(error) detail("do/01_validation.do stopped with r(`=_rc')")
	capture noisily do `"`dofiles'/02_detection.do"' `"`data'"' `"`results'"' pre detection `lag' `"`cluster'"'
	if (_rc == 1) exit 1
	if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(detection) kind(error) detail("do/02_detection.do stopped with r(`=_rc')")
	capture noisily do `"`dofiles'/03_placebo.do"' `"`data'"' `"`results'"' `"`dofiles'"' `lag' `"`cluster'"'
	if (_rc == 1) exit 1
	if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(placebo) kind(error) detail("do/03_placebo.do stopped with r(`=_rc')")
}
local rc = _rc
capture log close lapbias_steps
foreach program of local programs {
	capture program drop `program'
}
global S_ADO `"`adopath'"'
set more `more'
restore
exit `rc'

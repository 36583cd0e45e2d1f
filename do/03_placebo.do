* Protocol Step 5: Steps 4 and 3 on the post-cutoff panel (the placebo passes when the one-sided p > 0.10, or when
* the post-cutoff LAP collapsed: lap and beta_3 omitted, read from the exported rows by the Python verdict).
* Arguments: 1 = folder of the panels, 2 = results folder, 3 = folder of the do-files, 4 = Newey-West lag of a single
* time series (-1 = floor(4 (T/100)^(2/9))), 5 = the cluster variables (entity_num, or entity_num date_num; default
* entity_num). A step that stops is a note, and the next one runs; Break stops them all.
version 15
args data results dofiles lag cluster
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if `"`dofiles'"' == "" local dofiles "do"
if "`lag'" == "" local lag -1
if `"`cluster'"' == "" local cluster entity_num
capture confirm file `"`data'/panel_post.dta"'
if _rc {
	display as text "no post-cutoff panel: the placebo is infeasible (protocol: run Steps 1-4 only)"
	_lapbias_note using `"`results'/stata_notes.csv"', model(placebo) kind(warning) detail("no post-cutoff observations: the placebo (Step 5) is infeasible")
	exit
}
capture noisily do `"`dofiles'/02_detection.do"' `"`data'"' `"`results'"' post placebo `lag' `"`cluster'"'
if (_rc == 1) exit 1
if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(placebo) kind(error) detail("do/02_detection.do on the post-cutoff panel stopped with r(`=_rc')")
capture noisily do `"`dofiles'/01_validation.do"' `"`data'"' `"`results'"' post placebo_validation `lag' `"`cluster'"'
if (_rc == 1) exit 1
if _rc _lapbias_note using `"`results'/stata_notes.csv"', model(placebo_validation) kind(error) detail("do/01_validation.do on the post-cutoff panel stopped with r(`=_rc')")

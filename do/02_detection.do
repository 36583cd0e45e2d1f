* Protocol Step 4: outcome on mu_hat, LAP and mu_hat x LAP; one-sided test of beta_3 > 0 (lapbias). On the post-cutoff
* panel the same regression is the placebo (Step 5, called from 03_placebo.do). The estimator is chosen on this
* sample (one entity: one time series, Newey-West). An omitted beta_3 (e.g. a post-cutoff LAP that collapsed) is no
* error: the model is exported with its omitted rows, which the Python verdict reads (the collapse rule).
* Arguments: 1 = folder of the panels, 2 = results folder, 3 = sample (pre | post), 4 = table name (detection |
* placebo), 5 = Newey-West lag of a single time series (-1 = floor(4 (T/100)^(2/9))), 6 = the cluster variables
* (entity_num, or entity_num date_num: two-way by entity and target date; default entity_num). A regression that cannot be
* estimated for its data becomes a note in <results>/stata_notes.csv; any other error (an installation problem,
* invalid syntax, Break) stops this do-file with its return code, so that no installation error reads as a verdict.
version 15
args data results sample name lag cluster
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if "`sample'" == "" local sample pre
if "`name'" == "" local name detection
if "`lag'" == "" local lag -1
if `"`cluster'"' == "" local cluster entity_num
use `"`data'/panel_`sample'"', clear
local notes `"`results'/stata_notes.csv"'
local rows = _N
capture noisily lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(`cluster') entity(entity_num) time(period_num) lag(`lag') store(__lapbias_`sample')
if _rc {
	local rc = _rc
	_lapbias_datarc `rc'
	if (!r(data)) exit `rc'
	_lapbias_note using `"`notes'"', model(`name':`sample') kind(failed) detail("not estimable in Stata, r(`rc')")
	exit
}
_lapbias_fitnotes using `"`notes'"', model(`name':`sample') rows(`rows')
_lapbias_export `name' using `"`results'"', models(__lapbias_`sample') labels(`sample')
estimates drop __lapbias_`sample'

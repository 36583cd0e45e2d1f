* Protocol Step 3: outcome on the recalled direction U-D, pooled and by LAP half (high_lap as lapbias panel set it).
* Arguments: 1 = folder of the panels, 2 = results folder, 3 = 1 for a single time series (Newey-West on
* period_num, as the Python engine), 4 = sample (pre | post), 5 = table name (validation | placebo_validation),
* 6 = Newey-West lag of a single time series (-1 = floor(4 (T/100)^(2/9)), the rows of the model that have one).
* A model that cannot be estimated (e.g. an empty or all-singleton half) becomes a note in <results>/stata_notes.csv
* and is left out of the tables; the other models are kept.
args data results single sample name lag
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if "`single'" == "" local single 0
if "`sample'" == "" local sample pre
if "`name'" == "" local name validation
if "`lag'" == "" local lag -1
use `"`data'/panel_`sample'"', clear
eststo clear
local absorb = cond(`single', "", "entity_num period_num")
local vce = cond(`single', "", "cluster entity_num")
if (`single') quietly tsset period_num
local ran
foreach m in pooled high_lap low_lap {
	local cond = cond("`m'" == "pooled", "if 1", cond("`m'" == "high_lap", "if high_lap == 1", "if high_lap == 0"))
	if (`single') {
		quietly count `cond' & !missing(outcome, ud, period_num)
		local cmd newey outcome ud `cond', lag(`=cond(`lag' >= 0, `lag', floor(4 * (r(N) / 100)^(2 / 9)))') force
	}
	else local cmd reghdfe outcome ud `cond', absorb(`absorb') vce(`vce')
	capture noisily `cmd'
	if _rc {
		_lapbias_note using `"`results'/stata_notes.csv"', model(`name':`m') kind(failed) detail("not estimable in Stata, r(`=_rc')")
		continue
	}
	_lapbias_rows, absorb(`absorb') vce(`vce')
	eststo `m'
	local ran `ran' `m'
}
if ("`ran'" != "") _lapbias_export `name' using `"`results'"', models(`ran')

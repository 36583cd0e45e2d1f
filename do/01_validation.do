* Protocol Step 3: outcome on the recalled direction U-D, pooled and by LAP half (high_lap as lapbias panel set it),
* and the verdict's validation test, with lapvalid: the estimator chosen per model (one entity in the model's rows:
* one time series, Newey-West). The four models are exported as pooled, high_lap, low_lap and high_minus_low
* (lapvalid's difference model: outcome on c.ud_dir_std#c.high_lap and ud_dir_std, each half with its own fixed
* effects, ud_dir_std the panel's recalled direction ud_dir = (P(up) - P(down)) / (P(up) + P(down)) scaled by its SD
* within the half; one-sided test of the interaction > 0).
* Arguments: 1 = folder of the panels, 2 = results folder, 3 = sample (pre | post), 4 = table name (validation |
* placebo_validation), 5 = Newey-West lag of a single time series (-1 = floor(4 (T/100)^(2/9))), 6 = the cluster
* variables (entity_num, or entity_num date_num: two-way by entity and target date; default entity_num).
* A model that cannot be estimated for its data (e.g. an empty or all-singleton half) becomes a note in
* <results>/stata_notes.csv and is left out of the tables; the other models are kept. Any other error (an
* installation problem, invalid syntax, Break) stops this do-file with its return code. A model whose ud is omitted is
* exported with the omitted row (theta zero: Step 3's null). Each estimated model's singletons, rows dropped for
* missing values and single-series warning are noted as the Python engine notes them; the difference model's rows
* are its complete rows (the Python engine drops the incomplete ones before that fit and notes none dropped).
version 15
args data results sample name lag cluster
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if "`sample'" == "" local sample pre
if "`name'" == "" local name validation
if "`lag'" == "" local lag -1
if `"`cluster'"' == "" local cluster entity_num
use `"`data'/panel_`sample'"', clear
local notes `"`results'/stata_notes.csv"'
capture noisily lapvalid outcome ud, high(high_lap) absorb(entity_num period_num) cluster(`cluster') direction(ud_dir) entity(entity_num) time(period_num) lag(`lag') store(__lapbias)
if _rc {
	local rc = _rc
	_lapbias_datarc `rc'
	if (!r(data)) exit `rc'
	foreach m in pooled high_lap low_lap high_minus_low {
		_lapbias_note using `"`notes'"', model(`name':`m') kind(failed) detail("not estimable in Stata, r(`rc')")
	}
	exit
}
foreach part in pooled high low diff {
	local status_`part' `r(status_`part')'
	local rc_`part' = r(rc_`part')
}
local stored
local labels
foreach part in pooled high low diff {
	local m = cond("`part'" == "pooled", "pooled", cond("`part'" == "diff", "high_minus_low", "`part'_lap"))
	if ("`status_`part''" != "estimated" & "`status_`part''" != "omitted") {
		_lapbias_note using `"`notes'"', model(`name':`m') kind(failed) detail("not estimable in Stata, r(`rc_`part'')")
		continue
	}
	local in_part = cond("`part'" == "pooled", "1", cond("`part'" == "diff", "!missing(high_lap, ud_dir, outcome, ud, entity_num, period_num)", cond("`part'" == "high", "high_lap == 1", "high_lap == 0")))
	quietly count if `in_part'
	local rows = r(N)
	quietly estimates restore __lapbias_`part'
	_lapbias_fitnotes using `"`notes'"', model(`name':`m') rows(`rows')
	local stored `stored' __lapbias_`part'
	local labels `labels' `m'
}
if ("`stored'" != "") _lapbias_export `name' using `"`results'"', models(`stored') labels(`labels')
foreach model of local stored {
	estimates drop `model'
}

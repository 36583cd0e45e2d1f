* Protocol Step 4: outcome on mu_hat, LAP and mu_hat x LAP; one-sided test of beta_3 > 0 (lapbias). On the post-cutoff
* panel the same regression is the placebo (Step 5, called from 03_placebo.do).
* Arguments: 1 = folder of the panels, 2 = results folder, 3 = 1 for a single time series (noabsorb, Newey-West),
* 4 = sample (pre | post), 5 = table name (detection | placebo), 6 = Newey-West lag of a single time series (-1 =
* floor(4 (T/100)^(2/9))). A regression that cannot be estimated becomes a note in <results>/stata_notes.csv.
args data results single sample name lag
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if "`single'" == "" local single 0
if "`sample'" == "" local sample pre
if "`name'" == "" local name detection
if "`lag'" == "" local lag -1
use `"`data'/panel_`sample'"', clear
eststo clear
local spec = cond(`single', "noabsorb time(period_num) lag(`lag')", "absorb(entity_num period_num) cluster(entity_num)")
capture noisily lapbias outcome mu_hat lap, `spec' store(`sample')
if _rc {
	_lapbias_note using `"`results'/stata_notes.csv"', model(`name':`sample') kind(failed) detail("not estimable in Stata, r(`=_rc')")
	exit
}
_lapbias_export `name' using `"`results'"', models(`sample')

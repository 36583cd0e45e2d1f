* Paper Figure III: pairs bootstrap of beta_3 on the post-cutoff sample against the in-sample beta_3. Run on its own
* (the Python driver runs it after master.do), so that its failure keeps the tables of Steps 3-5.
* Standardization (both engines, estimate/bootstrap.py): outcome, mu_hat and lap as z-scores within each sample over
* its complete rows (outcome mu_hat lap entity_num period_num), before singletons are dropped.
*   stata-mp -b do do/04_bootstrap.do "data/derived" "results" "logs" "ado" 10000 20251222 obs
* 1-4 as in master.do; 5 = reps, 6 = seed, 7 = resampling unit (obs | entity): [estimate] bootstrap_reps,
* bootstrap_seed and bootstrap_resample of the config. Stata's random stream is not numpy's, so p_boot agrees with
* the Python engine within Monte Carlo error only. Every number of stata_bootstrap.csv is written %21.0g (file
* write's default shows about 9 digits, then e-notation: a 10-digit seed would come back wrong); missing is ".".
* lapboot's r() are read into one line right after it, before any other command can replace r() (file read does).
version 15
clear all
set more off
args data results logs ado reps seed resample
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if `"`logs'"' == "" local logs "logs"
if `"`ado'"' == "" local ado "ado"
if "`reps'" == "" local reps 10000
if "`seed'" == "" local seed 20251222
if "`resample'" == "" local resample obs
capture log close _all
adopath ++ `"`ado'"'
capture mkdir `"`results'"'
capture mkdir `"`results'/figures"'
capture mkdir `"`logs'"'
log using `"`logs'/stata_bootstrap.log"', replace text name(lapbias_bootstrap)
_lapbias_deps
confirm integer number `reps'
confirm integer number `seed'
if !inlist("`resample'", "obs", "entity") {
	display as error "resampling unit `resample': use obs or entity ([estimate] bootstrap_resample)"
	exit 198
}
capture confirm file `"`data'/panel_post.dta"'
if _rc {
	display as text "no post-cutoff panel: no bootstrap"
	log close lapbias_bootstrap
	exit
}
tempname b3
use `"`data'/panel_pre"', clear
keep if !missing(outcome, mu_hat, lap, entity_num, period_num)
lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) standardize noheader
scalar `b3' = r(b3)
use `"`data'/panel_post"', clear
keep if !missing(outcome, mu_hat, lap, entity_num, period_num)
foreach v in outcome mu_hat lap {
	recast double `v'
	quietly summarize `v'
	quietly replace `v' = (`v' - r(mean)) / r(sd)
}
local unit = cond("`resample'" == "entity", "cluster(entity_num)", "")
lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(`=strofreal(`b3', "%21.0g")') reps(`reps') seed(`seed') ///
	`unit' saving(`"`results'/stata_bootstrap_draws.dta"') graph(`"`results'/figures/bootstrap_stata.png"')
local line = strofreal(`b3', "%21.0g")
foreach r in p_boot p95 reps seed {
	local line `line',`=strofreal(r(`r'), "%21.0g")'
}
local line `line',`resample'
foreach r in N n_unidentified {
	local line `line',`=strofreal(r(`r'), "%21.0g")'
}
tempname fh
file open `fh' using `"`results'/stata_bootstrap.csv"', write replace text
file write `fh' "b3_in_sample,p_boot,p95,B,seed,resampling,N,n_unidentified" _n `"`line'"' _n
file close `fh'
log close lapbias_bootstrap

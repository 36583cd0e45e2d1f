* Paper Figure III: pairs bootstrap of beta_3 on the post-cutoff sample against the in-sample beta_3. Run on its own
* (the Python driver runs it after master.do), so that its failure keeps the tables of Steps 3-5.
* Standardization (both engines, estimate/bootstrap.py): outcome, mu_hat and lap as z-scores within each sample over
* its complete rows (outcome mu_hat lap entity_num period_num), before singletons are dropped; a variable without
* variation is left as it is (lapbias and lapboot, standardize: ado/_lapbias_zscore.ado).
*   stata-mp -b do do/04_bootstrap.do "data/derived" "results" "logs" "ado" 10000 20251222 obs
* 1-4 as in master.do; 5 = reps, 6 = seed (0 to 2147483647), 7 = resampling unit (obs | entity): [estimate]
* bootstrap_reps, bootstrap_seed and bootstrap_resample of the config; 8 (optional) = the Python executable where
* the lapbias package is installed, for lapboot's fast path on Stata 16+ (python set exec): its draws are the Python
* engine's for the seed. Without it lapboot runs reghdfe on each draw: Stata's random stream is not numpy's, so p_boot
* agrees with the Python engine within Monte Carlo error only.
* As the Python engine: no complete row in a sample, no bootstrap (no summary written); beta_3 not identified
* in-sample or on the whole post-cutoff sample: the summary says so (identified = 0, note) and no draw is made.
* An in-sample regression that fails for its data is such a note; any other error (an installation problem, invalid
* syntax, Break) stops the bootstrap with its return code.
* stata_bootstrap.csv: b3_in_sample,p_boot,p95,B,seed,resampling,N,n_unidentified,identified,note,method, every
* number %21.0g (file write's default shows about 9 digits, then e-notation: a 10-digit seed would come back wrong);
* missing is ".". lapboot's r() are read into one line right after it, before any other command can replace r().
* Run from an interactive session, it leaves that session as master.do does, also when it stops: the data in memory
* and the active estimates come back, the adopath is restored, the lapbias programs it loaded are dropped, only its
* own log is opened and closed, set more is restored (one capture block, the opening of the log inside it; its return
* code is raised again).
version 15
args data results logs ado reps seed resample python
if `"`data'"' == "" local data "data/derived"
if `"`results'"' == "" local results "results"
if `"`logs'"' == "" local logs "logs"
if `"`ado'"' == "" local ado "ado"
if "`reps'" == "" local reps 10000
if "`seed'" == "" local seed 20251222
if "`resample'" == "" local resample obs
local programs lapbias lapvalid lapplacebo lapboot lapbias_p _lapbias_absvars _lapbias_bootcheck _lapbias_check _lapbias_datarc _lapbias_deps _lapbias_direction _lapbias_export _lapbias_fit _lapbias_fitnotes _lapbias_halfabsorb _lapbias_halfstd _lapbias_halves _lapbias_informative _lapbias_lapsd _lapbias_note _lapbias_omitted _lapbias_onesided _lapbias_pyboot _lapbias_rows _lapbias_sample _lapbias_single _lapbias_versions _lapbias_wildnote _lapbias_zscore
local adopath `"$S_ADO"'
local more `c(more)'
tempname held b3 fh
_estimates hold `held', restore nullok
preserve
set more off
capture log close lapbias_bootstrap
adopath ++ `"`ado'"'
foreach program of local programs {
	capture program drop `program'
}
capture mkdir `"`results'"'
capture mkdir `"`results'/figures"'
capture mkdir `"`logs'"'
capture noisily {
	log using `"`logs'/stata_bootstrap.log"', replace text name(lapbias_bootstrap)
	_lapbias_deps
	confirm integer number `reps'
	confirm integer number `seed'
	if !inlist("`resample'", "obs", "entity") {
		display as error "resampling unit `resample': use obs or entity ([estimate] bootstrap_resample)"
		exit 198
	}
	if (`"`python'"' != "" & c(stata_version) >= 16) capture python set exec `"`python'"'
	capture confirm file `"`data'/panel_post.dta"'
	if _rc display as text "no post-cutoff panel: no bootstrap"
	else {
		use `"`data'/panel_pre"', clear
		keep if !missing(outcome, mu_hat, lap, entity_num, period_num)
		local pre_rows = _N
		local rc 0
		if (`pre_rows' > 0) {
			capture noisily lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) standardize notable
			local rc = _rc
		}
		local note_in
		if (`rc') {
			_lapbias_datarc `rc'
			if (!r(data)) exit `rc'
			local note_in "the regression stops with r(`rc')"
		}
		else if (`pre_rows' > 0) {
			scalar `b3' = r(b3)
			if (!r(identified) & "`r(omitted)'" != "") local note_in "c.mu_hat#c.lap is omitted (collinear with the fixed effects): `r(omitted)' omitted"
			else if (!r(identified)) local note_in "c.mu_hat#c.lap: `r(unidentified)' with nothing omitted"
		}
		use `"`data'/panel_post"', clear
		keep if !missing(outcome, mu_hat, lap, entity_num, period_num)
		if (`pre_rows' == 0 | _N == 0) display as text "a sample without complete rows: no bootstrap (as the Python engine)"
		else {
			if ("`note_in'" != "") {
				display as text "in-sample beta_3 not identified (`note_in'): no draw is made"
				local line .,.,.,`reps',`seed',`resample',`=_N',`reps',0,"in-sample beta_3 not identified: `note_in'",none
			}
			else {
				local unit = cond("`resample'" == "entity", "cluster(entity_num)", "")
				lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(scalar(`b3')) reps(`reps') seed(`seed') `unit' standardize ///
					saving(`"`results'/stata_bootstrap_draws.dta"', replace) graph(`"`results'/figures/bootstrap_stata.png"', replace)
				local line = strofreal(`b3', "%21.0g")
				foreach r in p_boot p95 reps seed {
					local line `line',`=strofreal(r(`r'), "%21.0g")'
				}
				local line `line',`resample'
				foreach r in N n_unidentified identified {
					local line `line',`=strofreal(r(`r'), "%21.0g")'
				}
				local line `line',"`r(note)'",`r(method)'
			}
			file open `fh' using `"`results'/stata_bootstrap.csv"', write replace text
			file write `fh' "b3_in_sample,p_boot,p95,B,seed,resampling,N,n_unidentified,identified,note,method" _n `"`line'"' _n
			file close `fh'
		}
	}
}
local rc = _rc
capture file close `fh'
capture log close lapbias_bootstrap
foreach program of local programs {
	capture program drop `program'
}
global S_ADO `"`adopath'"'
set more `more'
restore
exit `rc'

*! version 0.2.0 23nov2026
* lapbias: the lookahead-bias detection regression (Gao, Jiang, Yan; protocol Step 4)
*   reghdfe depvar c.forecast##c.lap [weight], absorb(...) vce(...); one-sided test of beta_3 > 0.
*   One time series (noabsorb time()): newey depvar c.forecast##c.lap, lag(L) force, L = floor(4 (T/100)^(2/9))
*   unless lag() is given -- the Python engine's single-entity branch (python/lapbias/estimate/reghdfe.py _newey);
*   inside preserve only the sample is kept and tsset, so the series may be one entity of a panel (if firm == 1).
* Standardization rule, the same in both engines: z-scores (x - mean) / sd over the complete rows of the sample
*   (if/in, depvar forecast lap, the weight, absorb and cluster variables non-missing), BEFORE reghdfe drops
*   singletons -- as estimate/extended.py standardize_within is applied by estimate/bootstrap.py (Table V).
program define lapbias, rclass
	version 15
	if replay() {
		if ("`e(cmd2)'" != "lapbias" | "`e(lapbias_term)'" == "") error 301
		syntax [, Level(cilevel) noHEADer]
		if ("`header'" == "") `e(cmd)', level(`level')
		Summary `level'
		return add
		exit
	}
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in] [fw aw pw] [, Absorb(string) NOABsorb TIme(varname numeric) ///
		LAG(integer -1) VCE(string) CLuster(varlist) Level(cilevel) STANDardize STore(name) noHEADer]
	tokenize `varlist'
	local depvar `1'
	local forecast `2'
	local lap `3'
	if ("`cluster'" != "" & "`vce'" != "") {
		di as error "give either vce() or cluster(), not both"
		exit 198
	}
	if ("`cluster'" != "") local vce "cluster `cluster'"
	if ("`noabsorb'" != "") {
		if ("`absorb'" != "" | "`vce'" != "") {
			di as error "noabsorb (one time series, Newey-West standard errors) takes no absorb(), vce() or cluster()"
			exit 198
		}
		if ("`time'" == "") {
			di as error "noabsorb needs time(varname): the time variable that orders the series, e.g. time(period_num)"
			exit 198
		}
		if !inlist("`weight'", "", "aweight") {
			di as error "noabsorb (newey) allows aweights only"
			exit 101
		}
	}
	else if ("`absorb'" == "") {
		di as error "absorb() is required, e.g. absorb(entity_num period_num); one time series: noabsorb time(varname)"
		exit 198
	}
	if ("`vce'" == "") local vce "unadjusted"
	marksample touse
	markout `touse' `time'
	_lapbias_sample `touse', absorb(`absorb') vce(`vce')
	quietly count if `touse'
	if (r(N) == 0) error 2000
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	if ("`noabsorb'" != "") {
		if (`lag' < 0) local lag = floor(4 * (r(N) / 100)^(2 / 9))
		local cmd newey `depvar' c.`forecast'##c.`lap' `wgt' if `touse', lag(`lag') force level(`level')
	}
	else local cmd reghdfe `depvar' c.`forecast'##c.`lap' `wgt' if `touse', absorb(`absorb') vce(`vce') level(`level')
	local show = cond("`header'" == "noheader", "quietly", "noisily")
	local keep = "`standardize'`noabsorb'" != ""
	if (`keep') {
		tempvar id esample
		tempname es
		quietly generate long `id' = _n
		preserve
	}
	capture noisily {
		if ("`noabsorb'" != "") quietly keep if `touse'
		if ("`noabsorb'" != "") quietly tsset `time'
		if ("`standardize'" != "") {
			foreach v in `depvar' `forecast' `lap' {
				quietly recast double `v'
				quietly summarize `v' if `touse'
				quietly replace `v' = (`v' - r(mean)) / r(sd) if `touse'
			}
		}
		`show' `cmd'
		if (`keep') {
			quietly generate byte `esample' = e(sample)
			mata: `es' = st_data(., ("`id'", "`esample'"))
		}
	}
	local rc = _rc
	if (`keep') {
		restore
		if (!`rc') {
			quietly generate byte `esample' = 0
			mata: st_store(`es'[., 1], "`esample'", `es'[., 2])
			mata: mata drop `es'
			quietly estimates esample: if `esample' == 1, replace
		}
	}
	if (`rc') exit `rc'

	local term c.`forecast'#c.`lap'
	tempname b3 se3 t3 p_two p_one
	capture scalar `se3' = _se[`term']
	if (_rc) scalar `se3' = .
	if !(`se3' > 0 & `se3' < .) {
		di as error "beta_3 is not identified: `term' was omitted (collinear with the fixed effects or the other regressors)"
		exit 498
	}
	scalar `b3' = _b[`term']
	scalar `t3' = `b3' / `se3'
	scalar `p_two' = 2 * ttail(e(df_r), abs(`t3'))
	_lapbias_onesided `t3' `p_two'
	scalar `p_one' = r(p_one)
	quietly estadd scalar b3 = scalar(`b3'), replace
	quietly estadd scalar se3 = scalar(`se3'), replace
	quietly estadd scalar t3 = scalar(`t3'), replace
	quietly estadd scalar p_one = scalar(`p_one'), replace
	quietly estadd scalar p_two = scalar(`p_two'), replace
	quietly estadd local lapbias_term "`term'", replace
	_lapbias_rows, absorb(`absorb') vce(`vce') `standardize'
	if ("`standardize'" != "") quietly estadd local predict "lapbias_p", replace
	if ("`store'" != "") estimates store `store'
	Summary `level'
	return add
	return scalar N = e(N)
	return scalar N_clust = cond(missing(e(N_clust)), ., e(N_clust))
	return scalar num_singletons = cond(missing(e(num_singletons)), 0, e(num_singletons))
end

* The beta_3 summary, from e() (also on replay): estimate, s.e., t, the level() interval, one- and two-sided p.
program define Summary, rclass
	args level
	tempname q
	scalar `q' = invttail(e(df_r), (1 - `level' / 100) / 2)
	di _n as text "Lookahead-bias test: beta_3 on `e(lapbias_term)' (H1: beta_3 > 0)" ///
		cond("`e(standardized)'" == "Yes", ", variables standardized", "")
	di as text "  beta_3 = " as result %10.0g e(b3) as text "   s.e. = " as result %10.0g e(se3) ///
		as text "   t = " as result %6.2f e(t3) as text "   df = " as result e(df_r)
	di as text "  `level'% CI [" as result %10.0g e(b3) - `q' * e(se3) as text ", " ///
		as result %10.0g e(b3) + `q' * e(se3) as text "]"
	di as text "  one-sided p = " as result %6.4f e(p_one) as text "   two-sided p = " as result %6.4f e(p_two) ///
		as text "   (stars in esttab are two-sided; the lookahead test is the one-sided p)"
	if (e(p_one) < 0.05) di as text "  Reading: beta_3 > 0 at 5%, consistent with lookahead bias if the validation pattern holds and the placebo passes."
	else di as text "  Reading: beta_3 is not significantly greater than zero at 5%."
	return scalar b3 = e(b3)
	return scalar se3 = e(se3)
	return scalar t3 = e(t3)
	return scalar p_one = e(p_one)
	return scalar p_two = e(p_two)
	return scalar ci_low = e(b3) - `q' * e(se3)
	return scalar ci_high = e(b3) + `q' * e(se3)
	return scalar level = `level'
end

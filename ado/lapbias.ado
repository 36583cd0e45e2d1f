*! version 0.4.0 05dec2026
* lapbias: the lookahead-bias detection regression (Gao, Jiang, Yan; protocol Step 4)
*   reghdfe depvar c.forecast##c.lap [weight], [absorb(...)] [vce(...)] [reghdfe options]; one-sided test of beta_3 > 0.
*   reghdfe keeps its own decisions: its default vce (robust under pweights), singletons, omitted terms, pooled OLS
*   without absorb(); the options lapbias does not know go to reghdfe (_lapbias_check refuses the few that break what
*   lapbias reports), noheader among them. notable hides the regression table; r(table) is reghdfe's all the same.
*   One time series (newey time(), or entity() time() on a sample of one entity): newey (_lapbias_fit).
* An omitted beta_3 (collinear with the fixed effects: e.g. a LAP that collapsed to a constant after the training
* cutoff) is not an error, as it is none in reghdfe: e(b3) e(se3) e(t3) e(p_one) e(p_two) are missing,
* r(identified) = 0 and r(omitted) names the omitted terms, and the model is stored and exported with its omitted
* rows, as the Python engine writes them (the verdict's collapse rule reads them).
* With fewer than 42 clusters the verdict reads beta_3's wild cluster restricted bootstrap p, not the CRV1 p: the
* summary then gives no reading but the Stata route to that p (_lapbias_wildnote), and r(few_clusters) = 1.
* Standardization rule, the same in both engines: _lapbias_zscore over the complete rows of the sample (if/in,
*   depvar forecast lap, the weight, absorb and cluster variables non-missing), BEFORE reghdfe drops singletons.
program define lapbias, rclass
	version 15
	local cmdline `"lapbias `0'"'
	if replay() {
		if ("`e(cmd2)'" != "lapbias" | "`e(lapbias_term)'" == "") error 301
		syntax [, Level(cilevel) noTABle *]
		local show = cond("`table'" == "notable", "quietly", "noisily")
		if ("`e(cmd)'" == "newey") {
			_get_diopts options rest, `options'
			if (`"`rest'"' != "") di as text `"(not used on replay of newey, one time series: `rest')"'
		}
		`show' `e(cmd)', level(`level') `options'
		tempname table
		capture matrix `table' = r(table)
		local has_table = !_rc
		Summary `level'
		return add
		if (`has_table') return matrix table = `table'
		exit
	}
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in] [fw aw pw] [, Absorb(string) NEWey NOABsorb TIme(varname numeric) ///
		LAG(integer -1) ENTity(varname) VCE(string) CLuster(string) Level(cilevel) STANDardize STore(name) noTABle *]
	_lapbias_check, absorb(`absorb') `newey' `noabsorb' time(`time') lag(`lag') entity(`entity') vce(`vce') ///
		cluster(`cluster') weight(`weight') `standardize' options(`options')
	local vce `"`r(vce)'"'
	local newey = cond(r(newey), "newey", "")
	tokenize `varlist'
	local depvar `1'
	local forecast `2'
	local lap `3'
	marksample touse
	tempvar rows
	mark `rows' `if' `in'
	local absvars
	if ("`newey'" != "") markout `touse' `time'
	else {
		_lapbias_sample `touse', absorb(`absorb') vce(`vce') weighttype(`weight')
		local absvars `"`r(absvars)'"'
	}
	if ("`store'" != "") capture estimates drop `store'
	quietly count if `touse'
	if (r(N) == 0) error 2000
	local fit absorb(`absorb') `newey' lag(`lag') `standardize' zvars(`varlist') options(level(`level') `options')
	if ("`time'" != "") local fit `fit' time(`time')
	if ("`entity'" != "") local fit `fit' entity(`entity')
	if (`"`vce'"' != "") local fit `fit' vce(`vce')
	local show = cond("`table'" == "notable", "quietly", "noisily")
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	_lapbias_fit `depvar' c.`forecast'##c.`lap' `wgt', touse(`touse') rows(`rows') show(`show') `fit'
	tempname table
	capture matrix `table' = r(table)
	local has_table = !_rc

	local term c.`forecast'#c.`lap'
	tempname b3 se3 t3 p_two p_one
	capture scalar `se3' = _se[`term']
	if (_rc) scalar `se3' = .
	local identified = `se3' > 0 & `se3' < .
	local se_state = cond(`identified', "", cond(`se3' >= ., "missing", "zero"))
	foreach s in b3 se3 t3 p_two p_one {
		if (!`identified') scalar ``s'' = .
	}
	if (`identified') {
		scalar `b3' = _b[`term']
		scalar `t3' = `b3' / `se3'
		scalar `p_two' = 2 * ttail(e(df_r), abs(`t3'))
		_lapbias_onesided `t3' `p_two'
		scalar `p_one' = r(p_one)
	}
	_lapbias_omitted
	local omitted `r(omitted)'
	foreach s in b3 se3 t3 p_one p_two {
		quietly estadd scalar `s' = scalar(``s''), replace
	}
	quietly estadd scalar identified = `identified', replace
	quietly estadd local lapbias_omitted "`omitted'", replace
	quietly estadd local lapbias_se "`se_state'", replace
	quietly estadd local lapbias_term "`term'", replace
	_lapbias_rows, absvars(`absvars') cmdline(`cmdline') `standardize'
	if ("`standardize'" != "") quietly estadd local predict "lapbias_p", replace
	if ("`store'" != "") estimates store `store'
	Summary `level'
	return add
	if (`has_table') return matrix table = `table'
end

* The beta_3 summary, from e() (also on replay): estimate, s.e., t, the level() interval, one- and two-sided p and a
* reading at 5% -- none below 42 clusters, where the verdict reads the wild bootstrap p (_lapbias_wildnote); or that
* beta_3 is not identified: omitted, with the omitted terms, or a zero s.e. with nothing omitted (a perfect fit).
* r() is set from e() both times.
program define Summary, rclass
	args level
	tempname q
	scalar `q' = invttail(e(df_r), (1 - `level' / 100) / 2)
	local std = cond("`e(standardized)'" == "Yes", ", variables standardized", "")
	local few = e(N_clust) < 42
	if (e(identified) == 0) {
		di _n as text "Lookahead-bias test: beta_3 on `e(lapbias_term)' is " as result "not identified" as text "`std'"
		local unidentified = cond("`e(lapbias_omitted)'" != "", "omitted", cond("`e(lapbias_se)'" == "missing", ///
			"its s.e. is missing (e.g. one cluster: df_r = 0)", "its s.e. is zero (a perfect fit)"))
		if ("`e(lapbias_se)'" == "missing" & "`e(lapbias_omitted)'" == "") di as text "  its s.e. is missing with" ///
			" nothing omitted (e.g. one cluster: df_r = 0, reghdfe's G/(G - 1) undefined). No test of beta_3 > 0."
		else if ("`e(lapbias_omitted)'" == "") di as text "  its s.e. is zero with nothing omitted: a perfect fit (e.g." ///
			" depvar constant within the fixed effects). No test of beta_3 > 0."
		else {
			di as text "  omitted (collinear with the fixed effects or the other regressors): " as result "`e(lapbias_omitted)'"
			di as text "  No test of beta_3 > 0. After the training cutoff a LAP without variation is the expected collapse"
			di as text "  (protocol Step 5: with lap omitted too, lapplacebo counts the placebo as passed)."
		}
	}
	else {
		di _n as text "Lookahead-bias test: beta_3 on `e(lapbias_term)' (H1: beta_3 > 0)`std'"
		di as text "  beta_3 = " as result %10.0g e(b3) as text "   s.e. = " as result %10.0g e(se3) ///
			as text "   t = " as result %6.2f e(t3) as text "   df = " as result e(df_r)
		di as text "  `level'% CI [" as result %10.0g e(b3) - `q' * e(se3) as text ", " ///
			as result %10.0g e(b3) + `q' * e(se3) as text "]"
		di as text "  one-sided p = " as result %6.4f e(p_one) as text "   two-sided p = " as result %6.4f e(p_two) ///
			as text "   (stars in esttab are two-sided; the lookahead test is the one-sided p)"
		if (`few') _lapbias_wildnote
		else if (e(p_one) < 0.05) di as text "  Reading: beta_3 > 0 at 5%, consistent with lookahead bias if the" ///
			" validation pattern holds and the placebo passes and could have failed (lapplacebo's r(pass))."
		else if (e(t3) < 0 & e(p_two) / 2 < 0.05) di as text "  Reading: beta_3 is significantly negative at 5%" ///
			" (one-sided p of beta_3 < 0 = " as result %6.4f e(p_two) / 2 as text "): the verdict reads" ///
			" Mixed/invalid -- beta_3 >= 0 whenever LAP measures memorization (paper, Proposition 1), so LAP" ///
			" proxies for something else."
		else di as text "  Reading: beta_3 is not significantly greater than zero at 5%."
	}
	return scalar b3 = e(b3)
	return scalar se3 = e(se3)
	return scalar t3 = e(t3)
	return scalar p_one = e(p_one)
	return scalar p_two = e(p_two)
	return scalar ci_low = e(b3) - `q' * e(se3)
	return scalar ci_high = e(b3) + `q' * e(se3)
	return scalar level = `level'
	return scalar identified = e(identified) != 0
	return local omitted "`e(lapbias_omitted)'"
	return local unidentified "`unidentified'"
	return scalar few_clusters = `few'
	return scalar N = e(N)
	return scalar N_clust = cond(missing(e(N_clust)), ., e(N_clust))
	return scalar num_singletons = cond(missing(e(num_singletons)), 0, e(num_singletons))
end

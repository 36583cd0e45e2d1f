*! version 0.1.0 22nov2026
* lapbias: the lookahead-bias detection regression (Gao, Jiang, Yan; protocol Step 4)
*   reghdfe depvar c.forecast##c.lap, absorb(...) vce(...); one-sided test of beta_3 > 0.
program define lapbias, rclass
	version 15
	if replay() {
		if ("`e(cmd)'" != "reghdfe") error 301
		reghdfe
		exit
	}
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in], Absorb(string) ///
		[VCE(string) CLuster(varlist) Level(cilevel) STANDardize STore(name) noHEADer]
	marksample touse
	if ("`cluster'" != "") markout `touse' `cluster'
	tokenize `varlist'
	local depvar `1'
	local forecast `2'
	local lap `3'
	if ("`cluster'" != "" & "`vce'" != "") {
		di as error "give either vce() or cluster(), not both"
		exit 198
	}
	if ("`cluster'" != "") local vce "cluster `cluster'"
	if ("`vce'" == "") local vce "unadjusted"
	if ("`standardize'" != "") preserve
	capture noisily {
		if ("`standardize'" != "") {
			foreach v in `depvar' `forecast' `lap' {
				quietly summarize `v' if `touse'
				quietly replace `v' = (`v' - r(mean)) / r(sd) if `touse'
			}
		}
		local show = cond("`header'" == "noheader", "quietly", "noisily")
		`show' reghdfe `depvar' c.`forecast'##c.`lap' if `touse', absorb(`absorb') vce(`vce') level(`level')
	}
	local rc = _rc
	if ("`standardize'" != "") restore
	if (`rc') exit `rc'

	local term c.`forecast'#c.`lap'
	local b3 = _b[`term']
	local se3 = _se[`term']
	local t3 = `b3' / `se3'
	local p_two = 2 * ttail(e(df_r), abs(`t3'))
	_lapbias_onesided `t3' `p_two'
	local p_one = r(p_one)
	quietly estadd scalar b3 = `b3'
	quietly estadd scalar t3 = `t3'
	quietly estadd scalar p_one = `p_one'
	if ("`store'" != "") estimates store `store'

	di _n as text "Lookahead-bias test: beta_3 on `term' (H1: beta_3 > 0)"
	di as text "  beta_3 = " as result %10.0g `b3' as text "   s.e. = " as result %10.0g `se3' ///
		as text "   t = " as result %6.2f `t3' as text "   df = " as result e(df_r)
	di as text "  one-sided p = " as result %6.4f `p_one' as text "   two-sided p = " as result %6.4f `p_two'
	if (`p_one' < 0.05) di as text "  Reading: beta_3 > 0 at 5%, consistent with lookahead bias if the validation pattern holds and the placebo passes."
	else di as text "  Reading: beta_3 is not significantly greater than zero at 5%."

	return scalar b3 = `b3'
	return scalar se3 = `se3'
	return scalar t3 = `t3'
	return scalar p_one = `p_one'
	return scalar p_two = `p_two'
	return scalar N = e(N)
	return scalar N_clust = cond(missing(e(N_clust)), ., e(N_clust))
	return scalar num_singletons = e(num_singletons)
end

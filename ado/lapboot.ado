*! version 0.2.0 23nov2026
* lapboot: pairs bootstrap of beta_3 (paper Figure III). Observations (or whole clusters) are drawn with replacement
* reps() times, the detection regression is re-estimated on each draw, and the one-sided bootstrap p of the in-sample
* beta_3 is the share of identified draws at least as large as it (python/lapbias/estimate/bootstrap.py):
*   p_boot = #{draws: beta_3(b) >= b3} / #{identified draws};  p95 = _pctile of the identified draws (type 2).
* A draw whose interaction is omitted (collinear: _se = 0) or whose regression fails is posted as missing
* (unidentified), never as 0. Break (r(1)) stops the command. level(#) also reports the #th percentile (r(p_level)).
* Stata's random stream is not numpy's: p_boot agrees with the Python engine within Monte Carlo error only.
program define lapboot, rclass
	version 15
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in], Absorb(string) B3(real) ///
		[Reps(integer 10000) SEED(integer 20251222) CLuster(varname) SAVing(string) GRaph(string) Level(cilevel)]
	if (`reps' < 1) {
		di as error "reps(`reps'): the bootstrap needs at least one draw"
		exit 198
	}
	tokenize `varlist'
	local depvar `1'
	local forecast `2'
	local lap `3'
	local term c.`forecast'#c.`lap'
	marksample touse
	local cvce = cond("`cluster'" != "", "cluster `cluster'", "")
	_lapbias_sample `touse', absorb(`absorb') vce(`cvce')
	quietly count if `touse'
	if (r(N) == 0) error 2000
	local N = r(N)
	tempname sim draw p_boot p95 p_level valid
	tempfile sample draws
	preserve
	quietly keep if `touse'
	quietly save `"`sample'"'
	postfile `sim' long draw double beta3 using `"`draws'"'
	set seed `seed'
	forvalues r = 1/`reps' {
		quietly use `"`sample'"', clear
		if ("`cluster'" != "") bsample, cluster(`cluster')
		else bsample
		capture quietly reghdfe `depvar' c.`forecast'##c.`lap', absorb(`absorb')
		local rc = _rc
		if (`rc' == 1) {
			postclose `sim'
			exit 1
		}
		scalar `draw' = .
		if (!`rc') {
			capture scalar `draw' = cond(_se[`term'] > 0 & _se[`term'] < ., _b[`term'], .)
			if (_rc) scalar `draw' = .
		}
		post `sim' (`r') (scalar(`draw'))
	}
	postclose `sim'
	quietly use `"`draws'"', clear
	label variable draw "bootstrap draw, 1..reps"
	label variable beta3 "beta_3 of the draw (missing: not identified)"
	quietly count if !missing(beta3)
	scalar `valid' = r(N)
	quietly count if beta3 >= `b3' & !missing(beta3)
	scalar `p_boot' = cond(`valid' > 0, r(N) / `valid', .)
	scalar `p95' = .
	scalar `p_level' = .
	if (`valid' > 0) {
		_pctile beta3, p(95)
		scalar `p95' = r(r1)
		_pctile beta3, p(`level')
		scalar `p_level' = r(r1)
	}
	if (`"`saving'"' != "") save `"`saving'"', replace
	if (`"`graph'"' != "" & `valid' > 0) {
		capture noisily {
			histogram beta3, xline(`=`p95'', lpattern(dot) lcolor(blue)) xline(`b3', lcolor(red)) ///
				xtitle("beta_3, bootstrap draws") note("blue dotted: 95th percentile; red: in-sample beta_3")
			graph export `"`graph'"', replace
		}
		if (_rc == 1) exit 1
		if (_rc) di as text "(graph not exported, r(`=_rc'); the draws are saved)"
	}
	restore
	di _n as text "Pairs bootstrap of beta_3: " as result `reps' as text " draws, seed " as result `seed' ///
		as text ", " as result `reps' - `valid' as text " unidentified"
	di as text "  95th percentile = " as result %10.0g `p95' as text "   one-sided bootstrap p = " as result %6.4f `p_boot'
	return scalar p_boot = `p_boot'
	return scalar p95 = `p95'
	return scalar p_level = `p_level'
	return scalar level = `level'
	return scalar reps = `reps'
	return scalar n_unidentified = `reps' - `valid'
	return scalar N = `N'
	return scalar b3 = `b3'
	return scalar seed = `seed'
	return local resample = cond("`cluster'" != "", "cluster `cluster'", "obs")
end

*! version 0.1.0 22nov2026
* lapboot: pairs bootstrap of beta_3 (paper Figure III). Observations (or whole clusters) are drawn with replacement
* reps() times, the detection regression is re-estimated on each draw, and the one-sided bootstrap p of the in-sample
* beta_3 is the share of draws at least as large as it.
program define lapboot, rclass
	version 15
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in], Absorb(string) B3(real) ///
		[Reps(integer 10000) SEED(integer 20251222) CLuster(varname) SAVing(string) GRaph(string)]
	marksample touse
	tokenize `varlist'
	local depvar `1'
	local forecast `2'
	local lap `3'
	preserve
	quietly keep if `touse'
	local N = _N
	tempfile sample draws
	quietly save `sample'
	tempname sim
	postfile `sim' double b3 using `draws'
	set seed `seed'
	forvalues r = 1/`reps' {
		quietly use `sample', clear
		if ("`cluster'" != "") bsample, cluster(`cluster')
		else bsample
		capture quietly reghdfe `depvar' c.`forecast'##c.`lap', absorb(`absorb')
		if (_rc == 0) post `sim' (_b[c.`forecast'#c.`lap'])
		else post `sim' (.)
	}
	postclose `sim'
	quietly use `draws', clear
	quietly count if !missing(b3)
	local valid = r(N)
	quietly count if b3 >= `b3' & !missing(b3)
	local p_boot = r(N) / `valid'
	_pctile b3, p(95)
	local p95 = r(r1)
	if ("`graph'" != "") {
		histogram b3, xline(`p95', lpattern(dot) lcolor(blue)) xline(`b3', lcolor(red)) ///
			xtitle("beta_3, bootstrap draws") note("blue dotted: 95th percentile; red: in-sample beta_3")
		graph export "`graph'", replace
	}
	if ("`saving'" != "") save "`saving'", replace
	restore
	di _n as text "Pairs bootstrap of beta_3: " as result `reps' as text " draws, seed " as result `seed'
	di as text "  95th percentile = " as result %10.0g `p95' as text "   one-sided bootstrap p = " as result %6.4f `p_boot'
	return scalar p_boot = `p_boot'
	return scalar p95 = `p95'
	return scalar reps = `reps'
	return scalar N = `N'
	return scalar b3 = `b3'
end

*! version 0.1.0 22nov2026
* lapvalid: the validation regression (protocol Step 3): depvar on the recalled direction U-D, pooled and on the
* high-LAP and low-LAP halves. high = LAP above the median (pooled), or the entity's mean LAP above the median of
* entity means (split(entity), needs entity()); ties at the median go to the low half.
program define lapvalid, rclass
	version 15
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in], Absorb(string) ///
		[VCE(string) CLuster(varlist) SPLIT(string) ENTity(varname)]
	marksample touse
	if ("`cluster'" != "") markout `touse' `cluster'
	tokenize `varlist'
	local depvar `1'
	local ud `2'
	local lap `3'
	if ("`cluster'" != "" & "`vce'" != "") {
		di as error "give either vce() or cluster(), not both"
		exit 198
	}
	if ("`cluster'" != "") local vce "cluster `cluster'"
	if ("`vce'" == "") local vce "unadjusted"
	if ("`split'" == "") local split pooled
	if !inlist("`split'", "pooled", "entity") {
		di as error "split(`split'): use split(pooled) or split(entity)"
		exit 198
	}
	tempvar high mean_lap tag
	if ("`split'" == "pooled") {
		quietly summarize `lap' if `touse', detail
		local median = r(p50)
		quietly generate byte `high' = `lap' > `median' if `touse'
	}
	else {
		if ("`entity'" == "") {
			di as error "split(entity) needs entity(varname)"
			exit 198
		}
		quietly egen double `mean_lap' = mean(`lap') if `touse', by(`entity')
		quietly egen byte `tag' = tag(`entity') if `touse'
		quietly summarize `mean_lap' if `tag' == 1, detail
		local median = r(p50)
		quietly generate byte `high' = `mean_lap' > `median' if `touse'
	}
	foreach part in pooled high low {
		local cond = cond("`part'" == "pooled", "", cond("`part'" == "high", "& `high' == 1", "& `high' == 0"))
		quietly reghdfe `depvar' `ud' if `touse' `cond', absorb(`absorb') vce(`vce')
		local theta_`part' = _b[`ud']
		local t_`part' = _b[`ud'] / _se[`ud']
		local N_`part' = e(N)
	}
	di _n as text "Validation (protocol Step 3): `depvar' on `ud', split(`split') at median LAP " as result %9.0g `median'
	foreach part in pooled high low {
		di as text "  `part'" _col(12) "theta = " as result %10.0g `theta_`part'' ///
			as text "   t = " as result %6.2f `t_`part'' as text "   N = " as result `N_`part''
	}
	return scalar theta_pooled = `theta_pooled'
	return scalar t_pooled = `t_pooled'
	return scalar N_pooled = `N_pooled'
	return scalar theta_high = `theta_high'
	return scalar t_high = `t_high'
	return scalar N_high = `N_high'
	return scalar theta_low = `theta_low'
	return scalar t_low = `t_low'
	return scalar N_low = `N_low'
	return scalar median = `median'
	return local split "`split'"
end

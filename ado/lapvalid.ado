*! version 0.2.0 23nov2026
* lapvalid: the validation regression (protocol Step 3): depvar on the recalled direction U-D, pooled and on the
* high-LAP and low-LAP halves. high = LAP above the median (pooled), or the entity's mean LAP above the median of
* entity means (split(entity), needs entity()); ties at the median go to the low half. The median is held in a
* scalar (never a macro), so a tie cannot move between halves. A half that cannot be estimated (e.g. all rows in
* one half, or only singletons) is reported as not estimable and the other models are kept, as the Python engine.
program define lapvalid, rclass
	version 15
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in] [fw aw pw], Absorb(string) ///
		[VCE(string) CLuster(varlist) SPLIT(string) ENTity(varname) Level(cilevel) STore(name) noHEADer]
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
	if ("`split'" == "entity" & "`entity'" == "") {
		di as error "split(entity) needs entity(varname)"
		exit 198
	}
	marksample touse
	_lapbias_sample `touse', absorb(`absorb') vce(`vce')
	if ("`entity'" != "") markout `touse' `entity', strok
	quietly count if `touse'
	if (r(N) == 0) error 2000
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	tempvar high mean_lap tag
	tempname median
	if ("`split'" == "pooled") {
		quietly summarize `lap' if `touse', detail
		scalar `median' = r(p50)
		quietly generate byte `high' = `lap' > scalar(`median') if `touse'
	}
	else {
		quietly egen double `mean_lap' = mean(`lap') if `touse', by(`entity')
		quietly egen byte `tag' = tag(`entity') if `touse'
		quietly summarize `mean_lap' if `tag' == 1, detail
		scalar `median' = r(p50)
		quietly generate byte `high' = `mean_lap' > scalar(`median') if `touse'
	}
	local ran
	foreach part in pooled high low {
		local cond = cond("`part'" == "pooled", "", cond("`part'" == "high", "& `high' == 1", "& `high' == 0"))
		foreach s in theta se t p N N_clust {
			tempname `s'_`part'
			scalar ``s'_`part'' = .
		}
		capture quietly reghdfe `depvar' `ud' `wgt' if `touse' `cond', absorb(`absorb') vce(`vce') level(`level')
		local rc = _rc
		if (`rc' == 1) exit 1
		if (!`rc') capture scalar `se_`part'' = _se[`ud']
		if (`rc' | !(`se_`part'' > 0 & `se_`part'' < .)) {
			scalar `se_`part'' = .
			di as text "  (`part': not estimable in Stata" cond(`rc', ", r(`rc')", ": `ud' omitted") "; reported as missing)"
			continue
		}
		scalar `theta_`part'' = _b[`ud']
		scalar `t_`part'' = `theta_`part'' / `se_`part''
		scalar `p_`part'' = 2 * ttail(e(df_r), abs(`t_`part''))
		scalar `N_`part'' = e(N)
		scalar `N_clust_`part'' = e(N_clust)
		_lapbias_rows, absorb(`absorb') vce(`vce')
		if ("`store'" != "") estimates store `store'_`part'
		if ("`header'" == "") reghdfe, level(`level')
		local ran `ran' `part'
	}
	di _n as text "Validation (protocol Step 3): `depvar' on `ud', split(`split') at median LAP " as result %9.0g `median'
	foreach part in pooled high low {
		if strpos(" `ran' ", " `part' ") {
			di as text "  `part'" _col(12) "theta = " as result %10.0g `theta_`part'' as text "   s.e. = " ///
				as result %10.0g `se_`part'' as text "   t = " as result %6.2f `t_`part'' ///
				as text "   p = " as result %6.4f `p_`part'' as text "   N = " as result `N_`part''
		}
		else di as text "  `part'" _col(12) "not estimable"
	}
	foreach part in pooled high low {
		foreach s in theta se t p N N_clust {
			return scalar `s'_`part' = ``s'_`part''
		}
	}
	return scalar median = `median'
	return local split "`split'"
	return local models "`ran'"
	if ("`store'" != "") {
		local stored
		foreach part of local ran {
			local stored `stored' `store'_`part'
		}
		return local stored "`stored'"
	}
end

*! version 0.3.0 01dec2026
* lapvalid: the validation regression (protocol Step 3): depvar on the recalled direction U-D, pooled and on the
* high-LAP and low-LAP halves. The halves: high(flag) (a 0/1 variable, e.g. the panel's high_lap), or a median split
* of lap over the rows that have it (within if/in, as the panel's high_lap): LAP above the median (split(pooled)),
* or the entity's mean LAP above the median of entity means (split(entity), needs entity()); ties go to the low
* half, and the median is held in a scalar, never a macro, so a tie cannot move between halves. The pooled model
* uses every row with depvar and ud (the protocol's regression has no LAP in it).
* Each part runs through _lapbias_fit (reghdfe, or one time series by the rule of both engines) and ends in one
* status, as the Python engine: estimated; omitted (ud collinear with the fixed effects of that part: theta is zero,
* Step 3's null -- the model is stored and exported with the omitted row); failed (not estimable, r(#): the other
* parts are kept; but r(198), invalid syntax or an option reghdfe refuses, is an error of the call: lapvalid stops).
* A stored name is dropped once the options are checked, before anything is estimated, so no older model survives
* under it.
program define lapvalid, rclass
	version 15
	local cmdline `"lapvalid `0'"'
	_lapbias_deps
	syntax varlist(min=2 max=3 numeric) [if] [in] [fw aw pw] [, Absorb(string) NOABsorb TIme(varname numeric) ///
		LAG(integer -1) ENTity(varname) VCE(string) CLuster(string) SPLIT(string) HIGH(varname numeric) ///
		Level(cilevel) STore(name) noHEADer *]
	tokenize `varlist'
	local depvar `1'
	local ud `2'
	local lap `3'
	local rule_entity = cond("`time'" != "", "`entity'", "")
	_lapbias_check, absorb(`absorb') `noabsorb' time(`time') lag(`lag') entity(`rule_entity') vce(`vce') ///
		cluster(`cluster') weight(`weight') options(`options')
	local vce `"`r(vce)'"'
	if ("`store'" != "") {
		foreach part in pooled high low {
			capture estimates drop `store'_`part'
		}
	}
	if ("`high'" != "" & ("`lap'" != "" | "`split'" != "")) {
		di as error "high(`high') gives the halves: give no lap variable and no split()"
		exit 198
	}
	if ("`high'" == "" & "`lap'" == "") {
		di as error "give the LAP variable (lapvalid depvar ud lap: a median split) or high(varname) (the halves)"
		exit 198
	}
	if !inlist("`split'", "", "pooled", "entity") {
		di as error "split(`split'): use split(pooled) or split(entity)"
		exit 198
	}
	if ("`split'" == "") local split = cond("`high'" != "", "high", "pooled")
	if ("`split'" == "entity" & "`entity'" == "") {
		di as error "split(entity) needs entity(varname)"
		exit 198
	}
	marksample touse, novarlist
	tempvar rows half mean_lap tag
	tempname median
	mark `rows' `if' `in'
	markout `touse' `depvar' `ud'
	if ("`noabsorb'" != "") markout `touse' `time'
	else _lapbias_sample `touse', absorb(`absorb') vce(`vce') weighttype(`weight')
	local absvars `"`r(absvars)'"'
	quietly count if `touse'
	if (r(N) == 0) error 2000
	scalar `median' = .
	if ("`split'" == "high") {
		capture assert inlist(`high', 0, 1, .) if `rows'
		if (_rc) {
			di as error "high(`high') must be 0 (low half), 1 (high half) or missing (neither)"
			exit 198
		}
		quietly generate byte `half' = `high'
	}
	else if ("`split'" == "pooled") {
		quietly summarize `lap' if `rows', detail
		scalar `median' = r(p50)
		quietly generate byte `half' = `lap' > scalar(`median') if `rows' & !missing(`lap')
	}
	else {
		quietly egen double `mean_lap' = mean(`lap') if `rows' & !missing(`entity'), by(`entity')
		quietly egen byte `tag' = tag(`entity') if !missing(`mean_lap')
		quietly summarize `mean_lap' if `tag' == 1, detail
		scalar `median' = r(p50)
		quietly generate byte `half' = `mean_lap' > scalar(`median') if !missing(`mean_lap')
	}
	local fit absorb(`absorb') `noabsorb' lag(`lag') options(level(`level') `options')
	if ("`time'" != "") local fit `fit' time(`time')
	if ("`rule_entity'" != "") local fit `fit' entity(`entity')
	if (`"`vce'"' != "") local fit `fit' vce(`vce')
	local show = cond("`header'" == "noheader", "quietly", "noisily")
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	local models
	local stored
	foreach part in pooled high low {
		local cond = cond("`part'" == "pooled", "", cond("`part'" == "high", "& `half' == 1", "& `half' == 0"))
		foreach s in theta se t p N N_clust rc {
			tempname `s'_`part'
			scalar ``s'_`part'' = .
		}
		tempvar use_`part' rows_`part'
		quietly generate byte `use_`part'' = `touse' `cond'
		quietly generate byte `rows_`part'' = `rows' `cond'
		capture noisily _lapbias_fit `depvar' `ud' `wgt', touse(`use_`part'') rows(`rows_`part'') show(`show') `fit'
		scalar `rc_`part'' = _rc
		if (`rc_`part'' == 1 | `rc_`part'' == 198) exit `=`rc_`part'''
		if (`rc_`part'') {
			local status_`part' failed
			di as text "  (`part': not estimable, r(`=`rc_`part''')" cond(`rc_`part'' == 2000, ": no observations", "") ")"
			continue
		}
		scalar `rc_`part'' = 0
		capture scalar `se_`part'' = _se[`ud']
		if (_rc | !(`se_`part'' > 0 & `se_`part'' < .)) {
			local status_`part' omitted
			scalar `se_`part'' = .
			scalar `theta_`part'' = 0
		}
		else {
			local status_`part' estimated
			scalar `theta_`part'' = _b[`ud']
			scalar `t_`part'' = `theta_`part'' / `se_`part''
			scalar `p_`part'' = 2 * ttail(e(df_r), abs(`t_`part''))
		}
		scalar `N_`part'' = e(N)
		scalar `N_clust_`part'' = cond(missing(e(N_clust)), ., e(N_clust))
		_lapbias_rows, absvars(`absvars') cmdline(`cmdline')
		if ("`store'" != "") {
			estimates store `store'_`part'
			local stored `stored' `store'_`part'
		}
		local models `models' `part'
	}
	di _n as text "Validation (protocol Step 3): `depvar' on `ud'" cond("`split'" == "high", ", halves by `high'", ///
		", split(`split') at median LAP ") as result cond("`split'" == "high", "", strofreal(`median', "%9.0g"))
	foreach part in pooled high low {
		if ("`status_`part''" == "estimated") di as text "  `part'" _col(12) "theta = " as result %10.0g `theta_`part'' ///
			as text "   s.e. = " as result %10.0g `se_`part'' as text "   t = " as result %6.2f `t_`part'' ///
			as text "   p = " as result %6.4f `p_`part'' as text "   N = " as result `N_`part''
		else if ("`status_`part''" == "omitted") di as text "  `part'" _col(12) "`ud' omitted (constant within the" ///
			" fixed effects): theta = 0, null (protocol Step 3)   N = " as result `N_`part''
		else di as text "  `part'" _col(12) "not estimable, r(`=`rc_`part''')"
	}
	foreach part in pooled high low {
		foreach s in theta se t p N N_clust rc {
			return scalar `s'_`part' = ``s'_`part''
		}
		return local status_`part' "`status_`part''"
	}
	return scalar median = `median'
	return local split "`split'"
	return local models "`models'"
	if ("`store'" != "") return local stored "`stored'"
end

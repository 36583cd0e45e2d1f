*! version 0.5.0 28nov2026
* lapvalid: the validation regression (protocol Step 3): depvar on the recalled direction U-D, pooled and on the
* high-LAP and low-LAP halves -- high(flag), or lap above its median (split(pooled)) or the entity's mean LAP above the
* median of entity means (split(entity)), over the rows with lap, ties low, the median in a scalar -- and the test of
* the verdict's validation pattern, model diff (the Python engine's difference fit, estimate/protocol.py):
* reghdfe depvar c.ud_dir_std#c.high_lap ud_dir_std, absorb(each absvar#high_lap) [vce] (_lapbias_halfabsorb) on both
* halves' rows, ud_dir_std = direction() / its SD in the half before singletons, 0 without variation
* (_lapbias_halfstd), direction() = (P(up) - P(down)) / (P(up) + P(down)), by default the variable ud_dir: per SD of
* the direction, not of ud = LAP x direction, whose per-SD content differs between halves for a recall equally right
* at every LAP. One-sided, H1: > 0, p_diff_one = ttail(e(df_r), t); one time series: newey, high_lap a regressor.
* Each part (_lapbias_fit) is estimated, omitted (regressor collinear with the FE: theta zero, Step 3's null; the
* difference missing) or failed (a data outcome, _lapbias_datarc); any other error stops lapvalid. Without
* direction() and without a numeric ud_dir the three theta models run and the difference is skipped
* (r(status_diff) = skipped, r(diff) and r(p_diff_one) missing). The single-series rule counts the entities of each
* theta model over its if/in rows, and those of the difference model over its complete rows, as the Python engine.
program define lapvalid, rclass
	version 15
	local cmdline `"lapvalid `0'"'
	_lapbias_deps
	syntax varlist(min=2 max=3 numeric) [if] [in] [fw aw pw] [, Absorb(string) NEWey NOABsorb TIme(varname numeric) ///
		LAG(integer -1) ENTity(varname) VCE(string) CLuster(string) SPLIT(string) HIGH(varname numeric) ///
		DIRection(varname numeric) Level(cilevel) STore(name) noTABle *]
	tokenize `varlist'
	local depvar `1'
	local ud `2'
	local lap `3'
	local rule_entity = cond("`time'" != "", "`entity'", "")
	_lapbias_check, absorb(`absorb') `newey' `noabsorb' time(`time') lag(`lag') entity(`rule_entity') vce(`vce') ///
		cluster(`cluster') weight(`weight') multi(lapvalid) options(`options')
	local vce `"`r(vce)'"'
	local newey = cond(r(newey), "newey", "")
	if ("`high'" != "" & ("`lap'" != "" | "`split'" != "")) {
		di as error "high(`high') gives the halves: give no lap variable and no split()"
		exit 198
	}
	if ("`high'" == "" & "`lap'" == "") {
		di as error "give the LAP variable (lapvalid depvar ud lap: a median split) or high(varname) (the halves)"
		exit 198
	}
	_lapbias_direction, direction(`direction')
	local direction `r(direction)'
	local skip_diff = "`direction'" == ""
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
	tempvar rows half
	tempname median p_diff_one
	mark `rows' `if' `in'
	if ("`split'" == "high") {
		capture assert inlist(`high', 0, 1, .) if `rows'
		if (_rc) {
			di as error "high(`high') must be 0 (low half), 1 (high half) or missing (neither)"
			exit 198
		}
	}
	if (strlen("`store'") > 25) {
		di as error "store(`store'): at most 25 characters, so that `store'_pooled fits Stata's 32"
		exit 198
	}
	markout `touse' `depvar' `ud'
	if ("`newey'" != "") markout `touse' `time'
	else _lapbias_sample `touse', absorb(`absorb') vce(`vce') weighttype(`weight')
	local absvars `"`r(absvars)'"'
	foreach part in pooled high low diff {
		if ("`store'" != "") capture estimates drop `store'_`part'
	}
	quietly count if `touse'
	if (r(N) == 0) error 2000
	_lapbias_halves `half', split(`split') rows(`rows') high(`high') lap(`lap') entity(`entity')
	scalar `median' = r(median)
	_lapbias_halfabsorb, absorb(`absorb')
	local encode = cond("`r(strings)'" != "", "encode(`r(strings)')", "")
	local diff_fit absorb(`r(absorb)') seriesvars(high_lap) prep(_lapbias_halfstd `direction' `half', `encode')
	local diff_absvars `"`r(absvars)'"'
	local fit `newey' lag(`lag') options(level(`level') `options')
	if ("`time'" != "") local fit `fit' time(`time')
	if ("`rule_entity'" != "") local fit `fit' entity(`entity')
	if (`"`vce'"' != "") local fit `fit' vce(`vce')
	local show = cond("`table'" == "notable", "quietly", "noisily")
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	local models
	local stored
	scalar `p_diff_one' = .
	foreach part in pooled high low diff {
		foreach s in theta se t p N N_clust rc {
			tempname `s'_`part'
			scalar ``s'_`part'' = .
		}
		if ("`part'" == "diff" & `skip_diff') {
			local status_diff skipped
			continue
		}
		local cond = cond("`part'" == "pooled", "", cond("`part'" == "high", "& `half' == 1", ///
			cond("`part'" == "low", "& `half' == 0", "& !missing(`half', `direction')")))
		tempvar use_`part' rows_`part'
		quietly generate byte `use_`part'' = `touse' `cond'
		* the single-series rule counts entities over the rows given; for the difference model, its complete rows
		* (the Python engine's validation sample: protocol.py validation_difference)
		if ("`part'" == "diff") quietly generate byte `rows_`part'' = `use_`part''
		else quietly generate byte `rows_`part'' = `rows' `cond'
		local model `depvar' `ud'
		local term `ud'
		local part_fit absorb(`absorb')
		local part_absvars `"`absvars'"'
		local part_rows
		if ("`part'" == "diff") {
			local model `depvar' c.ud_dir_std#c.high_lap ud_dir_std
			local term c.ud_dir_std#c.high_lap
			local part_fit `diff_fit'
			local part_absvars `"`diff_absvars'"'
			local part_rows halfof(`absvars')
		}
		capture noisily _lapbias_fit `model' `wgt', touse(`use_`part'') rows(`rows_`part'') show(`show') `fit' `part_fit'
		scalar `rc_`part'' = _rc
		if (`rc_`part'') {
			_lapbias_datarc `=`rc_`part'''
			if (!r(data)) exit `=`rc_`part'''
			local status_`part' failed
			di as text "  (`part': not estimable, r(`=`rc_`part''')" cond(`rc_`part'' == 2000, ": no observations", "") ")"
			continue
		}
		capture scalar `se_`part'' = _se[`term']
		if (_rc | !(`se_`part'' > 0 & `se_`part'' < .)) {
			local status_`part' omitted
			scalar `se_`part'' = .
			scalar `theta_`part'' = cond("`part'" == "diff", ., 0)
		}
		else {
			local status_`part' estimated
			scalar `theta_`part'' = _b[`term']
			scalar `t_`part'' = `theta_`part'' / `se_`part''
			scalar `p_`part'' = 2 * ttail(e(df_r), abs(`t_`part''))
			if ("`part'" == "diff") scalar `p_diff_one' = ttail(e(df_r), `t_diff')
		}
		scalar `N_`part'' = e(N)
		scalar `N_clust_`part'' = cond(missing(e(N_clust)), ., e(N_clust))
		_lapbias_rows, absvars(`part_absvars') `part_rows' cmdline(`cmdline')
		if ("`store'" != "") {
			estimates store `store'_`part'
			local stored `stored' `store'_`part'
		}
		local models `models' `part'
	}
	di _n as text "Validation (protocol Step 3): `depvar' on `ud'" cond("`split'" == "high", ", halves by `high'", ///
		", split(`split') at median LAP ") as result cond("`split'" == "high", "", strofreal(`median', "%9.0g"))
	foreach part in pooled high low diff {
		local name = cond("`part'" == "diff", "high - low", "`part'")
		if ("`status_`part''" == "estimated") di as text "  `name'" _col(13) "theta = " as result %10.0g ///
			`theta_`part'' as text "   s.e. = " as result %10.0g `se_`part'' as text "   t = " as result %6.2f ///
			`t_`part'' as text cond("`part'" == "diff", "   one-sided p (H1: > 0) = ", "   p = ") as result %6.4f ///
			cond("`part'" == "diff", `p_diff_one', `p_`part'') as text "   N = " as result `N_`part''
		else if ("`status_`part''" == "omitted") di as text "  `name'" _col(13) cond("`part'" == "diff", ///
			"c.ud_dir_std#c.high_lap omitted: the difference is not identified", "`ud' omitted (constant within the" ///
			+ " fixed effects): theta = 0, null (protocol Step 3)") "   N = " as result `N_`part''
		else if ("`status_`part''" == "skipped") di as text "  `name'" _col(13) "skipped: no direction variable;" ///
			" the verdict's difference test needs direction(varname) (or a numeric ud_dir)"
		else di as text "  `name'" _col(13) "not estimable, r(`=`rc_`part''')"
	}
	foreach part in pooled high low diff {
		foreach s in theta se t p N N_clust rc {
			return scalar `s'_`part' = ``s'_`part''
		}
		return local status_`part' "`status_`part''"
	}
	return scalar diff = `theta_diff'
	return scalar p_diff_one = `p_diff_one'
	return scalar median = `median'
	return local direction "`direction'"
	return local split "`split'"
	return local models "`models'"
	if ("`store'" != "") return local stored "`stored'"
end

*! version 0.4.0 05dec2026
* lapboot: pairs bootstrap of beta_3 (paper Figure III). Observations (or whole clusters) are drawn with replacement
* reps() times, the detection regression is re-estimated on each draw, and the one-sided bootstrap p of the in-sample
* beta_3 is the share of identified draws at least as large as it (python/lapbias/estimate/bootstrap.py):
*   p_boot = #{draws: beta_3(b) >= b3} / #{identified draws};  p95 = _pctile of the identified draws (type 2).
* First, as the Python engine, _lapbias_bootcheck: at least 10 rows, beta_3 identified on the whole sample; if not,
* every draw is unidentified by construction, r(identified) = 0 and r(note) says why, and no draw is made.
* The draws: Stata 16+ with the lapbias Python package importable (and absorb() two variables, cluster() none or
* one of them): the lapbias compiled kernel (_lapbias_pyboot), the Python engine's own draws for the seed, in
* seconds (its own check's reason, when it finds beta_3 not identified, becomes r(note)). Otherwise (or nopython):
* reghdfe on each draw, the draw as frequency weights (bsample, weight()) on the data in memory -- [fw] reghdfe
* drops a level whose draws weigh 1, as it drops a singleton of the materialised draw -- with progress dots and the
* expected time first; Stata's random stream then agrees with the Python engine within Monte Carlo error only. A
* draw whose interaction is omitted (collinear: _se = 0) or whose regression fails is posted as missing
* (unidentified), never as 0 (dots as bootstrap's: x a failed regression, e beta_3 omitted). Break stops it.
* The active estimates are held and come back at the end, as boottest leaves the model untouched: no draw's fit
* replaces them; b3() is evaluated first, before any command can replace r(). absorb()'s saved fixed effects
* (fe=firm, savefe) are refused: each draw would make them again (_lapbias_check, multi).
program define lapboot, rclass
	version 15
	syntax anything [if] [in], B3(string) *
	tempname b3v held
	scalar `b3v' = (`b3')
	if missing(`b3v') {
		di as error "b3(`b3') is missing: the in-sample beta_3, a number or an expression, e.g. b3(r(b3)) after lapbias"
		exit 198
	}
	_estimates hold `held', restore nullok
	Boot `anything' `if' `in', b3(scalar(`b3v')) `options'
	return add
end

* The bootstrap itself (header above), on the in-sample beta_3 b3() evaluated by lapboot.
program define Boot, rclass
	version 15
	syntax varlist(min=3 max=3 numeric) [if] [in], Absorb(string) B3(string) [Reps(integer 10000) ///
		SEED(real 20251222) CLuster(varname) STANDardize SAVing(string) GRaph(string) noDOTS noPYthon]
	tempname b3v draw p_boot p95 valid sim
	scalar `b3v' = (`b3')
	_lapbias_deps
	_lapbias_check, absorb(`absorb') multi(lapboot)
	if (`reps' < 1) {
		di as error "reps(`reps'): the bootstrap needs at least one draw"
		exit 198
	}
	if (`seed' != floor(`seed') | !inrange(`seed', 0, 2147483647)) {
		di as error "seed(`seed'): set seed takes an integer from 0 to 2147483647 (2^31 - 1)"
		exit 198
	}
	local seed = strtrim(strofreal(`seed', "%10.0f"))
	foreach file in saving graph {
		gettoken `file' rest : `file', parse(",")
		local 0 `rest'
		syntax [, replace]
		local `file'_replace = cond("`replace'" != "", ", replace", "")
		if ("`file'" == "saving" & `"`saving'"' != "") mata: st_local("suffix", pathsuffix(st_local("saving")))
		if ("`file'" == "saving" & `"`saving'"' != "" & "`suffix'" == "") local saving `"`saving'.dta"'
		if (`"``file''"' != "" & "`replace'" == "") confirm new file `"``file''"'
	}
	tokenize `varlist'
	local depvar `1'
	local forecast `2'
	local lap `3'
	local term c.`forecast'#c.`lap'
	marksample touse
	local unit = cond("`cluster'" != "", "cluster `cluster'", "")
	_lapbias_sample `touse', absorb(`absorb') vce(`unit')
	local absvars `"`r(absvars)'"'
	quietly count if `touse'
	if (r(N) == 0) error 2000
	local N = r(N)
	tempfile pool draws
	tempvar w
	preserve
	quietly keep if `touse'
	if ("`standardize'" != "") _lapbias_zscore `varlist', touse(`touse')
	_lapbias_bootcheck `varlist', absorb(`absorb')
	local note `"`r(note)'"'
	local seconds = r(seconds)
	local method = cond("`note'" == "", "reghdfe", "none")
	if ("`method'" == "reghdfe" & "`python'" == "" & c(stata_version) >= 16) {
		gettoken first second : absvars
		gettoken second extra : second
		capture confirm variable `first' `second', exact
		local plain = !_rc & `"`extra'"' == "" & "`second'" != ""
		if ("`cluster'" != "" & "`cluster'" == "`second'") {
			local second `first'
			local first `cluster'
		}
		if (`plain' & inlist("`cluster'", "", "`first'")) {
			keep `depvar' `forecast' `lap' `first' `second'
			quietly save `"`pool'"'
			_lapbias_pyboot using `"`pool'"', saving(`"`draws'"') variables(`depvar' `forecast' `lap' `first' `second') ///
				resample(`=cond("`cluster'" != "", "entity", "obs")') reps(`reps') seed(`seed')
			if (r(ok)) local method python
			else di as text "(the lapbias kernel is not available: `r(why)'; reghdfe runs on each draw)"
		}
	}
	if ("`method'" == "reghdfe") {
		di as text "(reghdfe on each of `reps' draws: about " %6.2f `seconds' " s each, about " ///
			%6.1f `seconds' * `reps' / 60 " minutes, measured on the whole sample)"
		quietly generate double `w' = .
		postfile `sim' long draw double beta3 using `"`draws'"'
		set seed `seed'
		if ("`dots'" == "") _dots 0, title(Pairs bootstrap of beta_3) reps(`reps')
		forvalues r = 1/`reps' {
			if ("`cluster'" != "") bsample, cluster(`cluster') weight(`w')
			else bsample, weight(`w')
			capture quietly reghdfe `depvar' c.`forecast'##c.`lap' [fweight = `w'] if `w' > 0, absorb(`absorb') ///
				dof(none) nosample noheader notable nofootnote
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
			if ("`dots'" == "") _dots `r' `=cond(`rc', 1, 2 * missing(scalar(`draw')))'
		}
		postclose `sim'
	}
	if ("`method'" == "none") {
		quietly drop _all
		quietly set obs `reps'
		quietly generate long draw = _n
		quietly generate double beta3 = .
	}
	else {
		quietly use `"`draws'"', clear
		capture confirm variable note
		if (!_rc) {
			local note = note[1]
			drop note
		}
	}
	label variable draw "bootstrap draw, 1..reps"
	label variable beta3 "beta_3 of the draw (missing: not identified)"
	quietly count if !missing(beta3)
	scalar `valid' = r(N)
	quietly count if beta3 >= scalar(`b3v') & !missing(beta3)
	scalar `p_boot' = cond(`valid' > 0, r(N) / `valid', .)
	scalar `p95' = .
	if (`valid' > 0) {
		_pctile beta3, p(95)
		scalar `p95' = r(r1)
	}
	if (`"`saving'"' != "") save `"`saving'"'`saving_replace'
	if (`"`graph'"' != "" & `valid' > 0) {
		capture noisily {
			histogram beta3, xline(`=`p95'', lpattern(dot) lcolor(blue)) xline(`=`b3v'', lcolor(red)) ///
				xtitle("beta_3, bootstrap draws") note("blue dotted: 95th percentile; red: in-sample beta_3")
			graph export `"`graph'"'`graph_replace'
		}
		if (_rc == 1) exit 1
		if (_rc) di as text "(graph not exported, r(`=_rc'); the draws are saved)"
	}
	restore
	di _n as text "Pairs bootstrap of beta_3: " as result `reps' as text " draws, seed " as result `seed' ///
		as text ", " as result `reps' - `valid' as text " unidentified (" cond("`method'" == "python", ///
		"the lapbias kernel", cond("`method'" == "reghdfe", "reghdfe on each draw", "no draw made")) ")"
	if ("`note'" != "") di as text "  " as result "not identified" as text ": `note'"
	else di as text "  95th percentile = " as result %10.0g `p95' as text "   one-sided bootstrap p = " ///
		as result %6.4f `p_boot'
	return scalar p_boot = `p_boot'
	return scalar p95 = `p95'
	return scalar reps = `reps'
	return scalar n_unidentified = `reps' - `valid'
	return scalar N = `N'
	return scalar b3 = `b3v'
	return scalar seed = `seed'
	return scalar identified = "`note'" == ""
	return local note "`note'"
	return local method "`method'"
	return local resample = cond("`cluster'" != "", "cluster `cluster'", "obs")
end

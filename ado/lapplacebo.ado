*! version 0.4.0 05dec2026
* lapplacebo: the detection regression before and after the training cutoff (protocol Step 5), each with lapbias.
* Pre-cutoff = date <= cutoff; post-cutoff = date > release (default the cutoff): rows in between (release_gap) or
* without a date are in neither sample. date() is %td, or %tc/%tC converted to its day. The placebo passes when the
* post-cutoff one-sided p for beta_3 > 0 exceeds alpha() (default 0.10) and, when the pre-cutoff beta_3 is
* significant (one-sided p < detalpha(), default 0.05), it could have failed (r(informative): its (1 - alpha) upper bound per SD of post-cutoff LAP below the
* pre-cutoff beta_3 per SD, the verdict's rule; r(pass_crv1) is the p rule alone), or when the post-cutoff LAP collapsed:
* lap and beta_3 both omitted (the collapse Step 5 expects, the verdict's rule). A period that cannot be estimated,
* or whose beta_3 alone is omitted, gives a missing post-cutoff p, which is NOT a pass (r(pass) = .; a missing value
* exceeds every number in Stata). Below 42 post-cutoff clusters the verdict reads the wild bootstrap p (lapbias prints
* the Stata route): r(pass) is missing too, r(pass_crv1) holds the CRV1 rule. A period not estimable for its data is
* reported; any other error (invalid syntax, an option reghdfe refuses, Break, an installation error:
* _lapbias_datarc) stops lapplacebo. r(stored) names the models stored by this call; store() names (at most 25
* characters) are dropped once every option is checked. Their e(cmdline) is this lapplacebo command.
program define lapplacebo, rclass
	version 15
	local cmdline `"lapplacebo `0'"'
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in] [fw aw pw], DATE(varname numeric) CUToff(string) [Absorb(string) ///
		NEWey NOABsorb TIme(varname numeric) LAG(integer -1) ENTity(varname) VCE(string) CLuster(string) ///
		RELease(string) Level(cilevel) ALpha(real 0.10) DETalpha(real 0.05) STore(name) *]
	_lapbias_check, absorb(`absorb') `newey' `noabsorb' time(`time') lag(`lag') entity(`entity') vce(`vce') ///
		cluster(`cluster') weight(`weight') multi(lapplacebo) options(`options')
	local newey = cond(r(newey), "newey", "")
	local model_vce `"`r(vce)'"'
	if ("`newey'" == "") ms_parse_vce, vce(`model_vce') weighttype(`weight')
	tokenize `varlist'
	local forecast `2'
	local lap `3'
	tempname cut rel pass pass_crv1 collapsed constant alpha_value ucb ucb_sd own informative
	tempvar day
	scalar `cut' = date("`cutoff'", "YMD")
	scalar `rel' = cond("`release'" == "", `cut', date("`release'", "YMD"))
	if missing(`cut') | missing(`rel') | `rel' < `cut' {
		di as error "cutoff(`cutoff') release(`release'): dates in YYYY-MM-DD form, the release not before the cutoff"
		exit 198
	}
	local format : format `date'
	local format : subinstr local format "-" "", all
	if (substr("`format'", 1, 3) == "%td" | substr("`format'", 1, 2) == "%d") quietly generate double `day' = `date'
	else if (substr("`format'", 1, 3) == "%tc") quietly generate double `day' = dofc(`date')
	else if (substr("`format'", 1, 3) == "%tC") quietly generate double `day' = dofC(`date')
	else {
		di as error "date(`date') has format `format': give a daily date (%td) or a clock time (%tc)"
		exit 198
	}
	if !(`alpha' > 0 & `alpha' < 1) | !(`detalpha' > 0 & `detalpha' < 1) {
		di as error "alpha(`alpha') detalpha(`detalpha'): each a level strictly between 0 and 1 (e.g. alpha(0.10) detalpha(0.05))"
		exit 198
	}
	if (strlen("`store'") > 25) {
		di as error "store(`store'): at most 25 characters, as lapvalid's (the models are `store'_pre, `store'_post)"
		exit 198
	}
	foreach period in pre post {
		if ("`store'" != "") capture estimates drop `store'_`period'
	}
	marksample touse, novarlist
	markout `touse' `day'
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	local opts absorb(`absorb') `newey' lag(`lag') level(`level') notable `options'
	if ("`time'" != "") local opts `opts' time(`time')
	if ("`entity'" != "") local opts `opts' entity(`entity')
	if (`"`vce'"' != "") local opts `opts' vce(`vce')
	if (`"`cluster'"' != "") local opts `opts' cluster(`cluster')
	local stored
	foreach period in pre post {
		foreach r in b3 se3 t3 p_one p_two N N_clust mean_lap sd_lap df_r {
			tempname `r'_`period'
			scalar ``r'_`period'' = .
		}
		local cond = cond("`period'" == "pre", "`day' <= scalar(`cut')", "`day' > scalar(`rel')")
		local st = cond("`store'" != "", "store(`store'_`period')", "")
		local omitted_`period'
		quietly count if `touse' & `cond'
		if (r(N) == 0) {
			local status_`period' empty
			di as text "  (no `period'-cutoff observations: not estimable)"
			continue
		}
		capture noisily lapbias `varlist' `wgt' if `touse' & `cond', `opts' `st'
		local rc = _rc
		if (`rc') {
			_lapbias_datarc `rc'
			if (!r(data)) exit `rc'
			local status_`period' failed
			di as text "  (`period'-cutoff detection regression not estimable, r(`rc'))"
			continue
		}
		local status_`period' = cond(r(identified), "estimated", "omitted")
		local omitted_`period' `r(omitted)'
		foreach r in b3 se3 t3 p_one p_two N N_clust {
			scalar ``r'_`period'' = r(`r')
		}
		scalar `df_r_`period'' = e(df_r)
		quietly summarize `lap' if e(sample), meanonly
		scalar `mean_lap_`period'' = r(mean)
		_lapbias_lapsd `varlist' `wgt' if `touse' & `cond', absorb(`absorb') vce(`model_vce') `newey' time(`time')
		scalar `sd_lap_`period'' = r(sd)
		quietly estadd local cmdline `"`cmdline'"', replace
		if ("`store'" != "") {
			quietly estimates store `store'_`period'
			local stored `stored' `store'_`period'
		}
	}
	quietly count if `touse' & `day' > scalar(`cut') & `day' <= scalar(`rel')
	local N_gap = r(N)
	local term c.`forecast'#c.`lap'
	* a constant post-cutoff LAP is a collapse (Step 5) only at most half the pre-cutoff mean, as the verdict reads it
	* (report/verdict.py COLLAPSED_SHARE); constant at the pre-cutoff level or above it is not, and cannot pass
	scalar `constant' = "`status_post'" == "omitted" & `: list lap in omitted_post' & `: list term in omitted_post'
	scalar `collapsed' = `constant' & (`mean_lap_post' <= 0.5 * `mean_lap_pre')
	local few = `N_clust_post' < 42
	scalar `alpha_value' = `alpha'
	_lapbias_informative `b3_pre' `sd_lap_pre' `b3_post' `se3_post' `df_r_post' `sd_lap_post' `alpha_value' `few'
	foreach s in ucb ucb_sd own informative {
		scalar ``s'' = r(`s')
	}
	* asked of a significant pre-cutoff beta_3 only (one-sided p < detalpha(): detection_alpha; 42 clusters or more)
	local relevant = !(`p_one_pre' >= `detalpha' & `p_one_pre' < . & `N_clust_pre' >= 42)
	scalar `pass_crv1' = cond(`collapsed', 1, cond(`constant' | missing(`p_one_post'), ., `p_one_post' > `alpha'))
	if (`collapsed') scalar `pass' = 1
	else if (`constant') scalar `pass' = .
	else if missing(`p_one_post') scalar `pass' = .
	else if (`few') scalar `pass' = .
	else scalar `pass' = (`p_one_post' > `alpha') & (`informative' != 0 | !`relevant')
	di _n as text "Placebo (protocol Step 5), cutoff `cutoff' (pre-cutoff: `date' <= cutoff)" ///
		cond("`release'" != "", "; post-cutoff: after the release `release' (`N_gap' rows between: neither sample)", "")
	foreach period in pre post {
		if ("`status_`period''" == "estimated") di as text "  `period'-cutoff  beta_3 = " as result %10.0g ///
			`b3_`period'' as text "   s.e. = " as result %10.0g `se3_`period'' as text "   one-sided p = " ///
			as result %6.4f `p_one_`period'' as text "   N = " as result `N_`period''
		else if ("`status_`period''" == "omitted") di as text "  `period'-cutoff  beta_3 not identified (omitted:" ///
			" `omitted_`period'')   N = " as result `N_`period''
		else di as text "  `period'-cutoff  not estimable"
	}
	local says = cond(`relevant', " (the verdict: Mixed/invalid, placebo uninformative; r(pass) = 0)", " (asked of a significant pre-cutoff beta_3 only)")
	local bound = cond(missing(`informative'), "; whether it could have failed is not stated here", ": its upper bound per SD of LAP is below the pre-cutoff beta_3 per SD")
	if (`collapsed') di as text "  placebo " as result "passes" as text " (post-cutoff LAP collapsed: lap and beta_3" ///
		" omitted, as Step 5 expects after the cutoff)"
	else if (`constant') di as text "  placebo " as result "cannot be judged" as text " (post-cutoff LAP constant at " ///
		as result %9.0g `mean_lap_post' as text ", not at most half the pre-cutoff mean " as result %9.0g ///
		`mean_lap_pre' as text ": saturated or flat, not collapsed, so nothing after the cutoff is tested)"
	else if missing(`p_one_post') di as text "  placebo " as result "not estimable" ///
		as text " (no post-cutoff one-sided p: the placebo cannot be assessed, which is not a pass)"
	else if (`few') di as text "  placebo " as result "not assessed here" as text ": with " `N_clust_post' " clusters" ///
		" the verdict reads the post-cutoff wild bootstrap p (its Stata route is printed above); the CRV1 p alone" ///
		" would say it " cond(`pass_crv1', "passes", "fails") " (r(pass_crv1))"
	else if (!`pass_crv1') di as text "  placebo " as result "fails" as text " (post-cutoff one-sided p <= " `alpha' ")"
	else if (`informative' == 0) di as text "  placebo " as result cond(`relevant', "passes but could not have failed", ///
		"passes") as text ": its upper bound per SD of post-cutoff LAP, " as result %9.0g `ucb_sd' as text ", is not" ///
		" below the pre-cutoff beta_3 per SD of LAP, " as result %9.0g `own' as text "`says'"
	else di as text "  placebo " as result cond(missing(`informative'), "passes", "passes and could have failed") as ///
		text " (one-sided p > " `alpha' "`bound')"
	foreach period in pre post {
		foreach r in b3 se3 t3 p_one p_two N N_clust {
			return scalar `r'_`period' = ``r'_`period''
		}
		return local status_`period' "`status_`period''"
	}
	return scalar pass = `pass'
	return scalar pass_crv1 = `pass_crv1'
	return scalar informative = `informative'
	return scalar ucb_post = `ucb'
	return scalar ucb_per_sd_post = `ucb_sd'
	return scalar b3_per_sd_pre = `own'
	return scalar sd_lap_pre = `sd_lap_pre'
	return scalar sd_lap_post = `sd_lap_post'
	return scalar collapsed = `collapsed'
	return scalar mean_lap_pre = `mean_lap_pre'
	return scalar mean_lap_post = `mean_lap_post'
	return scalar estimable_post = !missing(`p_one_post') | `collapsed'
	return scalar N_gap = `N_gap'
	return scalar cutoff = `cut'
	return scalar release = `rel'
	return scalar alpha = `alpha'
	return scalar detalpha = `detalpha'
	if ("`store'" != "") return local stored "`stored'"
end

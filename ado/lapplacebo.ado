*! version 0.2.0 23nov2026
* lapplacebo: the detection regression before and after the training cutoff (protocol Step 5). Pre-cutoff =
* date <= cutoff; rows with a missing date belong to neither sample. The placebo passes when the post-cutoff
* one-sided p for beta_3 > 0 exceeds alpha() (default 0.10). A period whose regression cannot be estimated is
* reported as not estimable: its p is missing, and a missing post-cutoff p is NOT a pass (r(pass) = .), exactly as
* the Python verdict treats it (it is never compared with alpha: in Stata a missing value exceeds every number).
program define lapplacebo, rclass
	version 15
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in] [fw aw pw], Absorb(string) DATE(varname numeric) ///
		CUToff(string) [VCE(string) CLuster(varlist) Level(cilevel) ALpha(real 0.10) STore(name)]
	if ("`cluster'" != "" & "`vce'" != "") {
		di as error "give either vce() or cluster(), not both"
		exit 198
	}
	tempname cut pass
	scalar `cut' = date("`cutoff'", "YMD")
	if missing(`cut') {
		di as error "cutoff(`cutoff') is not a date in YYYY-MM-DD form"
		exit 198
	}
	marksample touse
	markout `touse' `date'
	local cvce = cond("`cluster'" != "", "cluster `cluster'", "`vce'")
	_lapbias_sample `touse', absorb(`absorb') vce(`cvce')
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	local options absorb(`absorb') level(`level') noheader
	if ("`vce'" != "") local options `options' vce(`vce')
	if ("`cluster'" != "") local options `options' cluster(`cluster')
	foreach period in pre post {
		foreach r in b3 se3 t3 p_one p_two N N_clust {
			tempname `r'_`period'
			scalar ``r'_`period'' = .
		}
		local cond = cond("`period'" == "pre", "`date' <= scalar(`cut')", "`date' > scalar(`cut')")
		local st = cond("`store'" != "", "store(`store'_`period')", "")
		quietly count if `touse' & `cond'
		if (r(N) == 0) {
			di as text "  (no `period'-cutoff observations (cutoff `cutoff'): not estimable)"
			continue
		}
		capture noisily lapbias `varlist' `wgt' if `touse' & `cond', `options' `st'
		if (_rc == 1) exit 1
		if (_rc) {
			di as text "  (`period'-cutoff detection regression not estimable, r(`=_rc'))"
			continue
		}
		foreach r in b3 se3 t3 p_one p_two N N_clust {
			scalar ``r'_`period'' = r(`r')
		}
	}
	if missing(`p_one_post') scalar `pass' = .
	else scalar `pass' = `p_one_post' > `alpha'
	di _n as text "Placebo (protocol Step 5), cutoff `cutoff' (pre-cutoff: `date' <= cutoff)"
	foreach period in pre post {
		if missing(`p_one_`period'') di as text "  `period'-cutoff  not estimable"
		else di as text "  `period'-cutoff  beta_3 = " as result %10.0g `b3_`period'' ///
			as text "   s.e. = " as result %10.0g `se3_`period'' ///
			as text "   one-sided p = " as result %6.4f `p_one_`period'' as text "   N = " as result `N_`period''
	}
	if missing(`pass') di as text "  placebo " as result "not estimable" ///
		as text " (no post-cutoff one-sided p: the placebo cannot be assessed, which is not a pass)"
	else di as text "  placebo " as result cond(`pass', "passes", "fails") ///
		as text " (passes when the post-cutoff one-sided p > " `alpha' ")"
	foreach period in pre post {
		foreach r in b3 se3 t3 p_one p_two N N_clust {
			return scalar `r'_`period' = ``r'_`period''
		}
	}
	return scalar pass = `pass'
	return scalar estimable_post = !missing(`p_one_post')
	return scalar cutoff = `cut'
	return scalar alpha = `alpha'
	if ("`store'" != "") return local stored "`store'_pre `store'_post"
end

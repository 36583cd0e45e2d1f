*! version 0.1.0 22nov2026
* lapplacebo: the detection regression before and after the training cutoff (protocol Step 5). Pre-cutoff =
* date <= cutoff. The placebo passes when the post-cutoff one-sided p for beta_3 > 0 exceeds 0.10.
program define lapplacebo, rclass
	version 15
	_lapbias_deps
	syntax varlist(min=3 max=3 numeric) [if] [in], Absorb(string) DATE(varname numeric) CUToff(string) ///
		[VCE(string) CLuster(varlist)]
	marksample touse
	local cut = date("`cutoff'", "YMD")
	if missing(`cut') {
		di as error "cutoff(`cutoff') is not a date in YYYY-MM-DD form"
		exit 198
	}
	local options absorb(`absorb')
	if ("`vce'" != "") local options `options' vce(`vce')
	if ("`cluster'" != "") local options `options' cluster(`cluster')
	foreach period in pre post {
		local cond = cond("`period'" == "pre", "`date' <= `cut'", "`date' > `cut'")
		quietly count if `touse' & `cond'
		if (r(N) == 0) {
			di as error "no `period'-cutoff observations (cutoff `cutoff')"
			exit 2000
		}
		quietly lapbias `varlist' if `touse' & `cond', `options' noheader
		foreach r in b3 se3 t3 p_one p_two N {
			local `r'_`period' = r(`r')
		}
	}
	local pass = `p_one_post' > 0.10
	di _n as text "Placebo (protocol Step 5), cutoff `cutoff'"
	di as text "  pre-cutoff  beta_3 = " as result %10.0g `b3_pre' as text "   one-sided p = " as result %6.4f `p_one_pre'
	di as text "  post-cutoff beta_3 = " as result %10.0g `b3_post' as text "   one-sided p = " as result %6.4f `p_one_post'
	di as text "  placebo " as result cond(`pass', "passes", "fails") as text " (passes when the post-cutoff one-sided p > 0.10)"
	return scalar b3_pre = `b3_pre'
	return scalar se3_pre = `se3_pre'
	return scalar t3_pre = `t3_pre'
	return scalar p_one_pre = `p_one_pre'
	return scalar p_two_pre = `p_two_pre'
	return scalar N_pre = `N_pre'
	return scalar b3_post = `b3_post'
	return scalar se3_post = `se3_post'
	return scalar t3_post = `t3_post'
	return scalar p_one_post = `p_one_post'
	return scalar p_two_post = `p_two_post'
	return scalar N_post = `N_post'
	return scalar pass = `pass'
end

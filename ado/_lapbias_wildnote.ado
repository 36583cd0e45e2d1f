*! version 0.4.1 06dec2026
* Printed by lapbias instead of a reading when the active estimates have fewer than 42 clusters (the verdict's
* default [estimate] wild_below_clusters): there the CRV1 t test over-rejects, and the lapbias verdict (REPORT.md)
* reads beta_3's wild cluster restricted bootstrap p (null imposed, Webb weights, 9,999 draws, seed 20251222: the
* Python engine's estimate/wild.py), not the CRV1 p. The Stata route to that p, for the active estimates: boottest
* (Roodman, MacKinnon, Nielsen and Webb 2019) refuses reghdfe with two absorbed fixed effects (r(198)), so the second
* absvar enters as dummies and the first, the cluster variable, stays absorbed: the same beta_3, the same CRV1 t up to
* its small-sample factor (which the bootstrap p does not depend on), the same null-imposed draws. It runs on
* e(sample), with the estimates' weights: the rows reghdfe kept (if/in, a lapplacebo period, singletons already
* dropped, so the one-FE fit drops nothing more), typed while these estimates are active. Its p agrees with the
* verdict's within Monte Carlo error (Stata's random stream, not numpy's). Only what runs for the estimates at hand
* is printed as a command: pooled OLS (e(absvars) = _cons) or one absvar, with one cluster variable: boottest on the
* active estimates (boottest 4.5.3 takes reghdfe with one absvar); two absvars, the cluster one of them: the two
* lines above. Any other model (two-way clustering, a cluster variable not absorbed, three or more absvars) gets
* the route in words, never a placeholder typed as a variable.
program define _lapbias_wildnote
	version 15
	local term `e(lapbias_term)'
	local model = subinstr("`term'", "#", "##", 1)
	local cluster `e(clustvar)'
	local absvars `e(absvars)'
	local wgt = cond("`e(wtype)'" != "", "[`e(wtype)'`e(wexp)']", "")
	local boottest boottest `term', weighttype(webb) ptype(upper) reps(9999) seed(20251222) nograph
	local single = "`absvars'" == "_cons" | wordcount("`absvars'") <= 1
	local absorbed = wordcount("`absvars'") == 2 & `: list cluster in absvars'
	di as text "  With " as result e(N_clust) as text " clusters (fewer than 42) the CRV1 t test over-rejects: the lapbias"
	di as text "  verdict reads the wild cluster restricted bootstrap p of beta_3, not this one (so no reading here)."
	di as text "  That p in Stata ({stata ssc install boottest:ssc install boottest}), see {help lapbias##wild:help lapbias}:"
	if (wordcount("`cluster'") > 1) {
		di as text "  the verdict's wild bootstrap is one-way, by the entity clusters (the first of cluster(`cluster')):"
		di as text "  re-estimate with that one cluster variable, then type boottest as the help file shows."
	}
	else if (`single') {
		di as text "  (typed while these estimates are active)"
		di as text `"  {cmd:`boottest'}"'
	}
	else if (`absorbed') {
		local other : list absvars - cluster
		di as text "  (typed while these estimates are active: e(sample) is their sample)"
		di as text `"  {cmd:reghdfe `e(depvar)' `model' i.`other' if e(sample) `wgt', absorb(`cluster') cluster(`cluster')}"'
		di as text `"  {cmd:`boottest'}"'
	}
	else {
		di as text "  boottest takes reghdfe with one absorbed fixed effect: re-estimate on e(sample) with the cluster"
		di as text "  variable `cluster' absorbed and every other absvar of `absvars' entered as i. dummies, then"
		di as text `"  {cmd:`boottest'}"'
	}
end

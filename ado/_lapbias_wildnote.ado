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
* verdict's within Monte Carlo error (Stata's random stream, not numpy's). Other fixed effects or clusters: the same
* lines, with entity and period to be replaced.
program define _lapbias_wildnote
	version 15
	local term `e(lapbias_term)'
	local model = subinstr("`term'", "#", "##", 1)
	local cluster `e(clustvar)'
	local absvars `e(absvars)'
	local wgt = cond("`e(wtype)'" != "", "[`e(wtype)'`e(wexp)']", "")
	local fe entity
	local other period
	if (wordcount("`absvars'") == 2 & wordcount("`cluster'") == 1 & `: list cluster in absvars') {
		local fe `cluster'
		local other : list absvars - cluster
	}
	di as text "  With " as result e(N_clust) as text " clusters (fewer than 42) the CRV1 t test over-rejects: the lapbias"
	di as text "  verdict reads the wild cluster restricted bootstrap p of beta_3, not this one (so no reading here)."
	di as text "  That p in Stata ({stata ssc install boottest:ssc install boottest}), see {help lapbias##wild:help lapbias}:"
	di as text "  (typed while these estimates are active: e(sample) is their sample)"
	di as text `"  {cmd:reghdfe `e(depvar)' `model' i.`other' if e(sample) `wgt', absorb(`fe') cluster(`cluster')}"'
	di as text `"  {cmd:boottest `term', weighttype(webb) ptype(upper) reps(9999) seed(20251222) nograph}"'
end

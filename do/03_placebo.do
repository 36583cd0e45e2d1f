* Protocol Step 5: Steps 3 and 4 on the post-cutoff sample (placebo passes when the one-sided p > 0.10).
capture confirm file "data/derived/panel_post.dta"
if _rc {
	display as text "no post-cutoff panel: the placebo is infeasible (protocol: run Steps 1-4 only)"
	exit
}
use "data/derived/panel_post", clear
eststo clear
lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) store(post) noheader
esttab post using "results/stata_placebo.csv", replace csv plain nonumbers ///
	cells("b(fmt(%20.0g)) se(fmt(%20.0g)) t(fmt(%20.0g)) p(fmt(%20.0g)) ci_l(fmt(%20.0g)) ci_u(fmt(%20.0g))") collabels(b se t p ci_l ci_u) mlabels(post) ///
	stats(N N_clust df_r r2 r2_within num_singletons p_one, fmt(%20.0g))
esttab post using "results/stata_placebo.tex", replace booktabs b(4) t(2) ///
	star(* 0.10 ** 0.05 *** 0.01) stats(N N_clust r2 p_one) mlabels("Post-cutoff")
eststo clear
quietly reghdfe outcome ud, absorb(entity_num period_num) cluster(entity_num)
eststo pooled
quietly reghdfe outcome ud if high_lap == 1, absorb(entity_num period_num) cluster(entity_num)
eststo high_lap
quietly reghdfe outcome ud if high_lap == 0, absorb(entity_num period_num) cluster(entity_num)
eststo low_lap
esttab pooled high_lap low_lap using "results/stata_placebo_validation.csv", replace csv plain nonumbers ///
	cells("b(fmt(%20.0g)) se(fmt(%20.0g)) t(fmt(%20.0g)) p(fmt(%20.0g)) ci_l(fmt(%20.0g)) ci_u(fmt(%20.0g))") collabels(b se t p ci_l ci_u) mlabels(pooled high_lap low_lap) ///
	stats(N N_clust df_r r2 r2_within num_singletons, fmt(%20.0g))

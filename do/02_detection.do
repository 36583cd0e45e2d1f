* Protocol Step 4: outcome on mu_hat, LAP and mu_hat x LAP, pre-cutoff; one-sided test of beta_3 > 0.
use "data/derived/panel_pre", clear
eststo clear
lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) store(pre)
esttab pre using "results/stata_detection.csv", replace csv plain nonumbers ///
	cells("b(fmt(%20.0g)) se(fmt(%20.0g)) t(fmt(%20.0g)) p(fmt(%20.0g)) ci_l(fmt(%20.0g)) ci_u(fmt(%20.0g))") collabels(b se t p ci_l ci_u) mlabels(pre) ///
	stats(N N_clust df_r r2 r2_within num_singletons p_one, fmt(%20.0g))
esttab pre using "results/stata_detection.tex", replace booktabs b(4) t(2) ///
	star(* 0.10 ** 0.05 *** 0.01) stats(N N_clust r2 p_one) mlabels("Pre-cutoff")

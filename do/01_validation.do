* Protocol Step 3: outcome on the recalled direction U-D, pooled and by LAP half, pre-cutoff.
use "data/derived/panel_pre", clear
eststo clear
quietly reghdfe outcome ud, absorb(entity_num period_num) cluster(entity_num)
eststo pooled
quietly reghdfe outcome ud if high_lap == 1, absorb(entity_num period_num) cluster(entity_num)
eststo high_lap
quietly reghdfe outcome ud if high_lap == 0, absorb(entity_num period_num) cluster(entity_num)
eststo low_lap
esttab pooled high_lap low_lap using "results/stata_validation.csv", replace csv plain nonumbers ///
	cells("b(fmt(%20.0g)) se(fmt(%20.0g)) t(fmt(%20.0g)) p(fmt(%20.0g)) ci_l(fmt(%20.0g)) ci_u(fmt(%20.0g))") collabels(b se t p ci_l ci_u) mlabels(pooled high_lap low_lap) ///
	stats(N N_clust df_r r2 r2_within num_singletons, fmt(%20.0g))
esttab pooled high_lap low_lap using "results/stata_validation.tex", replace booktabs b(4) t(2) ///
	star(* 0.10 ** 0.05 *** 0.01) stats(N N_clust r2) mlabels("Pooled" "High LAP" "Low LAP")

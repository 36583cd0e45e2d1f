* Paper Figure III: pairs bootstrap of beta_3 on the post-cutoff sample against the in-sample beta_3, with the
* variables standardized within each sample (paper Table V), as the Python engine does.
capture confirm file "data/derived/panel_post.dta"
if _rc {
	display as text "no post-cutoff panel: no bootstrap"
	exit
}
use "data/derived/panel_pre", clear
lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) standardize noheader
local b3 = r(b3)
use "data/derived/panel_post", clear
keep if !missing(outcome, mu_hat, lap)
foreach v in outcome mu_hat lap {
	quietly summarize `v'
	quietly replace `v' = (`v' - r(mean)) / r(sd)
}
lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(`b3') reps(10000) seed(20251222) ///
	saving("results/stata_bootstrap_draws.dta") graph("results/figures/bootstrap_stata.png")

* Paper Figure III: pairs bootstrap of beta_3 on the post-cutoff sample against the in-sample beta_3.
capture confirm file "data/derived/panel_post.dta"
if _rc {
	display as text "no post-cutoff panel: no bootstrap"
	exit
}
use "data/derived/panel_pre", clear
lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) noheader
local b3 = r(b3)
use "data/derived/panel_post", clear
lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(`b3') reps(10000) seed(20251222) ///
	saving("results/stata_bootstrap_draws.dta") graph("results/figures/bootstrap_stata.png")

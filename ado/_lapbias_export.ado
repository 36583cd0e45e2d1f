*! version 0.4.0 05dec2026
* Writes the esttab exports the Python driver reads back (python/lapbias/estimate/stata.py parse_esttab_csv), of the
* stored models() under the column labels() (pooled high_lap low_lap high_minus_low pre post):
*   <folder>/stata_<name>.csv: csv plain, cells b se t p ci_l ci_u per model, the stats rows
*                              N N_clust df_r r2 r2_within num_singletons p_one, in %21.0g (as many digits as fit in
*                              21 columns, far inside the 1e-6 parity with the Python engine); the intervals at 95%
*                              whatever set level says (the results contract); an omitted term is a row with b = 0
*                              and no standard error, as estout keeps it;
*   <folder>/stata_<name>.tex: booktabs, rows by variable label (an interaction as label $\times$ label: a raw # in
*                              a coefficient name stops LaTeX), b and t, two-sided stars, one-sided p row, the
*                              Entity FE / Period FE rows of the protocol's absorb(entity_num period_num) (No for a
*                              single time series) and a note that the stars are two-sided, the lookahead test
*                              one-sided.
program define _lapbias_export
	version 15
	syntax namelist(name=name max=1) using/, MODels(namelist) LABels(namelist)
	local title_pooled "Pooled"
	local title_high_lap "High LAP"
	local title_low_lap "Low LAP"
	local title_high_minus_low "High - Low"
	local title_pre "Pre-cutoff"
	local title_post "Post-cutoff"
	local titles
	foreach label of local labels {
		local titles `"`titles' "`title_`label''""'
	}
	quietly esttab `models' using `"`using'/stata_`name'.csv"', replace csv plain nonumbers level(95) ///
		cells("b(fmt(%21.0g)) se(fmt(%21.0g)) t(fmt(%21.0g)) p(fmt(%21.0g)) ci_l(fmt(%21.0g)) ci_u(fmt(%21.0g))") ///
		collabels(b se t p ci_l ci_u) mlabels(`labels') ///
		stats(N N_clust df_r r2 r2_within num_singletons p_one, fmt(%21.0g))
	quietly esttab `models' using `"`using'/stata_`name'.tex"', replace booktabs label b(4) t(2) ///
		star(* 0.10 ** 0.05 *** 0.01) mlabels(`titles') ///
		stats(N N_clust r2 p_one fe_entity_num fe_period_num, fmt(%9.0fc %9.0fc %9.4f %9.4f) ///
		labels("Observations" "Clusters" "R-squared" "One-sided p (H1: beta 3 greater than 0)" "Entity FE" "Period FE")) ///
		addnotes("Stars are two-sided t tests of each coefficient." ///
		"The lookahead test is one-sided: One-sided p is the p-value of H1: beta 3 greater than 0 (protocol Step 4).")
end

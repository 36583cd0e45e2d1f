*! version 0.2.0 23nov2026
* Writes the esttab exports the Python driver reads back (python/lapbias/estimate/stata.py parse_esttab_csv):
*   <folder>/stata_<name>.csv: csv plain, cells b se t p ci_l ci_u per model, the stats rows
*                              N N_clust df_r r2 r2_within num_singletons p_one, in %21.0g (as many digits
*                              as fit in 21 columns, far inside the 1e-6 parity with the Python engine);
*   <folder>/stata_<name>.tex: booktabs, rows by variable label (an interaction as label $\times$ label: a raw # in
*                              a coefficient name stops LaTeX), b and t, two-sided stars, one-sided p row, Entity FE /
*                              Period FE rows and a note that the stars are two-sided, the lookahead test one-sided.
* models() are the stored models that ran (eststo), so a model that could not be estimated is simply absent.
program define _lapbias_export
	version 15
	syntax namelist(name=name max=1) using/, MODels(namelist)
	local labels
	foreach m of local models {
		local label = cond("`m'" == "pooled", "Pooled", cond("`m'" == "high_lap", "High LAP", ///
			cond("`m'" == "low_lap", "Low LAP", cond("`m'" == "pre", "Pre-cutoff", cond("`m'" == "post", "Post-cutoff", "`m'")))))
		local labels `"`labels' "`label'""'
	}
	quietly esttab `models' using `"`using'/stata_`name'.csv"', replace csv plain nonumbers ///
		cells("b(fmt(%21.0g)) se(fmt(%21.0g)) t(fmt(%21.0g)) p(fmt(%21.0g)) ci_l(fmt(%21.0g)) ci_u(fmt(%21.0g))") ///
		collabels(b se t p ci_l ci_u) mlabels(`models') ///
		stats(N N_clust df_r r2 r2_within num_singletons p_one, fmt(%21.0g))
	quietly esttab `models' using `"`using'/stata_`name'.tex"', replace booktabs label b(4) t(2) ///
		star(* 0.10 ** 0.05 *** 0.01) mlabels(`labels') ///
		stats(N N_clust r2 p_one entity_fe period_fe, fmt(%9.0fc %9.0fc %9.4f %9.4f) ///
		labels("Observations" "Clusters" "R-squared" "One-sided p (H1: beta 3 greater than 0)" "Entity FE" "Period FE")) ///
		addnotes("Stars are two-sided t tests of each coefficient." ///
		"The lookahead test is one-sided: One-sided p is the p-value of H1: beta 3 greater than 0 (protocol Step 4).")
end

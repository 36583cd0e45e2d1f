*! version 0.2.0 23nov2026
* Adds the esttab rows Stata users expect to the active estimates (estadd local): entity_fe and period_fe ("Yes"
* when absorb() has a first / second absvar: absorb(entity period) order), clustvar (the cluster variables, as
* reghdfe's own e(clustvar); left unset without clustering, since margins and boottest read it as a variable list)
* and standardized ("Yes"/"No"), plus e(cmd2) = "lapbias".
*   esttab ..., stats(entity_fe period_fe clustvar standardized, labels("Entity FE" "Period FE" "Cluster" "Standardized"))
program define _lapbias_rows
	version 15
	syntax [, Absorb(string) VCE(string) STANDardized]
	gettoken absorb : absorb, parse(",")
	local n_fe : word count `absorb'
	gettoken vcetype clustvar : vce, parse(" ,")
	if !inlist("`vcetype'", "cl", "clu", "clus", "clust", "cluste", "cluster") local clustvar
	gettoken clustvar : clustvar, parse(",")
	local clustvar = trim("`clustvar'")
	local entity_fe = cond(`n_fe' >= 1, "Yes", "No")
	local period_fe = cond(`n_fe' >= 2, "Yes", "No")
	local standardized = cond("`standardized'" != "", "Yes", "No")
	quietly estadd local cmd2 "lapbias", replace
	quietly estadd local entity_fe "`entity_fe'", replace
	quietly estadd local period_fe "`period_fe'", replace
	if ("`clustvar'" != "") quietly estadd local clustvar "`clustvar'", replace
	quietly estadd local standardized "`standardized'", replace
end

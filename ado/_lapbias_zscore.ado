*! version 0.3.0 01dec2026
* The standardization rule of both lapbias engines (paper Table V; the Python engine's estimate/bootstrap.py):
* z = (x - mean) / sd over the rows marked by touse, unweighted, in double precision, before reghdfe drops
* singletons. A variable without variation in those rows is left as it is (its z-score would be 0/0, missing on
* every row), as estimate/bootstrap.py _standardize leaves it: the regression then reports beta_3 as not identified.
program define _lapbias_zscore
	version 15
	syntax varlist(numeric), TOUSE(varname)
	tempname mean sd
	foreach v of local varlist {
		quietly summarize `v' if `touse'
		scalar `mean' = r(mean)
		scalar `sd' = r(sd)
		if (`sd' > 0 & `sd' < .) {
			quietly recast double `v'
			quietly replace `v' = (`v' - scalar(`mean')) / scalar(`sd') if `touse'
		}
		else di as text "(`v' has no variation in the sample: left unstandardized)"
	}
end

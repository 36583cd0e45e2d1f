*! version 0.3.0 01dec2026
* The standardization rule of both lapbias engines (paper Table V; the Python engine's estimate/bootstrap.py):
* z = (x - mean) / sd over the rows marked by touse, unweighted, in double precision, before reghdfe drops
* singletons. A variable without variation in those rows is left as it is (its z-score would be 0/0, missing on
* every row), as estimate/bootstrap.py _standardize leaves it: the regression then reports beta_3 as not identified.
* Any units: mean and sd are taken of x / 2^k, 2^k the power of two at or below max |x| (the Python engine's
* scaling.mean_sd): dividing by a power of two changes no digit of a z-score, while the sum of squares of values of
* 1e-300 underflows (sd 0: "no variation") and of 1e300 overflows.
program define _lapbias_zscore
	version 15
	syntax varlist(numeric), TOUSE(varname)
	tempname scale mean sd
	tempvar x
	foreach v of local varlist {
		quietly summarize `v' if `touse'
		scalar `scale' = max(abs(r(min)), abs(r(max)))
		scalar `scale' = cond(`scale' > 0 & `scale' < ., 2^floor(ln(`scale') / ln(2)), 1)
		capture drop `x'
		quietly generate double `x' = `v' / scalar(`scale') if `touse'
		quietly summarize `x'
		scalar `mean' = r(mean)
		scalar `sd' = r(sd)
		if (`sd' > 0 & `sd' < .) {
			quietly recast double `v'
			quietly replace `v' = (`x' - scalar(`mean')) / scalar(`sd') if `touse'
		}
		else di as text "(`v' has no variation in the sample: left unstandardized)"
	}
end

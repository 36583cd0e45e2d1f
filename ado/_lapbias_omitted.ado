*! version 0.3.0 01dec2026
* The terms of the active estimates that were omitted (collinear with the fixed effects or the other regressors), as
* r(omitted), named as esttab names their rows: reghdfe and newey mark them o.lap, co.mu_hat#co.lap (_ms_omit_info
* finds them) and estout strips the o (lap, c.mu_hat#c.lap).
program define _lapbias_omitted, rclass
	version 15
	tempname omit
	_ms_omit_info e(b)
	matrix `omit' = r(omit)
	local names : colnames e(b)
	local omitted
	forvalues j = 1/`=colsof(`omit')' {
		if (`omit'[1, `j']) {
			local name : word `j' of `names'
			local name : subinstr local name "o." ".", all
			if (substr("`name'", 1, 1) == ".") local name = substr("`name'", 2, .)
			local omitted `omitted' `name'
		}
	}
	return local omitted "`omitted'"
end

*! version 0.1.0 22nov2026
* Checks that reghdfe, its dependencies require (reghdfe 6.13 stops with r(9) without it) and ftools, and estout
* (esttab, estadd) are installed; says how to install what is missing.
program define _lapbias_deps
	version 15
	foreach pkg in require reghdfe ftools estout {
		local cmd = cond("`pkg'" == "estout", "esttab", "`pkg'")
		capture which `cmd'
		if _rc {
			di as error "lapbias needs {bf:`pkg'}: {stata ssc install `pkg':ssc install `pkg'}"
			exit 199
		}
	}
end

*! version 0.4.1 06dec2026
* Checks that reghdfe, its dependencies require (reghdfe 6.13 stops with r(9) without it) and ftools, and estout
* (esttab, estadd) are installed, and says how to install what is missing. Then, once per Stata session (global
* LAPBIAS_REGHDFE_OK), that reghdfe runs: a regression on a toy dataset of 8 rows (two crossed fixed effects, no
* singleton), inside preserve and with the active estimates held (they come back whatever happens, so a first call
* refused for a typo leaves the user's model active, not the toy's). An installation problem -- reghdfe 6.13 (GitHub)
* next to an older ftools (SSC), which require stops with r(2226), or a missing or stale ftools Mata library -- fails
* every regression alike; unchecked, each would be a model "not estimable" and REPORT.md would read Underpowered. Here
* it stops with reghdfe's own message, after a line saying it is the installation, not the data.
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
	if ("$LAPBIAS_REGHDFE_OK" == "1") exit
	tempname held
	_estimates hold `held', restore nullok
	preserve
	quietly drop _all
	quietly set obs 8
	quietly generate byte a = 1 + mod(_n - 1, 2)
	quietly generate byte b = 1 + floor((_n - 1) / 2)
	quietly generate double x = mod(7 * _n, 5)
	quietly generate double y = x + mod(_n, 3)
	capture quietly reghdfe y x, absorb(a b)
	local rc = _rc
	if (`rc' == 1) exit 1
	if (`rc') {
		di as error "reghdfe does not run a toy regression (r(`rc')): the installation, not your data. Install reghdfe,"
		di as error "ftools and require from one source (all {stata ssc install reghdfe, replace:SSC}, or all GitHub), run"
		di as error "{stata ftools, compile:ftools, compile} and restart Stata. reghdfe's own message:"
		reghdfe y x, absorb(a b)
		exit `rc'
	}
	restore
	global LAPBIAS_REGHDFE_OK 1
end

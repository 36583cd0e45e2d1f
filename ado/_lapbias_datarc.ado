*! version 0.4.0 05dec2026
* Whether the return code of a captured regression is a data outcome -- the model cannot be estimated on these rows:
* r(2000) no observations, r(2001) insufficient observations (e.g. every row a singleton), r(451) a repeated time in
* one time series, r(459) and r(498) data that break an assumption of the command -- and so a model "not
* estimable", noted as such. Any other code is an error of the call or of the installation -- r(198) invalid syntax
* or an option reghdfe refuses, r(1) Break, require's r(2221)-r(2229) (e.g. reghdfe 6.13 next to an ftools older
* than 2.50), a missing or stale ftools Mata library (r(3000)-r(3999)) -- which must stop the run with its own
* message, never become a model "not estimable" and, in REPORT.md, an Underpowered verdict.
*   _lapbias_datarc 2001   ->   r(data) = 1
program define _lapbias_datarc, rclass
	version 15
	args rc
	return scalar data = inlist(`rc', 2000, 2001, 451, 459, 498)
end

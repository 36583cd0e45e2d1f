*! version 0.2.0 23nov2026
* predict (and margins) after lapbias, standardize: refused. The coefficients are on z-scores of depvar, forecast
* and lap, while the data in memory are raw, so predictions would be silently wrong. lapbias sets
* e(predict) = "lapbias_p" only for standardized estimates; otherwise reghdfe's own predict is used.
program define lapbias_p
	version 15
	di as error "the active estimates are from {bf:lapbias, standardize}: they are on z-scores (e(standardized) = Yes)"
	di as error "and the data in memory are raw; predict and margins would be wrong. Re-estimate without standardize,"
	di as error "or standardize the variables yourself and run {bf:lapbias} on them."
	exit 459
end

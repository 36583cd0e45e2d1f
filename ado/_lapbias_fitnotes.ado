*! version 0.3.0 01dec2026
* The estimation notes of one estimated model (the active estimates), appended with _lapbias_note to the csv the
* Python driver reads, in the Python engine's words (estimate/protocol.py _record), so that REPORT.md's notes do not
* depend on the engine: kind singletons ("# singleton observation(s) dropped"), dropped_missing ("# row(s) with a
* missing value dropped listwise": the sample's rows() less e(N) and the singletons) and, for one time series,
* warning ("single time series: no entity fixed effects, Newey-West standard errors with lag #; power is limited").
* Omitted terms are noted by the driver from the exported rows.
program define _lapbias_fitnotes
	version 15
	syntax using/, MODel(string) ROWS(integer)
	local singletons = cond(missing(e(num_singletons)), 0, e(num_singletons))
	local dropped = `rows' - e(N) - `singletons'
	if (`singletons' > 0) _lapbias_note using `"`using'"', model(`model') kind(singletons) ///
		detail("`singletons' singleton observation(s) dropped")
	if (`dropped' > 0) _lapbias_note using `"`using'"', model(`model') kind(dropped_missing) ///
		detail("`dropped' row(s) with a missing value dropped listwise")
	if ("`e(cmd)'" == "newey") _lapbias_note using `"`using'"', model(`model') kind(warning) ///
		detail("single time series: no entity fixed effects, Newey-West standard errors with lag `e(lag)'; power is limited")
end

*! version 0.3.0 01dec2026
* Adds the esttab rows Stata users expect to the active estimates (estadd local):
* - fe_<absvar> "Yes"/"No" for each absvar of absvars() (as reghdfe names them in e(absvars)), named by strtoname
*   with i. and c. dropped (fe_firm, fe_firm_year): "Yes" when this model absorbed it (reghdfe's e(absvars)), so a
*   model the estimator rule ran as one time series reads "No"; e(fe_rows) lists them (for esttab's stats());
* - standardized "Yes"/"No"; e(cmd2) = "lapbias"; e(cmdline) = the lapbias command as typed (reghdfe's own names the
*   temporary sample marker of the call, which no longer exists).
* - halfof(): the absvars of lapvalid's difference model before their interaction with the half, each a row
*   fe_<absvar> "Yes, by half" (No for one time series), so that the esttab rows Entity FE / Period FE of the
*   protocol's absorb(entity_num period_num) are filled for that model too.
* reghdfe's e(clustvar) is left as reghdfe sets it. reghdfe's own route to FE rows works too: estfe.
program define _lapbias_rows
	version 15
	syntax [, ABSvars(string asis) HALFof(string asis) CMDline(string asis) STANDardized]
	local absorbed `" `e(absvars)' "'
	local rows
	foreach absvar of local absvars {
		local name = strtoname("fe_" + subinstr(subinstr("`absvar'", "i.", "", .), "c.", "", .))
		local yes = cond(strpos(`"`absorbed'"', " `absvar' "), "Yes", "No")
		quietly estadd local `name' "`yes'", replace
		local rows `rows' `name'
	}
	foreach absvar of local halfof {
		local name = strtoname("fe_" + subinstr(subinstr("`absvar'", "i.", "", .), "c.", "", .))
		local yes = cond("`e(cmd)'" == "newey", "No", "Yes, by half")
		quietly estadd local `name' "`yes'", replace
		local rows `rows' `name'
	}
	local standardized = cond("`standardized'" != "", "Yes", "No")
	quietly estadd local fe_rows "`rows'", replace
	quietly estadd local standardized "`standardized'", replace
	quietly estadd local cmd2 "lapbias", replace
	if (`"`cmdline'"' != "") quietly estadd local cmdline `"`cmdline'"', replace
end

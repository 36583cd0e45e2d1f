*! version 0.5.0 02dec2026
* The absvars of an absorb() option for ftools' ms_parse_absvars to parse without side effects: the suboptions
* (savefe, generate, replace, ...) and the names of saved fixed effects (fe=firm -> firm) taken off. Given savefe or
* generate, that parser names the targets __hdfe1__, __hdfe2__, ... and runs confirm new variable on them and on
* each fe= name, which fails from the second call on (r(110)); given replace, it drops the named variable
* (ms_parse_absvars.ado 2.41.0, lines 56, 114, 291). reghdfe itself drops __hdfe* before it parses absorb()
* (reghdfe.ado 6.13, line 202), so reghdfe ..., absorb(firm date, savefe) can be typed again; lapbias too.
* Returns r(absvars) (the absvars alone) and r(save): 1 when absorb() saves fixed effects (savefe, generate, or a
* name=absvar), the variables that multi-model commands and standardize refuse (_lapbias_check).
program define _lapbias_absvars, rclass
	version 15
	syntax [, Absorb(string asis)]
	gettoken vars suboptions : absorb, parse(",")
	if (`"`vars'"' == ",") {
		local suboptions `", `suboptions'"'
		local vars
	}
	local 0 `suboptions'
	syntax [, SAVEfe Generate *]
	local save = "`savefe'`generate'" != ""
	* spaces around = are trimmed first, as ftools does (ms_parse_absvars.ado 2.41.0, lines 262-263): fe = firm
	local vars : subinstr local vars " =" "=", all
	local vars : subinstr local vars "= " "=", all
	local plain
	while (`"`vars'"' != "") {
		gettoken absvar vars : vars, bind
		local equals = strpos(`"`absvar'"', "=")
		if (`equals') {
			local save 1
			local absvar = substr(`"`absvar'"', `equals' + 1, .)
		}
		local plain `plain' `absvar'
	}
	return local absvars `"`plain'"'
	return scalar save = `save'
end

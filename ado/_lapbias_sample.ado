*! version 0.3.0 01dec2026
* Marks out of the sample (marker variable touse) the rows whose absorb() or cluster variables are missing, with the
* parsers reghdfe itself uses (ftools): ms_parse_absvars for absorb() -- s(basevars), the variables of i.firm,
* firm#year, firm##c.x, ibn.firm, fe=firm, string absvars -- and ms_parse_vce for vce() -- s(base_clustervars), e.g.
* vce(cluster a b), vce(cl i.firm), firm#year. ms_parse_vce also refuses, up front and with reghdfe's own message,
* what reghdfe refuses (pweights with vce(unadjusted), an unknown vcetype); an empty vce() is reghdfe's default
* (robust under pweights, else unadjusted). String variables are kept (markout ..., strok) as reghdfe keeps them;
* an empty string is missing there too. The sample lapbias standardizes and reports is then the one reghdfe
* estimates on (before singletons). Returns r(absvars): the absvars as reghdfe names them in e(absvars). absorb()'s
* suboptions and saved-FE names are taken off first (_lapbias_absvars): parsing them has side effects.
program define _lapbias_sample, rclass
	version 15
	gettoken touse 0 : 0, parse(" ,")
	syntax [, Absorb(string) VCE(string) WEIGHTtype(string)]
	local vars
	if (`"`absorb'"' != "") {
		_lapbias_absvars, absorb(`absorb')
		ms_parse_absvars `r(absvars)'
		local vars `s(basevars)'
		return local absvars `"`s(absvars)'"'
	}
	ms_parse_vce, vce(`vce') weighttype(`weighttype')
	local vars `vars' `s(base_clustervars)'
	if ("`vars'" != "") markout `touse' `vars', strok
end

*! version 0.4.0 05dec2026
* The fixed effects of lapvalid's difference model: each absvar of absorb() interacted with the half, high_lap, so that
* each half keeps its own effects (the Python engine's difference fit: absorb(entity_num#high_lap period_num#high_lap)),
* e.g. absorb(firm date) -> firm#high_lap date#high_lap, firm#year -> firm#year#high_lap, firm##c.x ->
* firm#high_lap##c.x; no absorb() (pooled OLS) -> high_lap (each half its own constant). Parsed by ftools'
* ms_parse_absvars (s(ivars), s(cvars), s(intercepts)), as reghdfe parses them. Returns r(absorb), r(absvars) (the
* same, each in quotes, for _lapbias_rows) and r(strings): string variables among the absvars, which
* _lapbias_halfstd encodes on its copy (a string variable cannot be interacted). absorb()'s suboptions and saved-FE
* names are taken off first (_lapbias_absvars): parsing them has side effects.
program define _lapbias_halfabsorb, rclass
	version 15
	syntax [, Absorb(string)]
	local out high_lap
	local quoted `""high_lap""'
	local strings
	if (`"`absorb'"' != "") {
		_lapbias_absvars, absorb(`absorb')
		ms_parse_absvars `r(absvars)'
		local ivars `"`s(ivars)'"'
		local cvars `"`s(cvars)'"'
		local intercepts `s(intercepts)'
		local out
		local quoted
		forvalues g = 1/`s(G)' {
			local iv : word `g' of `ivars'
			local cv : word `g' of `cvars'
			local intercept : word `g' of `intercepts'
			foreach v of local iv {
				capture confirm string variable `v'
				if (!_rc) local strings `strings' `v'
			}
			local term = subinstr(trim("`iv'"), " ", "#", .) + "#high_lap"
			if ("`cv'" != "") local term = "`term'" + cond(`intercept', "##", "#") + ///
				cond(wordcount("`cv'") > 1, "c.(`cv')", "c.`cv'")
			local out `out' `term'
			local quoted `"`quoted' "`term'""'
		}
	}
	local strings : list uniq strings
	return local absorb "`out'"
	return local absvars `"`quoted'"'
	return local strings "`strings'"
end

*! version 0.4.0 05dec2026
* lapboot's check, as the Python engine's (estimate/bootstrap.py pairs_bootstrap, too_few_rows), that beta_3 can be
* identified in a draw, on the bootstrap sample in memory (lapboot's rows, inside its preserve): at least 10 rows
* (bootstrap.MIN_ROWS), forecast and lap vary, and reghdfe on the whole sample identifies beta_3 (not every row a
* singleton, the interaction not collinear). Returns r(note), why not ("" when it can), and r(seconds), the time of
* that regression, measured with a timer no one has started (the highest-numbered free one of Stata's 100, cleared
* afterwards; missing when none is free or no regression ran). Break stops; an error that is not a data outcome
* (_lapbias_datarc: invalid syntax, an installation error) is run again, not captured, so that reghdfe's own message
* says what it refused.
program define _lapbias_bootcheck, rclass
	version 15
	syntax varlist(min=3 max=3 numeric), Absorb(string)
	tokenize `varlist'
	local term c.`2'#c.`3'
	tempname draw
	local note
	if (_N < 10) local note "the bootstrap sample has `=_N' complete rows; at least 10 are needed"
	foreach v in `2' `3' {
		quietly summarize `v'
		if (r(min) == r(max) & "`note'" == "") local note = "`v' has no variation in the bootstrap sample (every" ///
			+ " value " + strtrim(strofreal(r(min), "%10.0g")) + "): beta_3 is not identified"
	}
	local seconds = .
	if ("`note'" == "") {
		local timer 0
		forvalues t = 100(-1)1 {
			quietly timer list `t'
			if (r(nt`t') == 0) {
				local timer `t'
				continue, break
			}
		}
		if (`timer') timer on `timer'
		capture quietly reghdfe `1' c.`2'##c.`3', absorb(`absorb') dof(none) noheader notable nofootnote
		local rc = _rc
		if (`timer') {
			timer off `timer'
			quietly timer list `timer'
			local seconds = r(t`timer')
			timer clear `timer'
		}
		if (`rc' == 1) exit 1
		_lapbias_datarc `rc'
		if (`rc' & !r(data)) {
			reghdfe `1' c.`2'##c.`3', absorb(`absorb') dof(none) noheader notable nofootnote
			exit `rc'
		}
		scalar `draw' = .
		if (!`rc') capture scalar `draw' = cond(_se[`term'] > 0 & _se[`term'] < ., _b[`term'], .)
		if (`rc') local note = "the regression on the whole bootstrap sample stops with r(`rc') (e.g. every row a" ///
			+ " singleton of a fixed effect): beta_3 is not identified"
		else if missing(`draw') local note = "beta_3 is not identified in the bootstrap sample itself (after dropping" ///
			+ " singletons, `2' x `3' is collinear with the fixed effects and the other regressors)"
	}
	return local note "`note'"
	return scalar seconds = `seconds'
end

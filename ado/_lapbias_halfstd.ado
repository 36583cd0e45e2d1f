*! version 0.5.0 28nov2026
* The regressors of lapvalid's difference model (the halves' slopes on the recalled direction per SD of it; the
* Python engine's estimate/protocol.py difference fit), made on the copy _lapbias_fit holds inside preserve, for its
* estimation rows touse():
*   ud_dir_std = direction / SD(direction over the rows of its half), the sample SD (n - 1, as egen sd()), taken
*                before reghdfe drops singletons; 0 in a half whose SD is 0 or missing; direction is lapvalid's
*                direction(), (P(up) - P(down)) / (P(up) + P(down));
*   high_lap   = the half (1 high, 0 low);
* named so on the copy (a variable of exactly either name is replaced there -- novarabbrev: never one the name
* abbreviates -- and restore brings it back), so that the model's
* interaction is c.ud_dir_std#c.high_lap in every table. encode(): string variables of absorb(), replaced by group
* numbers under the same name, so that absorb() can interact them with high_lap. Any units: the SD is taken of
* x / 2^k, 2^k a power of two near max |x| of the half, which changes no digit of the ratio (as _lapbias_zscore).
program define _lapbias_halfstd
	version 15
	syntax varlist(min=2 max=2 numeric), TOUSE(varname) [ENCode(varlist)]
	gettoken direction half : varlist
	tempvar z h x g
	tempname scale sd
	quietly generate double `z' = 0 if `touse'
	quietly generate byte `h' = `half' if `touse'
	forvalues k = 0/1 {
		quietly summarize `direction' if `touse' & `half' == `k'
		scalar `scale' = max(abs(r(min)), abs(r(max)))
		scalar `scale' = cond(`scale' > 0 & `scale' < ., 2^floor(ln(`scale') / ln(2)), 1)
		capture drop `x'
		quietly generate double `x' = `direction' / scalar(`scale') if `touse' & `half' == `k'
		quietly summarize `x'
		scalar `sd' = r(sd)
		if (`sd' > 0 & `sd' < .) quietly replace `z' = `x' / scalar(`sd') if `touse' & `half' == `k'
	}
	foreach v of local encode {
		quietly egen long `g' = group(`v')
		drop `v'
		rename `g' `v'
	}
	capture novarabbrev drop ud_dir_std
	capture novarabbrev drop high_lap
	rename `z' ud_dir_std
	rename `h' high_lap
end

*! version 0.1.0 22nov2026
* One-sided p-value for H1: coef > 0 from a t statistic and its two-sided p-value (protocol, Step 4):
*   p_one = p_two / 2 if t > 0, else 1 - p_two / 2.
program define _lapbias_onesided, rclass
	version 15
	args t p_two
	if (`t' > 0) return scalar p_one = `p_two' / 2
	else return scalar p_one = 1 - `p_two' / 2
end

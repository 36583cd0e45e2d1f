*! version 0.2.0 23nov2026
* One-sided p-value for H1: coef > 0 from a t statistic and its two-sided p-value (protocol, Step 4):
*   p_one = p_two / 2 if t > 0, else 1 - p_two / 2; missing when t is missing (the term is not identified).
* Arguments are scalar names (tempname), never values expanded through macros.
program define _lapbias_onesided, rclass
	version 15
	args t p_two
	if missing(scalar(`t')) return scalar p_one = .
	else if (scalar(`t') > 0) return scalar p_one = scalar(`p_two') / 2
	else return scalar p_one = 1 - scalar(`p_two') / 2
end

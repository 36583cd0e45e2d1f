*! version 0.5.0 02dec2026
* Could the placebo have failed? The verdict's rule (report/verdict.py placebo_power; estimate/power.py
* placebo_bounds): the one-sided (1 - alpha) upper bound of the post-cutoff beta_3,
*   ucb = b3_post + invttail(df_r_post, alpha) x se3_post,
* per SD of post-cutoff LAP, ucb x sd_post, below the pre-cutoff beta_3 per SD of pre-cutoff LAP, b3_pre x sd_pre.
* Arguments: the names of the scalars b3_pre sd_pre b3_post se3_post df_r_post sd_post alpha, and few (1 below 42
* clusters: the verdict's bound then uses the CV3 jackknife, which lapbias does not compute in Stata). Returns
* r(ucb), r(ucb_sd), r(own) (b3_pre x sd_pre) and r(informative): 1 or 0; missing where it cannot be stated (no
* beta_3 in a period -- lapbias leaves it missing when its s.e. is missing --, or few clusters); 0 when the bound
* per SD is missing although both beta_3 are there (sd_post missing: one post-cutoff row), as the verdict reads it.
program define _lapbias_informative, rclass
	version 15
	args b3_pre sd_pre b3_post se3_post df_r_post sd_post alpha few
	tempname ucb ucb_sd own informative
	scalar `ucb' = cond(`few', ., scalar(`b3_post') + invttail(scalar(`df_r_post'), scalar(`alpha')) * scalar(`se3_post'))
	scalar `ucb_sd' = `ucb' * scalar(`sd_post')
	scalar `own' = scalar(`b3_pre') * scalar(`sd_pre')
	if (`few' | missing(`own') | missing(scalar(`b3_post'))) scalar `informative' = .
	else scalar `informative' = cond(missing(`ucb_sd'), 0, `ucb_sd' < `own')
	return scalar ucb = `ucb'
	return scalar ucb_sd = `ucb_sd'
	return scalar own = `own'
	return scalar informative = `informative'
end

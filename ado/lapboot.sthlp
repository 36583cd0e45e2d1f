{smcl}
{* *! version 0.1.0 22nov2026}{...}
{title:Title}

{phang}{bf:lapboot} {hline 2} Pairs bootstrap of beta_3 and the one-sided bootstrap p-value (paper Figure III)

{title:Syntax}

{p 8 16 2}{cmd:lapboot} {it:depvar forecast lap} {ifin}{cmd:,} {opt a:bsorb(absvars)} {opt b3(#)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}{p_end}
{synopt:{opt b3(#)}}the in-sample beta_3 to test against the bootstrap distribution{p_end}
{synopt:{opt r:eps(#)}}bootstrap draws; default 10000{p_end}
{synopt:{opt seed(#)}}random-number seed; default 20251222{p_end}
{synopt:{opt cl:uster(varname)}}resample whole clusters instead of observations{p_end}
{synopt:{opt sav:ing(filename)}}save the draws{p_end}
{synopt:{opt gr:aph(filename)}}export the histogram with the 95th percentile and the in-sample beta_3{p_end}
{synoptline}

{title:Description}

{pstd}Draws the observations of the sample (usually post-cutoff) with replacement, re-estimates the detection
regression on each draw and records beta_3. The one-sided bootstrap p-value is the share of draws at least as large
as {opt b3()}.

{title:Options}

{phang}{opt reps()}, {opt seed()} and {opt cluster()} control the draws; {opt saving()} keeps them; {opt graph()}
exports the histogram.

{title:Stored results}

{synoptset 20 tabbed}{...}
{synopt:{cmd:r(p_boot)}}one-sided bootstrap p-value{p_end}
{synopt:{cmd:r(p95)}}95th percentile of the draws{p_end}
{synopt:{cmd:r(reps)}}number of draws{p_end}
{synopt:{cmd:r(N)}}observations in the sample{p_end}
{synopt:{cmd:r(b3)}}the in-sample beta_3 tested{p_end}

{title:Examples}

{phang2}{cmd:. use data/derived/panel_post, clear}{p_end}
{phang2}{cmd:. lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(0.42) reps(10000) graph(results/figures/bootstrap_stata.png)}{p_end}

{smcl}
{* *! version 0.2.0 23nov2026}{...}
{vieweralsosee "lapbias" "help lapbias"}{...}
{vieweralsosee "bsample" "help bsample"}{...}
{viewerjumpto "Syntax" "lapboot##syntax"}{...}
{viewerjumpto "Options" "lapboot##options"}{...}
{viewerjumpto "Saved draws" "lapboot##saving"}{...}
{viewerjumpto "Stored results" "lapboot##results"}{...}
{viewerjumpto "Examples" "lapboot##examples"}{...}
{viewerjumpto "Also see" "lapboot##alsosee"}{...}
{viewerjumpto "Author" "lapboot##author"}{...}
{title:Title}

{phang}{bf:lapboot} {hline 2} Pairs bootstrap of beta_3 (Gao, Jiang, Yan, Figure III)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapboot} {it:depvar forecast lap} {ifin}{cmd:,} {opt a:bsorb(absvars)} {opt b3(#)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}{p_end}
{synopt:{opt b3(#)}}the in-sample beta_3 the draws are compared with{p_end}
{synopt:{opt r:eps(#)}}number of draws, at least 1; default 10000{p_end}
{synopt:{opt seed(#)}}random-number seed; default 20251222{p_end}
{synopt:{opt cl:uster(varname)}}resample whole clusters ({cmd:bsample, cluster()}); string variables allowed{p_end}
{synopt:{opt sav:ing(filename)}}save the draws (see {help lapboot##saving:Saved draws}){p_end}
{synopt:{opt gr:aph(filename)}}export the histogram of the draws (e.g. a .png){p_end}
{synopt:{opt l:evel(#)}}also report the #th percentile of the draws (the one-sided critical value at 100 - #); default {cmd:level(95)}{p_end}
{synoptline}

{title:Description}

{pstd}{cmd:lapboot} draws the observations (or whole clusters) of the sample with replacement {opt reps()} times,
re-estimates {cmd:reghdfe} {it:depvar} {cmd:c.}{it:forecast}{cmd:##c.}{it:lap} on each draw, and reports the one-sided
bootstrap p-value of {opt b3()}: the share of identified draws at least as large as it, and the 95th percentile
of the draws ({cmd:_pctile}). A draw whose interaction is omitted (collinear) or whose regression fails is
{it:unidentified}: it is saved as missing, never as 0, and left out of both counts. Break stops the command.

{pstd}Stata's random-number stream differs from numpy's, so the Python engine's p_boot on the same data agrees with
{cmd:lapboot}'s only within Monte Carlo error (about 2 sqrt(p(1-p)/reps)).

{marker options}{...}
{title:Options}

{phang}{opt absorb()} is passed to {cmd:reghdfe}. {opt b3()} is the in-sample estimate (e.g. r(b3) of
{helpb lapbias}). {opt reps()} and {opt seed()} set the number of draws and the seed. {opt cluster()} resamples whole
clusters. {opt saving()} saves the draws before anything else is attempted; {opt graph()} then exports the
histogram, and a failed export (PNG export is not available in every console Stata) is reported without losing the
results.

{marker saving}{...}
{title:Saved draws}

{pstd}The dataset written by {opt saving()} holds one observation per draw:

{synoptset 22 tabbed}{...}
{synopt:{cmd:draw}}draw number, 1 to {opt reps()} (long){p_end}
{synopt:{cmd:beta3}}beta_3 of the draw; missing when not identified (double){p_end}

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapboot} stores the following in {cmd:r()}:

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(p_boot)}}one-sided bootstrap p: share of identified draws >= b3(){p_end}
{synopt:{cmd:r(p95)}}95th percentile of the identified draws{p_end}
{synopt:{cmd:r(p_level)}}the level()th percentile of the identified draws{p_end}
{synopt:{cmd:r(level)}}the level(){p_end}
{synopt:{cmd:r(reps)}}number of draws{p_end}
{synopt:{cmd:r(n_unidentified)}}draws whose beta_3 is not identified{p_end}
{synopt:{cmd:r(N)}}observations in the sample (and in each draw){p_end}
{synopt:{cmd:r(b3)}}the in-sample beta_3{p_end}
{synopt:{cmd:r(seed)}}the seed{p_end}
{synopt:{cmd:r(resample)}}{cmd:obs} or {cmd:cluster} {it:varname}{p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_post, clear}{p_end}
{phang2}{cmd:. lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(0.05) reps(2000) saving(draws.dta) graph(boot.png)}{p_end}

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapbias}, {helpb lapplacebo}, {helpb bsample}, {helpb reghdfe}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}).{p_end}

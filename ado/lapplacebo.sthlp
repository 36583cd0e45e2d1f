{smcl}
{* *! version 0.1.0 22nov2026}{...}
{title:Title}

{phang}{bf:lapplacebo} {hline 2} Detection regression before and after the training cutoff (protocol Step 5)

{title:Syntax}

{p 8 16 2}{cmd:lapplacebo} {it:depvar forecast lap} {ifin}{cmd:,} {opt a:bsorb(absvars)} {opt date(varname)}
{opt cut:off(YYYY-MM-DD)} [{opt vce(vcetype)} {opt cl:uster(varlist)}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}{p_end}
{synopt:{opt date(varname)}}the realization date (a Stata date){p_end}
{synopt:{opt cut:off(string)}}the model's training cutoff, YYYY-MM-DD; pre-cutoff = date <= cutoff{p_end}
{synopt:{opt vce(vcetype)}}as in {helpb lapbias}{p_end}
{synopt:{opt cl:uster(varlist)}}as in {helpb lapbias}{p_end}
{synoptline}

{title:Description}

{pstd}Runs {helpb lapbias} on the pre-cutoff and on the post-cutoff observations. The placebo passes when the
post-cutoff one-sided p-value for beta_3 > 0 exceeds 0.10.

{title:Options}

{phang}{opt date()} and {opt cutoff()} define the split; {opt absorb()}, {opt vce()} and {opt cluster()} are passed to
{helpb lapbias}.

{title:Stored results}

{synoptset 20 tabbed}{...}
{synopt:{cmd:r(b3_pre)}}beta_3 before the cutoff{p_end}
{synopt:{cmd:r(se3_pre)}}its standard error{p_end}
{synopt:{cmd:r(t3_pre)}}its t statistic{p_end}
{synopt:{cmd:r(p_one_pre)}}one-sided p-value for beta_3 > 0{p_end}
{synopt:{cmd:r(p_two_pre)}}two-sided p-value{p_end}
{synopt:{cmd:r(N_pre)}}observations before the cutoff{p_end}
{synopt:{cmd:r(b3_post)}}beta_3 after the cutoff{p_end}
{synopt:{cmd:r(se3_post)}}its standard error{p_end}
{synopt:{cmd:r(t3_post)}}its t statistic{p_end}
{synopt:{cmd:r(p_one_post)}}one-sided p-value for beta_3 > 0 (the placebo statistic){p_end}
{synopt:{cmd:r(p_two_post)}}two-sided p-value{p_end}
{synopt:{cmd:r(N_post)}}observations after the cutoff{p_end}
{synopt:{cmd:r(pass)}}1 if the placebo passes{p_end}

{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. append using data/derived/panel_post}{p_end}
{phang2}{cmd:. lapplacebo outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) date(target_date) cutoff(2024-06-30)}{p_end}

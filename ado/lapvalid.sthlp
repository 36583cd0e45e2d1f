{smcl}
{* *! version 0.1.0 22nov2026}{...}
{title:Title}

{phang}{bf:lapvalid} {hline 2} Validation regression of the outcome on the recalled direction U-D (protocol Step 3)

{title:Syntax}

{p 8 16 2}{cmd:lapvalid} {it:depvar ud lap} {ifin}{cmd:,} {opt a:bsorb(absvars)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}{p_end}
{synopt:{opt vce(vcetype)}}{cmd:unadjusted}, {cmd:robust} or {cmd:cluster} {it:varlist}{p_end}
{synopt:{opt cl:uster(varlist)}}shorthand for {cmd:vce(cluster} {it:varlist}{cmd:)}{p_end}
{synopt:{opt split(pooled|entity)}}median split of LAP: pooled (default) or the median of entity-mean LAP{p_end}
{synopt:{opt ent:ity(varname)}}the entity variable, needed by {cmd:split(entity)}{p_end}
{synoptline}

{title:Description}

{pstd}Runs {cmd:reghdfe} {it:depvar ud} on the whole sample, on the high-LAP half and on the low-LAP half. High LAP
means LAP above the median (ties go to the low half). Under memorization theta is positive and significant on the
high-LAP half and near zero on the low-LAP half.

{title:Options}

{phang}{opt absorb()}, {opt vce()} and {opt cluster()} as in {helpb lapbias}. {opt split()} chooses the median split;
{opt entity()} names the entity variable for {cmd:split(entity)}.

{title:Stored results}

{synoptset 20 tabbed}{...}
{synopt:{cmd:r(theta_pooled)}}theta, whole sample{p_end}
{synopt:{cmd:r(t_pooled)}}its t statistic{p_end}
{synopt:{cmd:r(N_pooled)}}observations{p_end}
{synopt:{cmd:r(theta_high)}}theta, high-LAP half{p_end}
{synopt:{cmd:r(t_high)}}its t statistic{p_end}
{synopt:{cmd:r(N_high)}}observations{p_end}
{synopt:{cmd:r(theta_low)}}theta, low-LAP half{p_end}
{synopt:{cmd:r(t_low)}}its t statistic{p_end}
{synopt:{cmd:r(N_low)}}observations{p_end}
{synopt:{cmd:r(median)}}the median used for the split{p_end}
{synopt:{cmd:r(split)}}pooled or entity{p_end}

{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapvalid outcome ud lap, absorb(entity_num period_num) cluster(entity_num)}{p_end}
{phang2}{cmd:. lapvalid outcome ud lap, absorb(entity_num period_num) cluster(entity_num) split(entity) entity(entity_num)}{p_end}

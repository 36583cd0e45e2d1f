{smcl}
{* *! version 0.2.0 23nov2026}{...}
{vieweralsosee "lapbias" "help lapbias"}{...}
{vieweralsosee "reghdfe" "help reghdfe"}{...}
{viewerjumpto "Syntax" "lapvalid##syntax"}{...}
{viewerjumpto "Options" "lapvalid##options"}{...}
{viewerjumpto "Stored results" "lapvalid##results"}{...}
{viewerjumpto "Examples" "lapvalid##examples"}{...}
{viewerjumpto "Also see" "lapvalid##alsosee"}{...}
{viewerjumpto "Author" "lapvalid##author"}{...}
{title:Title}

{phang}{bf:lapvalid} {hline 2} Validation regression of the lookahead-bias test (protocol Step 3)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapvalid} {it:depvar ud lap} {ifin} {weight}{cmd:,} {opt a:bsorb(absvars)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}{p_end}
{synopt:{opt vce(vcetype)}}as in reghdfe, including two-way {cmd:vce(cluster} {it:a b}{cmd:)}; default unadjusted{p_end}
{synopt:{opt cl:uster(varlist)}}shorthand for {cmd:vce(cluster} {it:varlist}{cmd:)}; string variables allowed{p_end}
{synopt:{opt split(rule)}}{cmd:pooled} (default): LAP above its median; {cmd:entity}: the entity's mean LAP above the median of entity means{p_end}
{synopt:{opt ent:ity(varname)}}the entity variable, required by {cmd:split(entity)}{p_end}
{synopt:{opt l:evel(#)}}confidence level; default {cmd:level(95)}{p_end}
{synopt:{opt st:ore(name)}}store the models as {it:name}{cmd:_pooled}, {it:name}{cmd:_high}, {it:name}{cmd:_low} (those that ran){p_end}
{synopt:{opt nohead:er}}do not display the three regression tables{p_end}
{synoptline}
{p 4 6 2}{cmd:fweight}s, {cmd:aweight}s and {cmd:pweight}s are allowed; see {help weight}.{p_end}

{title:Description}

{pstd}{cmd:lapvalid} regresses {it:depvar} on the recalled direction {it:ud} (U - D) with {cmd:reghdfe}, pooled and on
the high-LAP and low-LAP halves. Ties at the median go to the low half; the median is held in a scalar, so a tie
cannot move between halves. A model that cannot be estimated (an empty half, only singletons, {it:ud} omitted) is
reported as not estimable, its results are missing, and the other models are kept, as in the Python engine.

{marker options}{...}
{title:Options}

{phang}{opt absorb()}, {opt vce()}, {opt cluster()} and {opt level()} are passed to {cmd:reghdfe}; rows with a missing
absorb or cluster variable are left out before the median is computed. {opt split()} and {opt entity()} choose the
split rule. {opt store(name)} stores each model that ran, with e(cmd2), e(entity_fe), e(period_fe), e(clustvar) and
e(standardized) added for {cmd:esttab}. {opt noheader} suppresses the regression tables.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapvalid} stores the following in {cmd:r()}, for each {it:part} in {cmd:pooled}, {cmd:high}, {cmd:low}
(missing when that model is not estimable):

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(theta_pooled)}, {cmd:r(theta_high)}, {cmd:r(theta_low)}}coefficient on {it:ud}{p_end}
{synopt:{cmd:r(se_pooled)}, {cmd:r(se_high)}, {cmd:r(se_low)}}its standard error{p_end}
{synopt:{cmd:r(t_pooled)}, {cmd:r(t_high)}, {cmd:r(t_low)}}its t statistic{p_end}
{synopt:{cmd:r(p_pooled)}, {cmd:r(p_high)}, {cmd:r(p_low)}}its two-sided p-value{p_end}
{synopt:{cmd:r(N_pooled)}, {cmd:r(N_high)}, {cmd:r(N_low)}}observations{p_end}
{synopt:{cmd:r(N_clust_pooled)}, {cmd:r(N_clust_high)}, {cmd:r(N_clust_low)}}clusters{p_end}
{synopt:{cmd:r(median)}}the median LAP (or median of entity means) that splits the sample{p_end}
{synopt:{cmd:r(split)}}{cmd:pooled} or {cmd:entity}{p_end}
{synopt:{cmd:r(models)}}the parts that were estimated{p_end}
{synopt:{cmd:r(stored)}}the names of the stored models (with {opt store()}){p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapvalid outcome ud lap, absorb(entity_num period_num) cluster(entity_num) store(v) noheader}{p_end}
{phang2}{cmd:. esttab `r(stored)', se stats(N N_clust entity_fe period_fe clustvar) star(* 0.10 ** 0.05 *** 0.01)}{p_end}

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapbias}, {helpb lapplacebo}, {helpb lapboot}, {helpb reghdfe}, {helpb esttab}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}); the regressions are Sergio Correia's
{cmd:reghdfe}.{p_end}

{smcl}
{* *! version 0.2.0 23nov2026}{...}
{vieweralsosee "lapbias" "help lapbias"}{...}
{vieweralsosee "reghdfe" "help reghdfe"}{...}
{viewerjumpto "Syntax" "lapplacebo##syntax"}{...}
{viewerjumpto "Options" "lapplacebo##options"}{...}
{viewerjumpto "Stored results" "lapplacebo##results"}{...}
{viewerjumpto "Examples" "lapplacebo##examples"}{...}
{viewerjumpto "Also see" "lapplacebo##alsosee"}{...}
{viewerjumpto "Author" "lapplacebo##author"}{...}
{title:Title}

{phang}{bf:lapplacebo} {hline 2} Post-cutoff placebo of the lookahead-bias test (protocol Step 5)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapplacebo} {it:depvar forecast lap} {ifin} {weight}{cmd:,} {opt a:bsorb(absvars)} {opt date(datevar)}
{opt cut:off(YYYY-MM-DD)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}{p_end}
{synopt:{opt date(datevar)}}numeric daily date variable (%td); rows with a missing date are in neither sample{p_end}
{synopt:{opt cut:off(string)}}the model's training cutoff; pre-cutoff = {it:datevar} <= cutoff{p_end}
{synopt:{opt vce(vcetype)}}as in reghdfe, including two-way clustering{p_end}
{synopt:{opt cl:uster(varlist)}}shorthand for {cmd:vce(cluster} {it:varlist}{cmd:)}; string variables allowed{p_end}
{synopt:{opt l:evel(#)}}confidence level; default {cmd:level(95)}{p_end}
{synopt:{opt al:pha(#)}}the placebo passes when the post-cutoff one-sided p exceeds #; default 0.10{p_end}
{synopt:{opt st:ore(name)}}store the two detection regressions as {it:name}{cmd:_pre} and {it:name}{cmd:_post}{p_end}
{synoptline}
{p 4 6 2}{cmd:fweight}s, {cmd:aweight}s and {cmd:pweight}s are allowed; see {help weight}.{p_end}

{title:Description}

{pstd}{cmd:lapplacebo} runs {helpb lapbias} before and after the cutoff. The placebo passes when the post-cutoff
one-sided p for beta_3 > 0 exceeds {opt alpha()}. A period whose regression cannot be estimated is reported as
{it:not estimable}: its results are missing and, for the post-cutoff period, r(pass) is missing, which is {it:not} a
pass (the Python verdict treats it the same way).

{marker options}{...}
{title:Options}

{phang}{opt absorb()}, {opt vce()}, {opt cluster()}, {opt level()} and the weights are passed to {cmd:lapbias}.
{opt date()} and {opt cutoff()} define the two samples. {opt alpha()} sets the pass threshold. {opt store(name)}
stores the two models, with lapbias's e() additions (e(p_one), e(entity_fe), ...), for {cmd:esttab}.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapplacebo} stores the following in {cmd:r()} ({it:period} = {cmd:pre} or {cmd:post}; missing when that
period is not estimable):

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(b3_pre)}, {cmd:r(b3_post)}}beta_3{p_end}
{synopt:{cmd:r(se3_pre)}, {cmd:r(se3_post)}}its standard error{p_end}
{synopt:{cmd:r(t3_pre)}, {cmd:r(t3_post)}}its t statistic{p_end}
{synopt:{cmd:r(p_one_pre)}, {cmd:r(p_one_post)}}one-sided p for beta_3 > 0{p_end}
{synopt:{cmd:r(p_two_pre)}, {cmd:r(p_two_post)}}two-sided p{p_end}
{synopt:{cmd:r(N_pre)}, {cmd:r(N_post)}}observations{p_end}
{synopt:{cmd:r(N_clust_pre)}, {cmd:r(N_clust_post)}}clusters{p_end}
{synopt:{cmd:r(pass)}}1 passes, 0 fails, missing = not estimable (not a pass){p_end}
{synopt:{cmd:r(estimable_post)}}1 if the post-cutoff regression was estimated{p_end}
{synopt:{cmd:r(cutoff)}}the cutoff as a Stata date{p_end}
{synopt:{cmd:r(alpha)}}the pass threshold{p_end}
{synopt:{cmd:r(stored)}}the stored model names (with {opt store()}){p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel, clear}{p_end}
{phang2}{cmd:. lapplacebo outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) date(target_date) cutoff(2024-06-30) store(pl)}{p_end}
{phang2}{cmd:. esttab pl_pre pl_post, stats(N p_one entity_fe period_fe) star(* 0.10 ** 0.05 *** 0.01)}{p_end}

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapbias}, {helpb lapvalid}, {helpb lapboot}, {helpb reghdfe}, {helpb esttab}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}); the regressions are Sergio Correia's
{cmd:reghdfe}.{p_end}

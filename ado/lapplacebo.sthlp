{smcl}
{* *! version 0.4.0 05dec2026}{...}
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

{p 8 16 2}{cmd:lapplacebo} {it:depvar forecast lap} {ifin} {weight}{cmd:,} {opt date(datevar)} {opt cut:off(YYYY-MM-DD)}
[{opt a:bsorb(absvars)} {it:options} {it:reghdfe_options}]

{p 8 16 2}{cmd:lapplacebo} {it:depvar forecast lap} {ifin} [{cmd:aweight}]{cmd:,} {opt date(datevar)} {opt cut:off(YYYY-MM-DD)}
{opt new:ey} {opt ti:me(timevar)} [{opt lag(#)} {it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt date(datevar)}}a daily date (%td), or a clock time (%tc, %tC) taken by its day; rows with a missing date are in neither sample{p_end}
{synopt:{opt cut:off(string)}}the model's training cutoff; pre-cutoff = {it:datevar} <= cutoff{p_end}
{synopt:{opt rel:ease(string)}}the model's release date (YYYY-MM-DD, not before the cutoff); post-cutoff = {it:datevar} > release; default: the cutoff{p_end}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}; without it, pooled OLS, as reghdfe{p_end}
{synopt:{opt noab:sorb}}as reghdfe's: pooled OLS; with {opt time()}, the same as {opt newey}{p_end}
{synopt:{opt new:ey}}one time series (Newey-West), as in {helpb lapbias}; needs {opt time()}{p_end}
{synopt:{opt ti:me(timevar)}}the time variable of a single time series (with {opt newey}, or with {opt entity()}){p_end}
{synopt:{opt lag(#)}}Newey-West lag of a single time series{p_end}
{synopt:{opt ent:ity(varname)}}with {opt absorb()} and {opt time()}: the protocol's rule, a period whose rows hold one entity is one time series{p_end}
{synopt:{opt vce(vcetype)}}as in reghdfe, including two-way clustering; default reghdfe's{p_end}
{synopt:{opt cl:uster(clustvars)}}shorthand for {cmd:vce(cluster} {it:clustvars}{cmd:)}; string variables allowed{p_end}
{synopt:{opt l:evel(#)}}confidence level; default {cmd:level(95)}{p_end}
{synopt:{opt al:pha(#)}}the placebo passes when the post-cutoff one-sided p exceeds #; default 0.10{p_end}
{synopt:{opt det:alpha(#)}}the one-sided level at which the pre-cutoff beta_3 is significant, so that the placebo must also have been able to fail (the verdict's {cmd:[estimate] detection_alpha}); default 0.05{p_end}
{synopt:{opt st:ore(name)}}store the two detection regressions as {it:name}{cmd:_pre} and {it:name}{cmd:_post}; {it:name} at most 25 characters{p_end}
{synopt:{it:reghdfe_options}}passed to {helpb reghdfe} through {helpb lapbias}; options that make variables are refused{p_end}
{synoptline}
{p 4 6 2}{cmd:fweight}s, {cmd:aweight}s and {cmd:pweight}s are allowed; see {help weight}.{p_end}

{title:Description}

{pstd}{cmd:lapplacebo} runs {helpb lapbias} before and after the cutoff. Rows after the cutoff but not after the
release (the panel's {cmd:release_gap}) belong to neither sample and are counted in r(N_gap). The placebo passes when
the post-cutoff one-sided p for beta_3 > 0 exceeds {opt alpha()} {it:and} the placebo could have failed, or when the
post-cutoff LAP collapsed: {it:lap} and
beta_3 both omitted (collinear with the fixed effects), the collapse protocol Step 5 expects after the cutoff; then
r(collapsed) is 1. A period whose regression cannot be estimated, or whose beta_3 alone is omitted, has no one-sided
p: for the post-cutoff period r(pass) is then missing, which is {it:not} a pass (the Python verdict treats it the same
way).

{pstd}{it:Could have failed} is the verdict's rule (REPORT.md, results/power.csv): the one-sided (1 - {opt alpha()})
upper bound of the post-cutoff beta_3, b3_post + invttail(df_r, alpha) x se, per SD of post-cutoff LAP (r(ucb_per_sd_post))
lies below the pre-cutoff beta_3 per SD of pre-cutoff LAP (r(b3_per_sd_pre)); each SD is that of {it:lap} over the
period's complete rows before singletons. A small or noisy post-cutoff sample passes the p rule for lack of power; its
bound then does not exclude the interaction found before the cutoff, {cmd:lapplacebo} prints "passes but could not have
failed", r(informative) is 0 and r(pass) is 0, where REPORT.md reads Mixed/invalid (placebo uninformative). The
verdict asks this of a significant pre-cutoff beta_3 only: when r(p_one_pre) >= {opt detalpha()} with 42 clusters or more before
the cutoff, r(pass) follows the p rule and the line says the bound was not needed. When r(informative) is missing,
r(pass) = 1 means the p rule passed and whether the placebo could have failed is not stated.
r(pass_crv1) is the p rule alone. r(informative) is missing where it cannot be stated: a period without beta_3, or fewer
than 42 post-cutoff clusters (the verdict's bound then uses the CV3 jackknife).

{pstd}With fewer than 42 post-cutoff clusters the verdict reads the placebo's wild cluster restricted bootstrap p, not
the CRV1 p ({help lapbias##wild:Few clusters}; {cmd:lapbias} prints its Stata route for each period,
to be typed while that period's model is active: the post-cutoff one is, right after {cmd:lapplacebo}). r(pass) is then
missing too -- not assessed here -- and r(pass_crv1) holds what the CRV1 p alone would say; with 42 clusters or more
(or without clustering) r(pass) = r(pass_crv1) unless the placebo could not have failed (below).

{marker options}{...}
{title:Options}

{phang}{opt absorb()}, {opt noabsorb}, {opt time()}, {opt lag()}, {opt entity()}, {opt vce()}, {opt cluster()},
{opt level()}, the weights and any {it:reghdfe_options} are passed to {cmd:lapbias} for each period; they are checked
before anything is estimated, so a wrong option is an error, not a period "not estimable"; an option reghdfe
itself refuses (r(198)), Break or an installation error stops {cmd:lapplacebo} as well (a period is "not estimable"
only for its data: r(2000), r(2001), r(451), r(459), r(498)). Options that make variables --
{cmd:residuals}[{cmd:()}], {cmd:groupvar()}, {cmd:absorb(}{it:fe}{cmd:=firm)}, {cmd:savefe} -- are refused: the
post-cutoff regression would refuse the name the pre-cutoff one made (r(110)). {opt date()},
{opt cutoff()} and {opt release()} define the two samples. {opt alpha()} sets the pass threshold. {opt store(name)}
stores the two models, with lapbias's e() additions (e(p_one), {cmd:e(fe_}{it:absvar}{cmd:)}, ...), for {cmd:esttab};
names of an earlier call are dropped once every option is checked, and r(stored) names only the models stored by this
call. Each period runs {cmd:lapbias} with {cmd:notable}; {cmd:noheader} and other reghdfe options go through.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapplacebo} stores the following in {cmd:r()} ({it:period} = {cmd:pre} or {cmd:post}; missing when that
period has no beta_3):

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(b3_pre)}, {cmd:r(b3_post)}}beta_3{p_end}
{synopt:{cmd:r(se3_pre)}, {cmd:r(se3_post)}}its standard error{p_end}
{synopt:{cmd:r(t3_pre)}, {cmd:r(t3_post)}}its t statistic{p_end}
{synopt:{cmd:r(p_one_pre)}, {cmd:r(p_one_post)}}one-sided p for beta_3 > 0{p_end}
{synopt:{cmd:r(p_two_pre)}, {cmd:r(p_two_post)}}two-sided p{p_end}
{synopt:{cmd:r(N_pre)}, {cmd:r(N_post)}}observations{p_end}
{synopt:{cmd:r(N_clust_pre)}, {cmd:r(N_clust_post)}}clusters{p_end}
{synopt:{cmd:r(status_pre)}, {cmd:r(status_post)}}{cmd:estimated}, {cmd:omitted} (beta_3 not identified), {cmd:failed} or {cmd:empty}{p_end}
{synopt:{cmd:r(pass)}}1 passes and could have failed, 0 fails or could not have failed, missing = not estimable, or fewer than 42 post-cutoff clusters (not assessed: the verdict reads the wild bootstrap p){p_end}
{synopt:{cmd:r(pass_crv1)}}the p rule alone (post-cutoff one-sided CRV1 p > alpha), whatever the number of clusters (missing when not estimable){p_end}
{synopt:{cmd:r(informative)}}1 if the placebo could have failed (r(ucb_per_sd_post) < r(b3_per_sd_pre)), 0 if not, missing where it cannot be stated{p_end}
{synopt:{cmd:r(ucb_post)}}the one-sided (1 - alpha) upper bound of the post-cutoff beta_3{p_end}
{synopt:{cmd:r(ucb_per_sd_post)}}r(ucb_post) x r(sd_lap_post){p_end}
{synopt:{cmd:r(b3_per_sd_pre)}}r(b3_pre) x r(sd_lap_pre){p_end}
{synopt:{cmd:r(sd_lap_pre)}, {cmd:r(sd_lap_post)}}SD of LAP over each period's complete rows before singletons, weighted as the regression (pweights as aweights){p_end}
{synopt:{cmd:r(collapsed)}}1 if the post-cutoff LAP collapsed (lap and beta_3 omitted, its mean at most half the
pre-cutoff mean): the placebo passes; a constant post-cutoff LAP above that is not a collapse and r(pass) is missing{p_end}
{synopt:{cmd:r(mean_lap_pre)}, {cmd:r(mean_lap_post)}}mean LAP on each period's estimation sample{p_end}
{synopt:{cmd:r(estimable_post)}}1 if the post-cutoff placebo could be assessed (a one-sided p, or the collapse){p_end}
{synopt:{cmd:r(N_gap)}}rows between the cutoff and the release, in neither sample{p_end}
{synopt:{cmd:r(cutoff)}}the cutoff as a Stata date{p_end}
{synopt:{cmd:r(release)}}the release as a Stata date{p_end}
{synopt:{cmd:r(alpha)}}the pass threshold{p_end}
{synopt:{cmd:r(detalpha)}}the level of the pre-cutoff beta_3's significance{p_end}
{synopt:{cmd:r(stored)}}the model names stored by this call (with {opt store()}){p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. append using data/derived/panel_post}{p_end}
{phang2}{cmd:. lapplacebo outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) date(target_date) cutoff(2024-06-30) store(pl)}{p_end}
{phang2}{cmd:. esttab `r(stored)', stats(N p_one fe_entity_num fe_period_num) star(* 0.10 ** 0.05 *** 0.01)}{p_end}

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapbias}, {helpb lapvalid}, {helpb lapboot}, {helpb reghdfe}, {helpb esttab}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}); the regressions are Sergio Correia's
{cmd:reghdfe}.{p_end}

{smcl}
{* *! version 0.4.0 05dec2026}{...}
{vieweralsosee "lapbias" "help lapbias"}{...}
{vieweralsosee "bsample" "help bsample"}{...}
{viewerjumpto "Syntax" "lapboot##syntax"}{...}
{viewerjumpto "Options" "lapboot##options"}{...}
{viewerjumpto "Speed" "lapboot##speed"}{...}
{viewerjumpto "Saved draws" "lapboot##saving"}{...}
{viewerjumpto "Stored results" "lapboot##results"}{...}
{viewerjumpto "Examples" "lapboot##examples"}{...}
{viewerjumpto "Also see" "lapboot##alsosee"}{...}
{viewerjumpto "Author" "lapboot##author"}{...}
{title:Title}

{phang}{bf:lapboot} {hline 2} Pairs bootstrap of beta_3 (Gao, Jiang, Yan, Figure III)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapboot} {it:depvar forecast lap} {ifin}{cmd:,} {opt a:bsorb(absvars)} {opt b3(exp)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe} (no saved fixed effects: {cmd:fe=firm}, {cmd:savefe} are refused){p_end}
{synopt:{opt b3(exp)}}the in-sample beta_3 the draws are compared with: a number or an expression, e.g. {cmd:b3(r(b3))} right after {helpb lapbias}{p_end}
{synopt:{opt r:eps(#)}}number of draws, at least 1; default 10000{p_end}
{synopt:{opt seed(#)}}random-number seed, an integer from 0 to 2147483647 (as {helpb set seed}); default 20251222{p_end}
{synopt:{opt cl:uster(varname)}}the resampling unit: draw whole clusters ({cmd:bsample, cluster()}); string variables allowed. This is not a clustered variance: the bootstrap reports no standard error{p_end}
{synopt:{opt stand:ardize}}z-score {it:depvar}, {it:forecast} and {it:lap} within the sample first (paper Table V), by {helpb lapbias}'s rule; give {opt b3()} in the same units (r(b3) of {cmd:lapbias, standardize} on the in-sample rows){p_end}
{synopt:{opt sav:ing(filename[, replace])}}save the draws (see {help lapboot##saving:Saved draws}); .dta is added to a name without an extension, as {cmd:save} does{p_end}
{synopt:{opt gr:aph(filename[, replace])}}export the histogram of the draws (e.g. a .png){p_end}
{synopt:{opt nodots}}no progress dots (reghdfe on each draw){p_end}
{synopt:{opt nopy:thon}}do not use the lapbias kernel: reghdfe on each draw (see {help lapboot##speed:Speed}){p_end}
{synoptline}

{title:Description}

{pstd}{cmd:lapboot} draws the observations (or whole clusters) of the sample with replacement {opt reps()} times,
re-estimates {cmd:reghdfe} {it:depvar} {cmd:c.}{it:forecast}{cmd:##c.}{it:lap} on each draw, and reports the one-sided
bootstrap p-value of {opt b3()}: the share of identified draws at least as large as it, and the 95th percentile
of the draws ({cmd:_pctile}; another percentile: {cmd:_pctile beta3, p(#)} on the saved draws). A draw whose
interaction is omitted (collinear) or whose regression fails is {it:unidentified}: it is saved as missing, never as 0,
and left out of both counts. Break stops the command.

{pstd}First, as the Python engine does, the sample must have at least 10 rows and beta_3 must be identified on the
whole sample: if {it:forecast} or {it:lap} has no variation, every row is a singleton, or beta_3 is collinear with the
fixed effects there, every draw would be unidentified. {cmd:lapboot} then makes no draw, reports r(identified) = 0 and
the reason in r(note) (in the Python engine's words), and p_boot and p95 are missing. When the lapbias kernel's own
check finds the same, its reason is r(note) as well.

{pstd}The estimates active before {cmd:lapboot} are active after it (as {cmd:boottest} leaves the model untouched):
no draw's fit replaces them, so {cmd:lapbias, level(90)} and {cmd:esttab .} still show your model. {opt b3()} is
evaluated first, before anything can replace r().

{marker options}{...}
{title:Options}

{phang}{opt absorb()} is passed to {cmd:reghdfe}. {opt b3()} is the in-sample estimate: a number or any expression,
evaluated first, e.g. {cmd:b3(r(b3))} or {cmd:b3(scalar(b))}. {opt reps()} and {opt seed()} set the number of draws and
the seed. {opt cluster()} resamples whole clusters. {opt saving()} saves the draws before anything else is attempted
({cmd:replace} to overwrite; without it an existing file is an error before any draw); {opt graph()} then exports the
histogram, and a failed export (PNG export is not available in every console Stata) is reported without losing the
results.

{marker speed}{...}
{title:Speed}

{pstd}On Stata 16 and later, when Stata's Python can import the lapbias Python package ({cmd:python set exec} to the
Python where lapbias is installed; {cmd:lapbias estimate --engine stata} does it), and {opt absorb()} names two
variables (with {opt cluster()} none or one of them), the draws are computed by the lapbias compiled kernel: the
Python engine's pairs bootstrap, an exact fit per draw with singletons dropped as reghdfe drops them, in seconds
(about 4 s for 10,000 draws at the paper's scale). They are then the Python engine's draws for the same seed.

{pstd}Otherwise, or with {opt nopython}, {cmd:reghdfe} runs on each draw: the draw is kept as frequency weights
({cmd:bsample, weight()}, so the data are not reloaded) and reghdfe drops a level whose draws weigh 1, as it drops a
singleton of the materialised draw. Before the first draw {cmd:lapboot} states the expected time, measured by one
regression on the whole sample (with a {help timer} no one has started, the highest-numbered free one, cleared
afterwards: your timers are left alone): of order 0.1 s per draw, i.e. tens of minutes for 10,000 draws. Progress
dots follow, as with {helpb bootstrap}: {cmd:x} a regression that failed, {cmd:e} a draw whose beta_3 is omitted
({opt nodots} suppresses them). A whole-sample regression that fails for any reason but its data (invalid syntax
r(198), an installation error) stops {cmd:lapboot} before any draw, with reghdfe's own message. Stata's random-number
stream differs from the
kernel's, so p_boot then agrees with the Python engine only within Monte Carlo error (about 2 sqrt(p(1-p)/reps)).

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
{synopt:{cmd:r(reps)}}number of draws{p_end}
{synopt:{cmd:r(n_unidentified)}}draws whose beta_3 is not identified{p_end}
{synopt:{cmd:r(N)}}observations in the sample (and in each draw){p_end}
{synopt:{cmd:r(b3)}}the in-sample beta_3{p_end}
{synopt:{cmd:r(seed)}}the seed{p_end}
{synopt:{cmd:r(identified)}}1, or 0 when beta_3 is not identified on the whole sample (no draw made){p_end}
{synopt:{cmd:r(note)}}why beta_3 is not identified (empty otherwise){p_end}
{synopt:{cmd:r(method)}}{cmd:python} (the lapbias kernel), {cmd:reghdfe} (one regression per draw) or {cmd:none}{p_end}
{synopt:{cmd:r(resample)}}{cmd:obs} or {cmd:cluster} {it:varname}{p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) standardize notable}{p_end}
{phang2}{cmd:. scalar b3_in = r(b3)}{p_end}
{phang2}{cmd:. use data/derived/panel_post, clear}{p_end}
{phang2}{cmd:. lapboot outcome mu_hat lap, absorb(entity_num period_num) b3(scalar(b3_in)) standardize reps(2000) saving(draws.dta, replace) graph(boot.png, replace)}{p_end}

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapbias}, {helpb lapplacebo}, {helpb bsample}, {helpb reghdfe}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}).{p_end}

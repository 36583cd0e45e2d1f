{smcl}
{* *! version 0.5.0 28nov2026}{...}
{vieweralsosee "lapbias" "help lapbias"}{...}
{vieweralsosee "reghdfe" "help reghdfe"}{...}
{viewerjumpto "Syntax" "lapvalid##syntax"}{...}
{viewerjumpto "Options" "lapvalid##options"}{...}
{viewerjumpto "Stored results" "lapvalid##results"}{...}
{viewerjumpto "Examples" "lapvalid##examples"}{...}
{viewerjumpto "Also see" "lapvalid##alsosee"}{...}
{viewerjumpto "Author" "lapvalid##author"}{...}
{title:Title}

{phang}{bf:lapvalid} {hline 2} Validation regressions of the lookahead-bias test (protocol Step 3), and the high-minus-low test

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapvalid} {it:depvar ud lap} {ifin} {weight} [{cmd:,} {opt a:bsorb(absvars)} {it:options} {it:reghdfe_options}]

{p 8 16 2}{cmd:lapvalid} {it:depvar ud} {ifin} {weight}{cmd:,} {opt high(flag)} [{opt a:bsorb(absvars)} {it:options} {it:reghdfe_options}]

{p 8 16 2}{cmd:lapvalid} {it:depvar ud lap} {ifin} [{cmd:aweight}]{cmd:,} {opt new:ey} {opt ti:me(timevar)} [{opt lag(#)} {it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}; without it, pooled OLS, as reghdfe{p_end}
{synopt:{opt noab:sorb}}as reghdfe's: pooled OLS; with {opt time()}, the same as {opt newey}{p_end}
{synopt:{opt new:ey}}one time series (Newey-West), as in {helpb lapbias}; needs {opt time()}{p_end}
{synopt:{opt ti:me(timevar)}}the time variable of a single time series (with {opt newey}, or with {opt entity()}: the protocol's rule){p_end}
{synopt:{opt lag(#)}}Newey-West lag of a single time series; default floor(4 (T/100)^(2/9)){p_end}
{synopt:{opt ent:ity(varname)}}the entity variable: of {cmd:split(entity)}, and with {opt time()} of the estimator rule (a model whose rows hold one entity is one time series){p_end}
{synopt:{opt vce(vcetype)}}as in reghdfe, including two-way {cmd:vce(cluster} {it:a b}{cmd:)}; default reghdfe's{p_end}
{synopt:{opt cl:uster(clustvars)}}shorthand for {cmd:vce(cluster} {it:clustvars}{cmd:)}; string variables allowed{p_end}
{synopt:{opt split(rule)}}{cmd:pooled} (default): LAP above its median; {cmd:entity}: the entity's mean LAP above the median of entity means{p_end}
{synopt:{opt high(flag)}}the halves given by a 0/1 variable (1 high, 0 low, missing in neither), e.g. the panel's {cmd:high_lap}; then no {it:lap} and no {opt split()}{p_end}
{synopt:{opt dir:ection(varname)}}the recalled direction (P(up) - P(down)) / (P(up) + P(down)) of the high-minus-low test; default the variable named {cmd:ud_dir} (the panel's){p_end}
{synopt:{opt l:evel(#)}}confidence level; default {cmd:level(95)}{p_end}
{synopt:{opt st:ore(name)}}store the models as {it:name}{cmd:_pooled}, {it:name}{cmd:_high}, {it:name}{cmd:_low}, {it:name}{cmd:_diff} (those estimated or omitted); {it:name} at most 25 characters{p_end}
{synopt:{opt notab:le}}do not display the four regression tables{p_end}
{synopt:{it:reghdfe_options}}passed to {helpb reghdfe}, as in {helpb lapbias} ({cmd:noheader} among them); options that make variables are refused{p_end}
{synoptline}
{p 4 6 2}{cmd:fweight}s, {cmd:aweight}s and {cmd:pweight}s are allowed; see {help weight}.{p_end}

{title:Description}

{pstd}{cmd:lapvalid} regresses {it:depvar} on the recalled direction {it:ud} (U - D) with {cmd:reghdfe}, pooled and on
the high-LAP and low-LAP halves. The pooled model uses every row with {it:depvar} and {it:ud} (the regression has no
LAP in it). The median split is taken over the rows that have {it:lap} (within if/in), as {cmd:lapbias panel} computes
{cmd:high_lap}; ties at the median go to the low half, and the median is held in a scalar, so a tie cannot move
between halves.

{pstd}The fourth model, {it:diff}, is the test the verdict of lapbias reads for the validation pattern: the halves'
slopes on the recalled direction per SD of it, high minus low, > 0, one-sided. The direction is {opt direction()}
(default: the variable named {cmd:ud_dir}, which {cmd:lapbias panel} writes), (P(up) - P(down)) / (P(up) + P(down)) =
{it:ud} / LAP_recall, the direction the recall gives when it answers up or down; not {it:ud} itself, because
{it:ud} = LAP x direction: per SD of {it:ud} a recall equally right at every LAP whose size grows with LAP would
predict better in the high half (its correlation with the outcome falls with LAP's spread relative to its mean), a
false validation. Nor r(theta_high) - r(theta_low), the difference of the raw slopes on {it:ud}. On the rows of both
halves that have the direction,

{phang2}{cmd:reghdfe} {it:depvar} {cmd:c.ud_dir_std#c.high_lap ud_dir_std, absorb(}{it:absvar}{cmd:#high_lap} ...{cmd:)} [{cmd:vce()}]{p_end}

{pstd}with each absvar of {opt absorb()} interacted with the half (each half keeps its own fixed effects;
{cmd:absorb(high_lap)} without {opt absorb()}), {cmd:ud_dir_std} = direction / SD(direction within its half) -- the
sample SD over the model's rows before reghdfe drops singletons, 0 in a half whose SD is 0 or missing -- and
{cmd:high_lap} the half. These two variables exist only on a copy of the data inside {cmd:preserve} (the model's
coefficient names are therefore the same whatever your variables are called; the data in memory are not changed).
The coefficient on {cmd:c.ud_dir_std#c.high_lap} is the difference per SD; r(p_diff_one) = ttail(e(df_r), t) tests it
for > 0. One time series (the estimator rule): {cmd:newey} with {cmd:high_lap} as a regressor. The Python engine
estimates the same model ({cmd:high_minus_low} in results/validation.csv). Without {opt direction()} and without a
numeric variable {cmd:ud_dir}, {cmd:lapvalid} estimates the three theta models and skips the difference, saying so:
r(status_diff) is {cmd:skipped} and r(diff), r(p_diff_one) are missing (the verdict's validation test needs the
direction). A string {cmd:ud_dir} is an error (r(109)): {cmd:destring} it. The estimator rule counts the entities of
each theta model over its {it:if}/{it:in} rows, those of {it:diff} over its complete rows, as the Python engine.

{pstd}Each model ends in one of three states, as in the Python engine: {it:estimated}; {it:omitted}, when {it:ud}
is collinear with the fixed effects of that part (e.g. every recall answer censored to "unknown"): theta is then zero,
protocol Step 3's null, r(theta_{it:part}) is 0 with missing s.e. and p, and the model is stored with its omitted row
(for {it:diff}: the difference is not identified, r(diff) missing); {it:failed}, when the model cannot be estimated
for its data (an empty half, only singletons: r(2000), r(2001), r(451), r(459), r(498)): its results are missing,
r(rc_{it:part}) holds the error code, and the other models are kept. Any other error -- r(198) (invalid syntax, or an
option reghdfe refuses), Break, an installation error -- is an error of the call, not of a part: {cmd:lapvalid}
stops with it.

{marker options}{...}
{title:Options}

{phang}{opt absorb()}, {opt vce()}, {opt cluster()}, {opt level()} and any {it:reghdfe_options} are passed to
{cmd:reghdfe}, exactly as by {helpb lapbias} (reghdfe's default variance estimator, its parsers, the same refused
options); rows with a missing absorb or cluster variable are left out of the models. {opt noabsorb}, {opt time()},
{opt lag()} and {opt entity()} choose one time series as in {helpb lapbias}: with {opt entity()} and {opt time()}, each
part whose rows hold one entity is a time series. {opt split()} and {opt high()} choose the halves. {opt direction()}
names the recalled direction of the {it:diff} model (above); rows without it are left out of that model only. {opt store(name)}
stores each estimated or omitted model, with e(cmd2), e(cmdline), the {cmd:e(fe_}{it:absvar}{cmd:)} rows
({cmd:fe_entity_num_high_lap} ... for {it:diff}) and e(standardized) added for {cmd:esttab}; names of an earlier call
are dropped once every option is checked (a refused call leaves them), and {it:name} takes at most 25 characters
({it:name}{cmd:_pooled} must fit Stata's 32). {opt notable} suppresses the regression tables; {cmd:noheader} goes to
reghdfe. Options that make variables -- {cmd:residuals}[{cmd:()}], {cmd:groupvar()}, {cmd:absorb(}{it:fe}{cmd:=firm)},
{cmd:savefe} -- are refused (r(198)): the second of the four regressions would refuse the name the first made
(r(110)), or overwrite it; estimate one model with {helpb lapbias} to keep them.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapvalid} stores the following in {cmd:r()}, for each {it:part} in {cmd:pooled}, {cmd:high}, {cmd:low},
{cmd:diff} (for {cmd:diff}, theta is the difference of the halves' slopes on the direction per SD of it):

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(theta_pooled)}, {cmd:r(theta_high)}, {cmd:r(theta_low)}, {cmd:r(theta_diff)}}coefficient on {it:ud} (0 when omitted, missing when failed); for diff on {cmd:c.ud_dir_std#c.high_lap} (missing when omitted){p_end}
{synopt:{cmd:r(se_pooled)}, {cmd:r(se_high)}, {cmd:r(se_low)}, {cmd:r(se_diff)}}its standard error{p_end}
{synopt:{cmd:r(t_pooled)}, {cmd:r(t_high)}, {cmd:r(t_low)}, {cmd:r(t_diff)}}its t statistic{p_end}
{synopt:{cmd:r(p_pooled)}, {cmd:r(p_high)}, {cmd:r(p_low)}, {cmd:r(p_diff)}}its two-sided p-value{p_end}
{synopt:{cmd:r(N_pooled)}, {cmd:r(N_high)}, {cmd:r(N_low)}, {cmd:r(N_diff)}}observations{p_end}
{synopt:{cmd:r(N_clust_pooled)}, {cmd:r(N_clust_high)}, {cmd:r(N_clust_low)}, {cmd:r(N_clust_diff)}}clusters{p_end}
{synopt:{cmd:r(rc_pooled)}, {cmd:r(rc_high)}, {cmd:r(rc_low)}, {cmd:r(rc_diff)}}0, or the error code of a model that failed{p_end}
{synopt:{cmd:r(status_pooled)}, {cmd:r(status_high)}, {cmd:r(status_low)}, {cmd:r(status_diff)}}{cmd:estimated}, {cmd:omitted} or {cmd:failed}; r(status_diff) also {cmd:skipped} (no direction){p_end}
{synopt:{cmd:r(diff)}}b_high SD_high - b_low SD_low, the halves' slopes on the direction times its SD within each half (the coefficient on {cmd:c.ud_dir_std#c.high_lap}), the same as r(theta_diff); not r(theta_high) - r(theta_low), which are slopes on {it:ud}{p_end}
{synopt:{cmd:r(p_diff_one)}}its one-sided p-value, H1: r(diff) > 0 (the verdict's validation test){p_end}
{synopt:{cmd:r(median)}}the median LAP (or median of entity means) that splits the sample; missing with {opt high()}{p_end}
{synopt:{cmd:r(split)}}{cmd:pooled}, {cmd:entity} or {cmd:high}{p_end}
{synopt:{cmd:r(direction)}}the variable of the recalled direction the {it:diff} model used (empty when it was skipped){p_end}
{synopt:{cmd:r(models)}}the parts estimated or omitted{p_end}
{synopt:{cmd:r(stored)}}the names of the models stored by this call (with {opt store()}){p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapvalid outcome ud lap, absorb(entity_num period_num) cluster(entity_num) store(v) notable}{p_end}
{phang2}{cmd:. esttab `r(stored)', se stats(N N_clust fe_entity_num fe_period_num) star(* 0.10 ** 0.05 *** 0.01)}{p_end}
{pstd}The halves of the panel and the protocol's estimator rule, as {cmd:do/01_validation.do} runs it:{p_end}
{phang2}{cmd:. lapvalid outcome ud, high(high_lap) direction(ud_dir) absorb(entity_num period_num) cluster(entity_num) entity(entity_num) time(period_num)}{p_end}

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapbias}, {helpb lapplacebo}, {helpb lapboot}, {helpb reghdfe}, {helpb esttab}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}); the regressions are Sergio Correia's
{cmd:reghdfe}.{p_end}

{smcl}
{* *! version 0.4.0 05dec2026}{...}
{vieweralsosee "reghdfe" "help reghdfe"}{...}
{vieweralsosee "lapvalid" "help lapvalid"}{...}
{vieweralsosee "lapplacebo" "help lapplacebo"}{...}
{vieweralsosee "lapboot" "help lapboot"}{...}
{viewerjumpto "Syntax" "lapbias##syntax"}{...}
{viewerjumpto "Options" "lapbias##options"}{...}
{viewerjumpto "Few clusters: the wild bootstrap p" "lapbias##wild"}{...}
{viewerjumpto "Replay" "lapbias##replay"}{...}
{viewerjumpto "Stored results" "lapbias##results"}{...}
{viewerjumpto "Examples" "lapbias##examples"}{...}
{viewerjumpto "Also see" "lapbias##alsosee"}{...}
{viewerjumpto "Author" "lapbias##author"}{...}
{title:Title}

{phang}{bf:lapbias} {hline 2} Lookahead-bias detection regression: the one-sided test of beta_3 > 0 (Gao, Jiang, Yan)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapbias} {it:depvar forecast lap} {ifin} {weight} [{cmd:,} {opt a:bsorb(absvars)} {it:options} {it:reghdfe_options}]

{p 8 16 2}{cmd:lapbias} {it:depvar forecast lap} {ifin} [{cmd:aweight}]{cmd:,} {opt new:ey} {opt ti:me(timevar)} [{opt lag(#)} {it:options}]

{p 8 16 2}{cmd:lapbias} [{cmd:,} {opt l:evel(#)} {opt notab:le} {it:display_options}]{space 4}(replay)

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}: {cmd:absorb(firm date)}, {cmd:absorb(firm#year)}, {cmd:absorb(i.firm i.date)}; without it, pooled OLS with reghdfe's vce, as reghdfe{p_end}
{synopt:{opt noab:sorb}}as reghdfe's: pooled OLS (no fixed effects); with {opt time()}, the same as {opt newey}{p_end}
{synopt:{opt new:ey}}one time series: no fixed effects, Newey-West standard errors ({helpb newey}); needs {opt time()}; display options only{p_end}
{synopt:{opt ti:me(timevar)}}the numeric time variable ordering a single time series (with {opt newey}, or with {opt entity()}){p_end}
{synopt:{opt ent:ity(varname)}}with {opt absorb()} and {opt time()}: the protocol's estimator rule, a sample holding one entity is one time series{p_end}
{synopt:{opt lag(#)}}Newey-West lag of a single time series; default floor(4 (T/100)^(2/9)){p_end}
{synopt:{opt vce(vcetype)}}as in reghdfe: {cmd:unadjusted}, {cmd:robust}, {cmd:cluster} {it:clustvars} (two-way: {cmd:cluster} {it:a b}); default reghdfe's (robust with pweights, else unadjusted){p_end}
{synopt:{opt cl:uster(clustvars)}}shorthand for {cmd:vce(cluster} {it:clustvars}{cmd:)}, e.g. {cmd:cluster(firm)}, {cmd:cluster(firm#year)}; string variables are allowed{p_end}
{synopt:{opt l:evel(#)}}confidence level; default {cmd:level(95)}{p_end}
{synopt:{opt stand:ardize}}z-score {it:depvar}, {it:forecast} and {it:lap} within the estimation sample first (paper Table V){p_end}
{synopt:{opt st:ore(name)}}{cmd:estimates store} the results under {it:name} (for {helpb esttab}){p_end}
{synopt:{opt notab:le}}do not display the regression table, only the beta_3 summary (r(table) is set all the same){p_end}
{synopt:{it:reghdfe_options}}any other option is passed to {helpb reghdfe}: {cmd:noheader} (no header above the table), {cmd:keepsingletons}, {cmd:dof()}, {cmd:technique()}, {cmd:tolerance()}, {cmd:residuals()}, display options such as {cmd:cformat()} and {cmd:noomitted}{p_end}
{synoptline}
{p 4 6 2}{cmd:fweight}s, {cmd:aweight}s and {cmd:pweight}s are allowed, as in {helpb reghdfe}; for one time series, {cmd:aweight}s only; see {help weight}.{p_end}

{title:Description}

{pstd}{cmd:lapbias} runs {cmd:reghdfe} {it:depvar} {cmd:c.}{it:forecast}{cmd:##c.}{it:lap}, computes beta_3 (the
coefficient on {cmd:c.}{it:forecast}{cmd:#c.}{it:lap}), its t statistic and the one-sided p-value for beta_3 > 0 from
e(df_r): p_two/2 if t > 0, else 1 - p_two/2 (protocol Step 4). reghdfe's e() results stay in place; {cmd:estadd}
adds the beta_3 statistics and the table rows listed under {help lapbias##results:Stored results}, so that
{cmd:esttab} shows them. Rows with a missing value in any variable, including the absorb() and cluster variables
(numeric or string; an empty string is missing), are left out before anything is computed.

{pstd}reghdfe makes its own decisions and {cmd:lapbias} keeps them: its default variance estimator (robust with
pweights), the singletons it drops, the terms it omits. If beta_3 is omitted (collinear with the fixed effects, e.g. a
LAP without variation within them, as expected after the training cutoff), {cmd:lapbias} says so and exits without
error: e(b3) and the other beta_3 results are missing, r(identified) is 0, r(omitted) lists the omitted terms, and the
model is stored with its omitted rows, as the Python engine reports it. A zero standard error with nothing omitted (a
perfect fit) is reported as such, also not identified, and so is a missing one (e.g. one cluster: df_r = 0);
r(unidentified) says which. A significantly negative beta_3 (one-sided p of beta_3 < 0 below 5%) is read as the
verdict reads it: Mixed/invalid, since beta_3 >= 0 whenever LAP measures memorization (paper, Proposition 1).

{pstd}The summary ends with a reading at 5% -- except below 42 clusters, where the verdict of lapbias reads another p;
see {help lapbias##wild:Few clusters}.

{pstd}Before its first regression in a Stata session, {cmd:lapbias} (as {cmd:lapvalid}, {cmd:lapplacebo} and
{cmd:lapboot}) runs {cmd:reghdfe} on a toy dataset of 8 rows: an installation problem (reghdfe 6.13 next to an ftools
older than 2.50, which stops with r(2226); a missing ftools Mata library) then stops with reghdfe's own message, instead
of every model reading "not estimable".

{marker options}{...}
{title:Options}

{phang}{opt absorb(absvars)} lists the absorbed fixed effects, in {helpb reghdfe}'s syntax (parsed by reghdfe's own
{cmd:ms_parse_absvars}). The esttab rows {cmd:fe_}{it:absvar} say which were absorbed: {cmd:fe_firm} "Yes", and
{cmd:fe_firm_year} for {cmd:firm#year} ({cmd:i.} and {cmd:c.} dropped, other characters turned into _); e(fe_rows)
lists them. reghdfe's {cmd:estfe} works too (see {help reghdfe}). Without {opt absorb()} (or with {opt noabsorb}
and no {opt time()}) the regression is reghdfe's pooled OLS, with its variance estimator: {cmd:lapbias y f lap,
cluster(firm)}.

{phang}{opt newey} estimates the single-series branch of the protocol (one entity): {cmd:newey} {it:depvar}
{cmd:c.}{it:forecast}{cmd:##c.}{it:lap}{cmd:, lag(}{it:L}{cmd:)} on the sample only (inside {cmd:preserve}), its rows in
{it:timevar} order taken as consecutive observations ({cmd:tsset} on their sequence 1..T; a repeated {it:timevar} is an
error), as the Python engine does: a gap in {it:timevar} is not a lag (newey on {it:timevar} itself would refuse a
series spaced by 2 and pair only observations exactly j periods apart); newey gets the display options
({cmd:level()}, {cmd:cformat()}, ...), and with {opt newey} any other reghdfe option is an error (newey has no
{cmd:noheader}). {opt noabsorb} with {opt time()} is the same as {opt newey}.
{opt time(timevar)} is required; {opt lag(#)} sets L (default floor(4 (T/100)^(2/9)), Newey and West 1994, T the rows
estimated). newey posts no R-squared: e(r2) = e(r2_within) =
the OLS R-squared and e(num_singletons) = 0 are added, as the Python engine reports them.

{phang}{opt entity(varname)} with {opt absorb()} and {opt time()} applies the rule both lapbias engines apply to
every regression of the protocol: a sample whose rows hold one entity (counted over the if/in rows, missing values
included) is one time series, estimated as with {opt newey}; otherwise {opt absorb()} and {opt vce()} are used. A
line says when the rule chose the time series, and which reghdfe options newey did not use. {opt time()} and
{opt lag()} are refused where nothing would use them.

{phang}{opt vce(vcetype)} and {opt cluster(clustvars)} choose the variance estimator (give one of them), parsed by
reghdfe's {cmd:ms_parse_vce}; {cmd:vce(cluster firm date)} clusters two ways. Without either, reghdfe's default
applies (robust under pweights, unadjusted otherwise).

{phang}{opt level(#)} sets the confidence level of the table and of the beta_3 interval.

{phang}{opt standardize} replaces the three variables by z-scores (x - mean)/sd, in double precision, inside
{cmd:preserve}. The rule is the same in both lapbias engines: the mean and sd are taken over the sample's complete
rows (if/in, the three variables, the weight, the absorb() and cluster variables non-missing) {it:before} reghdfe drops
singletons, unweighted; a variable without variation is left as it is (beta_3 is then reported not identified).
e(standardized) is "Yes", and {cmd:predict} and {cmd:margins} are refused afterwards (e(predict) = {cmd:lapbias_p}),
since the data in memory are raw. Any units: the mean and sd are computed on x/2^k, 2^k a power of two near max|x|,
which changes no digit of a z-score (the Python engine's rule), so values of 1e-300 or 1e300 are standardized too.
For the same reason (a copy inside {cmd:preserve}) reghdfe options that create variables, {cmd:residuals}[{cmd:()}],
{cmd:groupvar()} and saved fixed effects ({cmd:absorb(}{it:fe}{cmd:=firm)}, {cmd:savefe}), are refused with
{opt standardize}: restore would discard the variables.

{phang}{opt store(name)} stores the estimates, with the added results, under {it:name}. An older set stored under
{it:name} is dropped first, so esttab never shows a model of an earlier call.

{phang}{opt notable} suppresses the regression table (reghdfe's own {cmd:notable} would also leave no r(table));
{cmd:noheader}, like any option {cmd:lapbias} does not know, goes to reghdfe and hides its header only.

{phang}{it:reghdfe_options} are passed to reghdfe. Refused, because lapbias then has no beta_3 to report or no
e(sample): {cmd:noregress}, {cmd:nopartialout}, {cmd:varlist_is_touse}, {cmd:nosample}, {cmd:version()}, and the
group-level fixed effects {cmd:group()}, {cmd:individual()}, {cmd:aggregation()}. Options that make variables
({cmd:residuals}[{cmd:()}], {cmd:groupvar()}, {cmd:absorb(}{it:fe}{cmd:=firm)}, {cmd:savefe}) work with {cmd:lapbias},
typed as often as with reghdfe ({cmd:lapbias} parses the absvars without absorb()'s suboptions), but are refused by {helpb lapvalid}, {helpb lapplacebo} and {helpb lapboot}, which run several regressions with the
same options (the second would refuse the name the first made, r(110)).

{marker wild}{...}
{title:Few clusters: the wild bootstrap p}

{pstd}With fewer than 42 clusters the CRV1 t test over-rejects, and the verdict of lapbias (REPORT.md, its
{cmd:wild_below_clusters} = 42) reads the p-value of beta_3 from the wild cluster restricted bootstrap -- null
imposed, Webb weights, 9,999 draws, the CRV1 t statistic -- not r(p_one). Below 42 clusters {cmd:lapbias} therefore
prints no reading, returns r(few_clusters) = 1, and prints the Stata route to that p for the estimates at hand, on
their sample. {cmd:boottest} (Roodman, MacKinnon, Nielsen and Webb 2019; {stata ssc install boottest}) refuses reghdfe
with more than one set of absorbed fixed effects (r(198)), so the period effects enter as dummies and the entity
effects, the cluster variable, stay absorbed:

{phang2}{cmd:. reghdfe outcome c.mu_hat##c.lap i.period_num if e(sample), absorb(entity_num) cluster(entity_num)}{p_end}
{phang2}{cmd:. boottest c.mu_hat#c.lap, weighttype(webb) ptype(upper) reps(9999) seed(20251222) nograph}{p_end}

{pstd}{cmd:lapbias} prints command lines only for what runs on the estimates at hand: for pooled OLS (no
{opt absorb()}) or one absvar, the {cmd:boottest} line alone, typed on the active estimates; for two absvars, the
cluster variable one of them, the two lines above with your variable names; for any other model -- two-way clustering
(the verdict's wild bootstrap is one-way, by entity), a cluster variable that is not absorbed, three or more absvars --
the route in words.

{pstd}Typed while the lapbias estimates are active, {cmd:if e(sample)} (and their weights, which the printed line
carries) keeps their sample: the if/in rows, a {helpb lapplacebo} period, without the singletons reghdfe dropped, so
the one-FE fit drops nothing more. Without it the line would re-estimate on every row in memory -- after
{cmd:lapplacebo} on the pre- and post-cutoff panels appended, both periods together. This is the same beta_3 and the
same CRV1 t (up to its small-sample factor, which the bootstrap p does not depend on), with the same null-imposed
draws. Its one-sided p (r(p) of {cmd:ptype(upper)}) agrees with the verdict's {cmd:p_wild_one_sided} within Monte Carlo
error (Stata's random stream is not numpy's). For the placebo: right after {cmd:lapplacebo}, whose post-cutoff model
is the active one (the pre-cutoff one after {cmd:estimates restore} {it:name}{cmd:_pre}).

{marker replay}{...}
{title:Replay}

{pstd}Typed without variables, {cmd:lapbias} [{cmd:,} {opt level(#)} {opt notable} {it:display_options}]
redisplays the last {cmd:lapbias} estimates (error r(301) if the active estimates are not from {cmd:lapbias}) and
prints the beta_3 summary again at the requested level, e.g. {cmd:lapbias, level(90)}. Every r() below is set again;
{cmd:noheader} and the display options go to reghdfe's replay; after a {cmd:newey} model (one time series) only
newey's display options are passed, and the others are named as not used.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapbias} stores the following in {cmd:r()}:

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(b3)}}beta_3 (missing when not identified){p_end}
{synopt:{cmd:r(se3)}}standard error of beta_3{p_end}
{synopt:{cmd:r(t3)}}t statistic of beta_3{p_end}
{synopt:{cmd:r(p_one)}}one-sided p-value for beta_3 > 0{p_end}
{synopt:{cmd:r(p_two)}}two-sided p-value{p_end}
{synopt:{cmd:r(ci_low)}}lower bound of the level() interval of beta_3{p_end}
{synopt:{cmd:r(ci_high)}}upper bound{p_end}
{synopt:{cmd:r(level)}}confidence level{p_end}
{synopt:{cmd:r(identified)}}1 if beta_3 is estimated, 0 if it is omitted (collinear){p_end}
{synopt:{cmd:r(omitted)}}the omitted terms, e.g. {cmd:lap c.mu_hat#c.lap}{p_end}
{synopt:{cmd:r(unidentified)}}why beta_3 is not identified: {cmd:omitted}, a missing s.e. or a zero s.e. (empty when identified){p_end}
{synopt:{cmd:r(few_clusters)}}1 with fewer than 42 clusters: the verdict reads the wild bootstrap p, not r(p_one) (see {help lapbias##wild:Few clusters}){p_end}
{synopt:{cmd:r(N)}}number of observations{p_end}
{synopt:{cmd:r(N_clust)}}number of clusters (missing without clustering); with two-way clustering, {cmd:cluster(entity_num date_num)}, reghdfe's e(N_clust): the smaller of e(N_clust1) and e(N_clust2), which the few-cluster rule reads{p_end}
{synopt:{cmd:r(num_singletons)}}singleton observations dropped{p_end}
{synopt:{cmd:r(table)}}the regression table of reghdfe (or newey), as after {cmd:reghdfe}: b, se, t, p, ll, ul, df, crit, eform per coefficient{p_end}

{pstd}and adds to reghdfe's (or newey's) {cmd:e()}:

{synopt:{cmd:e(cmd2)}}{cmd:lapbias}{p_end}
{synopt:{cmd:e(cmdline)}}the {cmd:lapbias} command as typed{p_end}
{synopt:{cmd:e(b3)}, {cmd:e(se3)}, {cmd:e(t3)}}beta_3, its s.e. and t{p_end}
{synopt:{cmd:e(p_one)}, {cmd:e(p_two)}}one- and two-sided p-values of beta_3{p_end}
{synopt:{cmd:e(identified)}, {cmd:e(lapbias_omitted)}}as r(identified), r(omitted){p_end}
{synopt:{cmd:e(lapbias_term)}}the interaction term, {cmd:c.}{it:forecast}{cmd:#c.}{it:lap}{p_end}
{synopt:{cmd:e(fe_}{it:absvar}{cmd:)}}"Yes"/"No": that absvar was absorbed ("No" for a model the rule ran as one time series){p_end}
{synopt:{cmd:e(fe_rows)}}the names of those rows{p_end}
{synopt:{cmd:e(standardized)}}"Yes"/"No"{p_end}
{synopt:{cmd:e(predict)}}{cmd:lapbias_p} after {opt standardize} (refuses predict and margins){p_end}
{pstd}reghdfe's own e(clustvar) is left as reghdfe sets it.

{marker examples}{...}
{title:Examples}

{pstd}On the panel {cmd:lapbias panel} writes:{p_end}
{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) store(pre)}{p_end}
{phang2}{cmd:. lapbias, level(90)}{p_end}
{phang2}{cmd:. lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) entity(entity_num) time(period_num)}{p_end}
{phang2}{cmd:. esttab pre, cells(b(star fmt(4)) t(par fmt(2))) star(* 0.10 ** 0.05 *** 0.01) stats(N N_clust p_one fe_entity_num fe_period_num, labels("Observations" "Clusters" "One-sided p (beta_3 > 0)" "Entity FE" "Period FE"))}{p_end}
{pstd}Stars are two-sided; the lookahead test is the one-sided p (the {cmd:p_one} row). With your own data, e.g. weights
and two-way clustering: {cmd:lapbias ret forecast mink [pweight=w], absorb(firm date) vce(cluster firm date)}.

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapvalid}, {helpb lapplacebo}, {helpb lapboot}, {helpb reghdfe}, {helpb newey}, {helpb esttab}, {helpb estadd}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}); the test is by Gao, Jiang and Yan,
the regressions are Sergio Correia's {cmd:reghdfe}.{p_end}

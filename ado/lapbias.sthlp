{smcl}
{* *! version 0.2.0 23nov2026}{...}
{vieweralsosee "reghdfe" "help reghdfe"}{...}
{vieweralsosee "lapvalid" "help lapvalid"}{...}
{vieweralsosee "lapplacebo" "help lapplacebo"}{...}
{vieweralsosee "lapboot" "help lapboot"}{...}
{viewerjumpto "Syntax" "lapbias##syntax"}{...}
{viewerjumpto "Options" "lapbias##options"}{...}
{viewerjumpto "Replay" "lapbias##replay"}{...}
{viewerjumpto "Stored results" "lapbias##results"}{...}
{viewerjumpto "Examples" "lapbias##examples"}{...}
{viewerjumpto "Also see" "lapbias##alsosee"}{...}
{viewerjumpto "Author" "lapbias##author"}{...}
{title:Title}

{phang}{bf:lapbias} {hline 2} Lookahead-bias detection regression: the one-sided test of beta_3 > 0 (Gao, Jiang, Yan)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapbias} {it:depvar forecast lap} {ifin} {weight}{cmd:,} {opt a:bsorb(absvars)} [{it:options}]

{p 8 16 2}{cmd:lapbias} {it:depvar forecast lap} {ifin} [{cmd:aweight}]{cmd:,} {opt noab:sorb} {opt ti:me(timevar)} [{opt lag(#)} {it:options}]

{p 8 16 2}{cmd:lapbias} [{cmd:,} {opt l:evel(#)} {opt nohead:er}]{space 4}(replay)

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}: {cmd:absorb(firm date)}, {cmd:absorb(firm#year)}, {cmd:absorb(i.firm i.date)}{p_end}
{synopt:{opt noab:sorb}}one time series: no fixed effects, Newey-West standard errors ({helpb newey}); needs {opt time()}{p_end}
{synopt:{opt ti:me(timevar)}}with {opt noabsorb}: the numeric time variable ordering the series{p_end}
{synopt:{opt lag(#)}}with {opt noabsorb}: Newey-West lag; default floor(4 (T/100)^(2/9)){p_end}
{synopt:{opt vce(vcetype)}}{cmd:unadjusted}, {cmd:robust}, {cmd:cluster} {it:clustvar}, or two-way {cmd:cluster} {it:a b}; default unadjusted{p_end}
{synopt:{opt cl:uster(varlist)}}shorthand for {cmd:vce(cluster} {it:varlist}{cmd:)}; string variables (e.g. a ticker) are allowed{p_end}
{synopt:{opt l:evel(#)}}confidence level; default {cmd:level(95)}{p_end}
{synopt:{opt stand:ardize}}z-score {it:depvar}, {it:forecast} and {it:lap} within the estimation sample first (paper Table V){p_end}
{synopt:{opt st:ore(name)}}{cmd:estimates store} the results under {it:name} (for {helpb esttab}){p_end}
{synopt:{opt nohead:er}}do not display the regression table, only the beta_3 summary{p_end}
{synoptline}
{p 4 6 2}{cmd:fweight}s, {cmd:aweight}s and {cmd:pweight}s are allowed, as in {helpb reghdfe}; with {opt noabsorb}, {cmd:aweight}s only; see {help weight}.{p_end}

{title:Description}

{pstd}{cmd:lapbias} runs {cmd:reghdfe} {it:depvar} {cmd:c.}{it:forecast}{cmd:##c.}{it:lap}, computes beta_3 (the
coefficient on {cmd:c.}{it:forecast}{cmd:#c.}{it:lap}), its t statistic and the one-sided p-value for beta_3 > 0 from
e(df_r): p_two/2 if t > 0, else 1 - p_two/2 (protocol Step 4). reghdfe's e() results stay in place; {cmd:estadd}
adds the beta_3 statistics and the table rows listed under {help lapbias##results:Stored results}, so that
{cmd:esttab} shows them. Rows with a missing value in any variable, including the absorb() and cluster variables
(numeric or string), are left out before anything is computed. If beta_3 is omitted (collinear), {cmd:lapbias} stops
with r(498).

{marker options}{...}
{title:Options}

{phang}{opt absorb(absvars)} lists the absorbed fixed effects, in {helpb reghdfe}'s syntax. For the esttab rows, the
first absvar is reported as the entity FE and the second as the period FE: write {cmd:absorb(}{it:entity period}{cmd:)}.

{phang}{opt noabsorb} estimates the single-series branch of the protocol (one entity): {cmd:newey} {it:depvar}
{cmd:c.}{it:forecast}{cmd:##c.}{it:lap}{cmd:, lag(}{it:L}{cmd:) force} after {cmd:tsset} {it:timevar} (inside
{cmd:preserve}), as the Python engine does. {opt time(timevar)} is required; {opt lag(#)} sets L (default
floor(4 (T/100)^(2/9)), Newey and West 1994).

{phang}{opt vce(vcetype)} and {opt cluster(varlist)} choose the variance estimator (give one of them);
{cmd:vce(cluster firm date)} clusters two ways, as in reghdfe.

{phang}{opt level(#)} sets the confidence level of the table and of the beta_3 interval.

{phang}{opt standardize} replaces the three variables by z-scores (x - mean)/sd, in double precision, inside
{cmd:preserve}. The rule is the same in both lapbias engines: the mean and sd are taken over the sample's complete
rows (if/in, the three variables, the weight, the absorb() and cluster variables non-missing) {it:before} reghdfe drops
singletons, unweighted. e(standardized) is "Yes", and {cmd:predict} and {cmd:margins} are refused afterwards
(e(predict) = {cmd:lapbias_p}), since the data in memory are raw.

{phang}{opt store(name)} stores the estimates, with the added results, under {it:name}.

{phang}{opt noheader} suppresses the regression table.

{marker replay}{...}
{title:Replay}

{pstd}Typed without variables, {cmd:lapbias} [{cmd:,} {opt level(#)} {opt noheader}] redisplays the last
{cmd:lapbias} estimates (error r(301) if the active estimates are not from {cmd:lapbias}) and prints the beta_3 summary
again at the requested level, e.g. {cmd:lapbias, level(90)}. r() is set again.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapbias} stores the following in {cmd:r()}:

{synoptset 22 tabbed}{...}
{synopt:{cmd:r(b3)}}beta_3{p_end}
{synopt:{cmd:r(se3)}}standard error of beta_3{p_end}
{synopt:{cmd:r(t3)}}t statistic of beta_3{p_end}
{synopt:{cmd:r(p_one)}}one-sided p-value for beta_3 > 0{p_end}
{synopt:{cmd:r(p_two)}}two-sided p-value{p_end}
{synopt:{cmd:r(ci_low)}}lower bound of the level() interval of beta_3{p_end}
{synopt:{cmd:r(ci_high)}}upper bound{p_end}
{synopt:{cmd:r(level)}}confidence level{p_end}
{synopt:{cmd:r(N)}}number of observations{p_end}
{synopt:{cmd:r(N_clust)}}number of clusters (missing without clustering){p_end}
{synopt:{cmd:r(num_singletons)}}singleton observations dropped{p_end}

{pstd}and adds to reghdfe's (or newey's) {cmd:e()}:

{synopt:{cmd:e(cmd2)}}{cmd:lapbias}{p_end}
{synopt:{cmd:e(b3)}, {cmd:e(se3)}, {cmd:e(t3)}}beta_3, its s.e. and t{p_end}
{synopt:{cmd:e(p_one)}, {cmd:e(p_two)}}one- and two-sided p-values of beta_3{p_end}
{synopt:{cmd:e(lapbias_term)}}the interaction term, {cmd:c.}{it:forecast}{cmd:#c.}{it:lap}{p_end}
{synopt:{cmd:e(entity_fe)}, {cmd:e(period_fe)}}"Yes"/"No": first / second absvar absorbed{p_end}
{synopt:{cmd:e(clustvar)}}cluster variables (as reghdfe sets it; not set without clustering){p_end}
{synopt:{cmd:e(standardized)}}"Yes"/"No"{p_end}
{synopt:{cmd:e(predict)}}{cmd:lapbias_p} after {opt standardize} (refuses predict and margins){p_end}

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) store(detection)}{p_end}
{phang2}{cmd:. lapbias, level(90)}{p_end}
{phang2}{cmd:. lapbias outcome mu_hat lap [aweight=mktcap], absorb(firm date) vce(cluster ticker date)}{p_end}
{phang2}{cmd:. esttab detection, cells(b(star fmt(4)) t(par fmt(2))) star(* 0.10 ** 0.05 *** 0.01) stats(N N_clust p_one entity_fe period_fe clustvar, labels("Observations" "Clusters" "One-sided p (beta_3 > 0)" "Entity FE" "Period FE" "Cluster"))}{p_end}
{pstd}Stars are two-sided; the lookahead test is the one-sided p (the {cmd:p_one} row).

{marker alsosee}{...}
{title:Also see}

{psee}{helpb lapvalid}, {helpb lapplacebo}, {helpb lapboot}, {helpb reghdfe}, {helpb newey}, {helpb esttab}, {helpb estadd}{p_end}

{marker author}{...}
{title:Author}

{pstd}The lapbias project (lapbias Python package, {cmd:lapbias stata-install}); the test is by Gao, Jiang and Yan,
the regressions are Sergio Correia's {cmd:reghdfe}.{p_end}

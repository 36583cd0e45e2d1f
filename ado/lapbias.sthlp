{smcl}
{* *! version 0.1.0 22nov2026}{...}
{viewerjumpto "Syntax" "lapbias##syntax"}{...}
{viewerjumpto "Options" "lapbias##options"}{...}
{viewerjumpto "Stored results" "lapbias##results"}{...}
{viewerjumpto "Examples" "lapbias##examples"}{...}
{title:Title}

{phang}{bf:lapbias} {hline 2} Lookahead-bias detection regression: the one-sided test of beta_3 > 0 (Gao, Jiang, Yan)

{marker syntax}{...}
{title:Syntax}

{p 8 16 2}{cmd:lapbias} {it:depvar forecast lap} {ifin}{cmd:,} {opt a:bsorb(absvars)} [{it:options}]

{synoptset 24 tabbed}{...}
{synopthdr}
{synoptline}
{synopt:{opt a:bsorb(absvars)}}fixed effects, as in {helpb reghdfe}, e.g. {cmd:absorb(entity_num period_num)}{p_end}
{synopt:{opt vce(vcetype)}}{cmd:unadjusted}, {cmd:robust} or {cmd:cluster} {it:varlist}; default unadjusted{p_end}
{synopt:{opt cl:uster(varlist)}}shorthand for {cmd:vce(cluster} {it:varlist}{cmd:)}{p_end}
{synopt:{opt l:evel(#)}}confidence level{p_end}
{synopt:{opt stand:ardize}}z-score depvar, forecast and lap within the estimation sample first (paper Table V){p_end}
{synopt:{opt st:ore(name)}}{cmd:estimates store} the results under {it:name}{p_end}
{synopt:{opt noh:eader}}do not display the reghdfe table{p_end}
{synoptline}

{title:Description}

{pstd}{cmd:lapbias} runs {cmd:reghdfe} {it:depvar} {cmd:c.}{it:forecast}{cmd:##c.}{it:lap}, computes beta_3 (the
coefficient on {cmd:c.}{it:forecast}{cmd:#c.}{it:lap}), its t statistic and the one-sided p-value for beta_3 > 0 from
e(df_r): p_two/2 if t > 0, else 1 - p_two/2 (protocol Step 4). reghdfe's e() results stay in place; {cmd:estadd}
adds e(b3), e(t3) and e(p_one) so that {cmd:esttab} can show them.

{marker options}{...}
{title:Options}

{phang}{opt absorb(absvars)} lists the absorbed fixed effects. {opt vce(vcetype)} and {opt cluster(varlist)} choose
the variance estimator (give one of them). {opt level(#)} sets the confidence level. {opt standardize} standardizes
the three variables within the estimation sample. {opt store(name)} stores the estimates. {opt noheader} suppresses
the regression table.

{marker results}{...}
{title:Stored results}

{pstd}{cmd:lapbias} stores the following in {cmd:r()}:

{synoptset 20 tabbed}{...}
{synopt:{cmd:r(b3)}}beta_3{p_end}
{synopt:{cmd:r(se3)}}standard error of beta_3{p_end}
{synopt:{cmd:r(t3)}}t statistic of beta_3{p_end}
{synopt:{cmd:r(p_one)}}one-sided p-value for beta_3 > 0{p_end}
{synopt:{cmd:r(p_two)}}two-sided p-value{p_end}
{synopt:{cmd:r(N)}}number of observations{p_end}
{synopt:{cmd:r(N_clust)}}number of clusters{p_end}
{synopt:{cmd:r(num_singletons)}}singleton observations dropped{p_end}

{pstd}and adds {cmd:e(b3)}, {cmd:e(t3)} and {cmd:e(p_one)} to reghdfe's {cmd:e()}.

{marker examples}{...}
{title:Examples}

{phang2}{cmd:. use data/derived/panel_pre, clear}{p_end}
{phang2}{cmd:. lapbias outcome mu_hat lap, absorb(entity_num period_num) cluster(entity_num) store(detection)}{p_end}
{phang2}{cmd:. esttab detection, stats(N p_one) star(* 0.10 ** 0.05 *** 0.01)}{p_end}

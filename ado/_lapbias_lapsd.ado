*! version 0.6.0 02dec2026
* The SD of LAP (summarize: n - 1) over a sample's complete rows before reghdfe drops singletons: depvar, forecast,
* lap and the absorb() and cluster variables non-missing (_lapbias_sample), or the time variable of one time series;
* the sample of the Python engine's power calculation (estimate/power.py: dropna on outcome, mu_hat, lap, entity_num,
* period_num, then std(ddof=1)). With the regression's weights the SD is the weighted one (marksample drops rows
* whose weight is missing or zero; pweights enter summarize as aweights, as summarize takes no pweights); the Python
* engine takes no weights. Returns r(sd).
program define _lapbias_lapsd, rclass
	version 15
	syntax varlist(min=3 max=3 numeric) if [fw aw pw] [, Absorb(string) VCE(string) NEWey TIme(string)]
	marksample complete
	if ("`newey'" != "") markout `complete' `time'
	else _lapbias_sample `complete', absorb(`absorb') vce(`vce') weighttype(`weight')
	tokenize `varlist'
	local summary_weight = cond("`weight'" == "pweight", "[aweight`exp']", cond("`weight'" != "", "[`weight'`exp']", ""))
	quietly summarize `3' `summary_weight' if `complete'
	return scalar sd = r(sd)
end

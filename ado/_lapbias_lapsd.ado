*! version 0.5.0 02dec2026
* The SD of LAP (summarize: n - 1) over a sample's complete rows before reghdfe drops singletons: depvar, forecast,
* lap and the absorb() and cluster variables non-missing (_lapbias_sample), or the time variable of one time series;
* the sample of the Python engine's power calculation (estimate/power.py: dropna on outcome, mu_hat, lap, entity_num,
* period_num, then std(ddof=1)). Returns r(sd).
program define _lapbias_lapsd, rclass
	version 15
	syntax varlist(min=3 max=3 numeric) if [, Absorb(string) VCE(string) WEIGHTtype(string) NEWey TIme(string)]
	marksample complete
	if ("`newey'" != "") markout `complete' `time'
	else _lapbias_sample `complete', absorb(`absorb') vce(`vce') weighttype(`weighttype')
	tokenize `varlist'
	quietly summarize `3' if `complete'
	return scalar sd = r(sd)
end

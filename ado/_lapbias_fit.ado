*! version 0.4.0 05dec2026
* One regression of lapbias and lapvalid, with the estimator rule of both engines (_lapbias_single):
*   reghdfe depvar indepvars [weight] if touse, [absorb(absorb)] [vce(vce)] options   (no absorb(): pooled OLS)
*   one time series -- newey, or entity() time() on a sample whose rows() hold one entity: newey depvar indepvars
*   seriesvars() [aweight] if touse, lag(L) diopts on the sample only (inside preserve), its rows in time order taken
*   as consecutive observations -- tsset time (repeated times: r(451)), then tsset on the sequence 1..T -- as the
*   Python engine (statsmodels' HAC on the series sorted by time); newey on the time variable itself would stop
*   with r(198) for a series spaced regularly by more than 1 and, with force, pair only observations exactly j
*   periods apart. diopts = the display options of options() (reghdfe's own split, _get_diopts), the others are
*   named as not used; L = lag(), or floor(4 (T/100)^(2/9)) with T the rows estimated (the Python engine's
*   estimate/reghdfe.py _newey); seriesvars(): regressors of the time series only (the difference model's half
*   constant, which the fixed effects absorb otherwise). newey posts no R-squared: e(r2) = e(r2_within) = the OLS
*   R-squared (the squared correlation of depvar with the fit; newey's coefficients are OLS's) and
*   e(num_singletons) = 0 are added, as the Python engine reports them.
* Inside preserve, on the copy: prep() (a command run with touse() of the estimation rows, e.g. _lapbias_halfstd
* making the difference model's variables), then standardize: the zvars() as z-scores over touse first
* (_lapbias_zscore). e(sample) is carried back to the data in memory by row id. show(quietly) hides the regression
* table. Returns r(single) = 1 for a time series, and r(table), the table of the regression (reghdfe's or newey's).
program define _lapbias_fit, rclass
	version 15
	syntax anything(name=model) [fw aw pw], TOUSE(varname) ROWS(varname) [Absorb(string) VCE(string) NEWey ///
		TIme(varname) LAG(integer -1) ENTity(varname) STANDardize ZVARS(varlist) SERIESvars(string) ///
		PREP(string asis) SHOW(name) OPTions(string asis)]
	local single = "`newey'" != ""
	if (!`single' & "`entity'" != "" & "`time'" != "") {
		_lapbias_single `entity' if `rows'
		local single = r(single)
		if (`single') di as text "(one entity in the sample: one time series ordered by `time', no fixed effects," ///
			" Newey-West standard errors -- the rule of both lapbias engines)"
	}
	if (`single' & !inlist("`weight'", "", "aweight")) {
		di as error "one time series (newey) allows aweights only"
		exit 101
	}
	local wgt = cond("`weight'" != "", "[`weight'`exp']", "")
	tempvar use id esample xb seq
	tempname es rho table
	quietly generate byte `use' = `touse'
	if (`single') markout `use' `time'
	quietly count if `use'
	if (r(N) == 0) error 2000
	if (`single') {
		if (`lag' < 0) local lag = floor(4 * (r(N) / 100)^(2 / 9))
		_get_diopts diopts rest, `options'
		if (`"`rest'"' != "") di as text `"(reghdfe option(s) not used by newey, one time series: `rest')"'
		local cmd newey `model' `seriesvars' `wgt' if `use', lag(`lag') `diopts'
	}
	else {
		local cmd reghdfe `model' `wgt' if `use', `options'
		if (`"`absorb'"' != "") local cmd `cmd' absorb(`absorb')
		if (`"`vce'"' != "") local cmd `cmd' vce(`vce')
	}
	local keep = `single' | "`standardize'" != "" | `"`prep'"' != ""
	if (`keep') {
		quietly generate long `id' = _n
		preserve
		if (`single') {
			quietly keep if `use'
			quietly tsset `time'
			sort `time'
			quietly generate long `seq' = _n
			quietly tsset `seq'
		}
		if (`"`prep'"' != "") `prep' touse(`use')
		if ("`standardize'" != "") _lapbias_zscore `zvars', touse(`use')
	}
	`show' `cmd'
	capture matrix `table' = r(table)
	local has_table = !_rc
	if (`single') {
		gettoken depvar : model
		quietly predict double `xb' if e(sample), xb
		quietly correlate `depvar' `xb' `wgt' if e(sample)
		scalar `rho' = cond(missing(r(rho)), 0, r(rho))
		quietly estadd scalar r2 = scalar(`rho')^2, replace
		quietly estadd scalar r2_within = scalar(`rho')^2, replace
		quietly estadd scalar num_singletons = 0, replace
	}
	if (`keep') {
		quietly generate byte `esample' = e(sample)
		mata: `es' = st_data(., ("`id'", "`esample'"))
		restore
		quietly generate byte `esample' = 0
		mata: st_store(`es'[., 1], "`esample'", `es'[., 2])
		mata: mata drop `es'
		quietly estimates esample: if `esample' == 1, replace
	}
	if (`has_table') return matrix table = `table'
	return scalar single = `single'
end

*! version 0.4.0 05dec2026
* The option rules of lapbias, lapvalid, lapplacebo (and of lapboot's absorb()), checked before anything is estimated
* (so that a typing slip is an error, never a model reported "not estimable"). Returns r(vce): vce(), or "cluster
* <cluster()>"; r(newey): 1 for the one-time-series branch.
* - absorb(): the fixed effects; without it, reghdfe's pooled OLS with reghdfe's vce (as reghdfe with no absorb(), or
*   its noabsorb). newey time(): one time series, no fixed effects, Newey-West standard errors (noabsorb with time()
*   is its alias). Otherwise entity() time() apply the estimator rule of both engines (_lapbias_single) to each
*   sample. time() and lag() are refused where nothing would use them; newey takes display options only
*   (_get_diopts).
* - vce() or cluster(), not both; none: reghdfe's own default (robust under pweights, else unadjusted).
* - reghdfe's options are passed to it, except those that break what lapbias reports (beta_3 of depvar on
*   c.forecast##c.lap with the absorb() fixed effects, and e(sample)): noregress, nopartialout, varlist_is_touse
*   (reghdfe stops before the coefficients), nosample (no e(sample)), version() (an older reghdfe), group(),
*   individual(), aggregation() (group-level fixed effects: another model). Options that make variables --
*   residuals[()], groupvar(), absorb()'s saved fixed effects (savefe, generate, fe=firm: _lapbias_absvars) -- are
*   refused with standardize (the regression runs on a z-scored copy inside preserve, restore would discard them) and
*   in a command that runs several regressions with the same options, multi(command): lapvalid, lapplacebo, lapboot
*   (the second regression would refuse a name the first made, r(110), or overwrite an unnamed one).
program define _lapbias_check, rclass
	version 15
	syntax [, Absorb(string) NEWey NOABsorb TIme(string) LAG(integer -1) ENTity(string) VCE(string) CLuster(string) ///
		WEIGHT(string) STANDardize MULTI(name) OPTions(string asis)]
	if (`"`cluster'"' != "" & `"`vce'"' != "") {
		di as error "give either vce() or cluster(), not both"
		exit 198
	}
	if (`"`cluster'"' != "") local vce cluster `cluster'
	if ("`noabsorb'" != "" & `"`absorb'"' != "") {
		di as error "give noabsorb (pooled OLS; with time(): one time series, as newey) or absorb(), not both"
		exit 198
	}
	if ("`noabsorb'" != "" & "`time'" != "") local newey newey
	if ("`newey'" != "") {
		if (`"`absorb'`vce'`entity'"' != "") {
			di as error "newey (one time series, Newey-West standard errors) takes no absorb(), vce(), cluster() or entity()"
			exit 198
		}
		if ("`time'" == "") {
			di as error "newey needs time(varname): the time variable that orders the series, e.g. time(period_num)"
			exit 198
		}
		if !inlist("`weight'", "", "aweight") {
			di as error "newey (one time series) allows aweights only"
			exit 101
		}
		_get_diopts diopts rest, `options'
		if (`"`rest'"' != "") {
			di as error `"newey (one time series) takes display options only, not the reghdfe option(s) `rest'"'
			exit 198
		}
	}
	else if (("`time'" == "") != ("`entity'" == "")) {
		di as error "entity() and time() go together: a sample holding one entity is then one time series ordered by"
		di as error "time() (the protocol's rule); for a single series always, give newey time()"
		exit 198
	}
	if (`lag' < -1 | (`lag' != -1 & "`time'" == "")) {
		di as error "lag(`lag'): the Newey-West lag (>= 0) of a single time series, given with time(); default floor(4 (T/100)^(2/9))"
		exit 198
	}
	local 0 , `options'
	syntax [, noREGress noPARTIALout VARLIST_is_touse NOSAMPle VERSION(string) Group_id(string) ///
		Individual_id(string) AGgregation(string) RESiduals(name) RESiduals2 GROUPVar(name) *]
	local refused `regress' `partialout' `varlist_is_touse' `nosample'
	foreach o in version group_id individual_id aggregation {
		if (`"``o''"' != "") local refused `refused' `o'()
	}
	if ("`refused'" != "") {
		di as error "reghdfe option(s) `refused' not allowed: lapbias needs reghdfe's coefficients of depvar on"
		di as error "c.forecast##c.lap with the absorb() fixed effects, and e(sample)"
		exit 198
	}
	local made = cond("`residuals'`residuals2'" != "", "residuals ", "") + cond("`groupvar'" != "", "groupvar() ", "")
	if (`"`absorb'"' != "" & "`standardize'`multi'" != "") {
		_lapbias_absvars, absorb(`absorb')
		if (r(save)) local made `made' the fixed effects absorb() saves
	}
	if ("`made'" != "" & "`standardize'" != "") {
		di as error "standardize: reghdfe runs on a z-scored copy of the data (inside preserve), so the variables of"
		di as error "`made' would be discarded; estimate without standardize to keep them"
		exit 198
	}
	if ("`made'" != "" & "`multi'" != "") {
		di as error "`multi' runs several regressions with the same options: the variables of `made' would be made by the"
		di as error "first and refused by the next (r(110)) or overwritten; estimate one model with lapbias to keep them"
		exit 198
	}
	return local vce `"`vce'"'
	return scalar newey = "`newey'" != ""
end

*! version 0.3.0 01dec2026
* The option rules of lapbias, lapvalid and lapplacebo, checked before anything is estimated (so that a typing slip
* is an error, never a model reported "not estimable"). Returns r(vce): vce(), or "cluster <cluster()>".
* - absorb() (the fixed-effects branch) or noabsorb time() (one time series), not both; with absorb(),
*   entity() time() apply the estimator rule of both engines (_lapbias_single) to each sample; time() and lag()
*   are refused where nothing would use them; noabsorb (newey) takes display options only (_get_diopts).
* - vce() or cluster(), not both; none: reghdfe's own default (robust under pweights, else unadjusted).
* - reghdfe's options are passed to it, except those that break what lapbias reports (beta_3 of depvar on
*   c.forecast##c.lap with the absorb() fixed effects, and e(sample)): noregress, nopartialout, varlist_is_touse
*   (reghdfe stops before the coefficients), nosample (no e(sample)), version() (an older reghdfe), group(),
*   individual(), aggregation() (group-level fixed effects: another model); and with standardize, whose regression
*   runs on a z-scored copy inside preserve, those that make variables restore would discard: residuals[()],
*   groupvar(), and absorb()'s saved fixed effects (savefe, fe=firm: ftools' s(save_any_fe)).
program define _lapbias_check, rclass
	version 15
	syntax [, Absorb(string) NOABsorb TIme(string) LAG(integer -1) ENTity(string) VCE(string) CLuster(string) ///
		WEIGHT(string) STANDardize OPTions(string asis)]
	if (`"`cluster'"' != "" & `"`vce'"' != "") {
		di as error "give either vce() or cluster(), not both"
		exit 198
	}
	if (`"`cluster'"' != "") local vce cluster `cluster'
	if ("`noabsorb'" != "") {
		if (`"`absorb'`vce'`entity'"' != "") {
			di as error "noabsorb (one time series, Newey-West standard errors) takes no absorb(), vce(), cluster() or entity()"
			exit 198
		}
		if ("`time'" == "") {
			di as error "noabsorb needs time(varname): the time variable that orders the series, e.g. time(period_num)"
			exit 198
		}
		if !inlist("`weight'", "", "aweight") {
			di as error "noabsorb (newey) allows aweights only"
			exit 101
		}
		_get_diopts diopts rest, `options'
		if (`"`rest'"' != "") {
			di as error `"noabsorb (one time series, newey) takes display options only, not the reghdfe option(s) `rest'"'
			exit 198
		}
	}
	else {
		if (`"`absorb'"' == "") {
			di as error "absorb() is required, e.g. absorb(entity_num period_num); one time series: noabsorb time(varname)"
			exit 198
		}
		if (("`time'" == "") != ("`entity'" == "")) {
			di as error "entity() and time() go together: with absorb(), a sample holding one entity is then one time series"
			di as error "ordered by time() (the protocol's rule); for a single series always, give noabsorb time()"
			exit 198
		}
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
	if ("`standardize'" != "") {
		local made = cond("`residuals'`residuals2'" != "", "residuals ", "") + cond("`groupvar'" != "", "groupvar() ", "")
		if (`"`absorb'"' != "") {
			ms_parse_absvars `absorb'
			if (`s(save_any_fe)') local made `made' the fixed effects absorb() saves
		}
		if ("`made'" != "") {
			di as error "standardize: reghdfe runs on a z-scored copy of the data (inside preserve), so the variables of"
			di as error "`made' would be discarded; estimate without standardize to keep them"
			exit 198
		}
	}
	return local vce `"`vce'"'
end

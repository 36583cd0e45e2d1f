*! version 0.3.0 01dec2026
* The option rules of lapbias, lapvalid and lapplacebo, checked before anything is estimated (so that a typing slip
* is an error, never a model reported "not estimable"). Returns r(vce): vce(), or "cluster <cluster()>".
* - absorb() (the fixed-effects branch) or noabsorb time() (one time series), not both; with absorb(),
*   entity() time() apply the estimator rule of both engines (_lapbias_single) to each sample; time() and lag()
*   are refused where nothing would use them.
* - vce() or cluster(), not both; none: reghdfe's own default (robust under pweights, else unadjusted).
* - reghdfe's options are passed to it, except those that break what lapbias reports (beta_3 of depvar on
*   c.forecast##c.lap with the absorb() fixed effects, and e(sample)): noregress, nopartialout, varlist_is_touse
*   (reghdfe stops before the coefficients), nosample (no e(sample)), version() (an older reghdfe), group(),
*   individual(), aggregation() (group-level fixed effects: another model).
program define _lapbias_check, rclass
	version 15
	syntax [, Absorb(string) NOABsorb TIme(string) LAG(integer -1) ENTity(string) VCE(string) CLuster(string) ///
		WEIGHT(string) OPTions(string asis)]
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
		Individual_id(string) AGgregation(string) *]
	local refused `regress' `partialout' `varlist_is_touse' `nosample'
	foreach o in version group_id individual_id aggregation {
		if (`"``o''"' != "") local refused `refused' `o'()
	}
	if ("`refused'" != "") {
		di as error "reghdfe option(s) `refused' not allowed: lapbias needs reghdfe's coefficients of depvar on"
		di as error "c.forecast##c.lap with the absorb() fixed effects, and e(sample)"
		exit 198
	}
	return local vce `"`vce'"'
end

*! version 0.3.0 01dec2026
* The estimator rule of both lapbias engines (the Python engine's estimate/protocol.py _fit): a sample whose rows
* hold exactly one entity is one time series -- no fixed effects, Newey-West standard errors (protocol,
* implementation notes) -- decided for each regression: each sample and each validation half. The entities are
* counted over the rows given (if/in) whatever their other values, as pandas' nunique over the sample (a row with
* a missing outcome still counts its entity); a row with a missing entity counts none.
*   _lapbias_single entity_num if high_lap == 1   ->   r(single) 1 or 0, r(N_entities)
program define _lapbias_single, rclass
	version 15
	syntax varname [if] [in]
	marksample rows, strok
	tempvar tag
	quietly egen byte `tag' = tag(`varlist') if `rows'
	quietly count if `tag' == 1
	return scalar N_entities = r(N)
	return scalar single = r(N) == 1
end

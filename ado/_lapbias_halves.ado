*! version 0.5.0 02dec2026
* lapvalid's halves (protocol Step 3), made as the new byte variable newvar: split(high) the user's 0/1 flag high();
* split(pooled) lap above its median over the rows() with lap; split(entity) the entity's mean LAP above the median
* of entity means. Ties go low; the median is held in a scalar (full precision). Returns r(median) (missing for
* split(high)).
program define _lapbias_halves, rclass
	version 15
	syntax newvarname, SPLIT(string) ROWS(varname) [HIGH(string) LAP(string) ENTity(string)]
	tempvar mean_lap tag
	tempname median
	scalar `median' = .
	if ("`split'" == "high") quietly generate byte `varlist' = `high'
	else if ("`split'" == "pooled") {
		quietly summarize `lap' if `rows', detail
		scalar `median' = r(p50)
		quietly generate byte `varlist' = `lap' > scalar(`median') if `rows' & !missing(`lap')
	}
	else {
		quietly egen double `mean_lap' = mean(`lap') if `rows' & !missing(`entity'), by(`entity')
		quietly egen byte `tag' = tag(`entity') if !missing(`mean_lap')
		quietly summarize `mean_lap' if `tag' == 1, detail
		scalar `median' = r(p50)
		quietly generate byte `varlist' = `mean_lap' > scalar(`median') if !missing(`mean_lap')
	}
	return scalar median = `median'
end

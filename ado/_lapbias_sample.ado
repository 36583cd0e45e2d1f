*! version 0.2.0 23nov2026
* Marks out of the sample (marker variable touse) the rows whose absorb() or cluster variables are missing. String variables are
* allowed (markout ..., strok), as reghdfe allows string clusters; absvars may be written i.a, a#b, a##c.x, fe=a.
* The sample lapbias standardizes and reports is then the one reghdfe estimates on (before singletons).
program define _lapbias_sample
	version 15
	gettoken touse 0 : 0, parse(" ,")
	syntax [, Absorb(string) VCE(string)]
	gettoken absorb : absorb, parse(",")
	local absorb : subinstr local absorb "#" " ", all
	local absorb : subinstr local absorb "(" " ", all
	local absorb : subinstr local absorb ")" " ", all
	local vars
	foreach term of local absorb {
		if strpos("`term'", "=") local term = substr("`term'", strpos("`term'", "=") + 1, .)
		local term = subinstr(subinstr("`term'", "c.", "", 1), "i.", "", 1)
		local vars `vars' `term'
	}
	gettoken vcetype vcevars : vce, parse(" ,")
	if inlist("`vcetype'", "cl", "clu", "clus", "clust", "cluste", "cluster") {
		gettoken vcevars : vcevars, parse(",")
		local vcevars : subinstr local vcevars "#" " ", all
		local vars `vars' `vcevars'
	}
	if ("`vars'" != "") markout `touse' `vars', strok
end

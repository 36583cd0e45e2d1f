*! version 0.5.0 02dec2026
* The versions of the packages the Stata side runs on, as each one's ado file states them in its first lines: the
* first number like 6.12.3 on a "*!" line ("*! version 6.12.3 08aug2023", boottest's "*! boottest 4.4.11 12 April
* 2024"): reghdfe, ftools, boottest, estout, esttab; written as package,version lines to the
* CSV file named by using (master.do: results/stata_versions.csv, which REPORT.md quotes). A package that is not
* installed reads "not installed"; one whose header has no version line, "unknown".
program define _lapbias_versions
	version 15
	syntax using/
	tempname out in
	file open `out' using `"`using'"', write replace text
	file write `out' "package,version" _n
	foreach package in reghdfe ftools boottest estout esttab {
		local found "not installed"
		capture findfile `package'.ado
		if (!_rc) {
			local found "unknown"
			file open `in' using `"`r(fn)'"', read text
			file read `in' line
			local lines 1
			while (r(eof) == 0 & `lines' <= 5 & "`found'" == "unknown") {
				if (substr(`"`macval(line)'"', 1, 2) == "*!") {
					local words = subinstr(substr(`"`macval(line)'"', 3, .), char(34), "", .)
					foreach word of local words {
						if (regexm("`word'", "^[0-9]+(\.[0-9]+)+$")) {
							local found `word'
							continue, break
						}
					}
				}
				file read `in' line
				local ++lines
			}
			file close `in'
		}
		file write `out' `"`package',"`found'""' _n
	}
	file close `out'
end

*! version 0.5.0 02dec2026
* The recalled direction of lapvalid's difference model: direction() as given (its syntax checks it is numeric),
* else the variable ud_dir when it is numeric (lapbias panel writes it). Without either, r(direction) is empty and
* lapvalid skips the difference (Step 3's three theta models need no direction); a string ud_dir is an error of its
* own. Returns r(direction).
program define _lapbias_direction, rclass
	version 15
	syntax [, DIRection(string)]
	if ("`direction'" == "") {
		capture novarabbrev confirm numeric variable ud_dir
		if (!_rc) local direction ud_dir
		else {
			capture novarabbrev confirm string variable ud_dir
			if (!_rc) {
				di as error "ud_dir is a string variable: the recalled direction must be numeric (destring ud_dir, replace)"
				exit 109
			}
		}
	}
	return local direction "`direction'"
end

*! version 0.4.0 05dec2026
* lapboot's fast path, Stata 16 and later: the draws computed by the lapbias Python package's compiled bootstrap
* kernel (lapbias.estimate.lapboot_kernel: the Python engine's pairs bootstrap, an exact weighted fit per draw with
* singletons dropped as reghdfe drops them from the materialised draw), so they are the Python engine's draws for the
* same seed, in seconds. Needs Stata's Python to import lapbias (python set exec to the Python where lapbias is
* installed; lapbias estimate --engine stata sets it). Reads the pool saved by lapboot (using), writes the draws
* (saving(), variables draw and beta3, and note -- the kernel's reason -- when its own check finds beta_3 not
* identified). variables(): depvar forecast lap, then the two absorbed variables, the first one the resampling unit of
* resample(entity). seed() takes what lapboot's does (lapboot checks 0 to 2^31 - 1). Returns r(ok) = 1 when the draws
* were written, else 0 and r(why).
program define _lapbias_pyboot, rclass
	version 16
	syntax using/, SAVing(string) VARiables(namelist min=5 max=5) RESample(name) REPS(integer) SEED(real)
	capture python: import lapbias.estimate.lapboot_kernel
	if (_rc == 1) exit 1
	if (_rc) {
		return scalar ok = 0
		return local why "Stata's Python cannot import the lapbias package (python set exec, r(`=_rc'))"
		exit
	}
	capture noisily python: lapbias.estimate.lapboot_kernel.write_draws(r"`using'", r"`saving'", "`variables'", "`resample'", `reps', `seed')
	local rc = _rc
	if (`rc' == 1) exit 1
	capture confirm file `"`saving'"'
	local written = !_rc
	return scalar ok = !`rc' & `written'
	if (`rc' | !`written') return local why "the lapbias kernel stopped, r(`rc')"
end

*! version 0.2.0 23nov2026
* Appends one estimation note (model,kind,detail) to the csv file the Python driver reads
* (results/stata_notes.csv -> results/estimation_notes.csv), writing the header when the file is new.
* Used by the do-files for a model that could not be estimated, as the Python engine records it. The detail is
* written in double quotes (csv); the do-files' details hold none.
program define _lapbias_note
	version 15
	syntax using/, MODel(string) KIND(string) DETail(string)
	capture confirm file `"`using'"'
	local new = _rc != 0
	tempname fh
	file open `fh' using `"`using'"', write append text
	if (`new') file write `fh' "model,kind,detail" _n
	file write `fh' `"`model',`kind',"`detail'""' _n
	file close `fh'
end

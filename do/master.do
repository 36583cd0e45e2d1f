* lapbias: the protocol's estimation steps (3-5 and the bootstrap) on the panels exported by `lapbias panel`.
* Run from the project root:  stata-mp -b do do/master.do   (or: lapbias estimate CONFIG --engine stata)
version 15
clear all
set more off
adopath + "ado"
capture mkdir results
capture mkdir "results/figures"
capture mkdir logs
log using "logs/stata_master.log", replace text
do "do/01_validation.do"
do "do/02_detection.do"
do "do/03_placebo.do"
do "do/04_bootstrap.do"
log close

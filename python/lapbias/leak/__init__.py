"""NumLeak audit (numleak-paper.txt §2–§6): does the model recall a public numeric series from a date alone?

series.py (input) -> probes/ (App. O variants, one file each) -> pipeline.py (cached queries, the probe panel)
-> parse.py, metrics.py (§2), readouts.py (App. R, T), leakshare.py (App. N) -> report.py (REPORT.md section,
calibration figure). `lapbias leak CONFIG` runs it; config.py reads the `[leak]` section.
"""

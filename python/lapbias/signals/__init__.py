"""The three LLM signals: forecast (protocol Step 1), recall (Step 2), Min-K% prob (paper eq. 1).

Each module has `queries(...)` (what to ask, with cache keys), `asker(...)` (the function asking a batch, which `run`
and the dry run share, so an answer the dry run timed is the one the run would have asked), `run(...)` (ask what the
cache lacks, batch.py: confirmed, timed, timing.py) and `derive(...)` (build the derived parquet from the cache alone,
so `lapbias rebuild` is deterministic).
"""

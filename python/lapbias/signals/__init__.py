"""The three LLM signals: forecast (protocol Step 1), recall (Step 2), Min-K% prob (paper eq. 1).

Each module has `queries(...)` (what to ask, with cache keys), `run(...)` (ask what the cache lacks) and
`derive(...)` (build the derived parquet from the cache alone, so `lapbias rebuild` is deterministic).
"""

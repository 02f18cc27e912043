"""Benchmarks of the analytics pipeline: `python -m bench.analytics.bench` (whole run
against DuckDB), `python -m bench.analytics.stages` (per stage), `python -m
bench.analytics.generate` (synthetic logs)."""

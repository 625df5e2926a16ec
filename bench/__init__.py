"""Benchmarks and the chaos harness (run as `python -m bench.<name>`; see README)."""

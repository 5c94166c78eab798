"""Benchmarks: they print figures and gate nothing (`python -m lab.benchmarks.<name>`)."""

"""Benchmarks: they print figures and gate nothing (`python -m benchmarks.<name>`)."""

"""Releasing the chart: the package users install (package.py) and the version policy (versions.py)."""

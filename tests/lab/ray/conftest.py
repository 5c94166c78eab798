"""The lab's Ray tier: the submitter's benchmarks run and print their figures."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

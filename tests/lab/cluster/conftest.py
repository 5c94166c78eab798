"""The lab's cluster tier: the local cluster's processes, and the scale benchmark on it."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

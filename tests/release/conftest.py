"""Release: the chart as it is published (ct lint, the signed package, the version policy, the license)."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

"""The lab's generator tier: the lab's pins as setup reads them, the dashboards' generators."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

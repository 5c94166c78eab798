"""Tier 4, Ray: the submitter against a real Ray head (CPU, logical GPUs), and the preparation program. Each file
runs on one parallel worker, its module's Ray head started once (support.tiers.KEPT_TOGETHER)."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

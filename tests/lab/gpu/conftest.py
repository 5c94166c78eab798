"""The GPU proof's tooling that needs no GPU (the GPU runs themselves: docs/gpu-proof.md, never CI's)."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

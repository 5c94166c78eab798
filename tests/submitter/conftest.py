"""The submitter's decisions on the answers a Ray head gives, in process: the standard library and a local HTTP
server, no Ray. In the fast lane (the Makefile's FAST_TIERS), so a change to how the submitter classifies the head's
answers fails there; its runs against a real Ray head are tier 4's (tests/ray/)."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

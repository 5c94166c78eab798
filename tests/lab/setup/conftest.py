"""The lab's setup tier: the project venv, setup's step runner, the test tiers and their parallel work units,
make mutate's tables."""

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401

"""Test tiers (docs/testing.md), each a pytest marker and a folder: `pytest -m chart`, `pytest -m "not cluster"`.
tests/<tier>/ holds the product's tests of a tier, tests/lab/<tier>/ the lab's own (its tooling's). A test's tier
is the name of the folder its file sits in: that folder's conftest.py marks its tests (`mark_tier`), so a new test
file joins its tier by where it is written, with no list to edit. The tiers that start daemons also say how
parallel workers share them (tests/support/workers.py)."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

# The tiers in docs/testing.md's order, each with what it holds (`pytest --markers` prints it).
TIERS = {
    "setup": "the project venv, setup's step runner, the tiers themselves, make mutate's tables",
    "generator": "tier 1: the generator and the schema, no Helm cluster",
    "chart": "tier 2: the chart linted, rendered with Helm 3 and 4 and validated strictly; bad input",
    "release": "the chart as published: ct lint, the signed package, the version policy, the license",
    "verl": "tier 3: the rendered command composed with veRL's own config",
    "submitter": "the submitter's decisions on a head's answers: the standard library and a local HTTP server, no Ray",
    "ray": "tier 4: the submitter and the preparation program against a real Ray head",
    "observability": "tier 5: dashboards' PromQL, a real Prometheus scraping Ray, the tracing hook",
    "cluster": "tier 6: a local control plane with kwok GPU nodes and the real KubeRay operator",
    "pods": "tier 7: the local control plane with a real node running the release's containers",
    "gpu": "the GPU proof's tooling that needs no GPU",
}

# How a daemon tier's tests keep together on one parallel worker:
# - "tier": the whole tier on one worker: its session fixture (the real node: one per machine) starts once;
# - "file": each file on one worker: its module fixtures (a Ray head) start once, files run side by side,
#   and a worker that runs kwok-cluster files starts its one local cluster for all of them.
# Every other test goes alone to whichever worker is free.
KEPT_TOGETHER = {"pods": "tier", "cluster": "file", "ray": "file", "observability": "file", "gpu": "file"}


def tier_of(nodeid: str) -> str:
    """A test's tier: the name of the folder its file sits in (tests/chart/test_chart.py::test_a -> chart)."""
    path = PurePosixPath(nodeid.split("::", 1)[0])
    if path.parent.name not in TIERS:
        raise pytest.UsageError(f"{path} is in no tier's folder: move it to tests/<tier>/ (a test of the product) or "
                                f"tests/lab/<tier>/ (a test of the lab's tooling), <tier> one of {', '.join(TIERS)}")
    return path.parent.name


def mark_tier(item: pytest.Item) -> None:
    """Each tier folder's conftest.py runs this as its pytest_itemcollected: pytest calls a conftest's hook
    for the items under that conftest's folder only, so every test of the folder gets the folder's marker."""
    item.add_marker(getattr(pytest.mark, tier_of(item.nodeid)))


def work_unit(nodeid: str) -> str:
    """The unit a parallel worker runs whole: a tier, a file, or the one test."""
    path = nodeid.split("::", 1)[0]
    tier = tier_of(path)
    kept = KEPT_TOGETHER.get(tier)
    if kept == "tier":
        return f"tier:{tier}"
    if kept == "file":
        return f"file:{path}"
    return nodeid

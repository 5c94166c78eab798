"""Test tiers (docs/testing.md), each a pytest marker: `pytest -m chart`, `pytest -m "not cluster"`.
Every test file belongs to exactly one tier, by its name; the tiers that start daemons also say how
parallel workers share them (tests/support/workers.py)."""

from __future__ import annotations

from fnmatch import fnmatch

import pytest

TIERS = {
    "generator": ("test_generator.py", "test_sizing.py", "test_discover.py", "test_summary.py", "test_docs.py",
                  "test_quantity.py", "test_valuesdoc.py", "test_paths.py", "test_dashboards.py"),
    "setup": ("test_setup.py", "test_tiers.py", "test_mutate.py"),
    "chart": ("test_chart.py", "test_chart_rayjob.py", "test_bad_input.py", "test_subcharts.py", "test_seed_parity.py",
              "test_observability_chart.py", "test_chart_metadata.py", "test_chart_networkpolicy.py",
              "test_chart_security.py", "test_chart_destinations.py", "test_chart_rendercache.py",
              "test_chart_faulttolerance.py", "test_chart_labels.py", "test_chart_rayauth.py",
              "test_chart_kueue.py", "test_chart_templates.py"),
    "release": ("test_release_*.py",),
    "verl": ("test_verl_config.py",),
    "ray": ("test_submitter_ray.py", "test_submitter_unit.py", "test_submitter_rayjob.py", "test_submitter_logs.py",
            "test_submitter_faults.py",
             "test_submitter_auth.py",              "test_prepare.py", "test_benchmarks.py"),
    "observability": ("test_observability_promql.py", "test_observability_prometheus.py",
                      "test_observability_tracing.py", "test_observability_rollout.py"),
    "cluster": ("test_cluster_*.py",),
    "pods": ("test_pods*.py",),
    "gpu": ("test_gpu_*.py",),
}

# How a daemon tier's tests keep together on one parallel worker:
# - "tier": the whole tier on one worker: its session fixture (the real node: one per machine) starts once;
# - "file": each file on one worker: its module fixtures (a Ray head) start once, files run side by side,
#   and a worker that runs kwok-cluster files starts its one local cluster for all of them.
# Every other test goes alone to whichever worker is free.
KEPT_TOGETHER = {"pods": "tier", "cluster": "file", "ray": "file", "observability": "file", "gpu": "file"}


def tier_of(file_name: str) -> str:
    tiers = [tier for tier, patterns in TIERS.items() if any(fnmatch(file_name, pattern) for pattern in patterns)]
    if len(tiers) != 1:
        raise pytest.UsageError(f"tests/{file_name} must match exactly one tier of tests/support/tiers.py TIERS, "
                                f"not {tiers}")
    return tiers[0]


def work_unit(nodeid: str) -> str:
    """The unit a parallel worker runs whole: a tier, a file, or the one test."""
    path = nodeid.split("::", 1)[0]
    tier = tier_of(path.rsplit("/", 1)[-1])
    kept = KEPT_TOGETHER.get(tier)
    if kept == "tier":
        return f"tier:{tier}"
    if kept == "file":
        return f"file:{path}"
    return nodeid

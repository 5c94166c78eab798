import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import tools  # noqa: E402
from support.kubeschema import Validator  # noqa: E402


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: run scripts/setup.sh (make setup) first")
    return path


@pytest.fixture(scope="session", params=["helm3", "helm4"])
def helm(request) -> Path:
    """Each chart test runs with Helm 3 and with Helm 4."""
    return _require(tools.helm_binaries()[request.param])


@pytest.fixture(scope="session")
def validator() -> Validator:
    crds = tools.crd_files()
    if len(crds) < 3:
        pytest.fail("CRDs missing under the tool cache: run scripts/setup.sh (make setup) first")
    return Validator(_require(tools.kubernetes_openapi()), crds)


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory):
    """Tier 6: one local cluster (etcd, apiserver, controller-manager, scheduler, kwok, KubeRay) per session."""
    from support.cluster import start_test_cluster
    from tools.localcluster.parts import parts

    missing = parts().missing()
    if missing:
        pytest.fail(f"local cluster parts missing: {', '.join(map(str, missing))}: run scripts/setup.sh first")
    cluster = start_test_cluster(tmp_path_factory.mktemp("localcluster"))
    yield cluster
    cluster.cluster.stop()


# Test tiers (README, "Layout"), each a marker: `pytest -m chart`, `pytest -m "not cluster"`.
# Every test file belongs to exactly one tier, by its name.
TIERS = {
    "generator": ("test_generator.py", "test_sizing.py", "test_discover.py", "test_summary.py",
                  "test_quantity.py", "test_valuesdoc.py", "test_paths.py", "test_dashboards.py"),
    "setup": ("test_setup.py",),
    "chart": ("test_chart.py", "test_chart_rayjob.py", "test_bad_input.py", "test_subcharts.py", "test_seed_parity.py",
              "test_observability_chart.py", "test_chart_metadata.py", "test_chart_networkpolicy.py",
              "test_chart_security.py", "test_chart_destinations.py", "test_chart_rendercache.py",
              "test_chart_faulttolerance.py"),
    "release": ("test_release_*.py",),
    "verl": ("test_verl_config.py",),
    "ray": ("test_submitter_ray.py", "test_submitter_rayjob.py", "test_submitter_logs.py", "test_submitter_faults.py",
             "test_prepare.py", "test_benchmarks.py"),
    "observability": ("test_observability_promql.py", "test_observability_prometheus.py",
                      "test_observability_tracing.py"),
    "cluster": ("test_cluster_*.py",),
    "pods": ("test_pods*.py",),
    "gpu": ("test_gpu_*.py",),
}


def tier_of(file_name: str) -> str:
    from fnmatch import fnmatch

    tiers = [tier for tier, patterns in TIERS.items() if any(fnmatch(file_name, pattern) for pattern in patterns)]
    if len(tiers) != 1:
        raise pytest.UsageError(f"tests/{file_name} must match exactly one tier of tests/conftest.py TIERS, not {tiers}")
    return tiers[0]


def pytest_configure(config):
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: test tier {tier} (tests/conftest.py TIERS)")


def pytest_terminal_summary(terminalreporter):
    from support.rendercache import RENDERS

    terminalreporter.write_line(RENDERS.summary())


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(getattr(pytest.mark, tier_of(item.path.name)))


@pytest.fixture(scope="session")
def pod_cluster(tmp_path_factory):
    """Tier 7: the local cluster with a real node (kubelet, containerd, CNI, kube-proxy, CoreDNS, kube-router)."""
    from support.realnode import start_pod_cluster
    from tools.localcluster.parts import parts, realnode_parts

    missing = parts().missing() + realnode_parts().missing()
    if missing:
        pytest.fail(f"real node parts missing: {', '.join(map(str, missing))}: run scripts/setup.sh first")
    cluster = start_pod_cluster(tmp_path_factory.mktemp("podcluster"))
    yield cluster
    cluster.cluster.stop()

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from support import tools  # noqa: E402
from support.kubeschema import Validator  # noqa: E402
from support.tiers import TIERS, tier_of  # noqa: E402

# generator check runs $HELM before any helm on PATH: the tests run it with the Helm 4 that setup pins.
os.environ["HELM"] = str(tools.helm_binaries()["helm4"])


def _require(path: Path) -> Path:
    if not path.exists():
        pytest.fail(f"{path} is missing: run lab/scripts/setup.sh (make setup) first")
    return path


@pytest.fixture(scope="session", params=["helm3", "helm4"])
def helm(request) -> Path:
    """Each chart test runs with Helm 3 and with Helm 4."""
    return _require(tools.helm_binaries()[request.param])


@pytest.fixture(scope="session")
def validator() -> Validator:
    crds = tools.crd_files()
    if len(crds) < 3:
        pytest.fail("CRDs missing under the tool cache: run lab/scripts/setup.sh (make setup) first")
    return Validator(_require(tools.kubernetes_openapi()), crds)


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory):
    """Tier 6: one local cluster (etcd, apiserver, controller-manager, scheduler, kwok, KubeRay) per session."""
    from support.cluster import start_test_cluster
    from lab.localcluster.parts import parts

    missing = parts().missing() + parts().missing_for_tests()
    if missing:
        pytest.fail(f"local cluster parts missing: {', '.join(map(str, missing))}: run lab/scripts/setup.sh first")
    cluster = start_test_cluster(tmp_path_factory.mktemp("localcluster"))
    yield cluster
    cluster.cluster.stop()


def pytest_configure(config):
    for tier in TIERS:
        config.addinivalue_line("markers", f"{tier}: test tier {tier} (tests/support/tiers.py TIERS)")


# The render cache's counts of each xdist worker, handed over when the worker ends.
WORKER_RENDER_COUNTS: list[dict[str, int]] = []


def pytest_sessionfinish(session):
    from support.rendercache import RENDERS

    if hasattr(session.config, "workeroutput"):  # an xdist worker
        session.config.workeroutput["render_counts"] = RENDERS.counts()


@pytest.hookimpl(optionalhook=True)  # an xdist hook: only called where xdist runs the session
def pytest_testnodedown(node, error):
    if "render_counts" in getattr(node, "workeroutput", {}):
        WORKER_RENDER_COUNTS.append(node.workeroutput["render_counts"])


def pytest_terminal_summary(terminalreporter):
    from support.rendercache import RENDERS, summary

    terminalreporter.write_line(summary(WORKER_RENDER_COUNTS or [RENDERS.counts()]))


@pytest.hookimpl(optionalhook=True)  # an xdist hook: only called where xdist runs the session
def pytest_xdist_make_scheduler(config, log):
    from support.workers import TierScheduling

    return TierScheduling(config, log)


def pytest_collection_modifyitems(items):
    for item in items:
        item.add_marker(getattr(pytest.mark, tier_of(item.path.name)))


@pytest.fixture(scope="session")
def pod_cluster(tmp_path_factory):
    """Tier 7: the local cluster with a real node (kubelet, containerd, CNI, kube-proxy, CoreDNS, kube-router)."""
    from support.realnode import start_pod_cluster
    from lab.localcluster.parts import parts, realnode_parts

    missing = parts().missing() + parts().missing_for_tests() + realnode_parts().missing()
    if missing:
        pytest.fail(f"real node parts missing: {', '.join(map(str, missing))}: run lab/scripts/setup.sh first")
    cluster = start_pod_cluster(tmp_path_factory.mktemp("podcluster"))
    yield cluster
    cluster.cluster.stop()

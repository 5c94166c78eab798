"""Tier 6, cluster: a local control plane (etcd, apiserver, controller-manager, scheduler) with kwok GPU nodes and
the real KubeRay operator, started once per parallel worker that runs any of these files."""

import pytest

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401


@pytest.fixture(scope="session")
def local_cluster(tmp_path_factory):
    """One local cluster (etcd, apiserver, controller-manager, scheduler, kwok, KubeRay) per session."""
    from support.cluster import start_test_cluster
    from lab.localcluster.parts import parts

    missing = parts().missing() + parts().missing_for_tests()
    if missing:
        pytest.fail(f"local cluster parts missing: {', '.join(map(str, missing))}: run lab/scripts/setup.sh first")
    cluster = start_test_cluster(tmp_path_factory.mktemp("localcluster"))
    yield cluster
    cluster.cluster.stop()

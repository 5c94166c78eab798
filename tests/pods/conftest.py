"""Tier 7, pods: the local control plane with the machine's one real node running the release's containers; the
whole tier runs on one parallel worker (support.tiers.KEPT_TOGETHER)."""

import pytest

from support.tiers import mark_tier as pytest_itemcollected  # noqa: F401


@pytest.fixture(scope="session")
def pod_cluster(tmp_path_factory):
    """The local cluster with a real node (kubelet, containerd, CNI, kube-proxy, CoreDNS, kube-router)."""
    from support.realnode import start_pod_cluster
    from lab.localcluster.parts import parts, realnode_parts

    missing = parts().missing() + parts().missing_for_tests() + realnode_parts().missing()
    if missing:
        pytest.fail(f"real node parts missing: {', '.join(map(str, missing))}: run lab/scripts/setup.sh first")
    cluster = start_pod_cluster(tmp_path_factory.mktemp("podcluster"))
    yield cluster
    cluster.cluster.stop()

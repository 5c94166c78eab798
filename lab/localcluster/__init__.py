"""A Kubernetes cluster on one machine, built from its parts (no Docker, no kubelet).

etcd, kube-apiserver, kube-controller-manager and kube-scheduler run as local processes; kwok plays
the GPU nodes (its pods go Running and Ready without containers); the real KubeRay operator
reconciles RayClusters. `python -m lab.localcluster demo|down|status` drives it; the tests (tier 6)
and `make demo` use `LocalCluster` directly.
"""

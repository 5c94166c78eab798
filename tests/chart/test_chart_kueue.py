"""Tier 2: Kueue's elastic admission of an autoscaling RayCluster (raycluster.queue.elastic; Kueue 0.18 and later):
the annotation that asks for it and Kueue's scheduling gate on every Ray pod template, rendered by the chart so that
an upgrade keeps the gate Kueue's webhook adds only at creation (its validation refuses an elastic cluster without
it). Refusals (elastic without autoscaling, in RayJob mode): test_bad_input. The upgrade rules that read the live
object (queue label, elastic switch): tests/cluster/test_cluster_queue.py against a real Kueue."""

from __future__ import annotations

from support import helm as helm_cli

ELASTIC = ["--set", "raycluster.queue.kueue=team-a", "--set", "raycluster.queue.elastic=true",
           "--set", "raycluster.worker.autoscaling.enabled=true",
           "--set", "raycluster.worker.autoscaling.minReplicas=1",
           "--set", "raycluster.worker.autoscaling.maxReplicas=4"]
GATE = {"name": "kueue.x-k8s.io/elastic-job"}


def ray_cluster(helm, validator, *args: str) -> dict:
    return next(d for d in helm_cli.rendered_valid(helm, validator, *args) if d["kind"] == "RayCluster")


def templates(cluster: dict) -> list[dict]:
    spec = cluster["spec"]
    return [spec["headGroupSpec"]["template"]] + [group["template"] for group in spec["workerGroupSpecs"]]


def test_an_elastic_cluster_asks_kueue_and_carries_its_gate(helm, validator):
    cluster = ray_cluster(helm, validator, *ELASTIC)
    assert cluster["metadata"]["annotations"]["kueue.x-k8s.io/elastic-job"] == "true"
    assert cluster["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] == "team-a"
    assert cluster["spec"]["enableInTreeAutoscaling"] is True
    assert all(template["spec"]["schedulingGates"] == [GATE] for template in templates(cluster))


def test_a_fixed_size_queued_cluster_has_neither(helm, validator):
    cluster = ray_cluster(helm, validator, "--set", "raycluster.queue.kueue=team-a")
    assert "kueue.x-k8s.io/elastic-job" not in cluster["metadata"].get("annotations", {})
    assert not any("schedulingGates" in template["spec"] for template in templates(cluster))


def test_autoscaling_in_a_queue_names_elastic_admission_as_the_fix(helm):
    result = helm_cli.template(helm, *ELASTIC, "--set", "raycluster.queue.elastic=false")
    assert result.returncode != 0
    assert "raycluster.worker.autoscaling.enabled=true" in result.output
    assert "--set raycluster.queue.elastic=true" in result.output


def test_the_notes_of_a_queued_release_name_helm_4s_upgrade_flag():
    """Kueue's admission makes the worker groups Kueue's field: Helm 4's default upgrade conflicts there (tier 6,
    tests/cluster/test_cluster_queue.py), so the NOTES of a queued release give the upgrade that passes."""
    for mode in ("RayCluster", "RayJob"):
        notes = helm_cli.notes("--set", "raycluster.queue.kueue=team-a", "--set", f"global.mode={mode}")
        assert "helm upgrade verl-ppo <chart> -n training --server-side=false ..." in notes, notes
    assert "--server-side=false" not in helm_cli.notes()

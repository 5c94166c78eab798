"""Tier 2: every values file (and the defaults) lints and renders with Helm 3 and Helm 4, and every
rendered object passes strict schema validation (Kubernetes OpenAPI, KubeRay and prometheus-operator CRDs).
The plain cases, a value in and a field out, are the chart's helm-unittest suites (charts/verl-ppo/tests/)."""

import ast
import json
import shutil
from collections import Counter

import pytest
import yaml

from generator import paths
from lab.localcluster.release import REALNODE_VALUES
from support import helm as helm_cli
from support.tools import ROOT

VALUES = ROOT / "values"
SHAPE_FILES = sorted(VALUES.glob("*.yaml"))
# VKE needs the user's bucket and Secret: the overlay leaves them empty on purpose.
PLATFORMS = {
    "none": [],
    "vke": ["-f", str(VALUES / "platforms" / "vke.yaml"), "--set", "storage.tos.bucket=training-data",
            "--set", "storage.tos.secretName=tos-credentials"],
    "generic": ["-f", str(VALUES / "platforms" / "generic.yaml")],
}
SCENARIOS = [pytest.param([], id="defaults")] + [
    pytest.param(["-f", str(path), *extra], id=f"{path.stem}+{platform}")
    for path in SHAPE_FILES
    for platform, extra in PLATFORMS.items()
]
# values/examples/: overlays, each on the values files its "# Use:" line stacks it on.
EXAMPLES = sorted((VALUES / "examples").glob("*.yaml"))


def example_stack(path) -> list[str]:
    """The -f arguments of an example's "# Use: helm install ... -f a -f b" line, as paths of this checkout."""
    use = next(line for line in path.read_text().splitlines() if line.startswith("# Use: helm install"))
    words = use.split()
    return [arg for index, word in enumerate(words[:-1]) if word == "-f"
            for arg in ("-f", str(ROOT / words[index + 1]))]


SCENARIOS += [pytest.param(example_stack(path), id=f"examples/{path.stem}") for path in EXAMPLES]
# The chart's ci scenarios, and the lab's real node values (tier 7 and make demo install them).
CI_VALUES = sorted((ROOT / "charts" / "verl-ppo" / "ci").glob("*-values.yaml")) + [REALNODE_VALUES]


def assert_valid(result, validator) -> list[dict]:
    return helm_cli.valid_documents(result, validator)


@pytest.mark.parametrize("args", SCENARIOS)
def test_lint_strict(helm, args):
    result = helm_cli.lint(helm, *args)
    assert result.returncode == 0, result.output
    assert "[WARNING]" not in result.output and "[ERROR]" not in result.output


@pytest.mark.parametrize("args", SCENARIOS)
def test_template_renders_only_valid_objects(helm, validator, args):
    documents = assert_valid(helm_cli.template(helm, *args), validator)
    kinds = Counter(doc["kind"] for doc in documents)
    assert kinds["RayCluster"] == 1 and kinds["Job"] == 2 and kinds["PodMonitor"] == 2  # run + uninstall hook
    assert kinds["PersistentVolumeClaim"] == 1 and kinds["NetworkPolicy"] == 1


@pytest.mark.parametrize("path", CI_VALUES, ids=[p.stem for p in CI_VALUES])
def test_ci_scenarios(helm, validator, path):
    assert_valid(helm_cli.template(helm, "-f", str(path)), validator)


def test_ci_scenarios_exist():
    assert len(CI_VALUES) >= 5


def test_validator_rejects_unknown_fields_and_unknown_kinds(validator):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i", "bogusField": 1}]}}
    assert any("bogusField" in e for e in validator.errors(pod))
    cluster = {"apiVersion": "ray.io/v1", "kind": "RayCluster", "metadata": {"name": "r"},
               "spec": {"headGroupSpec": {"rayStartParams": {}, "template": {}}, "bogus": True}}
    assert any("bogus" in e for e in validator.errors(cluster))
    assert validator.errors({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})


def test_storage_modes_render_valid_objects(helm, validator):
    tos = assert_valid(helm_cli.template(helm, "--set", "storage.type=tos", "--set", "storage.tos.bucket=b",
                                         "--set", "storage.tos.region=cn-beijing", "--set",
                                         "storage.tos.endpoint=tos-cn-beijing.ivolces.com",
                                         "--set", "storage.tos.secretName=tos-creds"), validator)
    pv = next(d for d in tos if d["kind"] == "PersistentVolume")
    assert pv["spec"]["csi"]["driver"] == "fsx.csi.volcengine.com"
    assert pv["spec"]["csi"]["volumeAttributes"]["secretName"] == "tos-creds"
    pvc = next(d for d in tos if d["kind"] == "PersistentVolumeClaim")
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] and pvc["spec"]["storageClassName"] == ""
    assert pvc["metadata"]["annotations"]["helm.sh/resource-policy"] == "keep"
    nas = assert_valid(helm_cli.template(helm, "--set", "storage.type=nas", "--set", "storage.nas.server=10.0.0.5"),
                       validator)
    assert next(d for d in nas if d["kind"] == "PersistentVolume")["spec"]["csi"]["driver"] == "nas.csi.volcengine.com"
    existing = assert_valid(helm_cli.template(helm, "--set", "storage.enabled=false",
                                              "--set", "global.storage.existingClaim=team-data"), validator)
    assert not [d for d in existing if d["kind"] in ("PersistentVolumeClaim", "PersistentVolume")]
    cluster = next(d for d in existing if d["kind"] == "RayCluster")
    volumes = cluster["spec"]["headGroupSpec"]["template"]["spec"]["volumes"]
    assert {"name": "shared-data", "persistentVolumeClaim": {"claimName": "team-data"}} in volumes


def test_cpu_only_head_moves_all_training_to_workers(helm, validator):
    documents = assert_valid(helm_cli.template(helm, "--set", "raycluster.head.trainsOnHead=false"), validator)
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    head_limits = cluster["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert "nvidia.com/gpu" not in head_limits
    group = cluster["spec"]["workerGroupSpecs"][0]
    assert group["replicas"] == group["minReplicas"] == group["maxReplicas"] == 2


def test_autoscaling_sets_the_range(helm, validator):
    documents = assert_valid(helm_cli.template(
        helm, "--set", "raycluster.worker.autoscaling.enabled=true", "--set",
        "raycluster.worker.autoscaling.minReplicas=1", "--set", "raycluster.worker.autoscaling.maxReplicas=4"),
        validator)
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    group = cluster["spec"]["workerGroupSpecs"][0]
    assert (group["replicas"], group["minReplicas"], group["maxReplicas"]) == (1, 1, 4)
    assert cluster["spec"]["enableInTreeAutoscaling"] is True


# A lone ClusterQueue of two flavors: 4 + 2 GPUs (the second written as Kueue may write it back), CPUs beside them.
CLUSTER_QUEUE = {"spec": {"resourceGroups": [{"flavors": [
    {"resources": [{"name": "cpu", "nominalQuota": 64}, {"name": "nvidia.com/gpu", "nominalQuota": 4}]},
    {"resources": [{"name": "nvidia.com/gpu", "nominalQuota": "2"}]}]}]}}


def test_queue_gpu_quota_sums_the_gpu_resource_over_the_flavors(helm, tmp_path):
    """The quota that a release larger than its ClusterQueue's is refused against (read with lookup on install:
    helm template has no cluster, so the helper is rendered here from a template added to a copy of the chart)."""
    chart = tmp_path / "verl-ppo"
    shutil.copytree(ROOT / "charts" / "verl-ppo", chart)
    probe = f'{{{{ include "raycluster.queueGpuQuota" (dict "clusterQueue" (fromJson `{json.dumps(CLUSTER_QUEUE)}`) ' \
            '"resource" "nvidia.com/gpu") }}'
    (chart / "templates" / "probe.yaml").write_text(f"quota: {probe}\n")
    result = helm_cli.template(helm, "--show-only", "templates/probe.yaml", chart=chart)
    assert result.returncode == 0, result.output
    assert result.documents() == [{"quota": 6}]


NGINX_PEERS = {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}}


def test_ingress_with_access_control(helm, validator):
    nginx = assert_valid(helm_cli.template(
        helm, "--set", "raycluster.ingress.enabled=true", "--set", "raycluster.ingress.className=nginx",
        "--set", "raycluster.ingress.accessControl.sourceRanges={10.0.0.0/8}", "--set",
        "raycluster.ingress.accessControl.basicAuthSecret=dashboard-users",
        "--set-json", f"raycluster.networkPolicy.dashboardFrom={json.dumps([NGINX_PEERS])}"), validator)
    ingress = next(d for d in nginx if d["kind"] == "Ingress")
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/whitelist-source-range"] == "10.0.0.0/8"
    assert annotations["nginx.ingress.kubernetes.io/auth-secret"] == "dashboard-users"
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {"name": "verl-ppo-head-svc", "port": {"number": 8265}}
    policy = next(d for d in nginx if d["kind"] == "NetworkPolicy")
    # Only the ingress controller reaches the dashboard port, not every pod past the Ingress's access control.
    assert {"ports": [{"port": 8265}], "from": [NGINX_PEERS]} in policy["spec"]["ingress"]
    alb = assert_valid(helm_cli.template(
        helm, "--set", "raycluster.ingress.enabled=true", "--set", "raycluster.ingress.provider=alb",
        "--set", "raycluster.ingress.className=alb", "--set",
        "raycluster.ingress.accessControl.enforcedExternally=true",
        "--set-json", 'raycluster.networkPolicy.dashboardFrom=[{"ipBlock":{"cidr":"10.20.0.0/16"}}]'), validator)
    alb_ingress = next(d for d in alb if d["kind"] == "Ingress")
    assert alb_ingress["metadata"]["annotations"]["ingress.vke.volcengine.com/loadbalancer-protocol"] == "http"


def test_notes_give_the_dashboard_url_with_the_ingress_scheme():
    args = ("--set", "raycluster.ingress.enabled=true", "--set", "raycluster.ingress.allowUnauthenticated=true",
            "--set", "raycluster.networkPolicy.dashboardFromAnywhere=true",
            "--set", "raycluster.ingress.host=ray.example.com")
    assert "at http://ray.example.com/" in helm_cli.notes(*args)
    tls = helm_cli.notes(*args, "--set", "raycluster.ingress.tls[0].secretName=ray-tls",
                         "--set", "raycluster.ingress.tls[0].hosts[0]=ray.example.com")
    assert "at https://ray.example.com/" in tls


def test_head_service_leaves_the_cluster_only_by_explicit_choice(helm, validator):
    """The failing case is in test_bad_input (head-service-outside-the-cluster)."""
    args = ("--set", "raycluster.head.serviceType=NodePort",
            "--set", "raycluster.head.allowUnauthenticatedService=true")
    documents = assert_valid(helm_cli.template(helm, *args), validator)
    assert next(d for d in documents if d["kind"] == "RayCluster")["spec"]["headGroupSpec"]["serviceType"] == "NodePort"
    assert "The NodePort head Service also publishes it, with no access control." in helm_cli.notes(*args)
    assert "not exposed outside the cluster" in helm_cli.notes()


def test_every_object_carries_the_recommended_labels(helm):
    """Helm's recommended labels, by which tools list and tell apart a release's objects: the app (part of
    verl-ppo, its version), who manages it, and the chart that made it (a component's, with its version)."""
    subcharts = [yaml.safe_load((paths.subchart_dir(name) / "Chart.yaml").read_text())
                 for name in paths.components()]
    made_by = {f"{chart['name']}-{chart['version']}" for chart in subcharts}
    documents = helm_cli.template(helm, "--set", "global.tensorboard.enabled=true").documents()
    for document in documents:
        labels, where = document["metadata"].get("labels", {}), f"{document['kind']}/{document['metadata']['name']}"
        assert labels.get("app.kubernetes.io/part-of") == "verl-ppo", where
        assert labels.get("app.kubernetes.io/version") == subcharts[0]["appVersion"], where
        assert labels.get("app.kubernetes.io/managed-by") == "Helm", where
        assert labels.get("helm.sh/chart") in made_by, where


def submitter_job(documents: list[dict]) -> dict:
    return next(d for d in documents if d["kind"] == "Job" and d["metadata"]["labels"]["app.kubernetes.io/component"]
                == "ppo-job" and "annotations" not in d["metadata"])


def test_submitter_pod_is_least_privilege(helm):
    documents = helm_cli.template(helm).documents()
    job = submitter_job(documents)
    pod = job["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    container = pod["containers"][0]
    assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
    assert container["securityContext"]["allowPrivilegeEscalation"] is False
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert env["RAY_DASHBOARD_URL"] == "http://verl-ppo-head-svc.training.svc:8265"
    assert env["VERL_PPO_EXPECTED_GPUS"] == "4"
    assert {m["name"]: m["readOnly"] for m in container["volumeMounts"]} == {"job-spec": True, "shared-data": True}
    # Its API token may read its own Job and nothing else (to tell a deleted Job from an eviction).
    role = next(d for d in documents if d["kind"] == "Role")
    assert role["rules"] == [{"apiGroups": ["batch"], "resources": ["jobs"], "verbs": ["get"],
                              "resourceNames": [job["metadata"]["name"]]}]
    binding = next(d for d in documents if d["kind"] == "RoleBinding")
    assert binding["subjects"][0]["name"] == pod["serviceAccountName"] == role["metadata"]["name"]
    account = next(d for d in documents
                   if d["kind"] == "ServiceAccount" and d["metadata"]["name"] == role["metadata"]["name"])
    assert account["automountServiceAccountToken"] is False and pod["automountServiceAccountToken"] is True


def test_the_job_fails_at_once_when_its_submitter_says_no_retry_mends_it(helm):
    """The submitter's exit code for what no retry mends is the one the Job's podFailurePolicy fails on."""
    source = (ROOT / "charts" / "verl-ppo" / "charts" / "ppo-job" / "files" / "submitter.py").read_text()
    unmendable = next(ast.literal_eval(node.value) for node in ast.parse(source).body if isinstance(node, ast.Assign)
                      and any(getattr(target, "id", "") == "UNMENDABLE_EXIT" for target in node.targets))
    job = submitter_job(helm_cli.template(helm).documents())
    container = job["spec"]["template"]["spec"]["containers"][0]["name"]
    assert job["spec"]["podFailurePolicy"] == {"rules": [{"action": "FailJob", "onExitCodes": {
        "containerName": container, "operator": "In", "values": [unmendable]}}]}


def test_the_job_is_named_after_its_run(helm):
    """An upgrade that leaves the run alone keeps the Job (and its Ray job); a changed run gets a new one."""
    def job_name(*args: str) -> str:
        return submitter_job(helm_cli.template(helm, *args).documents())["metadata"]["name"]

    base = job_name()
    assert base.startswith("verl-ppo-ppo-job-") and len(base) == len("verl-ppo-ppo-job-") + 8
    assert job_name("--set", "observability.podMonitor.additionalLabels.release=prom") == base
    assert job_name("--set", "raycluster.head.annotations.note=x") == base
    assert job_name("--set", "ppo-job.trainer.totalEpochs=3") != base
    assert job_name("--set", "ppo-job.submitter.resources.limits.memory=512Mi") != base


def test_preparation_job_writes_where_the_run_reads(helm, validator):
    documents = assert_valid(helm_cli.template(helm, "--set", "ppo-job.prepare.enabled=true"), validator)
    prepare = next(d for d in documents if d["kind"] == "Job" and
                   d["metadata"]["labels"]["app.kubernetes.io/component"] == "prepare")
    pod = prepare["spec"]["template"]["spec"]
    container = pod["containers"][0]
    args = container["args"]
    assert dict(zip(args[::2], args[1::2], strict=True)) == {
        "--source": "huggingface", "--train-file": "/data/data/gsm8k/train.parquet",
        "--val-file": "/data/data/gsm8k/test.parquet", "--model-path": "/data/Qwen2.5-0.5B-Instruct",
        "--dataset-id": "openai/gsm8k", "--model-id": "Qwen/Qwen2.5-0.5B-Instruct"}
    assert {m["mountPath"]: m.get("readOnly", False) for m in container["volumeMounts"]}["/data"] is False
    assert pod["automountServiceAccountToken"] is False and pod["securityContext"]["runAsNonRoot"] is True
    submitter_env = {e["name"]: e.get("value") for e in
                     submitter_job(documents)["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert submitter_env["VERL_PPO_WAIT_FOR_INPUTS"] == "true"
    assert set(args) >= set(json.loads(submitter_env["VERL_PPO_INPUTS"])[:2])


def test_notes_tell_how_to_follow_the_run_and_find_checkpoints():
    from support.tools import helm_binaries

    notes = helm_cli.notes()
    job_name = submitter_job(helm_cli.template(helm_binaries()["helm4"]).documents())["metadata"]["name"]
    assert f"kubectl -n training logs -f job/{job_name}" in notes
    assert "Deleting that Job stops the run" in notes and "maxCheckpointsToKeep" in notes
    assert "/data/checkpoints/verl-ppo/gsm8k" in notes
    assert "port-forward svc/verl-ppo-head-svc 8265:8265" in notes


def test_without_its_ray_cluster_the_release_needs_another_and_says_where_the_run_goes(helm, validator):
    failed = helm_cli.template(helm, "--set", "raycluster.enabled=false")
    assert failed.returncode != 0
    assert 'ppo-job.dashboardURL="": is empty' in failed.stderr and "raycluster.enabled=false" in failed.stderr
    elsewhere = ("--set", "raycluster.enabled=false",
                 "--set", "ppo-job.dashboardURL=http://other-head-svc.ray.svc:8265")
    documents = assert_valid(helm_cli.template(helm, *elsewhere), validator)
    assert "RayCluster" not in {document["kind"] for document in documents}
    notes = helm_cli.notes(*elsewhere)
    assert "the run goes to the Ray cluster at http://other-head-svc.ray.svc:8265" in notes
    assert "port-forward svc/" not in notes


def test_every_example_stacks_on_its_node_types_values():
    for path in EXAMPLES:
        stack = example_stack(path)
        assert stack[-1] == str(path) and len(stack) >= 4, f"{path.name}: its Use line stacks it on no values file"


def test_the_lora_example_is_the_generators_lora_sizing_of_its_node_type(helm, tmp_path):
    """values/examples/lora-7b.yaml over the vendor guide's node type renders the run that `python -m generator render
    seed-2gpu --model qwen2.5-7b --algorithm grpo --lora-rank 32` writes: the same command and the same Ray cluster."""
    from generator.algorithms import algorithms
    from generator.catalog import load_catalog
    from generator.render import lora_version_for, render_shape, run_for, verl_version_for

    catalog, algorithm = load_catalog(), algorithms()["grpo"]
    shape = catalog.shapes["seed-2gpu"]
    version = lora_version_for(verl_version_for(catalog.verl, shape, algorithm), 32)
    generated = tmp_path / "seed-2gpu-grpo-lora32.yaml"
    generated.write_text(render_shape(shape, catalog.models["qwen2.5-7b"], run_for(algorithm, shape.default_nodes,
                                      verl_version=version, lora_rank=32), algorithm, catalog.verl))

    def run_objects(*args: str) -> dict:
        documents = helm_cli.template(helm, *args).documents()
        job = next(d for d in documents if d["kind"] == "ConfigMap" and "job.json" in d["data"])
        cluster = next(d for d in documents if d["kind"] == "RayCluster")
        return {"entrypoint": json.loads(job["data"]["job.json"])["entrypoint"], "cluster": cluster["spec"]}

    example = run_objects(*example_stack(VALUES / "examples" / "lora-7b.yaml"))
    assert "lora_rank=32" in example["entrypoint"]
    assert example == run_objects("-f", str(generated))

"""Tier 5 (chart side): PodMonitor settings, one Grafana dashboard ConfigMap per Ray dashboard (the pinned
Ray's generator output, unchanged since generation), the tracing hook on every Ray node, the head's Grafana
env, and TensorBoard (Pod Security "restricted", veRL's logger, the Ingress path); bad combinations fail in
Helm and in `generator check` alike."""

import json
import shlex

import pytest
import yaml

from lab.dashboards import dashboard_path, ray_dashboards
from generator.cli import main as generator_main
from support import helm as helm_cli
from support.tools import ROOT, image_args
from test_bad_input import Case, helm_names_path, named, stopped_by, values_file

CHART = ROOT / "charts" / "verl-ppo"
OBSERVABILITY = CHART / "ci" / "observability-values.yaml"
HOOK_FILE = CHART / "charts" / "raycluster" / "files" / "verl_ppo_tracing.py"
MiB = 1024 * 1024


def render(helm, validator, *args, **kwargs) -> list[dict]:
    return helm_cli.rendered_valid(helm, validator, *args, **kwargs)


def of_kind(documents: list[dict], kind: str) -> list[dict]:
    return [d for d in documents if d["kind"] == kind]


def ray_containers(documents: list[dict]) -> dict[str, dict]:
    cluster = of_kind(documents, "RayCluster")[0]["spec"]
    return {"head": cluster["headGroupSpec"]["template"], "worker": cluster["workerGroupSpecs"][0]["template"]}


def env_of(pod_template: dict) -> dict[str, str]:
    return {e["name"]: e.get("value") for e in pod_template["spec"]["containers"][0]["env"]}


def test_dashboards_are_the_pinned_rays_generator_output():
    generated = ray_dashboards.generate()
    for name, text in generated.items():
        path = dashboard_path(name)
        assert path.read_text() == text, f"{path} is stale or edited: run make dashboards"
    assert set(generated) >= {"default", "data", "train"}


def test_one_config_map_per_dashboard_for_the_grafana_sidecar(helm, validator):
    maps = {m["metadata"]["name"]: m for m in of_kind(render(helm, validator), "ConfigMap")
            if m["metadata"]["labels"].get("grafana_dashboard") == "1"}
    assert sorted(maps) == ["verl-ppo-dashboard-data", "verl-ppo-dashboard-default", "verl-ppo-dashboard-train"]
    for name, config_map in maps.items():
        assert config_map["metadata"]["annotations"] == {"grafana_folder": "Ray"}
        (key, text), = config_map["data"].items()
        board = json.loads(text)
        shipped = name.removeprefix("verl-ppo-dashboard-")
        assert key == f"ray-{shipped}-dashboard.json"
        assert board == json.loads(dashboard_path(shipped).read_text())
        assert any(v["name"] == "datasource" for v in board["templating"]["list"])
        assert all(panel.get("datasource") == "${datasource}" for panel in board["panels"] if panel.get("targets"))
        size = len(yaml.safe_dump(config_map).encode())
        assert size < MiB, f"{name}: {size} bytes"


def test_dashboard_label_folder_and_selection_are_settable(helm, validator):
    documents = render(helm, validator, "-f", str(OBSERVABILITY))
    maps = [m for m in of_kind(documents, "ConfigMap") if "grafana_dashboard_ray" in m["metadata"]["labels"]]
    assert len(maps) == 6 and all(m["metadata"]["labels"]["grafana_dashboard_ray"] == "true" for m in maps)
    assert {m["metadata"]["annotations"]["grafana_folder"] for m in maps} == {"Ray clusters"}
    assert "verl-ppo-dashboard-serve-deployment" in {m["metadata"]["name"] for m in maps}
    bare = render(helm, validator, "--set", "observability.dashboards.folderAnnotation=")
    assert all("annotations" not in m["metadata"] for m in of_kind(bare, "ConfigMap")
               if "grafana_dashboard" in m["metadata"]["labels"])
    off = render(helm, validator, "--set", "observability.dashboards.enabled=false")
    assert not [m for m in of_kind(off, "ConfigMap") if "grafana_dashboard" in m["metadata"]["labels"]]


def test_the_rollout_dashboard_ships_beside_rays_when_listed(helm, validator):
    """With the rollout servers' metrics it reads (without them the rulebook refuses it: test_bad_input.py)."""
    documents = render(helm, validator, "--set", "observability.dashboards.include={default,rollout}",
                       "--set", "global.rolloutMetrics.enabled=true", *image_args("0.9.1"))
    maps = {m["metadata"]["name"]: m for m in of_kind(documents, "ConfigMap")
            if m["metadata"]["labels"].get("grafana_dashboard") == "1"}
    assert sorted(maps) == ["verl-ppo-dashboard-default", "verl-ppo-dashboard-rollout"]
    (key, text), = maps["verl-ppo-dashboard-rollout"]["data"].items()
    assert key == "verl-rollout-dashboard.json"
    assert json.loads(text) == json.loads(dashboard_path("rollout").read_text())
    assert maps["verl-ppo-dashboard-rollout"]["metadata"]["annotations"] == {"grafana_folder": "Ray"}


ROLLOUT_METRICS = ["actor_rollout_ref.rollout.prometheus.enable=true",
                   "actor_rollout_ref.rollout.disable_log_stats=false",
                   "actor_rollout_ref.rollout.prometheus.port=9090",
                   "actor_rollout_ref.rollout.prometheus.file=/tmp/ray/verl-ppo/rollout-prometheus.yml"]
ROLLOUT_ON = ("--set", "global.rolloutMetrics.enabled=true", *image_args("0.9.1"))


def entrypoint_words(documents: list[dict]) -> list[str]:
    config = next(d for d in documents if d["kind"] == "ConfigMap" and "job.json" in d["data"])
    return shlex.split(json.loads(config["data"]["job.json"])["entrypoint"])


def rollout_metric_words(words: list[str]) -> list[str]:
    return [word for word in words if word.startswith(("actor_rollout_ref.rollout.prometheus.",
                                                       "actor_rollout_ref.rollout.disable_log_stats"))]


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_rollout_metrics_reach_veRL_the_head_sidecar_the_monitor_and_the_policy(helm, validator, engine):
    documents = render(helm, validator, *ROLLOUT_ON, "--set", f"ppo-job.rollout.name={engine}")
    assert rollout_metric_words(entrypoint_words(documents)) == ROLLOUT_METRICS
    pods = ray_containers(documents)
    head, = [c for c in pods["head"]["spec"]["containers"] if c["name"] == "rollout-prometheus"]
    assert [c["name"] for c in pods["worker"]["spec"]["containers"]] == ["ray-worker"]
    assert head["image"] == "quay.io/prometheus/prometheus:v3.16.0"
    assert head["ports"] == [{"name": "rollout-prom", "containerPort": 9090}]
    # veRL's file, on the Ray container's /tmp/ray volume, which the sidecar mounts elsewhere.
    ray_tmp = next(m for m in head["volumeMounts"] if m["name"] == "log-volume")["mountPath"]
    assert ray_tmp != "/tmp/ray"
    written = ROLLOUT_METRICS[3].split("=", 1)[1]
    assert {e["name"]: e["value"] for e in head["env"]}["SCRAPE_CONFIG"] == ray_tmp + written.removeprefix("/tmp/ray")
    assert head["resources"]["requests"] == head["resources"]["limits"]  # the head stays Guaranteed
    assert head["securityContext"]["runAsNonRoot"] and head["securityContext"]["readOnlyRootFilesystem"]
    assert {"name": "rollout-prometheus", "emptyDir": {}} in pods["head"]["spec"]["volumes"]
    monitor = next(m for m in of_kind(documents, "PodMonitor") if m["metadata"]["name"].endswith("ray-head"))
    endpoint = next(e for e in monitor["spec"]["podMetricsEndpoints"] if e["port"] == "rollout-prom")
    federated = ("/federate", {"match[]": ['{job="rollout"}']}, True)
    assert (endpoint["path"], endpoint["params"], endpoint["honorLabels"]) == federated
    assert endpoint["relabelings"][0]["targetLabel"] == "ray_io_cluster"
    policy = next(p for p in of_kind(documents, "NetworkPolicy") if p["metadata"]["name"].endswith("-ray"))
    metrics_rule = next(rule for rule in policy["spec"]["ingress"] if {"port": 8080} in rule.get("ports", []))
    assert {"port": 9090} in metrics_rule["ports"]


def test_the_monitors_additional_labels_reach_the_rollout_endpoint(helm, validator):
    documents = render(helm, validator, *ROLLOUT_ON,
                       "--set-string", "observability.podMonitor.additionalLabels.volcengine\\.vmp=true")
    monitor = next(m for m in of_kind(documents, "PodMonitor") if m["metadata"]["name"].endswith("ray-head"))
    assert monitor["metadata"]["labels"]["volcengine.vmp"] == "true"
    assert "rollout-prom" in [e["port"] for e in monitor["spec"]["podMetricsEndpoints"]]


def test_without_rollout_metrics_nothing_new_renders(helm, validator):
    for args in [(), tuple(image_args("0.9.1"))]:
        documents = render(helm, validator, *args)
        assert rollout_metric_words(entrypoint_words(documents)) == []
        text = yaml.safe_dump_all(documents)
        assert "rollout-prom" not in text and "9090" not in text


@pytest.mark.parametrize("version", ["0.4.1", "0.3.0.post1"])
def test_rollout_metrics_on_a_veRL_without_them_is_refused(helm, version):
    result = helm_cli.template(helm, "--set", "global.rolloutMetrics.enabled=true", *image_args(version))
    assert result.returncode != 0
    assert f"global.rolloutMetrics.enabled=true: but veRL {version}'s rollout servers export no metrics" \
        in result.output, result.output
    assert "Fix: --set ppo-job.verlVersion=0.9.1" in result.output, result.output


def test_pod_monitor_settings_reach_every_endpoint(helm, validator):
    monitors = of_kind(render(helm, validator, "-f", str(OBSERVABILITY)), "PodMonitor")
    assert len(monitors) == 2
    for monitor in monitors:
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        assert monitor["spec"]["namespaceSelector"] == {"any": True}
        for endpoint in monitor["spec"]["podMetricsEndpoints"]:
            assert endpoint["interval"] == "15s" and endpoint["scrapeTimeout"] == "10s"
            assert endpoint["relabelings"][0]["targetLabel"] == "ray_io_cluster"
            assert endpoint["relabelings"][1] == {"action": "replace", "targetLabel": "team",
                                                  "replacement": "post-training"}
            assert endpoint["metricRelabelings"][0]["regex"] == "ray_grpc_.*"
    default = of_kind(render(helm, validator), "PodMonitor")[0]
    assert default["spec"]["namespaceSelector"] == {"matchNames": ["training"]}


def test_tracing_hook_is_mounted_on_every_ray_node(helm, validator):
    documents = render(helm, validator, "-f", str(OBSERVABILITY))
    hook_map = next(m for m in of_kind(documents, "ConfigMap") if m["metadata"]["name"] == "verl-ppo-tracing-hook")
    assert hook_map["data"]["verl_ppo_tracing.py"] == HOOK_FILE.read_text().rstrip("\n")
    cluster = of_kind(documents, "RayCluster")[0]
    start_params = cluster["spec"]["headGroupSpec"]["rayStartParams"]
    assert start_params["tracing-startup-hook"] == "verl_ppo_tracing:setup_tracing"
    for role, template in ray_containers(documents).items():
        env = env_of(template)
        mount = next(m for m in template["spec"]["containers"][0]["volumeMounts"] if m["name"] == "tracing-hook")
        assert env["PYTHONPATH"] == f"/workspace/verl:{mount['mountPath']}", role
        assert {"name": "tracing-hook", "configMap": {"name": "verl-ppo-tracing-hook"}} in template["spec"]["volumes"]
        assert env["OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"] == "http://otel-collector.monitoring:4318/v1/traces"
        assert env["OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"] == "http/protobuf" and env["OTEL_SERVICE_NAME"] == "verl-ppo"
        assert env["OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"] == "system_metrics"
        assert template["metadata"]["annotations"]["instrumentation.apmplus.volcengine.com/inject-python"] == "true"


def test_tracing_switches_turn_each_part_off(helm, validator):
    documents = render(helm, validator, "--set", "raycluster.tracing.startupHook.enabled=false", "--set",
                       "raycluster.tracing.apmplusInject=false",
                       "--set", "raycluster.tracing.disabledInstrumentations=")
    assert not [m for m in of_kind(documents, "ConfigMap") if m["metadata"]["name"].endswith("tracing-hook")]
    assert "tracing-startup-hook" not in of_kind(documents, "RayCluster")[0]["spec"]["headGroupSpec"]["rayStartParams"]
    for template in ray_containers(documents).values():
        env = env_of(template)
        assert env["PYTHONPATH"] == "/workspace/verl"
        assert not [name for name in env if name.startswith("OTEL_")]
        assert "instrumentation.apmplus.volcengine.com/inject-python" not in template["metadata"].get("annotations", {})
        assert "tracing-hook" not in {v["name"] for v in template["spec"]["volumes"]}


def test_head_env_embeds_grafana_in_the_ray_dashboard(helm, validator):
    containers = ray_containers(render(helm, validator, "-f", str(OBSERVABILITY)))
    head = env_of(containers["head"])
    assert head["RAY_GRAFANA_HOST"] == "http://kube-prometheus-stack-grafana.monitoring"
    assert head["RAY_GRAFANA_IFRAME_HOST"] == "https://grafana.example.com"
    assert head["RAY_PROMETHEUS_HOST"] == "http://kube-prometheus-stack-prometheus.monitoring:9090"
    assert not [name for name in env_of(containers["worker"]) if name.startswith("RAY_GRAFANA")]
    assert "RAY_GRAFANA_HOST" not in env_of(ray_containers(render(helm, validator))["head"])


def assert_restricted(pod_spec: dict) -> None:
    """Pod Security Standard "restricted" (the fields a Deployment's pod can get wrong)."""
    pod_context = pod_spec.get("securityContext", {})
    assert pod_context["seccompProfile"]["type"] == "RuntimeDefault"
    assert not pod_spec.get("hostNetwork") and not pod_spec.get("hostPID") and not pod_spec.get("hostIPC")
    assert all(set(volume) - {"name"} <= {"configMap", "emptyDir", "persistentVolumeClaim", "secret", "projected",
                                          "downwardAPI", "csi", "ephemeral"} for volume in pod_spec["volumes"])
    for container in pod_spec["containers"]:
        context = container["securityContext"]
        assert context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is True
        assert context["allowPrivilegeEscalation"] is False and not context.get("privileged")
        assert context["capabilities"]["drop"] == ["ALL"] and not context["capabilities"].get("add")


def test_tensorboard_reads_the_runs_directory_and_is_restricted(helm, validator):
    args = ("--set", "global.tensorboard.enabled=true")
    documents = render(helm, validator, *args)
    deployment, = of_kind(documents, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert_restricted(pod)
    container = pod["containers"][0]
    head = of_kind(documents, "RayCluster")[0]["spec"]["headGroupSpec"]["template"]["spec"]
    cluster_image = head["containers"][0]["image"]
    assert container["image"] == cluster_image
    logdir = next(a for a in container["args"] if a.startswith("--logdir=")).removeprefix("--logdir=")
    for template in ray_containers(documents).values():
        assert env_of(template)["TENSORBOARD_DIR"] == logdir == "/data/tensorboard/verl-ppo"
    service, = [s for s in of_kind(documents, "Service") if s["metadata"]["name"] == "verl-ppo-tensorboard"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert "trainer.logger=[\\\"console\\\",\\\"tensorboard\\\"]" in helm_cli.template(helm, *args).stdout
    assert "trainer.logger=[\\\"console\\\"]" in helm_cli.template(helm).stdout
    assert not of_kind(render(helm, validator), "Deployment")


def test_tensorboard_behind_the_dashboard_ingress(helm, validator):
    documents = render(helm, validator, "-f", str(OBSERVABILITY))
    ingress, = of_kind(documents, "Ingress")
    paths = {p["path"]: p["backend"]["service"] for p in ingress["spec"]["rules"][0]["http"]["paths"]}
    assert paths["/tensorboard"] == {"name": "verl-ppo-tensorboard", "port": {"number": 6006}}
    container = of_kind(documents, "Deployment")[0]["spec"]["template"]["spec"]["containers"][0]
    assert "--path_prefix=/tensorboard" in container["args"]
    assert container["image"] == "tensorflow/tensorflow:2.17.0"
    assert container["readinessProbe"]["httpGet"]["path"] == "/tensorboard/"


def test_notes_name_the_dashboards_folder_and_tensorboard():
    default = helm_cli.notes()
    assert "3 Ray dashboard ConfigMap(s) (default, data, train)" in default
    assert "grafana_dashboard=1 for Grafana's dashboard sidecar (folder \"Ray\")." in default
    assert "TensorBoard" not in default
    # Without the folder annotation the ConfigMaps name no folder, so neither do the notes.
    assert "grafana_dashboard=1 for Grafana's dashboard sidecar." in helm_cli.notes(
        "--set", "observability.dashboards.folderAnnotation=")
    assert "Grafana:" not in helm_cli.notes("--set", "observability.dashboards.enabled=false")
    board = helm_cli.notes("--set", "global.tensorboard.enabled=true")
    assert "TensorBoard (training curves from /data/tensorboard/verl-ppo)" in board
    assert "port-forward svc/verl-ppo-tensorboard 6006:6006" in board


# An Ingress with both safeguards waived, so that only the case's own mistake fails.
OPEN_INGRESS = {"ingress": {"enabled": True, "allowUnauthenticated": True},
                "networkPolicy": {"dashboardFromAnywhere": True}}

CASES = [
    Case("tensorboard-path-without-tensorboard", {"global": {"tensorboard": {"ingressPath": "/tb"}}},
         "global.tensorboard.ingressPath"),
    Case("tensorboard-path-without-ingress", {"global": {"tensorboard": {"enabled": True, "ingressPath": "/tb"}}},
         "global.tensorboard.ingressPath"),
    Case("tensorboard-path-is-the-dashboards",  # "/" would be stopped by the schema (no trailing slash)
         {"global": {"tensorboard": {"enabled": True, "ingressPath": "/ray"}},
          "raycluster": {**OPEN_INGRESS, "ingress": {**OPEN_INGRESS["ingress"], "path": "/ray/"}}},
         "global.tensorboard.ingressPath"),
    Case("tensorboard-path-without-observability",
         {"global": {"tensorboard": {"enabled": True, "ingressPath": "/tb"}}, "observability": {"enabled": False},
          "raycluster": OPEN_INGRESS},
         "global.tensorboard.ingressPath", mentions=["observability.enabled=false"]),
    Case("otlp-endpoint-without-hook",
         {"raycluster": {"tracing": {"startupHook": {"enabled": False, "otlpEndpoint": "http://c:4318/v1/traces"}}}},
         "raycluster.tracing.startupHook.otlpEndpoint"),
    Case("otlp-protocol-unknown", {"raycluster": {"tracing": {"startupHook": {"otlpProtocol": "http/json"}}}},
         "raycluster.tracing.startupHook.otlpProtocol", layer="schema"),
    Case("unknown-dashboard", {"observability": {"dashboards": {"include": ["default", "serving"]}}},
         "observability.dashboards.include", layer="schema"),
    Case("grafana-host-not-a-url", {"raycluster": {"head": {"dashboardMetrics": {"grafanaHost": "grafana:3000"}}}},
         "raycluster.head.dashboardMetrics.grafanaHost", layer="schema"),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_bad_observability_values_fail_in_helm_and_generator(helm, tmp_path, capsys, case):
    path = values_file(tmp_path, case)
    result = helm_cli.template(helm, "-f", str(path))
    helm_named = helm_names_path(result.output, case.field) if case.layer == "schema" else named(result.output, case)
    assert result.returncode != 0 and stopped_by(result.output, case) and helm_named, result.output
    assert generator_main(["check", str(path)]) == 1
    output = capsys.readouterr().out
    assert named(output, case), output

"""Tier 5: the chart's tracing startup hook, as rendered (module from its ConfigMap, hook and OTLP settings
from the RayCluster), run by a real `ray start --head --tracing-startup-hook=...`: a task's spans reach a
local OTLP receiver; with OpenTelemetry hidden from the driver and its workers, the task still runs and
the hook logs a warning."""

import os
import subprocess
import sys
import time

import pytest

from support import helm as helm_cli
from support.otlp import otlp_receiver
from support.rayhead import free_port, ray_head
from support.tools import ROOT, helm_binaries

DRIVER = ROOT / "tests" / "support" / "traced_driver.py"


def rendered(endpoint: str) -> tuple[dict, dict]:
    result = helm_cli.template(helm_binaries()["helm4"],
                               "--set", f"raycluster.tracing.startupHook.otlpEndpoint={endpoint}")
    assert result.returncode == 0, result.output
    documents = result.documents()
    return (next(d for d in documents if d["kind"] == "RayCluster"),
            next(d for d in documents if d["kind"] == "ConfigMap" and d["metadata"]["name"].endswith("tracing-hook")))


@pytest.fixture(scope="module")
def traced_head(tmp_path_factory):
    """A head started the way the chart starts it, the hook module mounted from the rendered ConfigMap."""
    with otlp_receiver() as receiver:
        cluster, config_map = rendered(receiver.endpoint)
        head = cluster["spec"]["headGroupSpec"]
        container = head["template"]["spec"]["containers"][0]
        mount = next(m for m in container["volumeMounts"] if m["name"] == "tracing-hook")
        hook_dir = tmp_path_factory.mktemp("hook")
        for file_name, text in config_map["data"].items():
            (hook_dir / file_name).write_text(text)
        env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
        assert mount["mountPath"] in env["PYTHONPATH"].split(":")
        node_env = {name: value for name, value in env.items() if name.startswith("OTEL_")}
        # Export every 200 ms instead of 5 s, so the workers' spans leave before the test looks.
        node_env.update(PYTHONPATH=str(hook_dir), OTEL_BSP_SCHEDULE_DELAY="200")
        gcs_port = free_port()
        hook = head["rayStartParams"]["tracing-startup-hook"]
        with ray_head(tmp_path_factory.mktemp("ray"), gpus=0, extra_args=[f"--tracing-startup-hook={hook}"],
                      extra_env=node_env, gcs_port=gcs_port):
            yield {"receiver": receiver, "address": f"127.0.0.1:{gcs_port}", "env": node_env,
                   "service": cluster["metadata"]["name"], "hook_dir": hook_dir}


def run_driver(head: dict, python_path: str) -> subprocess.CompletedProcess:
    env = {**os.environ, **head["env"], "PYTHONPATH": python_path}
    return subprocess.run([sys.executable, str(DRIVER), head["address"]], env=env, capture_output=True, text=True,
                          timeout=120)


def test_spans_of_a_task_reach_the_otlp_endpoint(traced_head):
    result = run_driver(traced_head, str(traced_head["hook_dir"]))
    assert result.returncode == 0 and "result 42" in result.stdout, result.stdout + result.stderr
    receiver = traced_head["receiver"]
    deadline = time.monotonic() + 30
    wanted = {"traced_driver.traced_task ray.remote", "traced_driver.traced_task ray.remote_worker"}
    while not wanted <= {name.replace("__main__", "traced_driver") for name in receiver.span_names()}:
        assert time.monotonic() < deadline, f"spans received: {sorted(receiver.span_names())}"
        time.sleep(0.5)
    assert receiver.services() == {traced_head["service"]}
    print(f"\nspans received: {sorted(receiver.span_names())}")


def test_without_opentelemetry_ray_refuses_a_traced_process_before_the_hook(traced_head, tmp_path):
    """Ray 2.60 imports OpenTelemetry as it turns tracing on, before it calls the hook: a process of a cluster with a
    tracing hook fails in ray.init, naming the packages, where Ray 2.49 let the hook warn and turn tracing off
    (verl_ppo_tracing still does on such images). So an image of Ray 2.60 needs OpenTelemetry, or
    raycluster.tracing.startupHook.enabled=false (values.yaml says so)."""
    # A package named opentelemetry that fails to import hides the installed one from the driver.
    (tmp_path / "opentelemetry").mkdir()
    (tmp_path / "opentelemetry" / "__init__.py").write_text("raise ImportError('hidden for this test')\n")
    result = run_driver(traced_head, f"{tmp_path}:{traced_head['hook_dir']}")
    output = result.stdout + result.stderr
    assert result.returncode != 0 and "result 42" not in result.stdout, output
    assert "Install OpenTelemetry" in output and "_enable_tracing" in output, output


KEEPS_OR_INSTALLS = """
import sys
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
import verl_ppo_tracing
before = TracerProvider() if sys.argv[1] == "installed" else None
if before is not None:
    trace.set_tracer_provider(before)
verl_ppo_tracing.setup_tracing()
after = trace.get_tracer_provider()
print("kept" if after is before else type(after).__name__)
"""


@pytest.mark.parametrize("state, expected", [("installed", "kept"), ("none", "TracerProvider")])
def test_an_installed_tracer_provider_is_left_alone(state, expected):
    hook_dir = ROOT / "charts" / "verl-ppo" / "charts" / "raycluster" / "files"
    env = {**os.environ, "PYTHONPATH": str(hook_dir),
           "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:9/v1/traces"}
    result = subprocess.run([sys.executable, "-c", KEEPS_OR_INSTALLS, state], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == expected

"""Tier 5: the rollout dashboard against a real Prometheus. A small exporter serves, in Prometheus' text
exposition, samples under the pinned vLLM's or the pinned SGLang's metric names and types (the names the dashboard's
generator takes from each engine's code, labelled as each engine labels them). Scraped directly, every panel's query
and every variable returns data with either engine, for one cluster and model as for "All". Scraped the release's
way, the rendered head sidecar's own command runs a real Prometheus that picks up the scrape job veRL writes, and a
second real Prometheus federates it through the rendered PodMonitor endpoint: the dashboard's queries return data
there."""

import os
import subprocess
import threading
import time
from contextlib import contextmanager

import pytest
import yaml
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from lab.dashboards import rollout as board
from support import dashboards
from support import helm as helm_cli
from support.prometheus import PodTarget, Prometheus, prometheus, scrape_configs, wait_until_serving
from support.rayhead import free_port
from support.tools import helm_binaries, prometheus_binaries

ROLLOUT = dashboards.DASHBOARDS / "rollout.json"
CLUSTER, MODEL = "verl-ppo", "Qwen2.5-0.5B-Instruct"
# Each engine's labels: vLLM's on every metric of PrometheusStatLogger (served model, engine index); SGLang's
# scheduler's on its gauges and retractions, its tokenizer's on the token counters and the first-token histogram.
LABELS = {"model_name": MODEL, "engine": "0"}
SGLANG_SCHEDULER = {"model_name": MODEL, "engine_type": "unified", "tp_rank": "0", "pp_rank": "0", "moe_ep_rank": "0"}
SGLANG_TOKENIZER = {"model_name": MODEL, "engine_type": "unified"}
ENGINE_LABELS = {board.VLLM.name: (LABELS, LABELS), board.SGLANG.name: (SGLANG_SCHEDULER, SGLANG_TOKENIZER)}


@contextmanager
def engine_exporter(engine: board.Engine = board.VLLM):
    """An HTTP /metrics of the metrics the dashboard reads under `engine`'s names, moving as a busy engine's do;
    yields its address."""
    registry = CollectorRegistry()
    scheduler, tokenizer = ENGINE_LABELS[engine.name]

    def metric(kind, name: str, labels: dict, **extra):
        return kind(name, name, list(labels), registry=registry, **extra).labels(**labels)

    running = metric(Gauge, engine.running, scheduler)
    waiting = metric(Gauge, engine.waiting, scheduler)
    kv_cache = metric(Gauge, engine.kv_cache_usage, scheduler)
    generated = metric(Counter, engine.generation_tokens, tokenizer)
    prompted = metric(Counter, engine.prompt_tokens, tokenizer)
    preempted = metric(Counter, engine.preemptions, scheduler)
    first_token = metric(Histogram, engine.time_to_first_token, tokenizer, buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0))
    port = free_port()
    server, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    stop = threading.Event()

    def busy_engine():
        step = 0
        while not stop.wait(0.2):
            step += 1
            running.set(8 + step % 4)
            waiting.set(step % 3)
            kv_cache.set(0.5 + (step % 5) / 10)
            generated.inc(120)
            prompted.inc(40)
            first_token.observe(0.02 * (1 + step % 10))
            if step % 5 == 0:
                preempted.inc()

    worker = threading.Thread(target=busy_engine, daemon=True)
    worker.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        stop.set()
        worker.join(timeout=5)
        server.shutdown()
        thread.join(timeout=5)


@pytest.fixture(scope="module", autouse=True)
def _prometheus_installed():
    if not prometheus_binaries()["prometheus"].exists():
        pytest.fail("prometheus is missing: run lab/scripts/setup.sh (make setup) first")


@pytest.mark.parametrize("engine", board.ENGINES, ids=[engine.name for engine in board.ENGINES])
def test_every_rollout_panel_returns_data_from_a_real_prometheus(tmp_path, engine):
    queries = dashboards.panel_queries(ROLLOUT)
    assert {q.where.split("'")[1] for q in queries} == {panel.title for panel in board.PANELS}
    chosen = {"Cluster": CLUSTER, "Model": MODEL}
    with engine_exporter(engine) as address:
        # The label the chart's PodMonitors add to every scraped series (observability.endpoint).
        jobs = [{"job_name": "rollout", "scrape_interval": "1s",
                 "static_configs": [{"targets": [address], "labels": {"ray_io_cluster": CLUSTER}}]}]
        with prometheus(tmp_path / "prometheus", jobs) as server:
            deadline = time.monotonic() + 60
            while True:
                time.sleep(2)
                empty = [q for q in queries for values in (chosen, {})
                         if not server.query(dashboards.fill(q.expr, values, default=".*"))]
                if not empty or time.monotonic() > deadline:
                    break
            # The variables' own series selector (either engine's running gauge), as Grafana asks it.
            clusters = server.label_values("ray_io_cluster", board.RUNNING_SERIES)
            models = server.label_values("model_name", board.RUNNING_SERIES)
            # The names as declared, where prometheus_client adds a suffix, hold nothing: the queries must add it.
            suffixed = [name for name in (engine.generation_tokens, engine.prompt_tokens, engine.preemptions)
                        if not name.endswith("_total")] + [engine.time_to_first_token]
            bare = [series for name in suffixed for series in server.query(f"{name}{{}}")]
            other = server.query(dashboards.fill(queries[0].expr, {"Cluster": "another-cluster"}))
    assert empty == [], [q.where for q in empty]
    assert (clusters, models) == ([CLUSTER], [MODEL])
    assert bare == [] and other == []
    print(f"\nrollout dashboard, {engine.name}: {len(queries)} queries return data, for {CLUSTER}/{MODEL} and for All")


def test_the_variables_read_the_labels_the_panels_filter_on():
    variables = {q.where: q.expr for q in dashboards.variable_queries(ROLLOUT)}
    assert variables == {"variable Cluster": board.RUNNING_SERIES, "variable Model": board.RUNNING_SERIES}
    for query in dashboards.panel_queries(ROLLOUT):
        assert board.SELECTOR in query.expr, query.where


def rendered_release() -> tuple[list[dict], dict, dict]:
    """The PodMonitors, the RayCluster and its head's rollout sidecar, with rollout metrics on (veRL 0.9.1)."""
    result = helm_cli.template(helm_binaries()["helm4"], "--set", "global.rolloutMetrics.enabled=true",
                               "--set-string", "ppo-job.verlVersion=0.9.1")
    assert result.returncode == 0, result.output
    documents = result.documents()
    cluster = next(d for d in documents if d["kind"] == "RayCluster")
    head = cluster["spec"]["headGroupSpec"]["template"]
    sidecar = next(c for c in head["spec"]["containers"] if c["name"] == "rollout-prometheus")
    return [d for d in documents if d["kind"] == "PodMonitor"], cluster, sidecar


def verls_scrape_config(rollout_servers: list[str]) -> dict:
    """What veRL 0.9.1 writes into rollout.prometheus.file on every Ray node once its rollout servers are up
    (verl/workers/rollout/utils.py, update_prometheus_config): Ray's node discovery and the servers."""
    return {"global": {"scrape_interval": "10s", "evaluation_interval": "10s"},
            "scrape_configs": [{"job_name": "ray",
                                "file_sd_configs": [{"files": ["/tmp/ray/prom_metrics_service_discovery.json"]}]},
                               {"job_name": "rollout", "static_configs": [{"targets": rollout_servers}]}]}


@contextmanager
def head_sidecar(sidecar: dict, workdir):
    """The sidecar's rendered command on this machine: its /tmp/ray file, data directory and port moved here."""
    env = {e["name"]: e["value"] for e in sidecar["env"]}
    config = workdir / env["SCRAPE_CONFIG"].lstrip("/")  # under the sidecar's mount of the Ray container's /tmp/ray
    port = free_port()
    env.update(SCRAPE_CONFIG=str(config), DATA_DIR=str(workdir / "data"), PORT=str(port))
    env["PATH"] = f"{prometheus_binaries()['prometheus'].parent}:{os.environ['PATH']}"
    workdir.mkdir(parents=True, exist_ok=True)
    log = workdir / "sidecar.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(sidecar["command"], env=env, stdout=log_file, stderr=subprocess.STDOUT)
    server = Prometheus(f"http://127.0.0.1:{port}")
    try:
        wait_until_serving(server, process, log, "the sidecar")
        yield config, port
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_the_dashboard_has_data_federated_from_the_head_sidecar_through_the_pod_monitor(tmp_path):
    monitors, cluster, sidecar = rendered_release()
    # The image the chart runs is the Prometheus this test runs (the pin of lab/versions.env).
    pinned = (prometheus_binaries()["prometheus"].parent / "VERSION").read_text().strip()
    assert sidecar["image"] == f"quay.io/prometheus/prometheus:v{pinned}"
    cluster_name = cluster["metadata"]["name"]
    head_labels = {**cluster["spec"]["headGroupSpec"]["template"]["metadata"]["labels"],
                   "ray.io/node-type": "head", "ray.io/cluster": cluster_name}
    queries = dashboards.panel_queries(ROLLOUT)
    chosen = {"Cluster": cluster_name, "Model": MODEL}
    with engine_exporter() as address, head_sidecar(sidecar, tmp_path / "head") as (config, port):
        assert yaml.safe_load(config.read_text()) == {"scrape_configs": []}  # until veRL writes its own
        config.write_text(yaml.dump(verls_scrape_config([address]), default_flow_style=False, indent=2))
        pod = PodTarget(cluster["metadata"]["namespace"], f"{cluster_name}-head-abcde", "rollout-prometheus",
                        head_labels, {"rollout-prom": f"127.0.0.1:{port}"})
        jobs = [job for job in scrape_configs(monitors, [pod], interval="2s") if job.get("metrics_path") == "/federate"]
        assert len(jobs) == 1
        with prometheus(tmp_path / "cluster", jobs) as server:
            deadline = time.monotonic() + 120
            while True:
                time.sleep(3)
                empty = [q for q in queries if not server.query(dashboards.fill(q.expr, chosen))]
                if not empty or time.monotonic() > deadline:
                    break
            series = server.query(f"{board.RUNNING}{{}}")
            targets = server.targets_up()
    assert empty == [], [q.where for q in empty]
    labels = series[0]["metric"]
    # veRL's job and the server's address kept (honorLabels), the cluster label added as on every endpoint.
    assert (labels["job"], labels["instance"], labels["ray_io_cluster"]) == ("rollout", address, cluster_name)
    assert list(targets.values()) == ["up"], targets
    print(f"\nrollout dashboard through the head sidecar: {len(queries)} queries return data; targets {targets}")

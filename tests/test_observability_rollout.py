"""Tier 5: the rollout dashboard against a real Prometheus. A small exporter serves, in Prometheus' text
exposition, samples under the pinned vLLM's metric names and types (the names the dashboard's generator
takes from vLLM's code, labelled as vLLM labels them); Prometheus scrapes it, and every panel's query and
every variable returns data, for one cluster and model as for "All"."""

import threading
import time
from contextlib import contextmanager

import pytest
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from generator import rolloutdashboard as board
from support import dashboards
from support.prometheus import prometheus
from support.rayhead import free_port
from support.tools import prometheus_binaries

ROLLOUT = dashboards.DASHBOARDS / "rollout.json"
CLUSTER, MODEL = "verl-ppo", "Qwen2.5-0.5B-Instruct"
# vLLM's labels on every metric of PrometheusStatLogger (served model, engine index).
LABELS = {"model_name": MODEL, "engine": "0"}


@contextmanager
def vllm_like_exporter():
    """An HTTP /metrics of the metrics the dashboard reads, moving as a busy engine's do; yields its address."""
    registry = CollectorRegistry()
    names = list(LABELS)
    running = Gauge(board.RUNNING, "running", names, registry=registry).labels(**LABELS)
    waiting = Gauge(board.WAITING, "waiting", names, registry=registry).labels(**LABELS)
    kv_cache = Gauge(board.KV_CACHE_USAGE, "kv cache", names, registry=registry).labels(**LABELS)
    generated = Counter(board.GENERATION_TOKENS, "generated", names, registry=registry).labels(**LABELS)
    prompted = Counter(board.PROMPT_TOKENS, "prefilled", names, registry=registry).labels(**LABELS)
    preempted = Counter(board.PREEMPTIONS, "preempted", names, registry=registry).labels(**LABELS)
    first_token = Histogram(board.TIME_TO_FIRST_TOKEN, "ttft", names, registry=registry,
                            buckets=(0.01, 0.05, 0.1, 0.5, 1.0, 5.0)).labels(**LABELS)
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


def test_every_rollout_panel_returns_data_from_a_real_prometheus(tmp_path):
    queries = dashboards.panel_queries(ROLLOUT)
    assert {q.where.split("'")[1] for q in queries} == {panel.title for panel in board.PANELS}
    chosen = {"Cluster": CLUSTER, "Model": MODEL}
    with vllm_like_exporter() as address:
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
            clusters = server.label_values("ray_io_cluster", board.RUNNING)
            models = server.label_values("model_name", board.RUNNING)
            # The names as declared, without prometheus_client's suffixes, hold nothing: the queries must add them.
            bare = server.query(f"{board.GENERATION_TOKENS}{{}}") + server.query(f"{board.TIME_TO_FIRST_TOKEN}{{}}")
            other = server.query(dashboards.fill(queries[0].expr, {"Cluster": "another-cluster"}))
    assert empty == [], [q.where for q in empty]
    assert (clusters, models) == ([CLUSTER], [MODEL])
    assert bare == [] and other == []
    print(f"\nrollout dashboard: {len(queries)} queries return data, for {CLUSTER}/{MODEL} and for All")


def test_the_variables_read_the_labels_the_panels_filter_on():
    variables = {q.where: q.expr for q in dashboards.variable_queries(ROLLOUT)}
    assert variables == {"variable Cluster": board.RUNNING, "variable Model": board.RUNNING}
    for query in dashboards.panel_queries(ROLLOUT):
        assert board.SELECTOR in query.expr, query.where

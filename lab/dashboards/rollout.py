"""The veRL rollout dashboard: the vLLM and SGLang servers of veRL's async rollout, as one Grafana dashboard.

Written by `make dashboards` next to Ray's (observability/dashboards/rollout.json); the
chart ships it as a ConfigMap of its own when observability.dashboards.include lists `rollout`.
The metric names are the pinned engines' own: vLLM's (lab/gpu/wheels-vllm.txt) each defined in
vllm/v1/metrics/loggers.py, PrometheusStatLogger.__init__, of that release; SGLang's (lab/versions.env
SGLANG_VERSION, the one veRL 0.9.1's sglang extra pins) in sglang/srt/observability/metrics_collector.py
(SchedulerMetricsCollector, TokenizerMetricsCollector). prometheus_client adds `_total` to a counter's
name that lacks it and `_bucket` to a histogram's when it exposes them. Each panel reads either engine
(`or`): a run has one.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from generator import paths
from lab.pins import pinned_versions

NAME = "rollout"
UID = "verlPpoRolloutDashboard"


@dataclass(frozen=True)
class Engine:
    """A rollout engine's metrics the dashboard reads, by their declared names, and the label its engines differ by."""
    name: str
    source: str  # the module that declares them, in the pinned release
    running: str  # Gauge: requests in the running batch
    waiting: str  # Gauge: requests queued for scheduling
    generation_tokens: str  # Counter: tokens generated
    prompt_tokens: str  # Counter: prefill tokens processed
    time_to_first_token: str  # Histogram (seconds)
    kv_cache_usage: str  # Gauge: 1 means the KV cache is full
    preemptions: str  # Counter: requests preempted (SGLang: retracted) for want of KV cache
    engine_label: str  # the label that tells one engine of a server from another

    @property
    def metrics(self) -> tuple[str, ...]:
        return (self.running, self.waiting, self.generation_tokens, self.prompt_tokens, self.time_to_first_token,
                self.kv_cache_usage, self.preemptions)


# vLLM 0.24.0, vllm/v1/metrics/loggers.py (PrometheusStatLogger.__init__): the names as vLLM declares them.
VLLM = Engine("vLLM", "vllm/v1/metrics/loggers.py", "vllm:num_requests_running", "vllm:num_requests_waiting",
              "vllm:generation_tokens", "vllm:prompt_tokens", "vllm:time_to_first_token_seconds",
              "vllm:kv_cache_usage_perc", "vllm:num_preemptions", "engine")
# SGLang 0.5.12, sglang/srt/observability/metrics_collector.py: the scheduler's gauges and retraction counter
# (labels model_name, engine_type, tp_rank, pp_rank, moe_ep_rank), the tokenizer's token counters and first-token
# histogram (model_name, engine_type). token_usage is the share of the KV pool's tokens in use.
SGLANG = Engine("SGLang", "sglang/srt/observability/metrics_collector.py", "sglang:num_running_reqs",
                "sglang:num_queue_reqs", "sglang:generation_tokens_total", "sglang:prompt_tokens_total",
                "sglang:time_to_first_token_seconds", "sglang:token_usage", "sglang:num_retracted_requests_total",
                "tp_rank")
ENGINES = (VLLM, SGLANG)

# The vLLM names under their former module-level names (the tests' exporter and earlier readers use them).
RUNNING, WAITING = VLLM.running, VLLM.waiting
GENERATION_TOKENS, PROMPT_TOKENS = VLLM.generation_tokens, VLLM.prompt_tokens
TIME_TO_FIRST_TOKEN, KV_CACHE_USAGE, PREEMPTIONS = VLLM.time_to_first_token, VLLM.kv_cache_usage, VLLM.preemptions
METRICS = VLLM.metrics
# The series a variable lists its values from: either engine's running gauge.
RUNNING_SERIES = "{__name__=~\"" + "|".join(re.escape(engine.running) for engine in ENGINES) + "\"}"

# Every query's filter: the Ray cluster (the label the chart's PodMonitors add; "All" also matches series
# without it) and the served model (veRL's rollout.prometheus.served_model_name, the model path's last part).
SELECTOR = 'model_name=~"$Model", ray_io_cluster=~"$Cluster"'


@dataclass(frozen=True)
class Target:
    expr: str
    legend: str


@dataclass(frozen=True)
class Panel:
    title: str
    description: str
    unit: str
    targets: tuple[Target, ...]


def pinned_vllm_version() -> str:
    match = re.search(r"^vllm==(\S+)$", (paths.ROOT / "lab" / "gpu" / "wheels-vllm.txt").read_text(), re.MULTILINE)
    if not match:
        raise SystemExit("lab/gpu/wheels-vllm.txt pins no vllm==<version>")
    return match.group(1)


def pinned_sglang_version() -> str:
    return pinned_versions()["SGLANG_VERSION"]


def exposed_counter(name: str) -> str:
    """A counter's series as prometheus_client exposes it: `_total` added where the declared name lacks it."""
    return name if name.endswith("_total") else f"{name}_total"


def _either(query) -> str:
    """One query per engine, joined by `or`: a release's rollout runs one of them."""
    return " or ".join(query(engine) for engine in ENGINES)


def _rate(counter: str) -> str:
    return f"sum by (model_name) (rate({exposed_counter(counter)}{{{SELECTOR}}}[$__rate_interval]))"


def _quantile(q: float) -> Target:
    expr = _either(lambda engine: f"histogram_quantile({q}, sum by (le, model_name) "
                                  f"(rate({engine.time_to_first_token}_bucket{{{SELECTOR}}}[$__rate_interval])))")
    return Target(expr, f"p{round(q * 100)} {{{{model_name}}}}")


def _kv_cache(engine: Engine) -> str:
    """Each engine's KV use, the label that tells its engines apart named `engine` for both."""
    series = f"{engine.kv_cache_usage}{{{SELECTOR}}}"
    if engine.engine_label != "engine":
        series = f'label_replace({series}, "engine", "$1", "{engine.engine_label}", "(.*)")'
    return f"max by (instance, engine) ({series})"


PANELS = (
    Panel("Requests running and waiting",
          "Requests in the rollout engines' running batches, and those queued behind them.", "short",
          (Target(_either(lambda e: f"sum by (model_name) ({e.running}{{{SELECTOR}}})"), "running {{model_name}}"),
           Target(_either(lambda e: f"sum by (model_name) ({e.waiting}{{{SELECTOR}}})"), "waiting {{model_name}}"))),
    Panel("Generation tokens/s", "Tokens the rollout generates per second, and prompt tokens prefilled per second.",
          "short",
          (Target(_either(lambda e: _rate(e.generation_tokens)), "generated {{model_name}}"),
           Target(_either(lambda e: _rate(e.prompt_tokens)), "prefilled {{model_name}}"))),
    Panel("Time to first token", "Seconds from a request's arrival to its first generated token.", "s",
          (_quantile(0.5), _quantile(0.9), _quantile(0.99))),
    Panel("KV-cache use", "Share of each engine's KV-cache blocks in use (1: full, requests wait or are preempted).",
          "percentunit",
          (Target(_either(_kv_cache), "{{instance}} engine {{engine}}"),)),
    Panel("Preemptions/s", "Requests the scheduler preempts (SGLang: retracts) per second for want of KV-cache space.",
          "short",
          (Target(_either(lambda e: _rate(e.preemptions)), "{{model_name}}"),)),
)


def _variable(name: str, label: str, description: str) -> dict:
    query = f"label_values({RUNNING_SERIES}, {label})"
    return {"name": name, "label": name, "type": "query", "description": description, "datasource": "${datasource}",
            "definition": query, "query": {"query": query, "refId": "StandardVariableQuery"}, "refresh": 2,
            "includeAll": True, "multi": True, "allValue": ".*", "sort": 1,
            "current": {"selected": True, "text": ["All"], "value": ["$__all"]}}


def _panel(index: int, panel: Panel) -> dict:
    width = 12
    return {"id": index + 1, "type": "timeseries", "title": panel.title, "description": panel.description,
            "datasource": "${datasource}",
            "gridPos": {"h": 8, "w": width, "x": (index % 2) * width, "y": (index // 2) * 8},
            "fieldConfig": {"defaults": {"unit": panel.unit, "min": 0}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom"}, "tooltip": {"mode": "multi"}},
            "targets": [{"refId": chr(ord("A") + n), "expr": t.expr, "legendFormat": t.legend}
                        for n, t in enumerate(panel.targets)]}


def dashboard() -> dict:
    datasource = {"name": "datasource", "type": "datasource", "query": "prometheus", "hide": 0,
                  "label": "Data source", "current": {}}
    return {
        "title": "veRL rollout (vLLM, SGLang)",
        "uid": UID,
        "description": (f"The vLLM and SGLang servers of veRL's async rollout; metric names of vLLM "
                        f"{pinned_vllm_version()} ({VLLM.source}) and SGLang {pinned_sglang_version()} "
                        f"({SGLANG.source})."),
        "tags": ["verl-ppo", "vllm", "sglang"],
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": [
            datasource,
            _variable("Cluster", "ray_io_cluster", "The Ray cluster whose rollout servers to show."),
            _variable("Model", "model_name", "The served model (veRL's rollout.prometheus.served_model_name)."),
        ]},
        "panels": [_panel(index, panel) for index, panel in enumerate(PANELS)],
    }


def generate() -> dict[str, str]:
    """Dashboard JSON by name (one: rollout), as `make dashboards` writes it."""
    return {NAME: json.dumps(dashboard(), indent=4) + "\n"}

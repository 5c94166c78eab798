"""The veRL rollout dashboard: the vLLM servers of veRL's async rollout, as one Grafana dashboard.

Written by `make dashboards` next to Ray's (observability/dashboards/rollout.json); the
chart ships it as a ConfigMap of its own when observability.dashboards.include lists `rollout`.
The metric names are the pinned vLLM's (lab/gpu/wheels-vllm.txt): each is defined in
vllm/v1/metrics/loggers.py, PrometheusStatLogger.__init__, of that release; prometheus_client adds
`_total` to a counter's name and `_bucket` to a histogram's when it exposes them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from generator import paths

NAME = "rollout"
UID = "verlPpoRolloutDashboard"

# vLLM 0.24.0, vllm/v1/metrics/loggers.py (PrometheusStatLogger.__init__): the names as vLLM declares them.
RUNNING = "vllm:num_requests_running"  # Gauge: requests in the engine's running batch
WAITING = "vllm:num_requests_waiting"  # Gauge: requests queued for scheduling
GENERATION_TOKENS = "vllm:generation_tokens"  # Counter: tokens generated
PROMPT_TOKENS = "vllm:prompt_tokens"  # Counter: prefill tokens processed
TIME_TO_FIRST_TOKEN = "vllm:time_to_first_token_seconds"  # Histogram
KV_CACHE_USAGE = "vllm:kv_cache_usage_perc"  # Gauge: 1 means the KV cache is full
PREEMPTIONS = "vllm:num_preemptions"  # Counter: requests preempted by the scheduler
METRICS = (RUNNING, WAITING, GENERATION_TOKENS, PROMPT_TOKENS, TIME_TO_FIRST_TOKEN, KV_CACHE_USAGE, PREEMPTIONS)

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


def _rate(counter: str) -> str:
    return f"sum by (model_name) (rate({counter}_total{{{SELECTOR}}}[$__rate_interval]))"


def _quantile(q: float) -> Target:
    expr = (f"histogram_quantile({q}, sum by (le, model_name) "
            f"(rate({TIME_TO_FIRST_TOKEN}_bucket{{{SELECTOR}}}[$__rate_interval])))")
    return Target(expr, f"p{round(q * 100)} {{{{model_name}}}}")


PANELS = (
    Panel("Requests running and waiting",
          "Requests in the rollout engines' running batches, and those queued behind them.", "short",
          (Target(f"sum by (model_name) ({RUNNING}{{{SELECTOR}}})", "running {{model_name}}"),
           Target(f"sum by (model_name) ({WAITING}{{{SELECTOR}}})", "waiting {{model_name}}"))),
    Panel("Generation tokens/s", "Tokens the rollout generates per second, and prompt tokens prefilled per second.",
          "short",
          (Target(_rate(GENERATION_TOKENS), "generated {{model_name}}"),
           Target(_rate(PROMPT_TOKENS), "prefilled {{model_name}}"))),
    Panel("Time to first token", "Seconds from a request's arrival to its first generated token.", "s",
          (_quantile(0.5), _quantile(0.9), _quantile(0.99))),
    Panel("KV-cache use", "Share of each engine's KV-cache blocks in use (1: full, requests wait or are preempted).",
          "percentunit",
          (Target(f"max by (instance, engine) ({KV_CACHE_USAGE}{{{SELECTOR}}})", "{{instance}} engine {{engine}}"),)),
    Panel("Preemptions/s", "Requests the scheduler preempts per second for want of KV-cache space.", "short",
          (Target(_rate(PREEMPTIONS), "{{model_name}}"),)),
)


def _variable(name: str, label: str, description: str) -> dict:
    query = f"label_values({RUNNING}, {label})"
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
        "title": "veRL rollout (vLLM)",
        "uid": UID,
        "description": (f"The vLLM servers of veRL's async rollout; metric names of vLLM {pinned_vllm_version()} "
                        "(vllm/v1/metrics/loggers.py)."),
        "tags": ["verl-ppo", "vllm"],
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

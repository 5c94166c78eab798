"""The measured runs (generator/measurements.yaml): what the plan is checked against and takes its seconds from."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import yaml

from generator import paths

MEASUREMENTS = Path(__file__).resolve().parent / "measurements.yaml"


@dataclass(frozen=True)
class MeasuredSettings:
    """What a run rendered: token budgets (0: fixed micro batches; the critic's: what its veRL read), micro batches,
    checkpointing, rollout (its memory share and output kind), offloads."""

    train_token_budget: int
    forward_token_budget: int
    critic_token_budget: int
    micro_batch: int
    log_prob_micro_batch: int
    gradient_checkpointing: bool
    rollout_memory_fraction: float
    param_offload: bool
    optimizer_offload: bool
    final_output_only: bool


@dataclass(frozen=True)
class MeasuredRun:
    name: str
    source: str  # results JSON, relative to the repository root
    run: str  # its key under `runs`
    shape: str
    model: str
    algorithm: str
    gpus: int
    gpu: str
    gpu_memory_gib: float
    settings: MeasuredSettings
    rows: int
    tokens_per_step: float
    peak_allocated_gib: float | None
    peak_gpu_mib: float | None  # None where the run ended before nvidia-smi's figure was kept
    seconds: dict[str, float]
    sized_model: str = ""  # the catalog model the values were rendered for, where not the run's model
    sized_nodes: int = 0  # the nodes the values were rendered for, where not the node type's default
    cut_to_gpus: int = 0  # the node type cut to this many GPUs a node before rendering (lab/gpu/render_jobs.py)
    overrides: dict[str, object] = field(default_factory=dict)  # Sizing fields set over the rendered values
    lora_rank: int = 0  # the actor's LoRA rank the values were rendered for (render --lora-rank); 0: none

    @property
    def values_model(self) -> str:
        return self.sized_model or self.model

    @property
    def row_tokens(self) -> float:
        """Prompt and response tokens of the mean row."""
        return self.tokens_per_step / self.rows

    @property
    def peak_gpu_gib(self) -> float | None:
        return self.peak_gpu_mib / 1024 if self.peak_gpu_mib is not None else None

    @property
    def source_path(self) -> Path:
        return paths.ROOT / self.source


# The YAML's setting names, each with the fields of generator/sizing.py's Sizing it is (the critic's micro batch is
# the actor's, as the sizing sets it).
SETTING_FIELDS = {
    "trainTokenBudget": ("train_token_budget",),
    "forwardTokenBudget": ("forward_token_budget",),
    "criticTokenBudget": ("critic_token_budget",),
    "microBatch": ("micro_batch", "critic_micro_batch"),
    "logProbMicroBatch": ("log_prob_micro_batch",),
    "gradientCheckpointing": ("gradient_checkpointing",),
    "rolloutMemoryFraction": ("rollout_memory_fraction",),
    "paramOffload": ("param_offload",),
    "optimizerOffload": ("optimizer_offload",),
    "finalOutputOnly": ("final_output_only",),
}


def _settings(entry: dict) -> MeasuredSettings:
    return MeasuredSettings(**{fields[0]: entry[name] for name, fields in SETTING_FIELDS.items()})


def sizing_fields(entry: dict) -> dict[str, object]:
    """Settings by the Sizing fields they set."""
    unknown = set(entry) - set(SETTING_FIELDS)
    if unknown:
        raise ValueError(f"{MEASUREMENTS.name}: unknown settings {sorted(unknown)}; known: {', '.join(SETTING_FIELDS)}")
    return {field: value for name, value in entry.items() for field in SETTING_FIELDS[name]}


@lru_cache(maxsize=None)
def measured_runs(path: Path = MEASUREMENTS) -> tuple[MeasuredRun, ...]:
    runs = []
    for entry in yaml.safe_load(path.read_text())["runs"]:
        measured = entry["measured"]
        runs.append(MeasuredRun(entry["name"], entry["source"], entry["run"], entry["shape"], entry["model"],
                                entry["algorithm"], entry["gpus"], entry["gpu"], entry["gpuMemoryGiB"],
                                _settings(entry["settings"]),
                                measured["rows"], measured["tokensPerStep"], measured["peakAllocatedGiB"],
                                measured["peakGpuMiB"], dict(measured["seconds"]), entry.get("sizedModel", ""),
                                entry.get("sizedNodes", 0), entry.get("cutToGpus", 0),
                                sizing_fields(entry.get("overrides", {})), entry.get("loraRank", 0)))
    return tuple(runs)

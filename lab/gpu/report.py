"""Put the results of `make gpu-bench VLLM=1` commands together: one JSON and a PNG of each profile's time per
phase side by side (issue 27). Each command ran one run (GPU_RUNS=vllm-seed, then vllm-generated, ...) and
wrote its own results.json; this merges them, pairs the seed's with the generated profile's and prints the
figures per run and their ratio with its spread.

Usage: python3 lab/gpu/report.py [--pair BASELINE CANDIDATE] [--model SHAPE] OUT_JSON OUT_PNG RESULTS_JSON ...
(the PNG needs matplotlib; the pair is vllm-seed and vllm-generated unless named, e.g. the ladder's
vllm-1.5b-seed vllm-1.5b-generated)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import proof

PAIR = ("vllm-seed", "vllm-generated")
PHASES = ["gen", "old_log_prob", "ref", "values", "adv", "update_critic", "update_actor", "update_weights"]


def merged(paths: list[Path], pair: tuple[str, str] = PAIR) -> dict:
    report: dict = {"runs": {}, "sources": [str(path) for path in paths]}
    for path in paths:
        results = json.loads(path.read_text())
        for name, run in results["runs"].items():
            report["runs"][name] = {**run, "date_utc": results.get("date_utc"), "gpu": results.get("gpu")}
    report["pair"] = list(pair)
    report["comparison"] = proof.compare(report["runs"].get(pair[0]), report["runs"].get(pair[1]))
    return report


def other_phases(run: dict) -> float:
    """The step's time outside the phases veRL times one by one (batching, transfers, the reward)."""
    timed = sum(run["timing_s"].get(phase, 0) for phase in PHASES)
    return round(run["seconds_per_step"] - timed, 3)


def table(report: dict) -> str:
    lines = []
    for name, run in report["runs"].items():
        mfu = ", ".join(f"{phase} {figures['mfu']:.1%}" for phase, figures in (run.get("phase_mfu") or {}).items())
        lines.append(f"{name}: {run['seconds_per_step']} s/step (steady steps {run['steady_steps']}: "
                     f"{run.get('steady_seconds')}), {run['tokens_per_second']} tokens/s, peak "
                     f"{max(run['nvidia_smi_peak_mib'] or [0])} MiB; phases {run['timing_s']}, "
                     f"other {other_phases(run)} s; "
                     f"MFU {mfu}")
    if report["comparison"]:
        lines.append(f"{report['pair'][1]} over {report['pair'][0]}: {report['comparison']}")
    return "\n".join(lines)


def plot(report: dict, png: Path, model: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [name for name in report["pair"] if name in report["runs"]]
    figure, axis = plt.subplots(figsize=(8, 4.5))
    bottoms = [0.0] * len(names)
    for phase in PHASES + ["other"]:
        heights = [other_phases(report["runs"][n]) if phase == "other" else report["runs"][n]["timing_s"].get(phase, 0)
                   for n in names]
        if any(heights):
            axis.bar(names, heights, bottom=bottoms, label=phase)
            bottoms = [b + h for b, h in zip(bottoms, heights, strict=True)]
    for index, name in enumerate(names):
        run = report["runs"][name]
        axis.text(index, bottoms[index], f"{run['seconds_per_step']} s, {run['tokens_per_second']:.0f} tok/s",
                  ha="center", va="bottom")
    axis.set_ylabel("seconds per PPO step (steady steps)")
    axis.set_title(f"veRL 0.9.1 + vLLM 0.24, {model} shape, one H200")
    axis.legend(loc="upper right", fontsize=8)
    figure.tight_layout()
    figure.savefig(png, dpi=100)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", nargs=2, default=PAIR, metavar=("BASELINE", "CANDIDATE"))
    parser.add_argument("--model", default="Qwen2.5-0.5B")
    parser.add_argument("out_json", type=Path)
    parser.add_argument("out_png", type=Path)
    parser.add_argument("inputs", type=Path, nargs="+")
    args = parser.parse_args()
    report = merged(args.inputs, tuple(args.pair))
    args.out_json.write_text(json.dumps(report, indent=2) + "\n")
    print(table(report))
    plot(report, args.out_png, args.model)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Re-derive a GPU proof run's figures from its log (lab/gpu/proof.py's own parsers), e.g. for a run that the
proof's timeout stopped before it wrote steady-state figures, or after a parser fix.

Usage: python3 lab/gpu/summarize_logs.py RESULTS_JSON LOG ... > OUT_JSON
RESULTS_JSON is the proof's results.json of the same command (run manifests, peaks, exit codes); each LOG
is OUT/<run>.log. Prints the results with each run's figures recomputed and the comparisons.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import build_model
import proof
import render_jobs

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def resummarize(report: dict, logs: list[Path]) -> dict:
    for log in logs:
        name = log.name.removesuffix(".log")
        result = report["runs"][name]
        text = ANSI.sub("", log.read_text(errors="replace"))
        steps = proof.step_metrics(text)
        run = {"steps": render_jobs.RUNS[name].steps}
        result.update(proof.summarize(run, steps, result["nvidia_smi_peak_mib"]))
        result["steady_seconds"] = proof.step_spread(steps, result["steady_steps"])
        if "phase_mfu" not in result:  # a report written without the built model: its shape from build_model.py
            result.update(proof.mfu_figures(build_model.SIZES[render_jobs.RUNS[name].model], result["timing_s"],
                                            result["tokens_per_step"], None))
        result.update(proof.rollout_figures(result["entrypoint"], result, None))
    report["comparison"] = proof.comparisons(report["runs"])
    return report


if __name__ == "__main__":
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    report = json.loads(Path(sys.argv[1]).read_text())
    print(json.dumps(resummarize(report, [Path(arg) for arg in sys.argv[2:]]), indent=2))

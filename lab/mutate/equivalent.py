"""Surviving mutants that are equivalent: no input the product can get tells them from the original.
Keyed by (module, the mutated line, compared without whitespace: cosmic-ray's printer spaces it its
own way); the value says why."""

from __future__ import annotations

import re

_ONE_CONTAINER = "containers[0] -> containers[-1]: the chart's Ray pods have one container"
_JOB_CONFIGMAP = "only the job's ConfigMap carries job.json in its data; comparing kinds by order changes nothing"

_NEVER_NEGATIVE = ("the API server reports an allocatable count as a quantity of at least 0, so comparisons with 0 "
                   "that differ only below 0 (!= 0 for > 0, == 0 for <= 0) decide alike")
_SUBMITTER = "charts/verl-ppo/charts/ppo-job/files/submitter.py"
_NO_EXTRA_ARGS = ("another chart than ppo-job (any other component, the umbrella elsewhere) has no top-level "
                  "extraArgs (its schema refuses unknown keys and is checked first), so looking for them finds none")
_HELM_TIMEOUT = ("a tuning figure: a helm template run takes seconds, so a second more or less matters only to a "
                 "Helm that hangs")

EQUIVALENT: dict[tuple[str, str], str] = {
    (_SUBMITTER, 'if ended and (tail.complete or time.monotonic() > (drain_deadline or float("inf"))):'):
        "differs only at the instant the clock reads the deadline exactly; the next poll ends the drain then",
    (_SUBMITTER, 'if job.get("status") < "SUCCEEDED":'):
        "follow returns only an ended job, and of SUCCEEDED, FAILED and STOPPED only SUCCEEDED is not below "
        "\"SUCCEEDED\" in string order",
    (_SUBMITTER, "elif time.monotonic() - silent_since[0] > settings.dashboard_timeout_seconds:"):
        "differs only at the instant the clock reads the bound exactly; the next poll, a poll_seconds later, "
        "is past it either way",
    (_SUBMITTER, "BUSY_HEAD_SECONDS = 61"):
        "a tuning figure: 61 s of retries with 20 s requests also ends within the uninstall hook's 120 s deadline",
    ("generator/helm.py", "@dataclass(frozen=False)"): "nothing assigns to a HelmInputs or hashes it",
    ("generator/algorithms.py", "@dataclass(frozen=False)"): "nothing assigns to an Algorithm or hashes one",
    ("generator/helm.py", "return subprocess.run(command, capture_output=True, text=True, timeout=121)"):
        _HELM_TIMEOUT,
    ("generator/helm.py", "return subprocess.run(command, capture_output=True, text=True, timeout=119)"):
        _HELM_TIMEOUT,
    ("generator/helm.py", "atexit.register(shutil.rmtree, root, ignore_errors=False)"):
        "only this handler removes the copy, so at exit it is there and rmtree meets no error (and an error in an "
        "exit handler changes neither the output nor the exit status)",
    ("generator/helm.py", 'return json.loads(done.stdout.split("\\n", 3)[2])  # after "---" and "# Source: ..."'):
        "toJson prints .Values on one line: split once more, the third part is the same",
    ("generator/summary.py", 'limits = pod_spec["containers"][-1].get("resources", {}).get("limits", {})'):
        _ONE_CONTAINER,
    ("generator/summary.py", 'limits = head["containers"][-1]["resources"]["limits"]'): _ONE_CONTAINER,
    ("generator/summary.py", 'limits = spec["containers"][-1]["resources"]["limits"]'): _ONE_CONTAINER,
    ("generator/summary.py", 'for config in (o for o in objects if o["kind"] <= "ConfigMap" and "job.json" in '
                             'o.get("data", {})):'): _JOB_CONFIGMAP,
    ("generator/summary.py", 'for config in (o for o in objects if o["kind"] >= "ConfigMap" and "job.json" in '
                             'o.get("data", {})):'): _JOB_CONFIGMAP,
    ("generator/sizing.py", "KV_BYTES_PER_TOKEN_PER_BILLION = 24999"):
        "a calibration figure (12 KiB a token for 0.49B parameters, rounded): one part in 25,000 of the KV estimate "
        "moves no 0.05 step of the rollout's fraction for any shape, model or batch the tests size",
    ("generator/sizing.py", "@dataclass(frozen=False)"): "nothing assigns to a Sizing after it is made",
    ("generator/sizing.py", "weights_gib = model.params_billion * 1000000001.0 * WEIGHT_BYTES_PER_PARAM / 2**30"):
        "one part in a billion of the weights' size moves no threshold",
    ("generator/sizing.py", "shard_gib = model.params_billion * 1000000001.0 * TRAINING_BYTES_PER_PARAM / "
                            "total_gpus / 2**30"): "one part in a billion of the shard's size moves no threshold",
    ("generator/sizing.py", "return min(floor_power_of_two(max(0.0, REFERENCE_MICRO_BATCH * scale)), MAX_MICRO_BATCH)"):
        "floor_power_of_two returns 1 for anything below 2, so a floor of 0 or 1 gives the same",
    ("generator/sizing.py", "per_gpu_batch = max(1, run.train_batch_size * run.responses_per_prompt / total_gpus)"):
        "batches_for makes train batch x n a multiple of the GPUs: the division is exact, and 2.0 == 2",
    ("generator/sizing.py", "shard_gib = model.params_billion * 1e9 * TRAINING_BYTES_PER_PARAM // total_gpus / 2**30"):
        "rounding the shard down to whole bytes moves no threshold",
    ("generator/sizing.py", "return max(0, micro)"):
        "the halving stops at 1 at the latest (1 divides every number), so micro is never below 1",
    ("generator/sizing.py", "per_gpu_batch = max(0, run.train_batch_size * run.responses_per_prompt // total_gpus)"):
        "batches_for raises the train batch to at least one sample per GPU",
    ("generator/sizing.py", "actor = 1 << (2 * micro * run.sequence_length - 2).bit_length()"):
        "2 x micro x length is even, so less 1 or less 2 has the same bit length",
    ("generator/check.py", "@dataclass(frozen=False)"): "nothing assigns to a Finding or hashes it",
    ("generator/check.py", 'readme = paths.subchart_dir(head) / "README.md" if chart >= paths.CHART and head in '
                           'paths.SUBCHARTS else chart / "README.md"'):
        "a path above the umbrella's (a component's chart) has no top-level key named after a component: its schema "
        "refuses unknown keys, so the second condition decides alone",
    ("generator/check.py", 'if (umbrella or chart.name >= "ppo-job") and job and job.get("enabled", True):'):
        _NO_EXTRA_ARGS,
    ("generator/check.py", 'if (umbrella or chart.name <= "ppo-job") and job and job.get("enabled", True):'):
        _NO_EXTRA_ARGS,
    ("generator/check.py", 'head = path.split(".", 2)[0]'): "the first part is the same for any split count above 0",
    ("generator/discover.py", "@dataclass(frozen=False)"):
        "nothing assigns to a NodeFacts or hashes one (the taint sets hash the taints' tuples)",
    ("generator/discover.py", 'memory_bytes(allocatable.get("memory", "0")), int(allocatable.get(RDMA_RESOURCE, "0")) '
                              '!= 0)'): _NEVER_NEGATIVE,
    ("generator/discover.py", "if node.gpus == 0:"): _NEVER_NEGATIVE,
    ("generator/discover.py", 'return f"{mib // 1024}Gi" if mib % 1024 <= 0 else f"{mib}Mi"'):
        "a remainder modulo 1024 is never below 0 in Python, so <= 0 is == 0",
    ("generator/discover.py", "if len(taint_sets) != 1:"):
        "a group holds at least one node, so there is at least one taint set: != 1 is > 1",
    ("generator/quantity.py", 'return str(millis // 1000) if millis % 1000 <= 0 else f"{millis}m"'):
        "a remainder modulo 1000 is never below 0 in Python, so <= 0 is == 0",
    ("generator/schema.py", "@lru_cache(maxsize=2)"): "values_schema takes no arguments: one entry, whatever the size",
    ("generator/valuesdoc.py", "keep_trailing_newline=False)"):
        "the README template's last tag ({%- endfor -%}) strips the newline after it anyway",
    ("generator/valuesdoc.py", "@dataclass(frozen=False)"): "nothing assigns to a Parameter or hashes one",
    ("generator/valuesdoc.py", 'return self.path.split(".", 2)[0]'):
        "the first part is the same for any split count above 0",
    ("generator/valuesdoc.py", "is_umbrella = chart <= paths.CHART"):
        "readmes() passes the umbrella and its components, whose charts (charts/verl-ppo/charts/<name>) sort after "
        "the umbrella's: only the umbrella is <= it",
    ("generator/verltypes.py", 'if len(parts) <= 1 and parts[0].startswith("Optional[") and parts[0].endswith("]"):'):
        "no veRL field is annotated None alone, so parts is never empty here",
    ("generator/verltypes.py", 'if len(parts) == 1 and parts[0].startswith("Optional[") and parts[-1].endswith("]"):'):
        "with one part, parts[-1] is parts[0]",
}


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text)


_BY_BARE_LINE = {(module, _bare(line)): why for (module, line), why in EQUIVALENT.items()}


def why_equivalent(module: str, mutated_line: str) -> str | None:
    return _BY_BARE_LINE.get((module, _bare(mutated_line)))

"""The audit's breakages (issue 19): each way the product was once broken while every test stayed green,
written down as an edit of one file, with the tests that must now fail on it. `make mutate
MUTATE_ARGS=--holes` applies each to the copy of the tree, runs those tests unbroken and broken, and
prints which test caught it; a breakage whose text is no longer in its file is an error, not a pass, so
the table follows the code (tests/lab/setup/test_mutate.py checks that on every `make test`)."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from lab.mutate.plan import NICE

SUBMITTER = "charts/verl-ppo/charts/ppo-job/files/submitter.py"
RAYCLUSTER_RULES = "charts/verl-ppo/charts/raycluster/templates/_rules.tpl"
LABELS = "charts/verl-ppo/charts/verl-ppo-lib/templates/_labels.tpl"


@dataclass(frozen=True)
class Breakage:
    hole: str  # what the audit found the suite let through
    path: str  # the file broken, relative to the repository root
    old: str  # its text, found exactly once
    new: str
    tests: tuple[str, ...]  # pytest arguments: the tests that must fail on it

    def apply(self, text: str) -> str:
        if text.count(self.old) != 1:
            raise ValueError(f"{self.path}: the breakage of '{self.hole}' no longer applies: its text is there "
                             f"{text.count(self.old)} times, not once; write it anew from the code")
        return text.replace(self.old, self.new)


BREAKAGES = (
    Breakage("prepare writes its parquet in place, not atomically",
             "charts/verl-ppo/charts/ppo-job/files/prepare.py",
             "        pq.write_table(pa.Table.from_pylist(rows), partial)\n        os.replace(partial, target)\n",
             "        pq.write_table(pa.Table.from_pylist(rows), target)\n",
             ("tests/ray/test_prepare.py",)),
    Breakage("discover ignores the nodes' GPU-memory label (takes the catalog's figure)",
             "generator/discover.py", "    elif all(GPU_MEMORY_LABEL in node.labels for node in nodes):",
             "    elif False:", ("tests/cluster/test_cluster_discover.py", "-k", "memory_label or one_entry")),
    Breakage("discover takes the GPU-memory label when only some nodes carry it",
             "generator/discover.py", "    elif all(GPU_MEMORY_LABEL in node.labels for node in nodes):",
             "    elif any(GPU_MEMORY_LABEL in node.labels for node in nodes):",
             ("tests/cluster/test_cluster_discover.py", "-k", "memory_label")),
    Breakage("the micro batch is no longer kept a divisor of the per-GPU mini batch",
             "generator/sizing.py", "    while per_gpu % micro:\n        micro //= 2\n", "",
             ("tests/generator/test_sizing.py",)),
    Breakage("the Ray pods lose the release label the NetworkPolicy admits",
             LABELS, '(include "verl-ppo.releasePodLabel" .ctx)', '""',
             ("tests/chart/test_chart_networkpolicy.py", "-k", "not helm3")),
    Breakage("labels from values replace the chart's (a pod label takes the head out of the NetworkPolicy)",
             LABELS, "{{- range $key := keys $owned }}{{ $_ := unset $user $key }}{{ end -}}\n", "",
             ("tests/chart/test_chart_labels.py", "-k", "not helm3 and any_pod")),
    Breakage("the rule against a TensorBoard path equal to the dashboard's is gone",
             RAYCLUSTER_RULES, '{{- if eq (trimSuffix "/" $path) (trimSuffix "/" .Values.ingress.path) -}}',
             "{{- if false -}}", ("tests/chart/test_observability_chart.py", "-k", "not helm3 and tensorboard")),
    Breakage("the rule against a checkpoint directory off the shared volume is gone",
             "charts/verl-ppo/charts/ppo-job/templates/_rules.tpl",
             "{{- if not (include \"verl-ppo.onVolume\" (dict \"ctx\" $ \"path\" .path)) -}}",
             "{{- if false -}}",
             ("tests/chart/test_bad_input.py", "-k", "not helm3 and relative-checkpoint-dir-past-the-schema")),
    Breakage("the rule that a release name is a DNS-1035 label is gone",
             "charts/verl-ppo/charts/verl-ppo-lib/templates/_rules.tpl",
             '{{- if not (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $fullname) -}}', "{{- if false -}}",
             ("tests/chart/test_bad_input.py", "-k", "not helm3 and (starts-with-a-digit or fullname-not-dns)")),
    Breakage("a rule names a longer field than the one at fault (a substring match passed it)",
             RAYCLUSTER_RULES,
             "(with an access control), or --set global.tensorboard.ingressPath=''\" -}}\n"
             "{{- include \"verl-ppo.rule\" (dict \"state\" .state \"field\" \"global.tensorboard.ingressPath\"",
             "(with an access control), or --set global.tensorboard.ingressPath=''\" -}}\n"
             "{{- include \"verl-ppo.rule\" (dict \"state\" .state \"field\" \"global.tensorboard.ingressPathPrefix\"",
             ("tests/chart/test_bad_input.py", "-k",
              "not helm3 and helm_template and tensorboard-path-without-ingress")),
    Breakage("the uninstall hook stops every Ray job on the head, other releases' too",
             SUBMITTER, 'stopped = stop_active(api, settings.family_pattern(), "helm uninstall")',
             'stopped = stop_active(api, re.compile(".*"), "helm uninstall")',
             ("tests/ray/test_submitter_ray.py", "-k", "stop_mode_stops_every")),
    Breakage("helm test (--check) looks once instead of waiting for the GPUs",
             SUBMITTER, "        wait_for_cluster(api, settings)\n        return 0\n",
             "        return 0 if api.cluster_gpus() >= settings.expected_gpus else 3\n",
             ("tests/ray/test_submitter_ray.py", "-k", "check_mode_waits")),
    Breakage("the Ingress's rules are one chain: a first install hears of one at a time (issue 28)",
             RAYCLUSTER_RULES, "{{- if and .Values.ingress.enabled $policy.enabled",
             "{{- if and .Values.ingress.enabled "
             "(include \"raycluster.ingressAccessControls\" .Values | fromJsonArray) $policy.enabled",
             ("tests/chart/test_bad_input.py", "-k", "not helm3 and every_missing_piece")),
    Breakage("a veRL key's type is guessed from its default's spelling (entropy_coeff=0.01 refused)",
             "generator/verltypes.py", 'DEFAULT_KINDS = {int: (float, "a number")',
             'DEFAULT_KINDS = {int: (int, "a number")',
             ("tests/verl/test_verl_config.py", "-k", "float_for_an_integer")),
    Breakage("veRL's declared types are not checked (gpu_memory_utilization=banana composes)",
             "generator/verltypes.py",
             "    return isinstance(value, int) if kind is int else isinstance(value, (int, float))",
             "    return True", ("tests/verl/test_verl_config.py", "-k", "wrong_type_or_impossible")),
    Breakage("the ranges veRL's code needs are not checked (trainer.nnodes=-7 composes)",
             "generator/verltypes.py",
             "        return above and (self.high is None or value <= self.high)", "        return True",
             ("tests/verl/test_verl_config.py", "-k", "wrong_type_or_impossible")),
    Breakage("the PodMonitors select a node type KubeRay never puts on its pods",
             "charts/verl-ppo/charts/observability/templates/podmonitors.yaml",
             "      ray.io/node-type: {{ .nodeType }}\n", "      ray.io/node-type: {{ .nodeType }}-group\n",
             ("tests/cluster/test_cluster_shapes.py", "-k", "helm4-seed-2gpu")),
    Breakage("the PodMonitors' relabeling reads a pod label KubeRay never sets (no cluster label on the series)",
             "charts/verl-ppo/charts/observability/templates/_helpers.tpl",
             "        - __meta_kubernetes_pod_label_ray_io_cluster\n",
             "        - __meta_kubernetes_pod_label_ray_cluster\n",
             ("tests/pods/test_pods.py", "-k", "prometheus_scrapes")),
)


@dataclass(frozen=True)
class Verdict:
    breakage: Breakage
    outcome: str  # caught, missed, or "not measured" (the tests fail unbroken)
    test: str  # the first test that failed on the breakage

    def line(self) -> str:
        test = f" -> {self.test}" if self.test else ""
        return f"{self.outcome:<12} {self.breakage.hole}: {self.breakage.path}{test}"


def _pytest(tree: Path, tests: tuple[str, ...]) -> subprocess.CompletedProcess:
    return subprocess.run([*NICE, sys.executable, "-m", "pytest", "-x", "-q", "-rfE", "-p", "no:cacheprovider", *tests],
                          cwd=tree, capture_output=True, text=True, timeout=1800)


def first_failure(output: str) -> str:
    found = re.search(r"^(?:FAILED|ERROR) (\S+)", output, re.M)
    return found.group(1) if found else "the run (no test named: see its output)"


def check(tree: Path, breakage: Breakage, baselines: dict[tuple[str, ...], bool]) -> Verdict:
    if breakage.tests not in baselines:
        baselines[breakage.tests] = _pytest(tree, breakage.tests).returncode == 0
    if not baselines[breakage.tests]:
        return Verdict(breakage, "not measured", "")
    target = tree / breakage.path
    original = target.read_text()
    target.write_text(breakage.apply(original))
    try:
        run = _pytest(tree, breakage.tests)
    finally:
        target.write_text(original)
    return Verdict(breakage, "caught", first_failure(run.stdout)) if run.returncode else Verdict(breakage, "missed", "")


def run_holes(tree: Path, only: list[str]) -> int:
    """Each chosen breakage checked in turn, a line as it goes; 1 when one was missed or not measured."""
    baselines: dict[tuple[str, ...], bool] = {}
    verdicts = []
    for breakage in BREAKAGES:
        if only and not any(text in breakage.path or text in breakage.hole for text in only):
            continue
        verdicts.append(check(tree, breakage, baselines))
        print(verdicts[-1].line(), flush=True)
    caught = sum(v.outcome == "caught" for v in verdicts)
    print(f"\nthe audit's breakages caught: {caught} of {len(verdicts)}")
    return 0 if caught == len(verdicts) else 1

"""Template mutants of the chart: a rule's failure dropped, a comparison of a rule flipped, a number of
a rule or a port changed, a label (or a pod's release label) dropped. Each mutant is written into the
copy of the tree and tested by the chart tests of its kind with Helm 4 (Helm 3 renders the same
templates), stopping at the first failure. A rule's mutant first meets the bad inputs that name the
rule's field (a few Helm runs), and all of its kind's tests only if those pass."""

from __future__ import annotations

import functools
import importlib.util
import json
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from lab.mutate.plan import NICE
from lab.mutate.score import Score

CHART = Path("charts/verl-ppo")
# The chart's rulebook: the templates that check values and fail (library helpers included).
RULE_FILE = re.compile(r"/(_rules[^/]*\.tpl|validate\.yaml)$")
FAILS = re.compile(r'include "verl-ppo\.(rule|validate)"|[({]\s*-?\s*fail\b')
COMPARISON = re.compile(r"\((ne|eq|gt|lt|ge|le) ")
FLIPPED = {"ne": "eq", "eq": "ne", "gt": "le", "le": "gt", "lt": "ge", "ge": "lt"}
NUMBER = re.compile(r"(?<![\w.$%\"-])(\d+)(?![\w.\"])")
LABEL_INCLUDE = re.compile(r'include "verl-ppo\.(releasePodLabel|selectorLabels)"')
LABEL_LINE = re.compile(r"^[a-z0-9./-]+: ")
PORT = re.compile(r"^(\s*-?\s*(?:containerPort|port|targetPort): )(\d+)\s*$")
# The field a rule names: `"field" (printf "%sdata.trainBatchSize" $p)` or `"field" "global.gpu.nodes"`.
RULE_FIELD = re.compile(r'"field" (?:\(printf )?"(?:%s)?([A-Za-z][\w.]*)"')
# ... or the rule's `$field := "raycluster.queue.kueue"`, which its report then names (`"field" $field`).
FIELD_VARIABLE = re.compile(r'\$field := (?:printf )?"(?:%s)?([A-Za-z][\w.]*)"')
BAD_INPUT = "tests/chart/test_bad_input.py"
# Every bad input (a dropped rule lets its case through), and valid values rendered (a flipped rule fails them).
# The Kueue quota a release is held against (read with lookup: only its helper renders without a cluster).
OBSERVABILITY_CHART = "tests/chart/test_observability_chart.py"
RULE_TESTS = (BAD_INPUT, OBSERVABILITY_CHART, "tests/chart/test_subcharts.py", "tests/chart/test_chart.py", "-k",
              "not helm3 and (rejects_and_names or behind_the_schema or bad_observability or every_broken_rule "
              "or podmonitor_forced or set_forms or check_types or at_a_rules_limit or checks_once or installed_alone "
              "or queue_gpu_quota)")
# Labels and ports: the renders of the chart's tests and its helm-unittest suites (run by test_chart_unittest.py).
RENDER_TESTS = ("tests/chart/test_chart_networkpolicy.py", "tests/chart/test_chart_unittest.py",
                "tests/chart/test_chart.py", OBSERVABILITY_CHART, "-k", "not helm3")


@dataclass(frozen=True)
class TemplateMutant:
    kind: str  # drop-rule, flip-comparison, change-number, drop-label, change-port
    path: Path  # relative to the repository root
    line: int  # 1-based
    mutated: str  # the line's replacement ("" drops it)
    tests: tuple[str, ...]
    field: str = ""  # the field of the rule the line belongs to (its line or the next ones), where one is named

    def describe(self, original: str) -> str:
        mutated = f" -> {self.mutated.strip()}" if self.mutated else ""
        return f"line {self.line} {self.kind}: {original.strip()}{mutated}"


def _rule_field(lines: list[str], index: int) -> str:
    """The field named by the rule at lines[index] or by the one its condition guards: each rule is a define of its
    own, its condition, problem and fix, then its report, which names the field or the `$field` set above it."""
    for number in range(index, min(index + 12, len(lines))):
        if not FAILS.search(lines[number]):
            continue
        if match := RULE_FIELD.search(lines[number]):
            return match.group(1)
        for above in reversed(lines[max(0, number - 12):number]):
            if "define " in above:
                break
            if match := FIELD_VARIABLE.search(above):
                return match.group(1)
        return ""
    return ""


def _rule_mutants(path: Path, lines: list[str]) -> list[TemplateMutant]:
    found = []
    for number, line in enumerate(lines, 1):
        if "define " in line or line.lstrip().startswith("{{/*"):
            continue
        field = _rule_field(lines, number - 1)
        if FAILS.search(line):
            found.append(TemplateMutant("drop-rule", path, number, "", RULE_TESTS,
                                        field))
        if line.lstrip().startswith("{{- if") or line.lstrip().startswith("{{- else if"):
            for match in COMPARISON.finditer(line):
                flipped = line[:match.start(1)] + FLIPPED[match.group(1)] + line[match.end(1):]
                found.append(TemplateMutant("flip-comparison", path, number, flipped, RULE_TESTS, field))
            for match in NUMBER.finditer(line):
                changed = line[:match.start(1)] + str(int(match.group(1)) + 1) + line[match.end(1):]
                found.append(TemplateMutant("change-number", path, number, changed, RULE_TESTS, field))
    return found


@functools.lru_cache(maxsize=1)
def _bad_inputs(tree: Path) -> tuple[tuple[str, str, str], ...]:
    """(test function, case id, field) of every bad input of BAD_INPUT, read from the tree's copy."""
    sys.path.insert(0, str(tree / "tests"))
    spec = importlib.util.spec_from_file_location("mutate_bad_input", tree / BAD_INPUT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return (*(("test_helm_template_rejects_and_names_the_field", case.id, case.field) for case in module.CASES),
            *(("test_rules_behind_the_schema_still_fire", case.id, case.field) for case in module.BEHIND_THE_SCHEMA))


def first_tests(mutant: TemplateMutant, tree: Path) -> tuple[str, ...]:
    """The bad inputs naming the mutant's field (with Helm 4), to run before all the tests of its kind."""
    if not mutant.field:
        return ()
    return tuple(f"{BAD_INPUT}::{test}[helm4-{case}]" for test, case, field in _bad_inputs(tree)
                 if field == mutant.field or field.endswith("." + mutant.field))


def _render_mutants(path: Path, lines: list[str]) -> list[TemplateMutant]:
    found = []
    in_labels_file = path.name == "_labels.tpl"
    for number, line in enumerate(lines, 1):
        if LABEL_INCLUDE.search(line) and "define " not in line or in_labels_file and LABEL_LINE.match(line):
            found.append(TemplateMutant("drop-label", path, number, "", RENDER_TESTS))
        if port := PORT.match(line):
            found.append(TemplateMutant("change-port", path, number, f"{port.group(1)}{int(port.group(2)) + 1}",
                                        RENDER_TESTS))
    return found


def mutants(tree: Path) -> list[TemplateMutant]:
    found = []
    for template in sorted((tree / CHART).rglob("templates/**/*")):
        if template.suffix not in (".tpl", ".yaml", ".txt") or not template.is_file():
            continue
        path = template.relative_to(tree)
        lines = template.read_text().splitlines()
        if RULE_FILE.search(f"/{path}"):
            found += _rule_mutants(path, lines)
        found += _render_mutants(path, lines)
    return found


def killed(mutant: TemplateMutant, tree: Path, timeout: float = 900) -> bool:
    template = tree / mutant.path
    original = template.read_text()
    lines = original.splitlines(keepends=True)
    lines[mutant.line - 1] = mutant.mutated + ("\n" if mutant.mutated else "")
    template.write_text("".join(lines))
    try:
        stages = [tests for tests in (first_tests(mutant, tree), mutant.tests) if tests]
        return any(_fails(tests, tree, timeout) for tests in stages)
    except subprocess.TimeoutExpired:
        return True
    finally:
        template.write_text(original)


def _fails(tests: tuple[str, ...], tree: Path, timeout: float) -> bool:
    run = subprocess.run([*NICE, sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests],
                         cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=timeout)
    return run.returncode != 0


def killed_before(earlier: list[Path]) -> set[tuple[str, str]]:
    """(path, mutant) of the mutants earlier runs' results record as killed."""
    entries = [json.loads(line) for results in earlier for line in results.read_text().splitlines()]
    return {(entry["path"], entry["mutant"]) for entry in entries if entry["outcome"] == "killed"}


def run_templates(tree: Path, selected: list[TemplateMutant], results: Path, earlier: list[Path] = ()) -> list[Score]:
    """Tests each mutant; one JSON line per mutant into `results` as it goes (read back by --report). A mutant
    an earlier run killed (same file, line and text: `earlier`, its results files) is carried over, not run."""
    results.unlink(missing_ok=True)
    carried = killed_before(list(earlier))
    for mutant in selected:
        where = str(mutant.path), mutant.describe((tree / mutant.path).read_text().splitlines()[mutant.line - 1])
        outcome = "killed" if where in carried or killed(mutant, tree) else "survived"
        with results.open("a") as out:
            out.write(json.dumps({"path": where[0], "outcome": outcome, "mutant": where[1],
                                  "carried": where in carried}) + "\n")
        print(f"  {outcome:<8} {where[0]}:{where[1]}{' (killed in an earlier run)' if where in carried else ''}",
              flush=True)
    return read_scores(results)


def read_scores(results: Path) -> list[Score]:
    scores: dict[str, Score] = {}
    for line in results.read_text().splitlines():
        entry = json.loads(line)
        score = scores.setdefault(entry["path"], Score(entry["path"]))
        if entry["outcome"] == "killed":
            score.killed += 1
        else:
            score.survived.append(entry["mutant"])
    return list(scores.values())

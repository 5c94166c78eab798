"""Python mutants through cosmic-ray: one session per module, each mutant tested by that module's tests
only (stopping at the first failure), niced. Results are read back from cosmic-ray's session database."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from generator.paths import ROOT
from lab.mutate.annotations import in_annotation
from lab.mutate.equivalent import why_equivalent
from lab.mutate.plan import NICE, PythonTarget
from lab.mutate.score import Score

# Operators left out: replacing arithmetic or a comparison by a bitwise, shift, power or identity
# operator. On these integers nearly all are killed by any test, and they would be half of all mutants
# (the binary-operator family alone is 12 per `*`), crowding out the ones that tell something.
EXCLUDED_OPERATORS = (
    r"core/ReplaceBinaryOperator_\w+_(BitAnd|BitOr|BitXor|LShift|RShift|Pow)$",
    r"core/ReplaceComparisonOperator_\w+_(Is|IsNot)$",
)


def config_text(target: PythonTarget) -> str:
    excluded = ", ".join(f"'{pattern}'" for pattern in (*EXCLUDED_OPERATORS, *target.excluded))
    return (f"[cosmic-ray]\nmodule-path = '{target.module}'\ntimeout = {target.timeout}\nexcluded-modules = []\n"
            f'test-command = "{target.test_command()}"\n\n[cosmic-ray.distributor]\nname = "local"\n\n'
            f"[cosmic-ray.filters.operators-filter]\nexclude-operators = [{excluded}]\n")


def _cosmic_ray(tree: Path, *args: str) -> None:
    subprocess.run([*NICE, sys.executable, "-m", "cosmic_ray.cli", *args], cwd=tree, check=True,
                   stdout=subprocess.DEVNULL)


ANNOTATION = "in a type annotation, which `from __future__ import annotations` leaves unevaluated"


def _skip_annotations(session: Path, tree: Path) -> None:
    """Marks the mutants inside type annotations skipped: they cannot change behaviour (annotations.py)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        for item in list(db.pending_work_items):
            mutation = item.mutations[0]
            if in_annotation(tree / mutation.module_path, tuple(mutation.start_pos)):
                db.set_result(item.job_id, WorkResult(output=ANNOTATION, worker_outcome=WorkerOutcome.SKIPPED))


def _keep_sample(session: Path, sample: int) -> None:
    """Marks all but `sample` pending mutants skipped (a quick look at a slow module): evenly spaced in
    the order of the source (cosmic-ray lists them in random order), so a sample is the same every run."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult

    with use_db(str(session), WorkDB.Mode.open) as db:
        pending = sorted(db.pending_work_items, key=lambda item: (
            tuple(item.mutations[0].start_pos), item.mutations[0].operator_name, item.mutations[0].occurrence))
        step = max(1, len(pending) // sample)
        keep = {item.job_id for item in pending[::step][:sample]}
        for item in pending:
            if item.job_id not in keep:
                db.set_result(item.job_id, WorkResult(output="not sampled", worker_outcome=WorkerOutcome.SKIPPED))


def baseline_passes(target: PythonTarget, tree: Path) -> bool:
    return subprocess.run(target.test_command(), shell=True, cwd=tree, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0


def run_target(target: PythonTarget, tree: Path, work: Path, sample: int | None = None) -> Score:
    config, session = work / f"{target.name}.toml", work / f"{target.name}.sqlite"
    config.write_text(config_text(target))
    session.unlink(missing_ok=True)
    _cosmic_ray(tree, "init", str(config), str(session))
    subprocess.run([*NICE, sys.executable, "-m", "cosmic_ray.tools.filters.operators_filter", str(session),
                    str(config)], cwd=tree, check=True)
    _skip_annotations(session, tree)
    if sample:
        _keep_sample(session, sample)
    _cosmic_ray(tree, "exec", str(config), str(session))
    return read_score(target, tree, session)


def retry_survivors(target: PythonTarget, tree: Path, work: Path) -> Score:
    """Tests again, with the tests as they are now, only the mutants that survived the last run."""
    import sqlite3

    session = work / f"{target.name}.sqlite"
    with sqlite3.connect(session) as db:
        # Mutants the last run never reached stay unrun: mark them skipped, then free the survivors.
        db.execute("INSERT INTO work_results (worker_outcome, output, job_id) SELECT 'SKIPPED', 'not run', job_id "
                   "FROM work_items WHERE job_id NOT IN (SELECT job_id FROM work_results)")
        survivors = db.execute("SELECT r.job_id, m.start_pos_row, m.start_pos_col, r.diff FROM work_results r JOIN "
                               "mutation_specs m ON m.job_id = r.job_id WHERE r.test_outcome = 'SURVIVED'").fetchall()
        # Equivalent mutants stay as they are: running them again can only show that again.
        db.executemany("DELETE FROM work_results WHERE job_id = ?",
                       [(job,) for job, row, col, diff in survivors if not _equivalent(target, (row, col), diff)])
    config = work / f"{target.name}.toml"
    config.write_text(config_text(target))  # the tests as targets.py selects them now: new ones may have been added
    _cosmic_ray(tree, "exec", str(config), str(session))
    return read_score(target, tree, session)


def _added_line(diff: str | None) -> str | None:
    added = [text[1:].strip() for text in (diff or "").splitlines()
             if text.startswith("+") and not text.startswith("+++")]
    return added[0] if added else None


def _equivalent(target: PythonTarget, start: tuple[int, int], diff: str | None) -> str | None:
    """Why a surviving mutant is equivalent (inside an annotation, or listed in equivalent.py), or None."""
    if in_annotation(ROOT / target.module, start):
        return ANNOTATION
    added = _added_line(diff)
    return why_equivalent(target.module, added) if added else None


def read_score(target: PythonTarget, tree: Path, session: Path) -> Score:
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome

    source = (ROOT / target.module).read_text().splitlines()  # the checkout's: the tree may hold a mutant
    score = Score(target.module)
    with use_db(str(session), WorkDB.Mode.open) as db:
        for item, result in db.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue
            if result.test_outcome == TestOutcome.SURVIVED:
                mutation = item.mutations[0]
                line = mutation.start_pos[0]
                where = (f"line {line} {mutation.operator_name}: {source[line - 1].strip()} -> "
                         f"{_added_line(result.diff) or '?'}")
                why = _equivalent(target, tuple(mutation.start_pos), result.diff)
                if why:
                    score.equivalent.append(f"{where} ({why})")
                else:
                    score.survived.append(where)
            else:  # killed, or incompetent (the mutant does not even import): the tests noticed
                score.killed += 1
    score.survived.sort(key=lambda text: int(text.split()[1]))
    score.equivalent.sort(key=lambda text: int(text.split()[1]))
    return score

"""python -m lab.mutate [--only TEXT ...] [--sample N] [--no-python] [--no-templates] [--retry-survivors]
[--fast-only] [--templates-killed-in RESULTS ...] [--report] [--holes]"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from lab.mutate import holes, python_mutants, templates
from lab.mutate.score import Score, equivalents, survivors, table
from lab.mutate.sharedhead import shared_ray_head
from lab.mutate.staged import FAST_ONLY
from lab.mutate.targets import PYTHON_TARGETS
from lab.mutate.tree import WORK, copy_tree


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m lab.mutate", description=__doc__)
    parser.add_argument("--only", action="append", default=[],
                        help="mutate only modules / templates whose path contains this (repeatable)")
    parser.add_argument("--sample", type=int, help="at most N mutants per module, evenly spaced")
    parser.add_argument("--no-python", action="store_true", help="skip the Python modules")
    parser.add_argument("--no-templates", action="store_true", help="skip the chart's template mutants")
    parser.add_argument("--retry-survivors", action="store_true",
                        help="test again only the Python mutants that survived the last run (after adding tests)")
    parser.add_argument("--templates-killed-in", action="append", default=[], type=Path, metavar="RESULTS",
                        help="an earlier run's templates.jsonl: its killed template mutants are carried over, not run")
    parser.add_argument("--fast-only", action="store_true",
                        help="staged modules: the fast stage alone (no Ray head); --retry-survivors then runs both")
    parser.add_argument("--work", type=Path, default=WORK,
                        help=f"where the tree copy and the results go (default {WORK}); two runs need two")
    parser.add_argument("--holes", action="store_true",
                        help="only the audit's breakages (lab/mutate/holes.py): each must be caught by its tests")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: the table of the last run's results (build/mutate/)")
    return parser.parse_args(argv)


def chosen(path: str, only: list[str]) -> bool:
    return not only or any(text in path for text in only)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if args.report:
        return report(args)
    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    tree = copy_tree(work / "tree")
    if args.holes:
        return holes.run_holes(tree, args.only)
    if args.fast_only:
        os.environ[FAST_ONLY] = "1"
    if args.retry_survivors:
        scores = []
        for target in PYTHON_TARGETS:
            if chosen(target.module, args.only) and (work / f"{target.name}.sqlite").exists():
                with shared_ray_head(target):
                    scores.append(python_mutants.retry_survivors(target, tree, work))
        print_scores(scores)
        return 0
    scores: list[Score] = []
    if not args.no_python:
        for target in (t for t in PYTHON_TARGETS if chosen(t.module, args.only)):
            with shared_ray_head(target):
                if not python_mutants.baseline_passes(target, tree):
                    print(f"{target.module}: its tests fail unmutated ({target.test_command()}); skipped", flush=True)
                    continue
                print(f"mutating {target.module} ...", flush=True)
                scores.append(python_mutants.run_target(target, tree, work, args.sample))
            print(table(scores[-1:]), flush=True)
    if not args.no_templates:
        selected = [m for m in templates.mutants(tree) if chosen(str(m.path), args.only)]
        if args.sample:
            step = max(1, len(selected) // args.sample)
            selected = selected[::step][:args.sample]
        print(f"mutating the chart's templates: {len(selected)} mutants ...", flush=True)
        scores += templates.run_templates(tree, selected, work / "templates.jsonl", args.templates_killed_in)
    print_scores(scores)
    return 0


def report(args: argparse.Namespace) -> int:
    """The table again from the sessions and results a run left in its work directory."""
    work = args.work.resolve()
    scores = [python_mutants.read_score(target, work / "tree", work / f"{target.name}.sqlite")
              for target in PYTHON_TARGETS
              if chosen(target.module, args.only) and (work / f"{target.name}.sqlite").exists()]
    if (work / "templates.jsonl").exists():
        scores += [s for s in templates.read_scores(work / "templates.jsonl") if chosen(s.module, args.only)]
    print_scores(scores)
    return 0


def print_scores(scores: list[Score]) -> None:
    print("\nshare of mutants killed\n" + table(scores))
    if any(score.equivalent for score in scores):
        print("\nequivalent (left out of the share)\n" + equivalents(scores))
    if any(score.survived for score in scores):
        print("\nsurvivors\n" + survivors(scores))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

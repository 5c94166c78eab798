"""Command line of the generator: `python -m generator <command>`.

For users: shapes, plan, render, check, discover. For maintainers (they write files of this repository):
schema, docs, summarize.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable

import jsonschema
import yaml

from generator import paths
from generator.algorithms import Algorithm, algorithms
from generator.catalog import DEFAULT_MODEL, Catalog, GpuShape, ModelProfile, load_catalog
from generator.check import check
from generator.discover import DiscoveryError, discover, read_nodes
from generator.docstables import doc_tables
from generator.examples import example_overlays
from generator.helm import HelmInputs, HelmMissing
from generator.measurements import measured_runs
from generator.plan import inputs_for, measured_plans, plan
from generator.planwork import PlanInputs
from generator.planfixes import fixes, overflow_lines
from generator.planreport import model_error, plan_text
from generator.render import (lora_version_for, platform_overlays, render_shape, run_for, sized_shapes,
                              values_file_name, verl_version_for, write)
from generator.schema import chart_schemas, value_maximum
from generator.rolloutpool import RolloutPool, balanced_pool
from generator.runshape import RESOURCE_SHARE, RunShape
from generator.sizing import pod_resources, size
from generator.summary import summarize
from generator.verlversions import by_version
from generator.valuesdoc import readmes


class InputError(Exception):
    """A command-line value that cannot be used: the message names the argument, the value and the fix."""


def catalog_for(args: argparse.Namespace) -> Catalog:
    """--catalog read and checked against the catalog schema; InputError naming the file where it is not a catalog."""
    try:
        return load_catalog(args.catalog)
    except OSError as error:
        problem = error.strerror or str(error)
    except yaml.YAMLError as error:
        problem = f"not YAML ({' '.join(str(error).split())})"
    except jsonschema.ValidationError as error:
        where = ".".join(str(part) for part in error.absolute_path) or "(the file)"
        problem = f"not a catalog: {where}: {error.message}"
    raise InputError(f"--catalog {args.catalog}: {problem}; give a catalog file such as "
                     f"{paths.CATALOG.relative_to(paths.ROOT)} "
                     "(or one `python -m generator discover --output FILE` writes)")


def model_for(args: argparse.Namespace, catalog: Catalog) -> ModelProfile:
    if args.model not in catalog.models:
        raise InputError(f"unknown --model {args.model!r}; give one of the catalog's models "
                         f"({', '.join(catalog.models)})")
    return catalog.models[args.model]


def cmd_shapes(args: argparse.Namespace) -> int:
    catalog = catalog_for(args)
    model = model_for(args, catalog)
    algorithm = algorithms()[args.algorithm]
    print(f"{'shape':<14} {'GPU':<26} {'GiB':>4} {'GPUs':>4} {'nodes':>5} {'veRL':>11} {'TP':>3} {'micro':>5} "
          f"{'tokens':>6} {'ckpt':>4} {'rollout':>7}  figures")
    for shape, version, sizing in sized_shapes(catalog, model, algorithm):
        tokens = sizing.train_token_budget if sizing.dynamic_batching else "-"
        print(f"{shape.name:<14} {shape.gpu_model[:26]:<26} {shape.gpu_memory_gib:>4g} {shape.gpus_per_node:>4} "
              f"{shape.default_nodes:>5} {version:>11} {sizing.tensor_parallel:>3} {sizing.micro_batch:>5} "
              f"{tokens:>6} {'on' if sizing.gradient_checkpointing else 'off':>4} "
              f"{sizing.rollout_memory_fraction:>7}  {'vendor' if shape.documented else 'estimated'}")
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Per-GPU memory of each phase against the GPU's, and seconds a step; exit 1 where a phase does not fit."""
    catalog = catalog_for(args)
    for kind, name, known in (("shape", args.shape, catalog.shapes), ("model", args.model, catalog.models)):
        if name not in known:
            print(f"plan: unknown {kind} {name!r}; known: {', '.join(known)}", file=sys.stderr)
            return 2
    shape, model, algorithm = catalog.shapes[args.shape], catalog.models[args.model], algorithms()[args.algorithm]
    nodes = args.nodes or shape.default_nodes
    if args.lora_rank and not model.adapter_params_per_rank:
        print(f"plan: the catalog's model {model.name} has no adapterParamsPerRank: LoRA cannot be planned for it",
              file=sys.stderr)
        return 2
    inputs = inputs_for(catalog, shape, model, algorithm, nodes, lora_rank=args.lora_rank)
    if args.row_tokens and args.row_tokens > inputs.run.sequence_length:
        print(f"plan: --row-tokens {args.row_tokens} is longer than a row can be ({inputs.run.sequence_length}: "
              "prompt and response at their maximum); give at most that", file=sys.stderr)
        return 2
    inputs = inputs_for(catalog, shape, model, algorithm, nodes, row_tokens=args.row_tokens, lora_rank=args.lora_rank)
    measured_on = load_catalog()  # the measured runs name the project's node types, whatever catalog is planned
    planned = plan(inputs, measured_plans(measured_on, measured_runs()))
    found = () if planned.fits else fixes(inputs, lambda more: inputs_for(catalog, shape, model, algorithm, more,
                                                                           row_tokens=args.row_tokens,
                                                                           lora_rank=args.lora_rank))
    error = model_error(measured_on, measured_runs())
    print(plan_text(planned, found, nodes, inputs.run.verl_version, not args.row_tokens, error), end="")
    return 0 if planned.fits else 1


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"'{text}' is not a whole number of at least 1")
    return value


def schema_bounded(*keys: str) -> Callable[[str], int]:
    """A whole number from 1 up to the values schema's maximum for the key the argument lands on."""
    def parse(text: str) -> int:
        value, most = positive_int(text), value_maximum(*keys)
        if value > most:
            raise argparse.ArgumentTypeError(f"'{text}' is above {most}, the most the values schema takes "
                                             f"({'.'.join(keys)}); give 1 to {most}")
        return value
    parse.__name__ = "a whole number"  # argparse names the type by it in its own errors
    return parse


def resource_share(text: str) -> float:
    """A share of a node's allocatable CPU and memory: above 0, at most 1 (a pod cannot ask for more than the node)."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not 0 < value <= 1:  # nan fails both comparisons
        raise argparse.ArgumentTypeError(f"'{text}' is not a share of the node: give a number above 0 and at most 1, "
                                         f"e.g. {RESOURCE_SHARE}")
    return value


def lora_rank(text: str) -> int:
    """0 (no LoRA) up to 512, the largest rank vLLM serves (the values schema's bound)."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 512:
        raise argparse.ArgumentTypeError(f"'{text}' is not a LoRA rank: a whole number from 0 (no LoRA) to 512")
    return value


def rendered_inputs(shape: GpuShape, model: ModelProfile, algorithm: Algorithm, run: RunShape) -> PlanInputs:
    """The plan of what `render` writes for the node type and the run, rows at their full length."""
    return PlanInputs(shape, model, algorithm, run, size(shape, model, run), run.nodes * shape.gpus_per_node,
                      run.sequence_length)


def rollout_pool_for(args: argparse.Namespace, catalog: Catalog, shape: GpuShape, run: RunShape,
                     algorithm: Algorithm) -> tuple[RolloutPool, str]:
    """The rollout pool of --rollout-shape beside the training node type, balanced on the measured runs, and the line
    that states the balance."""
    inputs = rendered_inputs(shape, catalog.models[args.model], algorithm, run)
    pool = balanced_pool(inputs, catalog.shapes[args.rollout_shape], measured_plans(load_catalog(), measured_runs()))
    return pool, pool.summary(inputs)


# A LoRA rank the plan tries where a whole model does not fit (the rank of the 7B run measured on one H200).
SUGGESTED_LORA_RANK = 32


def overflow_problem(args: argparse.Namespace, shape: GpuShape, model: ModelProfile, algorithm: Algorithm,
                     run: RunShape) -> str:
    """Why the values of this node type would run out of GPU memory by the plan (`generator plan`): the phases that
    overflow and what fits instead, each as render or Helm takes it; "" where every phase fits."""
    inputs = rendered_inputs(shape, model, algorithm, run)
    if plan(inputs).fits:
        return ""
    found = [f"{fix.change}: peak {fix.peak_gib:.1f} GiB ({fix.peak_phase})" for fix in
             fixes(inputs, lambda nodes: rendered_inputs(shape, model, algorithm, replace(run, nodes=nodes)))]
    if not run.lora_rank and model.adapter_params_per_rank:
        version = lora_version_for(run.verl_version, SUGGESTED_LORA_RANK)
        lora = plan(rendered_inputs(shape, model, algorithm, replace(run, lora_rank=SUGGESTED_LORA_RANK,
                                                                      verl_version=version)))
        if lora.fits:
            found.append(f"--lora-rank {SUGGESTED_LORA_RANK} (the adapters train, the base stays frozen: "
                         f"docs/algorithms.md): peak {lora.peak.gpu_gib:.1f} GiB ({lora.peak.name})")
    planned = (f"python -m generator plan --shape {shape.name} --model {model.name} --algorithm {algorithm.name} "
               f"--nodes {run.nodes}" + (f" --lora-rank {run.lora_rank}" if run.lora_rank else "")
               + (f" --catalog {args.catalog}" if args.catalog != paths.CATALOG else ""))
    return "\n".join([f"{shape.name}: {model.name} ({algorithm.name}) would run out of GPU memory, so nothing is "
                      f"written for it: {'; '.join(overflow_lines(inputs))} ({planned} shows every phase)",
                      *(["  what fits instead, each alone:"] + [f"  - {line}" for line in found] if found else
                        ["  no single change fits: a GPU with more memory, or a smaller model"]),
                      "  or --ignore-plan writes it anyway (the plan's peaks were within 20% of the measured ones: "
                      "docs/sizing.md)"])


def rollout_shape_problem(args: argparse.Namespace, catalog: Catalog, algorithm: Algorithm) -> str:
    """Why --rollout-shape cannot be rendered (its value named, with the fix), or ""."""
    if args.rollout_shape not in catalog.shapes:
        return (f"unknown --rollout-shape {args.rollout_shape!r}: give one of the catalog's node types "
                f"({', '.join(catalog.shapes)}; python -m generator shapes)")
    if "separate_async" not in by_version()[catalog.verl.version].trainer_modes:
        return (f"--rollout-shape {args.rollout_shape}: the catalog's veRL {catalog.verl.version} has no "
                "separate_async trainer mode; render without --rollout-shape")
    if catalog.verl.version not in algorithm.versions:
        return (f"--rollout-shape {args.rollout_shape}: algorithm {algorithm.name} is not in veRL "
                f"{catalog.verl.version}, whose separate_async the pool needs; give another --algorithm")
    return ""


def output_problem(output: Path) -> str:
    """Why values cannot be written under --output (a file there, or a folder that cannot be made or written), or ""."""
    existing = next((path for path in (output, *output.parents) if path.exists()), None)
    if existing is not None and not existing.is_dir():
        return f"--output {output}: {existing} is a file, not a folder; give a folder (made if missing)"
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        return f"--output {output}: {existing} is not writable; give a folder you can write"
    return ""


def resources_problem(shape: GpuShape, share: float, rollout_shape: GpuShape | None) -> str:
    """Why --resource-share leaves a Ray pod no whole core or GiB on a node type (the schema wants both above 0)."""
    for node in (shape, rollout_shape) if rollout_shape else (shape,):
        cpu, memory = pod_resources(node, share)
        if cpu == "0" or memory == "0Gi":
            return (f"--resource-share {share:g}: a Ray pod on a {node.name} node would get {cpu} CPU and {memory} "
                    f"of its {node.allocatable_cpu} CPU and {node.allocatable_memory}; give a larger share, e.g. "
                    f"{RESOURCE_SHARE}")
    return ""


def cmd_render(args: argparse.Namespace) -> int:
    catalog = catalog_for(args)
    model = model_for(args, catalog)
    algorithm = algorithms()[args.algorithm]
    names = args.shape or list(catalog.shapes)
    outputs, summaries, refused = {}, [], 0
    problem = rollout_shape_problem(args, catalog, algorithm) if args.rollout_shape is not None else ""
    problem = problem or output_problem(args.output)
    if not problem and args.responses_per_prompt and args.responses_per_prompt < algorithm.min_responses:
        problem = (f"--responses-per-prompt {args.responses_per_prompt}: {algorithm.name} needs at least "
                   f"{algorithm.min_responses} responses a prompt (a group of one has no baseline); give "
                   f"{algorithm.responses_per_prompt} (its default) or leave it out")
    if problem:
        print(f"render: {problem}", file=sys.stderr)
        return 2
    for name in names:
        if name not in catalog.shapes:
            print(f"unknown shape {name!r}; known: {', '.join(catalog.shapes)}", file=sys.stderr)
            return 2
        shape = catalog.shapes[name]
        problem = resources_problem(shape, args.resource_share, catalog.shapes.get(args.rollout_shape))
        if problem:
            print(f"render: {problem}", file=sys.stderr)
            return 2
        # A rollout pool runs on the catalog's veRL (separate_async is 0.9.1's), the vendor guide's shape too.
        base = catalog.verl.version if args.rollout_shape else verl_version_for(catalog.verl, shape, algorithm)
        version = lora_version_for(base, args.lora_rank)
        run = run_for(algorithm, args.nodes or shape.default_nodes, args.responses_per_prompt, args.resource_share,
                      version, args.lora_rank)
        run = replace(run, rollout_on_pool=bool(args.rollout_shape))
        try:
            pool, summary = rollout_pool_for(args, catalog, shape, run, algorithm) if args.rollout_shape else (None, "")
            text = render_shape(shape, model, run, algorithm, catalog.verl, pool, summary)
        except ValueError as error:  # a model the catalog cannot size LoRA for, a pool that cannot hold a replica
            print(f"render: {error}", file=sys.stderr)
            return 2
        overflow = "" if args.ignore_plan else overflow_problem(args, shape, model, algorithm, run)
        if overflow:  # the other node types are still written
            print(f"render: {overflow}", file=sys.stderr)
            refused += 1
            continue
        outputs[args.output / values_file_name(shape, algorithm, args.lora_rank, pool.shape if pool else None)] = text
        summaries += [f"{shape.name}: {summary}"] if summary else []
    if args.output.resolve() != paths.VALUES_DIR.resolve():
        # The platform overlays live in values/platforms/; values rendered elsewhere get copies beside them.
        for file_name, text in platform_overlays().items():
            outputs[args.output / "platforms" / file_name] = text
    for path, text in outputs.items():
        try:
            print(f"{'wrote' if write(path, text) else 'unchanged'} {path}")
        except OSError as error:  # what output_problem cannot foresee: a read-only or full file system
            raise InputError(f"--output {args.output}: cannot write {path} ({error.strerror or error}); give a "
                             "folder you can write") from error
    for summary in summaries:
        print(summary)
    return 2 if refused else 0


def cmd_check(args: argparse.Namespace) -> int:
    """Each FILE is checked over the chart's defaults; with --together, all files as one `-f` stack."""
    if not (args.chart / "Chart.yaml").is_file():
        raise InputError(f"--chart {args.chart}: no Chart.yaml there; give the verl-ppo chart's folder, e.g. "
                         f"{paths.CHART.relative_to(paths.ROOT)} (the default)")
    stacks = [args.files] if args.together or not args.files else [[path] for path in args.files]
    failed = 0
    for stack in stacks:
        label = " + ".join(str(path) for path in stack) or f"{args.chart} (defaults)"
        unreadable = [str(path) for path in stack if not path.is_file()]
        if unreadable:
            print(f"{label}: cannot read {', '.join(unreadable)}")
            failed += 1
            continue
        inputs = HelmInputs(tuple(stack), tuple(args.set or ()), tuple(args.set_string or ()),
                            tuple(args.set_json or ()), args.release_name, args.namespace)
        try:
            verdict = check(args.chart.resolve(), inputs)
        except HelmMissing as missing:
            print(f"check: {missing}", file=sys.stderr)
            return 2
        for note in verdict.notes:
            print(f"{label}: note: {note}", file=sys.stderr)
        for finding in verdict.findings:
            print(f"{label}: {finding}")
        failed += bool(verdict.findings)
        if not verdict.findings:
            print(f"{label}: ok")
    return 1 if failed else 0


def write_or_check(expected: dict[Path, str], check_only: bool, fix_command: str) -> int:
    """Writes each file whose text differs, or with check_only reports the drift."""
    stale = [path for path, text in expected.items() if not path.exists() or path.read_text() != text]
    for path in (stale if check_only else expected):
        relative = path.relative_to(paths.ROOT)
        if check_only:
            print(f"{relative} is stale: run {fix_command}")
        else:
            print(f"{'wrote' if write(path, expected[path]) else 'unchanged'} {relative}")
    return 1 if check_only and stale else 0


def gpu_memory_item(text: str) -> tuple[str, float]:
    """One --gpu-memory-gib argument: LABEL_VALUE=GIB, GiB above 0 (as the catalog schema wants it)."""
    value, equals, gib = text.rpartition("=")
    try:
        if value and equals and float(gib) > 0:
            return value, float(gib)
    except ValueError:
        pass
    raise argparse.ArgumentTypeError(f"'{text}' is not LABEL_VALUE=GIB: give the node type's label value and "
                                     "the GiB of one of its GPUs, e.g. NVIDIA-A10=24")


def cmd_discover(args: argparse.Namespace) -> int:
    """Catalog entries for the cluster's GPU node types (checked against the catalog schema)."""
    try:
        document = discover(read_nodes(args.kubeconfig), load_catalog(), dict(args.gpu_memory_gib or []))
    except (DiscoveryError, ValueError) as error:
        print(f"discover: {error}", file=sys.stderr)
        return 1
    text = "# Written by `python -m generator discover`; render values with --catalog pointing here.\n"
    text += yaml.safe_dump(document, sort_keys=False, width=120)
    if args.output:
        write(args.output, text)
        print(f"wrote {args.output}: {', '.join(shape['name'] for shape in document['shapes'])}")
    else:
        print(text, end="")
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    return write_or_check(chart_schemas(), args.check, "python -m generator schema")


def cmd_docs(args: argparse.Namespace) -> int:
    return write_or_check({**readmes(), **doc_tables(), **example_overlays()}, args.check, "python -m generator docs")


def cmd_summarize(args: argparse.Namespace) -> int:
    print(summarize(yaml.safe_load_all(sys.stdin)))
    return 0


def _drift_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--check", action="store_true", help="only report drift (exit 1 when a file is stale)")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m generator", description=__doc__,
                                   formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = root.add_subparsers(dest="command", required=True, metavar="command")

    shapes = sub.add_parser("shapes", help="(users) table of the catalog's GPU node types and their sizing")
    shapes.add_argument("--model", default=DEFAULT_MODEL)
    shapes.add_argument("--algorithm", default="ppo", choices=algorithms(), help="(ppo-job's files/algorithms.yaml)")
    shapes.add_argument("--catalog", type=Path, default=paths.CATALOG, help="catalog file (e.g. from discover)")
    shapes.set_defaults(func=cmd_shapes)

    planned = sub.add_parser("plan", help="(users) per GPU: each phase's predicted peak memory against the GPU's, "
                             "seconds a step and tokens/s, and what to change where a phase does not fit (exit 1)")
    planned.add_argument("--shape", required=True, help="the catalog's node type")
    planned.add_argument("--model", required=True, help="the catalog's model (generator/catalog.yaml models)")
    planned.add_argument("--algorithm", default="ppo", choices=algorithms(), help="(ppo-job's files/algorithms.yaml)")
    planned.add_argument("--nodes", type=positive_int, help="training nodes (default: the shape's defaultNodes)")
    planned.add_argument("--row-tokens", type=positive_int, help="mean prompt + response tokens a row (default: the "
                         "full length, the most a token budget's micro batch can hold)")
    planned.add_argument("--catalog", type=Path, default=paths.CATALOG, help="catalog file (e.g. from discover)")
    planned.add_argument("--lora-rank", type=lora_rank, default=0,
                         help="LoRA rank of the actor, and of the critic where the algorithm trains one (0: the whole "
                         "models train)")
    planned.set_defaults(func=cmd_plan)

    render = sub.add_parser("render", help="(users) write values/<shape>.yaml (elsewhere: with the platform overlays)")
    render.add_argument("shape", nargs="*", help="catalog shapes (default: all)")
    render.add_argument("--model", default=DEFAULT_MODEL)
    render.add_argument("--nodes", type=schema_bounded("global", "gpu", "nodes"),
                        help="training nodes (default: the shape's defaultNodes)")
    render.add_argument("--algorithm", default="ppo", choices=algorithms(),
                        help="ppo: values/<shape>.yaml; another: values/<shape>-<algorithm>.yaml, sized for its "
                        "responses per prompt, without a critic where it has none (ppo-job's files/algorithms.yaml)")
    render.add_argument("--responses-per-prompt", type=schema_bounded("ppo-job", "rollout", "responsesPerPrompt"),
                        help="rollout.n (default: the algorithm's)")
    render.add_argument("--resource-share", type=resource_share, default=RESOURCE_SHARE,
                        help="share of allocatable CPU/memory per pod (above 0, at most 1)")
    render.add_argument("--lora-rank", type=lora_rank, default=0,
                        help="LoRA rank of the actor, and of the critic where the algorithm trains one: values "
                        "<shape>[-<algorithm>]-lora<rank>.yaml (0: full fine-tune)")
    render.add_argument("--rollout-shape", metavar="SHAPE",
                        help="the catalog's node type of a rollout pool (veRL 0.9.1's separate_async): the pool's "
                        "replicas sized for its GPU, its nodes balanced against training from the measured rates; "
                        "values <shape>[...]-rollout-<SHAPE>.yaml")
    render.add_argument("--ignore-plan", action="store_true",
                        help="write values the plan says would run out of GPU memory (by default render names the "
                        "phase that overflows and what fits instead, writes nothing for that node type, exits 2)")
    render.add_argument("--output", type=Path, default=paths.VALUES_DIR)
    render.add_argument("--catalog", type=Path, default=paths.CATALOG, help="catalog file (e.g. from discover)")
    render.set_defaults(func=cmd_render)

    check = sub.add_parser("check", help="(users) check values files: the schema, the chart's rules (through "
                           "Helm: $HELM, PATH or the project's), extraArgs against veRL's config")
    check.add_argument("files", nargs="*", type=Path, help="values files (none: the chart's defaults)")
    check.add_argument("--together", action="store_true", help="check the files as one stack of -f files")
    check.add_argument("--set", action="append", help="as helm's --set (after the files)")
    check.add_argument("--set-string", action="append", help="as helm's --set-string")
    check.add_argument("--set-json", action="append", help="as helm's --set-json")
    check.add_argument("--release-name", default="verl-ppo")
    check.add_argument("--namespace", default="default")
    check.add_argument("--chart", type=Path, default=paths.CHART,
                       help="the verl-ppo chart to check against (default: this repository's charts/verl-ppo)")
    check.set_defaults(func=cmd_check)

    found = sub.add_parser("discover", help="(users) catalog entries for a cluster's GPU node types (Kubernetes API)")
    found.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config; in a pod: its "
                       "service account)")
    found.add_argument("--gpu-memory-gib", action="append", type=gpu_memory_item, metavar="LABEL_VALUE=GIB",
                       help="GiB of one GPU for a node type whose labels do not say it")
    found.add_argument("--output", type=Path, help="catalog file to write (default: print)")
    found.set_defaults(func=cmd_discover)

    schema = sub.add_parser("schema", help="(maintainers) write each chart's values.schema.json from schemas/")
    _drift_option(schema)
    schema.set_defaults(func=cmd_schema)

    docs = sub.add_parser("docs", help="(maintainers) write each chart's README.md from its values.yaml comments, and "
                          "the docs' tables from the chart's tables and the catalog")
    _drift_option(docs)
    docs.set_defaults(func=cmd_docs)

    summary = sub.add_parser("summarize", help="(maintainers) summarize `helm template` output read from stdin")
    summary.set_defaults(func=cmd_summarize)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except InputError as error:
        print(f"{args.command}: {error}", file=sys.stderr)
        return 2

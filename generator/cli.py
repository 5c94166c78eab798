"""Command line: `python -m generator {shapes,render,check,discover,schema,docs,dashboards,summarize}`."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml

from generator import paths
from generator.catalog import load_catalog
from generator import dashboards
from generator.checks import check_values, deep_merge, effective_values, unchecked_extra_args
from generator.discover import DiscoveryError, discover, read_nodes
from generator.render import render_platforms, render_shape, write
from generator.schema import chart_schema_json
from generator.sizing import RunShape, size
from generator.summary import summarize
from generator.valuesdoc import readme_with_table


def cmd_shapes(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    model = catalog.models[args.model]
    print(f"{'shape':<14} {'GPU':<26} {'GiB':>4} {'GPUs':>4} {'nodes':>5} {'TP':>3} {'micro':>5} {'rollout':>7}  figures")
    for shape in catalog.shapes.values():
        sizing = size(shape, model, RunShape(nodes=shape.default_nodes))
        print(f"{shape.name:<14} {shape.gpu_model[:26]:<26} {shape.gpu_memory_gib:>4g} {shape.gpus_per_node:>4} "
              f"{shape.default_nodes:>5} {sizing.tensor_parallel:>3} {sizing.micro_batch:>5} "
              f"{sizing.rollout_memory_fraction:>7}  {'vendor' if shape.documented else 'estimated'}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    model = catalog.models[args.model]
    names = args.shape or list(catalog.shapes)
    outputs = {}
    for name in names:
        if name not in catalog.shapes:
            print(f"unknown shape {name!r}; known: {', '.join(catalog.shapes)}", file=sys.stderr)
            return 2
        shape = catalog.shapes[name]
        run = RunShape(nodes=args.nodes or shape.default_nodes, resource_share=args.resource_share)
        outputs[args.output / f"{name}.yaml"] = render_shape(shape, model, run)
    for file_name, text in render_platforms().items():
        outputs[args.output / "platforms" / file_name] = text
    for path, text in outputs.items():
        print(f"{'wrote' if write(path, text) else 'unchanged'} {path}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """Each FILE is checked over the chart defaults; with --together, all files as one `-f` stack."""
    stacks = [args.files] if args.together else [[path] for path in args.files]
    failed = 0
    for stack in stacks:
        label = " + ".join(str(path) for path in stack)
        try:
            overlays = [yaml.safe_load(Path(path).read_text()) or {} for path in stack]
        except (OSError, yaml.YAMLError) as error:
            print(f"{label}: cannot read: {error}")
            failed += 1
            continue
        values = effective_values(overlays)
        for override in args.set or []:
            values = effective_values_with_set(values, override)
        findings = check_values(values, args.release_name)
        if note := unchecked_extra_args(values):
            print(f"{label}: note: {note}", file=sys.stderr)
        if findings:
            failed += 1
            for finding in findings:
                print(f"{label}: {finding}")
        else:
            print(f"{label}: ok")
    return 1 if failed else 0


def effective_values_with_set(values: dict, override: str) -> dict:
    """--set a.b=c for check, with YAML typing of the value (as Helm's --set types it)."""
    key, _, raw = override.partition("=")
    nested: dict = {}
    cursor = nested
    parts = key.split(".")
    for part in parts[:-1]:
        cursor = cursor.setdefault(part, {})
    cursor[parts[-1]] = yaml.safe_load(raw) if raw else ""
    return deep_merge(values, nested)


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
    text = chart_schema_json()
    if args.check:
        if paths.CHART_SCHEMA.read_text() != text:
            print(f"{paths.CHART_SCHEMA} differs from {paths.VALUES_SCHEMA}: run python -m generator schema")
            return 1
        print(f"{paths.CHART_SCHEMA}: in sync")
        return 0
    print(f"{'wrote' if write(paths.CHART_SCHEMA, text) else 'unchanged'} {paths.CHART_SCHEMA}")
    return 0


def cmd_docs(args: argparse.Namespace) -> int:
    text = readme_with_table(paths.README.read_text())
    if args.check:
        if paths.README.read_text() != text:
            print("README.md's values table is stale: run python -m generator docs")
            return 1
        print("README.md values table: in sync")
        return 0
    print(f"{'wrote' if write(paths.README, text) else 'unchanged'} {paths.README}")
    return 0


def cmd_dashboards(args: argparse.Namespace) -> int:
    generated = dashboards.generate()
    if args.check:
        stale = [name for name, text in generated.items()
                 if not dashboards.dashboard_path(name).exists() or dashboards.dashboard_path(name).read_text() != text]
        for name in stale:
            print(f"{dashboards.dashboard_path(name)} differs from Ray's generator: run python -m generator dashboards")
        return 1 if stale else 0
    for name, text in generated.items():
        path = dashboards.dashboard_path(name)
        print(f"{'wrote' if write(path, text) else 'unchanged'} {path} ({len(text.encode()) // 1024} KiB)")
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    print(summarize(yaml.safe_load_all(sys.stdin)))
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m generator", description=__doc__)
    sub = root.add_subparsers(dest="command", required=True)

    shapes = sub.add_parser("shapes", help="table of the catalog's GPU node types and their sizing")
    shapes.add_argument("--model", default="qwen2.5-0.5b")
    shapes.add_argument("--catalog", type=Path, default=paths.CATALOG, help="catalog file (e.g. from discover)")
    shapes.set_defaults(func=cmd_shapes)

    render = sub.add_parser("render", help="write values/<shape>.yaml and the platform overlays")
    render.add_argument("shape", nargs="*", help="catalog shapes (default: all)")
    render.add_argument("--model", default="qwen2.5-0.5b")
    render.add_argument("--nodes", type=int, help="training nodes (default: the shape's defaultNodes)")
    render.add_argument("--resource-share", type=float, default=0.8, help="share of allocatable CPU/memory per pod")
    render.add_argument("--output", type=Path, default=paths.VALUES_DIR)
    render.add_argument("--catalog", type=Path, default=paths.CATALOG, help="catalog file (e.g. from discover)")
    render.set_defaults(func=cmd_render)

    check = sub.add_parser("check", help="validate values files (schema + cross-field rules)")
    check.add_argument("files", nargs="+", type=Path)
    check.add_argument("--together", action="store_true", help="check the files as one stack of -f files")
    check.add_argument("--set", action="append", help="a --set override applied after the files")
    check.add_argument("--release-name", default="verl-ppo")
    check.set_defaults(func=cmd_check)

    found = sub.add_parser("discover", help="catalog entries for a cluster's GPU node types (Kubernetes API)")
    found.add_argument("--kubeconfig", help="kubeconfig file (default: $KUBECONFIG or ~/.kube/config; in a pod: its service account)")
    found.add_argument("--gpu-memory-gib", action="append", type=gpu_memory_item, metavar="LABEL_VALUE=GIB",
                       help="GiB of one GPU for a node type whose labels do not say it")
    found.add_argument("--output", type=Path, help="catalog file to write (default: print)")
    found.set_defaults(func=cmd_discover)

    schema = sub.add_parser("schema", help="write charts/verl-ppo/values.schema.json from schemas/")
    schema.add_argument("--check", action="store_true", help="only report drift")
    schema.set_defaults(func=cmd_schema)

    docs = sub.add_parser("docs", help="regenerate README.md's values table from values.yaml comments")
    docs.add_argument("--check", action="store_true", help="only report drift")
    docs.set_defaults(func=cmd_docs)

    board = sub.add_parser("dashboards", help="write Ray's Grafana dashboards (observability/dashboards/*.json)")
    board.add_argument("--check", action="store_true", help="only report drift")
    board.set_defaults(func=cmd_dashboards)

    summary = sub.add_parser("summarize", help="summarize `helm template` output read from stdin")
    summary.set_defaults(func=cmd_summarize)
    return root


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return args.func(args)

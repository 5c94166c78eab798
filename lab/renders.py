"""Every values file, ci scenario and the real node's values rendered, one file each, to compare two revisions of
the chart.

`python -m lab.renders OUT [--chart DIR]` writes OUT/<values, ci or lab>/<name>.yaml with what
`helm template` renders (as on a cluster serving the Prometheus operator's API, so PodMonitors render too),
or the error Helm printed; the Helm is the one `generator check` finds ($HELM, PATH, the cache). A
refactoring that must not change the release diffs two such folders: `diff -r before after`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.helm import HelmInputs, helm_binary, template
from generator.paths import CHART, VALUES_DIR
from lab.localcluster.release import REALNODE_VALUES

API_VERSIONS = ("monitoring.coreos.com/v1/PodMonitor",)


def scenarios(chart: Path) -> dict[str, list[Path]]:
    """Each rendering's name and its -f files: the chart's defaults, each values file, each ci scenario, the real
    node's values (lab/localcluster)."""
    named: dict[str, list[Path]] = {"defaults": []}
    for path in sorted(VALUES_DIR.glob("*.yaml")) + sorted((VALUES_DIR / "platforms").glob("*.yaml")):
        named[f"values/{path.relative_to(VALUES_DIR).with_suffix('')}".replace("/platforms/", "/platforms-")] = [path]
    for path in sorted((chart / "ci").glob("*.yaml")):
        named[f"ci/{path.stem}"] = [path]
    named[f"lab/{REALNODE_VALUES.stem}"] = [REALNODE_VALUES]
    return named


def render(chart: Path, files: list[Path]) -> str:
    api_versions = [argument for api in API_VERSIONS for argument in ("--api-versions", api)]
    result = template(chart, HelmInputs(files=tuple(files)), *api_versions)
    return result.stdout if result.returncode == 0 else f"# helm failed ({result.returncode})\n{result.stderr}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lab.renders", description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--chart", type=Path, default=CHART, help="chart directory (another checkout's, say)")
    args = parser.parse_args(argv)
    for name, files in scenarios(args.chart).items():
        target = args.out / f"{name}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render(args.chart, files))
    print(f"{len(scenarios(args.chart))} renderings in {args.out} (chart {args.chart}, {helm_binary()})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

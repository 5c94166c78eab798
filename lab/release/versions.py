"""The chart version policy (docs/releasing.md): after a release, the first change to what a
chart's package holds must come with a higher `version`, and the umbrella's
artifacthub.io/changes must then describe the new release.

lab/release/releases.yaml records, for the umbrella and each subchart, the version last released, the
digest of its package (lab/release/digest.py) and the digest of its changes annotation. `check`
compares the charts as they are with that record; `record` rewrites it when a release is published.
The umbrella's package holds the subcharts and values/, so a change to either raises its version too.
No git history is read: a shallow or tagless clone checks the same.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import yaml

from generator import paths
from lab.release import semver
from lab.release.digest import package_digest, text_digest
from lab.release.package import chart_metadata, package

CHANGES = "artifacthub.io/changes"
HEADER = ("# The chart versions last released and what their packages held (docs/releasing.md).\n"
          "# Written by `python -m lab.release.versions record` when a release is published.\n")


@dataclass(frozen=True)
class Layout:
    """A repository's charts: the umbrella (with values/ packaged inside) and its subcharts."""

    root: Path

    @property
    def umbrella(self) -> Path:
        return self.root / paths.CHART.relative_to(paths.ROOT)

    @property
    def values(self) -> Path:
        return self.root / paths.VALUES_DIR.relative_to(paths.ROOT)

    @property
    def record(self) -> Path:
        """The release records: release tooling, kept here with it, not in the product's charts/."""
        return self.root / "lab" / "release" / "releases.yaml"

    def charts(self) -> dict[str, Path]:
        subcharts = sorted(path.parent for path in (self.umbrella / "charts").glob("*/Chart.yaml"))
        return {chart.name: chart for chart in [self.umbrella, *subcharts]}


@dataclass(frozen=True)
class ChartState:
    version: str
    digest: str
    changes: str


def current(layout: Layout, helm: Path) -> dict[str, ChartState]:
    """Each chart as packaged: the umbrella with values/ inside, a subchart packaged on its own, with
    its dependencies (the library) built into it, in a copy (`helm dependency build` writes charts/)."""
    states = {}
    with tempfile.TemporaryDirectory() as work:
        alone = Path(work) / "alone"
        shutil.copytree(layout.umbrella / "charts", alone)
        for name, chart in layout.charts().items():
            if chart == layout.umbrella:
                packaged = package(helm, Path(work) / name, chart=chart, values=layout.values)
            else:
                subprocess.run([str(helm), "dependency", "build", str(alone / name)], check=True,
                               capture_output=True, timeout=120)
                packaged = package(helm, Path(work) / name, chart=alone / name, values=None)
            metadata = chart_metadata(chart)
            changes = (metadata.get("annotations") or {}).get(CHANGES, "")
            states[name] = ChartState(str(metadata["version"]), package_digest(packaged),
                                      text_digest(changes) if changes else "")
    return states


def read_record(layout: Layout) -> dict[str, ChartState]:
    if not layout.record.exists():
        return {}
    return {name: ChartState(**state) for name, state in yaml.safe_load(layout.record.read_text()).items()}


def write_record(layout: Layout, states: dict[str, ChartState]) -> None:
    layout.record.parent.mkdir(parents=True, exist_ok=True)
    layout.record.write_text(HEADER + yaml.safe_dump({name: asdict(state) for name, state in states.items()}))


def problems(layout: Layout, recorded: dict[str, ChartState], now: dict[str, ChartState]) -> list[str]:
    """One sentence per broken rule; a chart never released (not in the record) has none."""
    found = []
    record = layout.record.relative_to(layout.root)
    for name, state in now.items():
        before = recorded.get(name)
        if before is None:
            continue
        chart_yaml = (layout.charts()[name] / "Chart.yaml").relative_to(layout.root)
        raised = semver.parse(before.version) < semver.parse(state.version)
        if semver.parse(state.version) < semver.parse(before.version):
            found.append(f"{chart_yaml}: version {state.version} is below {before.version}, the last release "
                         f"({record})")
        elif state.digest != before.digest and not raised:
            found.append(f"{chart_yaml}: the chart changed since {before.version} was released ({record}) but its "
                         f"version is still {state.version}: raise `version` (docs/releasing.md says which part)")
        elif raised and before.changes and state.changes == before.changes:
            found.append(f"{chart_yaml}: version {state.version} still lists {before.version}'s changes in "
                         f"annotations.{CHANGES}: describe what this release changes")
    return found


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.release.versions", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["check", "record"])
    parser.add_argument("--helm", type=Path, default=paths.tool_cache() / "bin" / "helm4")
    args = parser.parse_args()
    layout = Layout(paths.ROOT)
    now = current(layout, args.helm)
    if args.command == "record":
        write_record(layout, now)
        print(f"{layout.record}: recorded {', '.join(f'{name} {state.version}' for name, state in now.items())}")
        return
    found = problems(layout, read_record(layout), now)
    for problem in found:
        print(problem)
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()

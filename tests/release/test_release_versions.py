"""The chart version policy (docs/releasing.md, lab/release/versions.py): the repository follows
it, and a change without a version bump, a lowered version and a bump with the last release's
changes each fail, on a copy of the charts."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from generator import paths
from support.tools import helm_binaries
from lab.release import semver
from lab.release.versions import CHANGES, Layout, current, problems, read_record, write_record

HELM = helm_binaries()["helm4"]
REPOSITORY = Layout(paths.ROOT)


def test_repository_follows_the_policy():
    found = problems(REPOSITORY, read_record(REPOSITORY), current(REPOSITORY, HELM))
    assert found == [], "\n".join(found)


def test_record_names_every_chart():
    assert set(read_record(REPOSITORY)) == set(REPOSITORY.charts())


def test_umbrella_requires_its_subcharts_as_they_are():
    """The umbrella's dependencies name each subchart's own version, so a subchart bump shows there too."""
    umbrella = yaml.safe_load((REPOSITORY.umbrella / "Chart.yaml").read_text())
    dependencies = {d["name"]: d["version"] for d in umbrella["dependencies"]}
    versions = {name: yaml.safe_load((chart / "Chart.yaml").read_text())["version"]
                for name, chart in REPOSITORY.charts().items() if chart != REPOSITORY.umbrella}
    assert dependencies == versions


@pytest.fixture
def copy(tmp_path) -> Layout:
    """The charts and values files in a scratch repository, recorded as released there."""
    for tree in (REPOSITORY.umbrella.parent, REPOSITORY.values):
        shutil.copytree(tree, tmp_path / tree.relative_to(paths.ROOT))
    layout = Layout(tmp_path)
    set_changes(layout.umbrella, "- kind: added\n  description: the release the test records\n")
    write_record(layout, current(layout, HELM))
    return layout


def version_of(chart: Path) -> str:
    return yaml.safe_load((chart / "Chart.yaml").read_text())["version"]


def next_minor(version: str) -> str:
    major, minor, _ = version.split("-")[0].split(".")
    return f"{major}.{int(minor) + 1}.0"


def edit_chart_yaml(chart: Path, **fields) -> None:
    text = (chart / "Chart.yaml").read_text()
    for key, value in fields.items():
        metadata = yaml.safe_load(text)
        text = text.replace(f"{key}: {metadata[key]}", f"{key}: {value}", 1)
    (chart / "Chart.yaml").write_text(text)


def set_changes(chart: Path, changes: str) -> None:
    metadata = yaml.safe_load((chart / "Chart.yaml").read_text())
    metadata.setdefault("annotations", {})[CHANGES] = changes
    (chart / "Chart.yaml").write_text(yaml.safe_dump(metadata, sort_keys=False))


def check(layout: Layout) -> list[str]:
    return problems(layout, read_record(layout), current(layout, HELM))


def test_a_recorded_copy_passes(copy):
    assert check(copy) == []


def test_a_changed_subchart_needs_its_and_the_umbrellas_bump(copy):
    storage = copy.umbrella / "charts" / "storage"
    template = sorted((storage / "templates").glob("*.yaml"))[0]
    template.write_text(template.read_text() + "\n# a change\n")
    found = check(copy)
    assert len(found) == 2, found
    assert all("raise `version`" in problem for problem in found)
    assert {problem.split(":")[0] for problem in found} == {
        "charts/verl-ppo/Chart.yaml", "charts/verl-ppo/charts/storage/Chart.yaml"}

    edit_chart_yaml(storage, version=next_minor(version_of(storage)))
    assert [p.split(":")[0] for p in check(copy)] == ["charts/verl-ppo/Chart.yaml"]
    edit_chart_yaml(copy.umbrella, version=next_minor(version_of(copy.umbrella)))
    [stale] = check(copy)
    assert "still lists" in stale and CHANGES in stale
    set_changes(copy.umbrella, "- kind: changed\n  description: the storage template\n")
    assert check(copy) == []


def test_a_changed_values_file_needs_the_umbrellas_bump(copy):
    """values/ travels inside the umbrella's package."""
    shape = sorted(copy.values.glob("*.yaml"))[0]
    shape.write_text(shape.read_text() + "# a change\n")
    assert [p.split(":")[0] for p in check(copy)] == ["charts/verl-ppo/Chart.yaml"]


def test_a_lower_version_fails(copy):
    raycluster = copy.umbrella / "charts" / "raycluster"
    released = version_of(raycluster)
    edit_chart_yaml(raycluster, version=f"{released}-rc.1")
    found = {problem.split(":")[0]: problem for problem in check(copy)}
    assert f"is below {released}" in found["charts/verl-ppo/charts/raycluster/Chart.yaml"]
    assert "raise `version`" in found["charts/verl-ppo/Chart.yaml"], "the umbrella packages the changed Chart.yaml"


@pytest.mark.parametrize("lower, higher", [
    ("0.1.0", "0.1.1"), ("0.1.9", "0.1.10"), ("0.9.0", "1.0.0"), ("1.0.0-rc.1", "1.0.0"),
    ("1.0.0-alpha", "1.0.0-alpha.1"), ("1.0.0-alpha.2", "1.0.0-alpha.10"), ("1.0.0-2", "1.0.0-alpha"),
])
def test_semver_precedence(lower, higher):
    assert semver.parse(lower) < semver.parse(higher) and not semver.parse(higher) < semver.parse(lower)


@pytest.mark.parametrize("text", ["0.1", "v0.1.0", "01.0.0", "1.0.0-", "1.0.0-01"])
def test_semver_rejects(text):
    with pytest.raises(ValueError, match="not a SemVer 2 version"):
        semver.parse(text)

"""What Artifact Hub and `helm show chart` tell users about the umbrella chart, kept true: the
images annotation lists exactly the images the chart runs with its default images (every optional
pod on), prerelease follows the version, changes is a well-formed list, and the icon is a file of
this repository at the address its sources name."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import xml.etree.ElementTree as ElementTree
from urllib.parse import urlparse

import pytest
import yaml

from generator import paths
from support import helm as helm_cli
from lab.release import semver

METADATA = yaml.safe_load((paths.CHART / "Chart.yaml").read_text())
ANNOTATIONS = METADATA.get("annotations") or {}
EVERY_POD = Path(__file__).parents[1] / "data" / "cluster-every-pod.yaml"
CHANGE_KINDS = {"added", "changed", "deprecated", "removed", "fixed", "security"}


def annotation(key: str) -> Any:
    name = f"artifacthub.io/{key}"
    assert name in ANNOTATIONS, f"charts/verl-ppo/Chart.yaml has no annotations.{name}"
    return ANNOTATIONS[name]


def containers(node: Any) -> Iterator[dict]:
    """Every container and init container anywhere in a rendered object (pod templates of any depth)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("containers", "initContainers") and isinstance(value, list):
                yield from value
            else:
                yield from containers(value)
    elif isinstance(node, list):
        for item in node:
            yield from containers(item)


def rendered_images(binary: Path, *extra: str) -> set[str]:
    result = helm_cli.template(binary, *extra)
    assert result.returncode == 0, result.output
    return {container["image"] for document in result.documents() for container in containers(document)}


def test_images_annotation_lists_the_images_the_chart_runs(helm):
    listed = yaml.safe_load(annotation("images"))
    assert len({entry["name"] for entry in listed}) == len(listed), "image names repeat"
    by_default = rendered_images(helm)
    assert by_default, "the default release runs no container?"
    assert {entry["image"] for entry in listed} == by_default | rendered_images(helm, "-f", str(EVERY_POD))


def test_prerelease_annotation_follows_the_version():
    expected = "true" if semver.parse(METADATA["version"]).is_prerelease else "false"
    assert annotation("prerelease") == expected


def test_changes_annotation_is_a_list_of_kinds_and_descriptions():
    changes = yaml.safe_load(annotation("changes"))
    assert isinstance(changes, list) and changes
    for change in changes:
        assert change["kind"] in CHANGE_KINDS, change
        assert isinstance(change["description"], str) and change["description"].strip(), change


@pytest.mark.parametrize("field", ["home", "sources", "maintainers", "icon"])
def test_chart_yaml_has(field):
    assert METADATA.get(field), f"charts/verl-ppo/Chart.yaml has no {field}"


def test_sources_start_with_this_repository():
    assert METADATA["sources"][0] == METADATA["home"]
    assert all(urlparse(source).scheme == "https" for source in METADATA["sources"])


def test_icon_is_an_svg_of_this_repository_at_its_raw_address():
    """Artifact Hub fetches the icon: the address is the repository's raw file of its main branch,
    and that file is here and is an SVG image."""
    repository = urlparse(METADATA["home"]).path.strip("/")
    prefix = f"https://raw.githubusercontent.com/{repository}/main/"
    assert METADATA["icon"].startswith(prefix), METADATA["icon"]
    icon = paths.ROOT / METADATA["icon"].removeprefix(prefix)
    assert icon.is_file(), f"{icon} is missing"
    assert ElementTree.parse(icon).getroot().tag == "{http://www.w3.org/2000/svg}svg"

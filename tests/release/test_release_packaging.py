"""The project as a published package: LICENSE is the Apache License 2.0 as the ASF publishes it, the chart
and pyproject.toml name that license and one version, and pyproject.toml's ranges hold the pins of the
project venv's lock (requirements.txt: the generator's runtime and exactly what it pulls in;
requirements-test.txt: the rest)."""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import re
import tomllib

import pytest
import yaml
from packaging.requirements import Requirement

from generator import paths

ROOT = paths.ROOT
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
CHART = yaml.safe_load((paths.CHART / "Chart.yaml").read_text())
# sha256 of https://www.apache.org/licenses/LICENSE-2.0.txt, the text every Apache-2.0 project ships.
APACHE_2_0_SHA256 = "cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30"


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(file_name: str) -> dict[str, Requirement]:
    """name -> its pin, for every requirement line of one requirements file."""
    lines = (ROOT / file_name).read_text().splitlines()
    requirements = [Requirement(line) for line in lines if line.strip() and not line.startswith("#")]
    return {canonical(requirement.name): requirement for requirement in requirements}


def pinned_version(requirement: Requirement) -> str:
    (specifier,) = requirement.specifier
    assert specifier.operator == "==", f"{requirement}: the lock pins exact versions"
    return specifier.version


def assert_ranges_hold_the_pins(declared: list[str], file_name: str) -> None:
    pinned = pins(file_name)
    for line in declared:
        requirement = Requirement(line)
        name = canonical(requirement.name)
        assert name in pinned, f"pyproject.toml names {requirement.name}, which {file_name} does not pin"
        assert requirement.specifier.contains(pinned_version(pinned[name])), \
            f"{file_name} pins {pinned[name]}, outside pyproject.toml's {line}"
        assert requirement.extras == pinned[name].extras, f"{line} and {pinned[name]}: other extras"


def runtime_closure() -> set[str]:
    """The generator's dependencies and everything they pull in, as installed in this venv."""
    found: set[str] = set()
    todo = [Requirement(line).name for line in PYPROJECT["dependencies"]]
    while todo:
        name = canonical(todo.pop())
        if name in found:
            continue
        found.add(name)
        for line in importlib.metadata.distribution(name).requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return found


def test_license_is_the_apache_license_2_0_unmodified():
    text = (ROOT / "LICENSE").read_bytes()
    assert hashlib.sha256(text).hexdigest() == APACHE_2_0_SHA256, "LICENSE differs from the ASF's Apache-2.0 text"


def test_chart_and_python_project_name_one_license_and_one_version():
    assert CHART["annotations"]["artifacthub.io/license"] == PYPROJECT["license"] == "Apache-2.0"
    assert PYPROJECT["license-files"] == ["LICENSE"]
    assert PYPROJECT["version"] == CHART["version"], "pyproject.toml's version is the umbrella chart's"


def test_runtime_ranges_hold_the_runtime_pins():
    assert_ranges_hold_the_pins(PYPROJECT["dependencies"], "requirements.txt")


def test_test_extra_ranges_hold_the_test_pins_and_name_them_all():
    declared = PYPROJECT["optional-dependencies"]["test"]
    assert_ranges_hold_the_pins(declared, "requirements-test.txt")
    assert {canonical(Requirement(line).name) for line in declared} == set(pins("requirements-test.txt"))


def test_requirements_txt_is_the_runtime_and_what_it_pulls_in():
    closure = runtime_closure()
    runtime = set(pins("requirements.txt"))
    assert runtime == closure, (f"requirements.txt lacks {sorted(closure - runtime)}, "
                                f"holds beyond the runtime {sorted(runtime - closure)}")
    assert not runtime & set(pins("requirements-test.txt")), "a package pinned in both files"
    for name, requirement in pins("requirements.txt").items():
        assert importlib.metadata.version(name) == pinned_version(requirement), f"the venv has another {name}"


def test_the_console_script_is_the_generators_main(capsys):
    module, function = PYPROJECT["scripts"]["verl-ppo-generator"].split(":")
    main = getattr(importlib.import_module(module), function)
    with pytest.raises(SystemExit) as exit_status:
        main(["--help"])
    assert exit_status.value.code == 0 and "shapes" in capsys.readouterr().out

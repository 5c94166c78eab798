"""`helm package` of the umbrella chart as it is published, optionally signed (`--sign`).

The package carries the generated values files (values/, GPU shapes and platform overlays) under
the same name inside the chart, so a user who installs from a registry picks a shape from the
package itself: `helm pull oci://.../verl-ppo --version X --untar`, then
`helm install verl-ppo oci://.../verl-ppo --version X -f verl-ppo/values/<shape>.yaml`.
They are copied in at package time (a symlink in the chart would make every helm command warn).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from generator import paths

# Where the generated values files land inside the package: the repository's own name for them.
PACKAGED_VALUES = paths.VALUES_DIR.name
DEFAULT_DESTINATION = paths.ROOT / "build" / "charts"


@dataclass(frozen=True)
class Signing:
    """What `helm package --sign` needs: a key's name (or id) and a legacy secret keyring holding it
    (`gpg --export-secret-keys > secring.gpg`: Helm does not read GnuPG 2's keybox)."""

    key: str
    keyring: Path


def chart_metadata(chart: Path) -> dict:
    return yaml.safe_load((chart / "Chart.yaml").read_text())


def package_name(chart: Path) -> str:
    metadata = chart_metadata(chart)
    return f"{metadata['name']}-{metadata['version']}.tgz"


def standalone_dependencies(chart: Path):
    """copytree's ignore: the charts/ a component's `helm dependency build` leaves in it (to install it
    alone; .gitignore'd) would put a second library into the umbrella's package."""
    components = chart / "charts"
    return lambda directory, names: ["charts"] if Path(directory).parent == components else []


def stage(work: Path, chart: Path, values: Path | None) -> Path:
    """A copy of the chart with the values files (where given) inside it."""
    staged = work / chart.name
    shutil.copytree(chart, staged, ignore=standalone_dependencies(chart))
    if values:
        shutil.copytree(values, staged / PACKAGED_VALUES)
    return staged


def package(helm: Path, destination: Path, signing: Signing | None = None,
            chart: Path = paths.CHART, values: Path | None = paths.VALUES_DIR) -> Path:
    """The chart's package (and with signing its .prov beside it) in destination. The umbrella
    carries values/; a subchart packaged alone (values=None) carries nothing beyond its files."""
    destination.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        command = [str(helm), "package", str(stage(Path(work), chart, values)), "--destination", str(destination)]
        if signing:
            command += ["--sign", "--key", signing.key, "--keyring", str(signing.keyring)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed ({result.returncode}):\n{result.stderr}")
    return destination / package_name(chart)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m lab.release.package", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--helm", type=Path, default=paths.tool_cache() / "bin" / "helm4")
    parser.add_argument("--destination", type=Path, default=DEFAULT_DESTINATION)
    parser.add_argument("--sign-key", help="sign with this key (name or id) from --keyring")
    parser.add_argument("--keyring", type=Path, help="legacy secret keyring: gpg --export-secret-keys > secring.gpg")
    args = parser.parse_args()
    if bool(args.sign_key) != bool(args.keyring):
        parser.error("--sign-key and --keyring go together")
    signing = Signing(args.sign_key, args.keyring) if args.sign_key else None
    print(package(args.helm, args.destination, signing))


if __name__ == "__main__":
    main()

"""The project's virtual environment: every Python package of requirements.txt (the generator's runtime)
and requirements-test.txt (the tests' and the lab's), installed by setup.

`python3 -m lab.venv python` prints the interpreter every make target and test runs with;
`python3 -m lab.venv ensure` creates the environment (or reuses it) and prints the same path.
It lives under the tool cache, named by a hash of both files, so clones and worktrees of one
revision share it and a changed requirements file gets a fresh one (no stale packages). Runs on the
standard library alone, with whatever `python3` comes first on PATH, Debian's externally managed
interpreter included: a virtual environment is what PEP 668 asks for.
"""

from __future__ import annotations

import argparse
import fcntl
import glob
import hashlib
import importlib.util
import shutil
import subprocess
import sys
import tempfile
import venv
from dataclasses import dataclass
from pathlib import Path

from generator.paths import ROOT, tool_cache

# The venv's lock, in the order pip reads them: the generator's runtime, then the tests' and the lab's.
REQUIREMENTS = (ROOT / "requirements.txt", ROOT / "requirements-test.txt")
# Where Debian's python3-pip-whl keeps the pip wheel (python3-venv's ensurepip uses it too).
DEBIAN_WHEELS = "/usr/share/python-wheels/pip-*.whl"


@dataclass(frozen=True)
class ProjectVenv:
    directory: Path

    @property
    def python(self) -> Path:
        return self.directory / "bin" / "python"

    @property
    def ready_mark(self) -> Path:
        return self.directory / ".ready"

    def is_ready(self) -> bool:
        """Complete and still runnable (its base interpreter may have gone since)."""
        if not self.ready_mark.exists():
            return False
        return subprocess.run([str(self.python), "-c", ""], capture_output=True).returncode == 0


def project_venv() -> ProjectVenv:
    digest = hashlib.sha256(requirements_text().encode()).hexdigest()[:12]
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return ProjectVenv(tool_cache() / "venv" / f"py{version}-{digest}")


def requirements_text() -> str:
    """Both requirements files, each under its name: what names the venv and what its ready mark records."""
    return "".join(f"# {path.name}\n{path.read_text()}" for path in REQUIREMENTS)


def create(target: ProjectVenv) -> None:
    """A fresh environment with pip. Without ensurepip (Debian's python3 lacking python3-venv) it is
    made without pip and pip is bootstrapped from a wheel."""
    shutil.rmtree(target.directory, ignore_errors=True)
    if importlib.util.find_spec("ensurepip") is not None:
        try:
            venv.EnvBuilder(with_pip=True, symlinks=True).create(target.directory)
            return
        except subprocess.CalledProcessError as error:
            print(f"venv: ensurepip failed ({error}); bootstrapping pip from a wheel", file=sys.stderr)
            shutil.rmtree(target.directory, ignore_errors=True)
    venv.EnvBuilder(with_pip=False, symlinks=True).create(target.directory)
    bootstrap_pip(target)


def bootstrap_pip(target: ProjectVenv) -> None:
    """Installs pip into an environment made without it. A pip wheel is importable as it is, so the
    wheel installs itself."""
    with tempfile.TemporaryDirectory() as downloads:
        wheel = pip_wheel(Path(downloads))
        subprocess.run([str(target.python), f"{wheel}/pip", "install", "-q", "--no-index",
                        "--disable-pip-version-check", str(wheel)], check=True)


def pip_wheel(downloads: Path) -> Path:
    """Debian's packaged pip wheel, else one the system pip fetches from PyPI."""
    found = sorted(glob.glob(DEBIAN_WHEELS))
    if found:
        return Path(found[-1])
    if importlib.util.find_spec("pip") is not None:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps",
                        "--dest", str(downloads), "pip"], check=True)
        return next(downloads.glob("pip-*.whl"))
    sys.exit(f"venv: {sys.executable} has neither ensurepip nor pip: install python3-venv "
             "(apt-get install python3-venv) or python3-pip, then run lab/scripts/setup.sh again")


def install_requirements(target: ProjectVenv) -> None:
    subprocess.run([str(target.python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                    *(argument for path in REQUIREMENTS for argument in ("-r", str(path)))], check=True)


def ensure(target: ProjectVenv) -> None:
    """Creates and fills the environment unless it is ready; one setup at a time (a lock beside it)."""
    target.directory.parent.mkdir(parents=True, exist_ok=True)
    with open(target.directory.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if target.is_ready():
            return
        create(target)
        install_requirements(target)
        target.ready_mark.write_text(requirements_text())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python3 -m lab.venv", description=__doc__)
    parser.add_argument("command", choices=["python", "ready", "ensure"],
                        help="python: print its interpreter; ready: exit 0 when it is complete; ensure: make it")
    command = parser.parse_args().command
    target = project_venv()
    if command == "ready":
        sys.exit(0 if target.is_ready() else 1)
    if command == "ensure":
        ensure(target)
    print(target.python)


if __name__ == "__main__":
    main()

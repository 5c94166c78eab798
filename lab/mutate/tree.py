"""A copy of the working tree (tracked and untracked, not ignored files) to mutate, so a mutant never
touches the checkout and an interrupted run leaves nothing behind in it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from generator.paths import ROOT

WORK = ROOT / "build" / "mutate"


def copy_tree(into: Path = WORK / "tree") -> Path:
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True).stdout.decode().split("\0")
    if into.exists():
        shutil.rmtree(into)
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into

"""The subcharts' copy of the release-wide `global` defaults, so that each installs on its own.

The umbrella chart's values.yaml is the one place they are written; each subchart's values.yaml
carries the same block between two marker lines (Helm lets the umbrella's globals win).
"""

from __future__ import annotations

import re
from pathlib import Path

from generator import paths

BEGIN = "# global:begin"
END = "# global:end"
_TOP_LEVEL_KEY = re.compile(r"^[A-Za-z][\w-]*:")


def global_block(umbrella_values: str) -> str:
    """The `global:` section of the umbrella's values.yaml, its comments included."""
    lines = umbrella_values.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith("global:"))
    end = next((i for i in range(start + 1, len(lines)) if _TOP_LEVEL_KEY.match(lines[i])), len(lines))
    while end > start + 1 and not lines[end - 1].startswith(" "):  # comments and blanks of the next section
        end -= 1
    return "".join(lines[start:end])


def with_globals(subchart_values: str, block: str) -> str:
    """A subchart's values.yaml text with the block between its markers replaced."""
    lines = subchart_values.splitlines(keepends=True)
    begin = next(i for i, line in enumerate(lines) if line.startswith(BEGIN))
    end = next(i for i, line in enumerate(lines) if line.startswith(END))
    return "".join(lines[: begin + 1]) + block + "".join(lines[end:])


def subchart_values() -> dict[Path, str]:
    """What each subchart's values.yaml must contain."""
    block = global_block(paths.CHART_VALUES.read_text())
    return {path: with_globals(path.read_text(), block) for path in paths.subchart_values_files()}

"""SemVer 2.0 versions, as Helm requires of a chart's `version`, ordered by the spec's precedence."""

from __future__ import annotations

import re
from dataclasses import dataclass

PATTERN = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)(?:\.(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*))*))?"
                     r"(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?$")


@dataclass(frozen=True)
class Version:
    release: tuple[int, int, int]
    prerelease: tuple[str, ...]

    @property
    def is_prerelease(self) -> bool:
        return bool(self.prerelease)

    def key(self) -> tuple:
        """Precedence: a release outranks its prereleases; numeric identifiers rank below
        alphanumeric ones and compare as numbers; a longer prerelease wins a tie (build metadata is ignored)."""
        identifiers = tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in self.prerelease)
        return self.release, not self.prerelease, identifiers

    def __lt__(self, other: Version) -> bool:
        return self.key() < other.key()


def parse(text: str) -> Version:
    match = PATTERN.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a SemVer 2 version (MAJOR.MINOR.PATCH[-PRERELEASE][+BUILD])")
    major, minor, patch, prerelease, _build = match.groups()
    return Version((int(major), int(minor), int(patch)), tuple(prerelease.split(".")) if prerelease else ())

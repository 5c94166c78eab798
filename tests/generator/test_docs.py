"""The project's Markdown as a reader meets it: every relative link of README.md, UPGRADE.md, docs/, lab/README.md
and the charts' READMEs leads to a file of the repository and, where it names one, to a heading (or an HTML
anchor) of that file, as GitHub renders them; README.md stays short enough to read first."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# The Markdown a user or maintainer reads (the charts' own, not the subchart copies `helm dependency build` leaves).
DOCUMENTS = sorted({ROOT / "README.md", ROOT / "UPGRADE.md", ROOT / "lab" / "README.md", *ROOT.glob("docs/*.md"),
                    ROOT / "charts/verl-ppo/README.md", *ROOT.glob("charts/verl-ppo/charts/*/README.md")})
README_MAX_LINES = 200  # usage first, the rest in docs/

FENCE = re.compile(r"^ {0,3}(```|~~~)")
INLINE_CODE = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target), the target up to a space (a title may follow) or the closing parenthesis.
INLINE_LINK = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s[^>]*(?:name|id)=[\"']([^\"']+)[\"']", re.I)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) outside fenced code blocks."""
    lines, fenced = [], None
    for number, line in enumerate(text.splitlines(), 1):
        fence = FENCE.match(line)
        if fence:
            fenced = None if fenced == fence.group(1) else fenced or fence.group(1)
            continue
        if fenced is None:
            lines.append((number, line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: its text (links and emphasis as text), lower case, punctuation dropped,
    spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return kept.replace(" ", "-")


@lru_cache(maxsize=None)
def anchors(document: Path) -> frozenset[str]:
    """The anchors a rendered Markdown file offers: one per heading (repeats numbered -1, -2, ...) and HTML anchors."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    text = document.read_text(encoding="utf-8")
    for _, line in prose_lines(text):
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    found.update(HTML_ANCHOR.findall(text))
    return frozenset(found)


def links(document: Path) -> list[tuple[int, str]]:
    """(line number, target) of every link and image of the document, not those shown as code."""
    found = []
    for number, line in prose_lines(document.read_text(encoding="utf-8")):
        line = INLINE_CODE.sub("", line)
        found += [(number, target) for target in INLINE_LINK.findall(line)]
        reference = REFERENCE.match(line)
        if reference:
            found.append((number, reference.group(1)))
    return found


def broken(document: Path, target: str, root: Path = ROOT) -> str | None:
    """Why a relative link does not resolve, or None (links with a scheme, http: and mailto:, are not ours)."""
    if SCHEME.match(target) or target.startswith("//"):
        return None
    path, _, anchor = target.partition("#")
    destination = (document.parent / path).resolve() if path else document
    if not destination.is_relative_to(root):
        return "leads out of the repository"
    if not destination.exists():
        return f"no file {destination.relative_to(root)}"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"no heading #{anchor} in {destination.relative_to(root)}"
    return None


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda path: str(path.relative_to(ROOT)))
def test_every_relative_link_resolves(document):
    wrong = [f"{document.relative_to(ROOT)}:{number}: ({target}) {why}" for number, target in links(document)
             for why in [broken(document, target)] if why]
    assert not wrong, "\n".join(wrong)


def test_the_link_check_finds_what_is_broken(tmp_path):
    """The checker itself: a missing file, a missing heading and a link out of the tree fail; code, repeated
    headings, HTML anchors, directories and web links pass."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# Other\n## Same `code` here: too\n## Same `code` here: too\n"
                                                '<a name="kept"></a>\n')
    page = tmp_path / "docs" / "page.md"
    page.write_text("# Page\n[ok](other.md#same-code-here-too-1) [dir](../docs/) [web](https://x.invalid/y)\n"
                    "[html](other.md#kept) [self](#page) ![img](other.md \"a title\")\n"
                    "```\n[in code](absent.md)\n```\n`[inline](absent.md)`\n"
                    "[gone](absent.md) [heading](other.md#nothing) [out](../../elsewhere.md)\n[ref]: other.md#other\n")
    verdicts = {target: broken(page, target, root=tmp_path) for _, target in links(page)}
    assert set(verdicts) == {"other.md#same-code-here-too-1", "../docs/", "https://x.invalid/y", "other.md#kept",
                             "#page", "other.md", "absent.md", "other.md#nothing", "../../elsewhere.md",
                             "other.md#other"}
    assert {target: why for target, why in verdicts.items() if why} == {
        "absent.md": "no file docs/absent.md", "other.md#nothing": "no heading #nothing in docs/other.md",
        "../../elsewhere.md": "leads out of the repository"}


def test_the_readme_is_short_enough_to_read_first():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md: {len(lines)} lines, at most {README_MAX_LINES} (the rest: docs)"

"""Where a module's type annotations are. Under `from __future__ import annotations` Python never
evaluates them (they stay strings), so a mutant inside one (`str | None` -> `str * None`) behaves as
the original on every input: such mutants are left out before sampling, and any a run still has are
listed as equivalent."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

Span = tuple[tuple[int, int], tuple[int, int]]  # (line, column) of the start and the end, 1-based lines


@functools.lru_cache(maxsize=None)
def annotation_spans(path: Path) -> tuple[Span, ...]:
    tree = ast.parse(path.read_text())
    if not any(isinstance(node, ast.ImportFrom) and node.module == "__future__"
               and any(alias.name == "annotations" for alias in node.names) for node in tree.body):
        return ()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
            found.append(node.returns)
        elif isinstance(node, ast.arg) and node.annotation is not None:
            found.append(node.annotation)
        elif isinstance(node, ast.AnnAssign):
            found.append(node.annotation)
    return tuple(((n.lineno, n.col_offset), (n.end_lineno, n.end_col_offset)) for n in found)


def in_annotation(path: Path, start: tuple[int, int]) -> bool:
    """Whether a mutation starting at (line, column) lies inside an annotation of the module at `path`."""
    return any(first <= start < last for first, last in annotation_spans(path))

"""Which third-party top-level modules a set of entry modules imports, read from unpacked wheels (no import).

The GPU machine has no package index, so every module the run imports must be carried; importing
vLLM here to find out would need CUDA torch. This walks the import statements instead: from the entry
modules it follows every import of a module found under SITE (module level and inside functions, but
not under `if TYPE_CHECKING:`), and reports each top-level name that is not found there, not in the
standard library and not in --present (the GPU machine's packages), with the modules that import it.
Imports under an `if` ("conditional") and inside try blocks ("guarded") are reported apart.

With --import-them (on the GPU machine, over the installed site) it then imports every module the
entries always import, each on its own, and lists every module name that could not be found, so one
command shows all that is missing instead of the first.

Usage: python3 lab/gpu/import_graph.py SITE ENTRY_MODULE ... [--present NAME ...] [--lazy] [--import-them]
       (a name may be @FILE, one a line: lab/gpu/import-entries-vllm.txt, lab/gpu/machine-modules.txt)
Here: unpack (or pip install --target) the profile's wheels into SITE, then
       python3 lab/gpu/import_graph.py SITE @lab/gpu/import-entries-vllm.txt --present @lab/gpu/machine-modules.txt
"""

from __future__ import annotations

import argparse
import ast
import importlib
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# An import at module level runs whenever its module does; one under `if` only when the condition
# holds; one in a try block may fail without harm.
KINDS = ("required", "conditional", "guarded")


@dataclass
class ImportGraph:
    site: Path
    follow_lazy: bool
    seen: dict[str, str] = field(default_factory=dict)  # module -> the strongest kind it was reached by
    # how an import is reached -> top-level name -> importing modules
    found: dict[str, dict[str, set[str]]] = field(
        default_factory=lambda: {kind: defaultdict(set) for kind in KINDS})

    def module_file(self, name: str) -> Path | None:
        base = self.site.joinpath(*name.split("."))
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None

    def is_local(self, top: str) -> bool:
        return (self.site / top).is_dir() or (self.site / f"{top}.py").is_file()

    def walk(self, name: str) -> None:
        """Breadth over modules; a module reached only through a conditional or guarded import passes
        that kind on to everything it imports (the weaker of the two)."""
        pending = [(name, "required")]
        while pending:
            module, reached = pending.pop()
            if module in self.seen and KINDS.index(self.seen[module]) <= KINDS.index(reached):
                continue
            self.seen[module] = reached
            path = self.module_file(module)
            if path is None:
                continue
            # Importing a.b.c runs a/__init__ and a/b/__init__ first.
            parts = module.split(".")
            pending += [(".".join(parts[:i]), reached) for i in range(1, len(parts))]
            for target, kind in self.imports(path, module, path.name == "__init__.py"):
                kind = max(kind, reached, key=KINDS.index)
                top = target.split(".")[0]
                if self.is_local(top):
                    pending.append((target, kind))
                else:
                    self.found[kind][top].add(module)

    def imports(self, path: Path, module: str, is_package: bool):
        try:
            tree = ast.parse(path.read_bytes(), str(path))
        except SyntaxError:
            return
        package = module if is_package else module.rpartition(".")[0]
        yield from self._visit(tree.body, package, "required", in_function=False)

    def _visit(self, body, package: str, kind: str, in_function: bool):
        for node in body:
            if isinstance(node, ast.If) and _is_type_checking(node.test):
                yield from self._visit(node.orelse, package, kind, in_function)
                continue
            if isinstance(node, ast.Import):
                if in_function and not self.follow_lazy:
                    continue
                for alias in node.names:
                    yield alias.name, kind
            elif isinstance(node, ast.ImportFrom):
                if in_function and not self.follow_lazy:
                    continue
                base = _resolve(node, package)
                if base is None:
                    continue
                yield base, kind
                for alias in node.names:  # `from pkg import sub` may import a submodule
                    if self.module_file(f"{base}.{alias.name}"):
                        yield f"{base}.{alias.name}", kind
            elif isinstance(node, ast.Try | ast.TryStar):
                yield from self._visit(node.body, package, "guarded", in_function)
                for part in (node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                    yield from self._visit(part, package, kind, in_function)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                yield from self._visit(node.body, package, kind, True)
            elif (lazy := _lazy_loader_target(node)) and not in_function:
                # vLLM's LazyLoader("name", globals(), "module") imports on first attribute use, which
                # can be a class body of the same module (an annotation): as good as an import.
                yield lazy, kind
            else:
                inner = "conditional" if isinstance(node, ast.If) and kind == "required" else kind
                for child in ast.iter_child_nodes(node):
                    if isinstance(child, ast.stmt):
                        yield from self._visit([child], package, inner, in_function)


def _lazy_loader_target(node: ast.stmt) -> str | None:
    """The module of `x = LazyLoader("x", globals(), "module")`, else None."""
    call = node.value if isinstance(node, ast.Assign) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "LazyLoader"):
        return None
    target = call.args[2] if len(call.args) > 2 else None
    return target.value if isinstance(target, ast.Constant) and isinstance(target.value, str) else None


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _resolve(node: ast.ImportFrom, package: str) -> str | None:
    if not node.level:
        return node.module
    parts = package.split(".")
    if node.level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def import_each(modules: list[str]) -> dict[str, list[str]]:
    """Imports each module; returns missing top-level name -> modules whose import it stopped."""
    missing: dict[str, list[str]] = defaultdict(list)
    for module in modules:
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as error:
            missing[error.name or "?"].append(module)
        except Exception as error:  # a module that needs hardware or settings absent here: not a carry problem
            print(f"import {module}: {type(error).__name__}: {str(error)[:160]}")
    return missing


def entry_modules(words: list[str]) -> list[str]:
    """Module names, each word either a name or @FILE with one a line (# comments)."""
    modules = []
    for word in words:
        if word.startswith("@"):
            lines = Path(word[1:]).read_text().splitlines()
            modules += [line.strip() for line in lines if line.strip() and not line.startswith("#")]
        else:
            modules.append(word)
    return modules


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path)
    parser.add_argument("entries", nargs="+")
    parser.add_argument("--present", nargs="*", default=[],
                        help="top-level modules the target machine has (@FILE: lab/gpu/machine-modules.txt)")
    parser.add_argument("--lazy", action="store_true", help="follow imports inside functions too")
    parser.add_argument("--import-them", action="store_true", help="then import every always-imported module")
    args = parser.parse_args()
    graph = ImportGraph(args.site, args.lazy)
    entries = entry_modules(args.entries)
    for entry in entries:
        graph.walk(entry)
    skip = set(sys.stdlib_module_names) | set(entry_modules(args.present)) | {"__future__"}
    print(f"# {sum(kind == 'required' for kind in graph.seen.values())} modules always imported, "
          f"{len(graph.seen)} reached from {len(entries)} entry modules")
    reported = set(skip)
    for kind in KINDS:
        for top in sorted(set(graph.found[kind]) - reported):
            users = sorted(graph.found[kind][top])
            print(f"{kind} {top}: {', '.join(users[:3])}{' ...' if len(users) > 3 else ''} ({len(users)})")
        reported |= set(graph.found[kind])
    if args.import_them:
        always = sorted(m for m, kind in graph.seen.items() if kind == "required" and graph.module_file(m))
        missing = import_each(always)
        for name, modules in sorted(missing.items()):
            more = " ..." if len(modules) > 3 else ""
            print(f"missing {name}: needed by {', '.join(modules[:3])}{more} ({len(modules)})")
        print(f"# imported {len(always)} modules: {len(missing)} names missing")
        sys.exit(1 if missing else 0)


if __name__ == "__main__":
    main()

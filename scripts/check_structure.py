#!/usr/bin/env python3
"""Structure checks as code (issue 12): no import cycles, no overlong functions.

    python3 scripts/check_structure.py            # every check; exit 1 on a violation
    python3 scripts/check_structure.py --python   # the Python package only
    python3 scripts/check_structure.py --rust     # crates/tcpf-core/src only
    python3 scripts/check_structure.py --report-rust   # Rust findings printed, never failing

Checks:
  python-cycles   an import cycle between modules of python/tcpfriendly. Every import counts,
                  at module level or inside a function (a lazy import is still a dependency),
                  except those under ``if TYPE_CHECKING:``. ``from pkg import name`` depends
                  on ``pkg.name`` when that is a module, else on ``pkg`` (its __init__).
  python-length   a function or method longer than MAX_LINES lines (def to last line).
  rust-cycles     a cycle between the files of crates/tcpf-core/src, from ``use crate::...``,
                  ``use super::...``, ``use self::...`` and qualified ``crate::``/``super::``
                  paths in code, resolved to the file of the longest module prefix. Edges
                  between a module and its own ancestor (mod.rs and the files below it) are
                  left out: a parent declaring and re-exporting its children while they use
                  its shared items is how a module folder (cc/) is meant to look.
  rust-length     a fn longer than MAX_LINES lines (brace matching after removing comments,
                  strings and char literals; a heuristic).

ALLOW lists the exceptions: declarative tables written as one function, by "file:name".
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import sys
from typing import Dict, Iterable, List, Optional, Set, Tuple

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
PY_ROOT = os.path.join(ROOT, "python")
PY_PACKAGE = "tcpfriendly"
RUST_SRC = os.path.join(ROOT, "crates", "tcpf-core", "src")
MAX_LINES = 120
# Compiled modules of the package (no .py file): `from . import _core` depends on them, not on
# the package's __init__.
EXTENSION_MODULES = ("tcpfriendly._core",)

# "relative/path:function" -> why it may be longer (declarative tables only).
ALLOW: Dict[str, str] = {}


# ----- Python ---------------------------------------------------------------------------------
def python_modules(root: str = PY_ROOT, package: str = PY_PACKAGE) -> Dict[str, str]:
    """module name -> file, for every .py file of the package."""
    out = {}
    base = os.path.join(root, package)
    for dirpath, _, files in os.walk(base):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), root)[:-3].split(os.sep)
            if rel[-1] == "__init__":
                rel = rel[:-1]
            out[".".join(rel)] = os.path.join(dirpath, f)
    return out


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterable[ast.AST]:
    """Every Import/ImportFrom node, skipping ``if TYPE_CHECKING:`` bodies."""
    stack = [tree]
    while stack:
        node = stack.pop()
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                stack.extend(child.orelse)
                continue
            if isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            stack.append(child)


def python_edges(modules: Dict[str, str]) -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = {m: set() for m in modules}
    known = set(modules) | set(EXTENSION_MODULES)
    for mod, path in modules.items():
        is_pkg = os.path.basename(path) == "__init__.py"
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        for node in _imports(tree):
            targets: List[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                if node.level:
                    parts = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    parts = parts[:len(parts) - (node.level - 1)]
                    base = ".".join(parts + ([node.module] if node.module else []))
                else:
                    base = node.module or ""
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    targets.append(sub if sub in known else base)
            for t in targets:
                while t and t not in known:  # import a.b.c of a package: its deepest module
                    t = t.rpartition(".")[0]
                if t and t != mod and t in modules:
                    edges[mod].add(t)
    return edges


def cycles(edges: Dict[str, Set[str]]) -> List[List[str]]:
    """The strongly connected components with more than one node (Tarjan), each sorted."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    on: Set[str] = set()
    stack: List[str] = []
    out: List[List[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # iterative enough for package sizes; recursion depth = path length
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(out)


def python_long_functions(modules: Dict[str, str], limit: int = MAX_LINES) -> List[Tuple[str, str, int]]:
    out = []
    for mod, path in sorted(modules.items()):
        with open(path, encoding="utf-8") as fh:
            tree = ast.parse(fh.read(), path)
        rel = os.path.relpath(path, ROOT)

        def walk(node: ast.AST, prefix: str) -> None:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    name = f"{prefix}{child.name}"
                    if not isinstance(child, ast.ClassDef):
                        n = child.end_lineno - child.lineno + 1
                        if n > limit and f"{rel}:{name}" not in ALLOW:
                            out.append((rel, name, n))
                    walk(child, name + ".")
                else:
                    walk(child, prefix)

        walk(tree, "")
    return out


# ----- Rust ------------------------------------------------------------------------------------
def rust_modules(src: str = RUST_SRC) -> Dict[str, str]:
    """module path ("crate::net::queue") -> file."""
    out = {}
    for dirpath, _, files in os.walk(src):
        for f in sorted(files):
            if not f.endswith(".rs"):
                continue
            rel = os.path.relpath(os.path.join(dirpath, f), src)[:-3].split(os.sep)
            if rel[-1] in ("mod", "lib", "main") and (rel[-1] == "mod" or len(rel) == 1):
                rel = rel[:-1]
            out["::".join(["crate"] + rel)] = os.path.join(dirpath, f)
    return out


_STRIP = re.compile(r'//[^\n]*|/\*.*?\*/|r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])\'',
                    re.S)


def strip_rust(text: str) -> str:
    """Comments, strings and char literals blanked (newlines kept, so line numbers hold)."""
    return _STRIP.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


_USE = re.compile(r"\buse\s+([^;]+);")
_PATH = re.compile(r"\b((?:crate|super|self)(?:::[A-Za-z_][A-Za-z0-9_]*)+)")


def _expand_use(tree: str) -> List[str]:
    """``a::{b, c::{d as e, self}}`` -> ["a::b", "a::c::d", "a::c"] (groups flattened)."""
    tree = re.sub(r"\s+", "", re.sub(r"\s+as\s+[A-Za-z_][A-Za-z0-9_]*", "", tree))
    out: List[str] = []

    def rec(prefix: str, s: str) -> None:
        depth, start, parts = 0, 0, []
        for i, ch in enumerate(s):
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == "," and depth == 0:
                parts.append(s[start:i])
                start = i + 1
        parts.append(s[start:])
        for p in parts:
            if "{" in p:
                head, _, rest = p.partition("{")
                rec(prefix + head, rest[:-1])
            elif p:
                out.append(re.sub(r"::(self|\*)$", "", prefix + p))

    rec("", tree)
    return out


def _resolve(path: str, here: str, modules: Dict[str, str]) -> Optional[str]:
    parts = path.split("::")
    cur = here.split("::")
    while parts and parts[0] in ("super", "self"):
        if parts[0] == "super":
            cur = cur[:-1]
        parts = parts[1:]
    if parts and parts[0] == "crate":
        cur, parts = ["crate"], parts[1:]
    full = cur + parts
    while full:
        name = "::".join(full)
        if name in modules:
            return name
        full = full[:-1]
    return None


def _related(a: str, b: str) -> bool:
    return a == b or a.startswith(b + "::") or b.startswith(a + "::")


def rust_edges(modules: Dict[str, str]) -> Dict[str, Set[str]]:
    edges: Dict[str, Set[str]] = {m: set() for m in modules}
    for mod, path in modules.items():
        with open(path, encoding="utf-8") as fh:
            code = strip_rust(fh.read())
        # `mod.rs`/`lib.rs` paths resolve from the module itself; a leaf file's `self` too
        paths: List[str] = []
        for m in _USE.finditer(code):
            for p in _expand_use(m.group(1)):
                if p.startswith(("crate::", "super::", "self::")):
                    paths.append(p)
        paths += [m.group(1) for m in _PATH.finditer(code)]
        for p in paths:
            target = _resolve(p, mod, modules)
            if target is not None and not _related(target, mod):
                edges[mod].add(target)
    return edges


_FN = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?(?:const\s+)?(?:async\s+)?(?:unsafe\s+)?"
                 r"(?:extern\s+\"[^\"]*\"\s+)?fn\s+([A-Za-z_][A-Za-z0-9_]*)")


def rust_long_functions(modules: Dict[str, str], limit: int = MAX_LINES) -> List[Tuple[str, str, int]]:
    out = []
    for mod, path in sorted(modules.items()):
        with open(path, encoding="utf-8") as fh:
            lines = strip_rust(fh.read()).split("\n")
        rel = os.path.relpath(path, ROOT)
        for i, line in enumerate(lines):
            m = _FN.match(line)
            if not m:
                continue
            depth, opened, end = 0, False, None
            for j in range(i, len(lines)):
                text = lines[j] if j != i else lines[j][m.end():]
                for ch in text:
                    if ch == ";" and not opened and depth == 0:
                        end = -1  # a declaration without a body
                        break
                    if ch == "{":
                        depth += 1
                        opened = True
                    elif ch == "}":
                        depth -= 1
                        if opened and depth == 0:
                            end = j
                            break
                if end is not None:
                    break
            if end is not None and end >= 0:
                n = end - i + 1
                if n > limit and f"{rel}:{m.group(1)}" not in ALLOW:
                    out.append((rel, m.group(1), n))
    return out


# ----- report ----------------------------------------------------------------------------------
def check_python() -> List[str]:
    modules = python_modules()
    problems = [f"python import cycle: {' <-> '.join(c)}" for c in cycles(python_edges(modules))]
    problems += [f"python function too long: {f}:{name} is {n} lines (max {MAX_LINES})"
                 for f, name, n in python_long_functions(modules)]
    return problems


def check_rust() -> List[str]:
    if not os.path.isdir(RUST_SRC):
        return []
    modules = rust_modules()
    problems = [f"rust module cycle: {' <-> '.join(c)}" for c in cycles(rust_edges(modules))]
    problems += [f"rust fn too long: {f}:{name} is {n} lines (max {MAX_LINES})"
                 for f, name, n in rust_long_functions(modules)]
    return problems


def main(argv: Optional[List[str]] = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", action="store_true", help="check the Python package only")
    ap.add_argument("--rust", action="store_true", help="check the Rust crate only")
    ap.add_argument("--report-rust", action="store_true",
                    help="check Python (failing) and print Rust findings without failing")
    args = ap.parse_args(argv)
    failing: List[str] = []
    report: List[str] = []
    if not args.rust:
        failing += check_python()
    if args.rust or not (args.python or args.report_rust):
        failing += check_rust()
    elif args.report_rust:
        report += check_rust()
    for p in failing:
        print(p)
    for p in report:
        print(f"(reported) {p}")
    if not failing:
        print("structure: ok" + (f" ({len(report)} Rust finding(s) reported)" if report else ""))
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())

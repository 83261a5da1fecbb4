"""scripts/check_structure.py: no import cycles and no function over 120 lines in the Python
package and in crates/tcpf-core/src (issue 12)."""

from __future__ import annotations

import pytest

from conftest import load_script

cs = load_script("scripts/check_structure.py")


def test_python_package_has_no_import_cycle_and_no_long_function():
    assert cs.check_python() == []


def test_python_cycle_and_length_detection(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("def f():\n    from .sub import b  # a lazy import still counts\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..c import X\nfrom .. import a\n")
    (pkg / "c.py").write_text("def long():\n" + "    x = 1\n" * 130 + "\nfrom .sub import b\n")
    modules = cs.python_modules(str(tmp_path), "pkg")
    assert set(modules) == {"pkg", "pkg.a", "pkg.c", "pkg.sub", "pkg.sub.b"}
    edges = cs.python_edges(modules)
    assert edges["pkg.sub.b"] == {"pkg.a"}  # the TYPE_CHECKING import is not an edge
    assert cs.cycles(edges) == [["pkg.a", "pkg.sub.b"]]
    long = cs.python_long_functions(modules, limit=120)
    assert [(name, n) for _, name, n in long] == [("long", 131)]


def test_rust_cycle_and_length_detection(tmp_path):
    src = tmp_path / "src"
    (src / "cc").mkdir(parents=True)
    (src / "lib.rs").write_text("pub mod cc;\npub mod engine;\npub mod metrics;\n")
    # parent <-> child edges are not cycles; engine <-> metrics is
    (src / "cc" / "mod.rs").write_text("mod gaimd;\npub use gaimd::Gaimd;\npub struct Params;\n")
    (src / "cc" / "gaimd.rs").write_text("use super::Params;\npub struct Gaimd;\n")
    (src / "engine.rs").write_text(
        "use crate::{cc::{self, Gaimd as G}, metrics::Stats};\n"
        "// use crate::nothing;\nfn run() {\n    let s = \"{ not a brace\";\n}\n")
    (src / "metrics.rs").write_text(
        "pub struct Stats;\nfn label(x: &crate::engine::Spec) -> String {\n"
        + "    let a = '{';\n" * 125 + "    String::new()\n}\n")
    modules = cs.rust_modules(str(src))
    assert set(modules) == {"crate", "crate::cc", "crate::cc::gaimd", "crate::engine", "crate::metrics"}
    edges = cs.rust_edges(modules)
    assert edges["crate::engine"] == {"crate::cc", "crate::metrics"}
    assert cs.cycles(edges) == [["crate::engine", "crate::metrics"]]
    long = cs.rust_long_functions(modules)
    assert [(name, n) for _, name, n in long] == [("label", 128)]


# Findings tolerated for now, each with why (none today). A tolerated finding that disappears
# from check_rust() makes the test fail until its entry goes, so no exception goes stale.
TOLERATED_RUST: set = set()


def test_rust_has_no_import_cycle_and_no_long_function():
    problems = cs.check_rust()
    assert [p for p in problems if p not in TOLERATED_RUST] == []
    # a tolerated finding that is gone is stale: remove its entry
    assert TOLERATED_RUST <= set(problems)

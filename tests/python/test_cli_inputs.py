"""Bad input to `tcpf bench`, `tcpf plot` and `tcpf model ...` (the error policy of
tcpfriendly.cli.errors): one line ``error: <field>: ...`` naming the field and the allowed
range, exit 2, at once, nothing built, run or written."""

import importlib.util
import os
import subprocess
import sys

import pytest

from conftest import REPO

BENCH = REPO / "benchmarks" / "vs_ns2.py"


def _one_error_line(p, field):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.startswith(f"error: {field}: "), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr


# ----- tcpf bench -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def vs_ns2():
    spec = importlib.util.spec_from_file_location("vs_ns2_under_test", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BAD_BENCH = [
    ("--duration", v) for v in ("nan", "inf", "-inf", "0", "-1", "0.5", "1e308", "x")
] + [
    ("--scaled-duration", v) for v in ("nan", "inf", "0", "-5", "1e308")
] + [
    ("--reps", v) for v in ("0", "-1", "nan", "inf", "1.5", "1e9", "99999999999999999999")
] + [
    ("--timeout", v) for v in ("nan", "inf", "0", "-1", "1e308")
] + [
    ("--flows", v) for v in ("0", "-3", "nan", "1e308", "10000000")
] + [
    ("--flows-scale", v) for v in ("x", "1,0", "320,-1", "nan", "1e308")
] + [
    ("--seed", v) for v in ("-1", "nan", "1e308", str(1 << 60))
]


@pytest.mark.parametrize("option,value", BAD_BENCH)
def test_bench_refuses_each_bad_number_before_building_anything(vs_ns2, monkeypatch, capsys, option, value):
    def no_child(*args, **kwargs):
        raise AssertionError(f"started a process for {option} {value}: {args}")

    monkeypatch.setattr(vs_ns2.subprocess, "run", no_child)
    monkeypatch.setattr(vs_ns2.subprocess, "Popen", no_child)
    monkeypatch.setattr(vs_ns2, "RUN_JSON", "/nonexistent/run_json")  # would have to be built
    with pytest.raises(SystemExit) as e:
        vs_ns2.main([f"{option}={value}", "--no-ns2"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith(f"error: {option}: must be ") and err.count("\n") == 1, err
    assert "[" in err or "(" in err  # the allowed range


def test_tcpf_bench_nan_duration_is_one_line_at_once(tcpf):
    """It used to start `cargo build` and then simulate forever (NaN passed `<= 0`)."""
    p = tcpf("bench", "--duration", "nan", "--no-ns2", timeout=20)
    _one_error_line(p, "--duration")
    assert "(1, 1e7]" in p.stderr and p.stdout == ""


@pytest.mark.parametrize("args,field", [
    (["--reps", "0"], "--reps"),             # was checked after `cargo build`
    (["--reps", "abc"], "--reps"),           # was argparse's multi-line usage block
    (["--bogus"], "unrecognized arguments"),
    (["--engine", "ns3"], "--engine"),
    (["--baseline", "/nonexistent/run_json"], "--baseline"),  # was checked after building
])
def test_tcpf_bench_usage_errors_are_one_line(tcpf, args, field):
    p = tcpf("bench", *args, "--no-ns2", timeout=20)
    _one_error_line(p, field)
    assert "usage:" not in p.stderr and p.stdout == ""

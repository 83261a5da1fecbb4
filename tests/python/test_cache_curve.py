"""benchmarks/cache_curve.py: cachegrind's summary read right, the steady state taken as the
difference of two runs, bad options refused in one line, and one real run under cachegrind
(valgrind is on every machine of this project's CI) whose counts say what a 32-flow run is:
no last-level misses with a 1 MiB last level, a few thousand instructions a packet."""

import json
import shutil
import subprocess
import sys

import pytest

from conftest import REPO, load_script

SUMMARY = """\
==6892== I   refs:      12,345,678
==6892== I1  misses:         1,234
==6892== LLi misses:         1,100
==6892== I1  miss rate:       0.01%
==6892== D   refs:       5,000,000  (3,000,000 rd   + 2,000,000 wr)
==6892== D1  misses:        17,335,332  (   11,276,669 rd   +   6,058,663 wr)
==6892== LLd misses:         4,521,062  (    3,073,793 rd   +   1,447,269 wr)
==6892== LL refs:           17,336,566  (   11,277,903 rd   +   6,058,663 wr)
==6892== LL misses:          4,527,411  (    3,080,142 rd   +   1,447,269 wr)
"""


@pytest.fixture(scope="module")
def cc():
    return load_script("benchmarks/cache_curve.py")


def test_summary_counts_are_the_read_misses_and_the_instructions(cc):
    assert cc.parse_counts(SUMMARY) == {"Ir": 12_345_678, "D1r": 11_276_669, "LLr": 3_080_142}
    with pytest.raises(ValueError, match="LLr"):
        cc.parse_counts(SUMMARY.replace("LL misses", "LL gone"))


def test_the_steady_state_is_the_longer_run_minus_the_shorter(cc):
    short = {"LLr": 1_000, "D1r": 50_000, "Ir": 2_000_000, "packets": 1_000}
    long = {"LLr": 4_000, "D1r": 90_000, "Ir": 4_500_000, "packets": 2_000}
    assert cc.per_packet(short, long) == {"LLr": 3.0, "D1r": 40.0, "Ir": 2500.0}
    with pytest.raises(SystemExit, match="--duration"):
        cc.per_packet(short, dict(long, packets=1_000))


def test_each_size_gets_a_pair_of_runs_and_the_reference_ten_times_the_duration(cc, monkeypatch, capsys):
    seen = []

    def fake(binary, scenario, size):
        flows = sum(g["count"] for g in scenario["flows"])
        seen.append((flows, size, scenario["duration"]))
        pkts = 100 * flows * scenario["duration"]
        # 2 misses a packet at the small size, none at the large, plus a fixed start-up cost
        return {"LLr": 7 + (2 * pkts if size == 1 else 0), "D1r": 9 * pkts, "Ir": 500 + 2000 * pkts, "packets": pkts}

    monkeypatch.setattr(cc, "cachegrind", fake)
    monkeypatch.setattr(cc.shutil, "which", lambda name: "/usr/bin/" + name)
    assert cc.main(["--flows", "32,64,32", "--duration", "3", "--sizes", "16,1", "--run-json", "/bin/true", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    # a workload given twice runs once
    assert sorted(seen) == sorted([(32, s, d) for s in (1, 16) for d in (30, 60)] + [(64, s, d) for s in (1, 16) for d in (3, 6)])
    assert report["sizes_mib"] == [1, 16]
    ref, scaled = report["workloads"]
    assert ref["durations_s"] == [30, 60] and scaled["durations_s"] == [3, 6]
    assert [r["LLr"] for r in scaled["per_packet"]] == [2.0, 0.0]  # the start-up's 7 misses cancel
    assert [r["Ir"] for r in scaled["per_packet"]] == [2000.0, 2000.0]


@pytest.mark.parametrize("args,field", [
    (["--sizes", "3"], "--sizes"),            # not a power of two: cachegrind refuses it
    (["--sizes", "0"], "--sizes"),
    (["--sizes", "2048"], "--sizes"),
    (["--flows", "0"], "--flows"),
    (["--duration", "0"], "--duration"),
    (["--run-json", "/nonexistent/run_json"], "--run-json"),
])
def test_bad_options_are_one_line_and_exit_2(args, field):
    p = subprocess.run([sys.executable, str(REPO / "benchmarks" / "cache_curve.py"), *args],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith(f"error: {field}") and p.stderr.count("\n") == 1, p.stderr
    assert p.stdout == ""


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")
def test_host_probe_prints_a_latency_per_size_and_refuses_a_bad_size(cc):
    binary, err = cc.probe_binary()
    assert binary, err
    p = subprocess.run([binary, "1", "2"], capture_output=True, text=True, timeout=60)
    ns = [float(x) for x in p.stdout.split()]
    assert len(ns) == 2 and all(0.1 < x < 10_000 for x in ns)
    top = cc.MAX_SIZE_MIB
    for size in ("0", str(top + 1)):   # the C probe's range is cache_curve's, passed at its build
        bad = subprocess.run([binary, size], capture_output=True, text=True, timeout=10)
        assert bad.returncode == 2 and f"[1, {top}]" in bad.stderr and bad.stdout == "", bad.stderr


@pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not installed")
def test_a_real_32_flow_run_misses_nothing_in_a_1_mib_last_level(cc, capsys):
    # the engine is built by the script (a no-op after `cargo test --release`)
    assert cc.main(["--flows", "32", "--duration", "1", "--sizes", "1", "--json"]) == 0
    (w,) = json.loads(capsys.readouterr().out)["workloads"]
    (r,) = w["per_packet"]
    assert w["durations_s"] == [10, 20]
    assert abs(r["LLr"]) < 0.05            # 32 flows live in far less than 1 MiB
    assert 0.5 < r["D1r"] < 50              # some L1 misses a packet, not hundreds
    assert 500 < r["Ir"] < 10_000           # ~2 100 instructions a packet on this workload

"""Sweeps and reproductions run in ns-2 (`simulator = "ns2"`, `--simulator ns2`): the same table
from the paper's own simulator, a point ns-2 cannot express failing alone, separate run caches.

The runs need the `ns` binary (skipped where it is absent, failed in CI: TCPF_REQUIRE_NS2)."""

from __future__ import annotations

import json
import os

import pytest

import tcpfriendly as tf
from tcpfriendly.ns2 import ns2_available, ns2_engine_id, run_ns2
from tcpfriendly.reproduce import reproduce
from tcpfriendly.reproduce.run import ClaimResult, expr_names
from tcpfriendly.scenario import Scenario
from tcpfriendly.sweep import Sweep, SweepError
from tcpfriendly.sweep.core import run_key

from conftest import REPO

NS_SKIP = not ns2_available() and os.environ.get("TCPF_REQUIRE_NS2") != "1"
needs_ns2 = pytest.mark.skipif(NS_SKIP, reason="ns-2 (`ns`) is not installed here")

BASE = {
    "duration": 20.0, "measure": {"from": 5, "to": 20}, "max_window": 64,
    "bottleneck": {"rate": "4Mbps", "delay": "20ms", "queue": "droptail", "limit": "1.5bdp"},
    "flows": [
        {"count": 2, "algorithm": "gaimd", "params": {}, "recovery": "sack",
         "access_delay": "1ms..5ms", "start": "0..1"},
        {"count": 2, "algorithm": "tcp", "recovery": "sack", "access_delay": "1ms..5ms",
         "start": "0..1"},
    ],
}


def _sweep(**kw):
    return Sweep(BASE, axes={"flows[0].algorithm": ["gaimd", "simd"]}, seeds=2, **kw)


def test_simulator_is_validated_naming_the_field():
    for bad in ("ns3", "", None, 2):
        with pytest.raises(SweepError) as err:
            _sweep(simulator=bad)
        assert err.value.field == "simulator" and "must be one of tcpf, ns2" in str(err.value)
    with pytest.raises(SweepError) as err:
        Sweep.from_dict({"scenario": BASE, "simulator": "ns-3"})
    assert err.value.field == "simulator"


def test_the_simulator_is_part_of_the_spec_and_of_the_study():
    tcpf, ns = _sweep(), _sweep()
    ns.simulator = "ns2"
    assert "simulator" not in tcpf.spec()  # a tcpfriendly sweep's record is unchanged
    assert ns.spec()["simulator"] == "ns2"
    assert ns.identity() != tcpf.identity()
    assert Sweep.from_dict(ns.spec()).simulator == "ns2"


@needs_ns2
def test_ns2_runs_are_keyed_by_ns2_and_never_mix_with_the_engines():
    tcpf, ns = _sweep(), _sweep(simulator="ns2")
    _, runs_t = tcpf.plan()
    _, runs_n = ns.plan()
    assert [r.simulator for r in runs_n] == ["ns2"] * 4 and {r.simulator for r in runs_t} == {"tcpf"}
    assert not {r.key for r in runs_t} & {r.key for r in runs_n}
    assert ns2_engine_id().startswith("ns2:")
    assert json.loads(runs_n[0].canonical)["engine"] == ns2_engine_id()
    # the key is run_key's, with ns-2's identity as the engine
    normalized = json.loads(runs_n[0].canonical)["scenario"]
    assert run_key(normalized, runs_n[0].seed, engine=ns2_engine_id())[0] == runs_n[0].key


@needs_ns2
def test_a_sweep_in_ns2_gives_ns2s_numbers_and_fails_only_what_ns2_cannot_express(tmp_path):
    sw = _sweep(simulator="ns2")
    res = sw.run(tmp_path / "out", workers=2, quiet=True)
    t = res.table
    ok, failed = t[t["status"] == "ok"], t[t["status"] == "failed"]
    # GAIMD ran in ns-2 (2 seeds x 2 groups); SIMD has no ns-2 agent: its 2 runs failed alone
    assert len(ok) == 4 and set(ok["point"]) == {0}
    assert len(failed) == 2 and set(failed["point"]) == {1}
    assert all("'simd' has no ns-2 equivalent" in e for e in failed["error"])
    # the rows are ns-2's own results for the expanded scenario of each run
    for seed in (1, 2):
        data = sw.scenario_at({"flows[0].algorithm": "gaimd"}, seed)
        raw = run_ns2(Scenario(data).expand(seed))
        mine = [f["goodput_bps"] for f in raw["flows"] if f["group"] == 0]
        row = ok[(ok["seed"] == seed) & (ok["group"] == 0)].iloc[0]
        assert row["goodput_bps_mean"] == pytest.approx(sum(mine) / len(mine), rel=1e-12)
        assert row["mean_rto_s"] > 0.2 - 1e-9  # ns-2's RTO, at least minrto_
    engine = tf.Sweep(BASE, axes={"flows[0].algorithm": ["gaimd"]}, seeds=2).run(quiet=True).table
    assert list(engine["goodput_bps_mean"]) != list(ok["goodput_bps_mean"])
    record = json.loads((tmp_path / "out" / "sweep.json").read_text())
    assert record["engine"] == ns2_engine_id() and record["spec"]["simulator"] == "ns2"
    again = sw.run(tmp_path / "out", workers=2, quiet=True)
    assert again.cached == 2 and again.ran == 0  # the stored ns-2 runs are reused


@needs_ns2
def test_ns2_sweeps_refuse_dask():
    with pytest.raises(SweepError) as err:
        _sweep(simulator="ns2").run(dask="tcp://127.0.0.1:1", quiet=True)
    assert err.value.field == "dask" and "local threads" in str(err.value)


def test_expr_names_lists_the_identifiers():
    assert expr_names("a / b + max(c, 2)") == ["a", "b", "c", "max"]
    assert expr_names("not (") == []


def test_a_claim_not_run_is_neither_matched_nor_differs():
    from tcpfriendly.reproduce.inventory import _outcomes
    from tcpfriendly.reproduce.spec import load_paper

    claim = load_paper("yang2000", ["fig21-smoothness"])[0].claims[0]
    c = ClaimResult(claim, None, False, "", "2 of the 4 runs it needs failed: x", "ns2")
    assert c.verdict == "not run: 2 of the 4 runs it needs failed: x"
    assert c.to_json()["unavailable"] == "2 of the 4 runs it needs failed: x"
    # not judged: left out of the inventory's outcomes (a row of only such claims is not run)
    assert _outcomes([{"experiment": "e", "claims": [c.to_json()]}]) == {"e": {}}
    d = ClaimResult(claim, 0.1, False, "", None, "ns2")
    assert d.verdict == "differs in ns-2"   # the recorded reason is about tcpfriendly's runs
    assert ClaimResult(claim, 0.1, False, "", None).verdict.startswith("differs: ")


@needs_ns2
def test_reproduce_in_ns2_runs_the_sweeps_and_marks_what_ns2_cannot_run(tmp_path):
    rs = reproduce("yang2000", ["fig21-smoothness", "fig11-rate-ratio", "fig12-gaimd-tcp-windows"],
                   quick=True, simulator="ns2", out=str(tmp_path))
    # the analytic experiment is left out: nothing to simulate
    assert [r.experiment.id for r in rs] == ["fig12-gaimd-tcp-windows", "fig21-smoothness"]
    # fig12's window ratios are judged on ns-2's numbers; its window CoV is not run
    f12 = {c.claim.claim: c for c in rs[0].claims}
    judged = [c for c in f12.values() if c.unavailable is None]
    assert len(judged) == 2 and all(isinstance(c.ours, float) and c.ours > 0 for c in judged)
    assert all(c.verdict == "matched" or c.verdict == "differs in ns-2" for c in judged)
    assert sum(c.unavailable is not None for c in f12.values()) == 1
    r = rs[1]
    assert r.simulator == "ns2" and r.to_json()["simulator"] == "ns2"
    # fig21's claims need the sending-rate CoV, from the engine's time series: not run in ns-2
    assert r.claims and all(c.unavailable is not None and not c.matched for c in r.claims)
    assert all(c.verdict.startswith("not run: ns-2 reports no rate_cov") for c in r.claims)
    assert os.path.isdir(tmp_path / "runs" / "yang2000" / "fig21-smoothness-quick-ns2")
    from tcpfriendly.reproduce import inventory_rows
    rows = inventory_rows(rs)["yang2000"]
    fig21 = [s for s in rows if "Fig. 21" in s.row.id]
    assert fig21 and all(s.status == "not run" for s in fig21)


def _one_error_line(proc, *fragments):
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), proc.stderr
    assert "Traceback" not in proc.stderr
    for f in fragments:
        assert f in lines[0], (f, lines[0])


def test_cli_simulator_flags_are_checked_before_anything_runs(tcpf, tmp_path):
    spec = tmp_path / "sw.toml"
    base = json.dumps(str(REPO / "examples" / "quickstart.toml"))
    spec.write_text(f'scenario = {base}\nseeds = 1\n[axes]\n"bottleneck.delay" = ["10ms", "20ms"]\n')
    out = tmp_path / "out"
    _one_error_line(tcpf("sweep", spec, "--simulator", "ns3", "--out", out),
                    "--simulator", "must be one of tcpf, ns2", '"ns3"')
    _one_error_line(tcpf("sweep", spec, "--simulator", "ns2", "--dask", "local", "--out", out),
                    "--dask", "local threads")
    _one_error_line(tcpf("sweep", spec, "--simulator", "ns2", "--processes", "--out", out),
                    "--processes", "local threads")
    assert not out.exists()  # nothing written
    _one_error_line(tcpf("reproduce", "yang2000", "--simulator", "ns2", "--dask", "local",
                         "--out", tmp_path / "r"), "--dask", "local threads")
    proc = tcpf("reproduce", "yang2000", "--simulator", "ns-3", "--out", tmp_path / "r")
    assert proc.returncode == 2 and "--simulator" in proc.stderr and "ns-3" in proc.stderr
    assert not (tmp_path / "r").exists()

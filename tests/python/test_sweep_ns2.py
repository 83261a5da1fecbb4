"""Sweeps and reproductions run in ns-2 (`simulator = "ns2"`, `--simulator ns2`): the same table
from the paper's own simulator, a point ns-2 cannot express failing alone, separate run caches.

The runs need the `ns` binary (skipped where it is absent, failed in CI: TCPF_REQUIRE_NS2)."""

from __future__ import annotations

import json
import math
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
    assert again.simulator == "ns2" and " in ns-2, " in repr(again) and " in ns-2, " in again._repr_html_()
    # its report says the runs are ns-2's (the spec it prints, simulator included, reruns them)
    from tcpfriendly.report.sweep import build

    page = build(str(tmp_path / "out"))
    assert page.subtitle.endswith("; simulated in ns-2 2.35")
    assert "in <b>ns-2 2.35</b>" in page.sections[0].body


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
    assert all(r.simulator == "ns2" and r.to_json()["simulator"] == "ns2" for r in rs)
    # judged on ns-2's numbers, time-resolved metrics included (ns-2's time series)
    for r in rs:
        assert r.claims and all(c.unavailable is None for c in r.claims)
        assert all(c.verdict in ("matched", "differs in ns-2") for c in r.claims)
    cov = [c for c in rs[1].claims if isinstance(c.ours, float)]
    assert cov and all(0 < c.ours < 2 for c in cov)   # CoV ratios from ns-2's 150-ms rates
    assert os.path.isdir(tmp_path / "runs" / "yang2000" / "fig21-smoothness-quick-ns2")
    from tcpfriendly.report.reproduce import _command

    assert _command("yang2000", [r.to_json() for r in rs], "o").endswith("--quick --simulator ns2 --out o")
    # LOG has no ns-2 agent: every run fails alone, every claim is not run, and so is the row
    rs = reproduce("sastry2005", ["fig4-log-lemma1"], quick=True, simulator="ns2", out=str(tmp_path))
    assert rs[0].claims and all(c.unavailable is not None and not c.matched for c in rs[0].claims)
    assert all(c.verdict.startswith("not run: ") and "'log' has no ns-2 equivalent" in c.verdict
               for c in rs[0].claims)
    from tcpfriendly.reproduce import inventory_rows
    rows = [s for s in inventory_rows(rs)["sastry2005"] if s.status != "not expressible"]
    assert rows and all(s.status == "not run" for s in rows)
    # the HTML report says which simulator ran it and shows the claims not run as such
    from tcpfriendly.report.reproduce import claims_table, summary_html
    exp = rs[0].to_json()
    html = claims_table(exp) + summary_html([exp])
    assert "○ not run" in html and "✗ differs" not in html and "run in ns-2 2.35" in html


def test_a_metric_no_run_reports_is_not_run_only_with_another_simulator():
    import pandas as pd
    from tcpfriendly.reproduce.run import _unreported

    t = pd.DataFrame({"point": [0, 0], "seed": [1, 1], "group": [0, 1], "status": ["ok", "ok"],
                      "rate_cov": [float("nan"), 0.3]})
    why = _unreported(t, {"metric": "rate_cov", "group": 0}, "inputs.x", "ns2")
    assert why == ("ns-2 reports no rate_cov (a metric from the engine's time series or counters)")
    assert _unreported(t, {"metric": "rate_cov", "group": 1}, "inputs.x", "ns2") is None
    assert _unreported(t, {"metric": "rate_cov"}, "inputs.x", "ns2") is None


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


@needs_ns2
def test_ns2_time_series_tile_the_window_and_feed_the_time_resolved_metrics():
    from tcpfriendly.metrics import window_samples
    from tcpfriendly.metrics.groups import group_metrics

    data = dict(BASE, timeseries=0.25)
    expanded = Scenario(data).expand(3)
    raw = run_ns2(expanded, series_interval_s=0.25)
    series = window_samples(raw)
    window = 20.0 - 5.0
    assert sorted(series) == [0, 1, 2, 3]
    for f in raw["flows"]:
        s = series[f["id"]]
        # 60 intervals of 0.25 s tile [5, 20]: the packets delivered in them are the flow's
        # delivered packets over the window, so their mean rate is its goodput
        assert len(s["time"]) == 60 and s["time"][0] == pytest.approx(5.25) and s["time"][-1] == pytest.approx(20.0)
        assert sum(s["rate_bps"]) * 0.25 / window == pytest.approx(f["goodput_bps"], rel=1e-12)
        assert all(1 <= w <= 64 for w in s["cwnd"])   # the usable window, at most window_
    # the time-resolved metrics read ns-2's series as they read the engine's: rate_cov is the
    # mean over the group's flows of the CoV of their 0.25-s rates
    from tcpfriendly.metrics import cov
    g = group_metrics(raw["flows"], series=series)
    for grp in (0, 1):
        ids = [f["id"] for f in raw["flows"] if f["group"] == grp]
        want = sum(cov(series[i]["rate_bps"]) for i in ids) / len(ids)
        assert g[grp]["rate_cov"] == pytest.approx(want, rel=1e-12) and 0 < want < 2
        assert 0 < g[grp]["cwnd_cov"] < 2
    # without a time series the script samples nothing
    assert "timeseries" not in run_ns2(Scenario(BASE).expand(3))


@needs_ns2
def test_ns2_time_series_include_rate_based_flows():
    from tcpfriendly.metrics import window_samples
    from tcpfriendly.metrics.groups import group_metrics

    data = dict(BASE, timeseries=0.5)
    data["flows"] = [dict(BASE["flows"][0], algorithm="tfrc", params={}, recovery=None), BASE["flows"][1]]
    data["flows"][0].pop("recovery")
    raw = run_ns2(Scenario(data).expand(2), series_interval_s=0.5)
    series = window_samples(raw)
    assert sorted(series) == [0, 1, 2, 3]
    for f in raw["flows"]:
        s = series[f["id"]]
        # 30 intervals tile [5, 20]: a TFRC flow's packets over them are its delivered packets
        assert len(s["time"]) == 30
        assert sum(s["rate_bps"]) * 0.5 / 15.0 == pytest.approx(f["goodput_bps"], rel=1e-12) and f["goodput_bps"] > 0
        rate_based = f["group"] == 0
        assert all(math.isnan(w) for w in s["cwnd"]) == rate_based   # no window: NaN
    g = group_metrics(raw["flows"], series=series)
    assert 0 < g[0]["rate_cov"] < 2 and math.isnan(g[0]["cwnd_cov"])


@needs_ns2
def test_ns2_link_series_tile_the_window_like_the_engines():
    data = dict(BASE, timeseries=0.5)
    raw = run_ns2(Scenario(data).expand(4), series_interval_s=0.5)
    lt = raw["timeseries"]["links"]
    link = raw["links"][0]
    rows = [i for i, n in enumerate(lt["link"]) if n == link["name"]]
    assert link["name"] == "bottleneck" and len(rows) == 30
    assert [lt["time"][i] for i in rows][0] == pytest.approx(5.5)
    # bytes sent per interval over the link's rate tile [5, 20]: their mean is the link's
    # utilisation over the window; the interval drops add up to its drops
    assert sum(lt["utilization"][i] for i in rows) / 30 == pytest.approx(link["utilization"], rel=1e-12)
    assert sum(lt["drops"][i] for i in rows) == link["drops"] > 0
    assert all(0 <= lt["queue_pkts"][i] <= 50 for i in rows)
    # the same shape as the engine's series (tcpfriendly.Result.timeseries("links"))
    from tcpfriendly.results import Result
    assert list(Result("", raw=raw).timeseries("links").columns) == list(
        tf.run(BASE, seed=4, timeseries=0.5).timeseries("links").columns)

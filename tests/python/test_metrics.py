"""tcpfriendly.metrics: one definition per group metric, and every consumer reports the same
number under the same name (issue 12 item 1)."""

from __future__ import annotations

import math
import os

import numpy as np

import pytest

import tcpfriendly as tf
from tcpfriendly import metrics
from tcpfriendly.ns2 import compare as cmp
from tcpfriendly.ns2 import ns2_available


def flow(group, goodput, sent=100, events=2, direction="forward", **kw):
    return dict({"group": group, "goodput_bps": goodput, "throughput_bps": goodput,
                 "packets_sent": sent, "loss_events": events, "direction": direction,
                 "retransmissions": 0, "timeouts": 0, "mean_rtt_s": 0.1, "mean_cwnd": 10.0}, **kw)


def test_loss_event_rate_is_pooled_not_the_mean_of_the_flows_rates():
    # 1 event in 1000 packets and 3 in 100: pooled 4/1100, not (0.001 + 0.03) / 2
    g = [flow(0, 1e6, sent=1000, events=1), flow(0, 1e6, sent=100, events=3)]
    assert metrics.loss_event_rate(g) == 4 / 1100
    assert math.isnan(metrics.loss_event_rate([flow(0, 1e6, events=None)]))
    assert math.isnan(metrics.loss_event_rate([flow(0, 1e6, sent=0, events=0)]))


def test_share_and_fraction_are_distinct():
    flows = [flow(0, 3e6), flow(1, 1e6), flow(1, 1e6), flow(1, 1e6), flow(2, 5e6, direction="reverse")]
    g0, g1 = flows[:1], flows[1:4]
    # share: group mean / mean flow of the direction (1.5e6): 2 and 2/3
    assert metrics.share(g0, flows) == 3e6 / 1.5e6
    assert metrics.share(g1, flows) == pytest.approx(1e6 / 1.5e6)
    # fraction: group total / direction total (6e6): 0.5 and 0.5; the reverse group alone has 1
    assert metrics.fraction(g0, flows) == 0.5 and metrics.fraction(g1, flows) == 0.5
    assert metrics.fraction(flows[4:], flows) == 1.0 and metrics.share(flows[4:], flows) == 1.0


def test_jain_and_cov():
    assert metrics.jain([1.0, 1.0, 1.0]) == 1.0
    assert metrics.jain([1.0, 0.0, 0.0, 0.0]) == 0.25
    assert math.isnan(metrics.jain([0.0, 0.0]))
    assert metrics.cov([2.0, 2.0]) == 0.0
    assert metrics.cov([1.0, 3.0]) == 0.5
    vals = metrics.group_metrics([flow(0, 1.0), flow(0, 3.0), flow(1, 2.0)])
    assert vals[0]["jain"] == 16 / 20 and vals[0]["cov"] == 0.5 and vals[1]["n_flows"] == 1


SCENARIO = """
duration = 12
seed = 3
measure = { from = 2, to = 12 }
[bottleneck]
rate = "5Mbps"
delay = "20ms"
queue = "red"
limit = "2bdp"
[[flows]]
count = 2
algorithm = "tcp"
recovery = "sack"
access_delay = "1ms..4ms"
[[flows]]
count = 3
algorithm = "gaimd"
params = { alpha = 0.31, keep = 0.875 }
recovery = "sack"
access_delay = "1ms..4ms"
"""


@pytest.fixture(scope="module")
def scenario_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("metrics") / "two-groups.toml"
    path.write_text(SCENARIO)
    return str(path)


def test_run_sweep_and_ns2_compare_report_the_same_group_metrics(scenario_file, tmp_path):
    """The same group in Result.group_summary() (what tcpf run prints), a one-point sweep and
    ns2 compare's tcpfriendly side has the same loss_event_rate, share and fraction."""
    r = tf.run(tf.Scenario.from_toml(scenario_file), seed=3)
    summary = r.group_summary().set_index("group")
    # the run's groups differ, so the equalities below compare real numbers
    assert summary.loc[0, "loss_event_rate"] != summary.loc[1, "loss_event_rate"]
    sweep = tf.Sweep(scenario_file, seeds=[3]).run(quiet=True).table.set_index("group")
    meta = cmp._group_meta(tf.Scenario.from_toml(scenario_file).normalized())
    compare_side = cmp.summarize_run(r.raw, meta)["groups"]
    for g in (0, 1):
        for m in ("loss_event_rate", "share", "fraction", "goodput_bps_mean", "jain"):
            assert summary.loc[g, m] == sweep.loc[g, m] == compare_side[g][m], (g, m)
        assert compare_side[g]["loss_event_rate"] == summary.loc[g, "loss_event_rate"]
        assert compare_side[g]["goodput"] == summary.loc[g, "goodput_bps_mean"]
    if not ns2_available():
        return
    # and the rows tcpf ns2 compare prints (one seed: the means are the run's values)
    res = cmp.compare_scenario(scenario_file, seeds=1)
    assert res["seeds"] == [3]
    rows = {(row["group"], row["metric"]): row["engine"] for row in res["rows"]}
    for g in (0, 1):
        assert rows[(g, "loss_event_rate")] == summary.loc[g, "loss_event_rate"]
        assert rows[(g, "fraction")] == summary.loc[g, "fraction"]
        assert rows[(g, "goodput")] == summary.loc[g, "goodput_bps_mean"]


def test_rate_cov_is_the_time_series_smoothness_at_its_interval(scenario_file):
    """rate_cov (sweep table, group_summary) is the mean over the group's flows of
    dynamics.smoothness_cov at the time-series interval over the measurement window, the same
    in a sweep; NaN without a time series."""
    sc = tf.Scenario.from_toml(scenario_file).normalized()
    m = sc.get("measure") or {}
    lo, hi = float(m.get("from") or 0.0), float(m.get("to") or sc["duration"])
    r = tf.run(tf.Scenario.from_toml(scenario_file), seed=3, timeseries=0.2)
    ts = r.timeseries("flows")
    summary = r.group_summary().set_index("group")
    for g in (0, 1):
        ids = [f["id"] for f in r.raw["flows"] if f["group"] == g]
        want = metrics.mean(metrics.dynamics.smoothness_cov(ts, i, 0.2, lo, hi) for i in ids)
        assert 0 < want < 10
        assert summary.loc[g, "rate_cov"] == pytest.approx(want, rel=1e-12)
    assert summary.loc[0, "rate_cov"] != summary.loc[1, "rate_cov"]
    # the window's CoV and the time-resolved Jain index of the windows, likewise
    for g in (0, 1):
        ids = [f["id"] for f in r.raw["flows"] if f["group"] == g]
        want = metrics.mean(metrics.dynamics.smoothness_cov(ts, i, 0.2, lo, hi, column="cwnd") for i in ids)
        assert summary.loc[g, "cwnd_cov"] == pytest.approx(want, rel=1e-12)
        jt = metrics.dynamics.jain_over_time(ts, 0.2, ids, lo, hi, column="cwnd")["jain"].to_numpy()
        assert len(jt) == round((hi - lo) / 0.2)
        assert summary.loc[g, "cwnd_jain_mean"] == pytest.approx(float(jt.mean()), rel=1e-12)
        assert summary.loc[g, "cwnd_jain_p10"] == pytest.approx(float(np.percentile(jt, 10)), rel=1e-12)
        assert 0 < summary.loc[g, "cwnd_jain_p10"] < summary.loc[g, "cwnd_jain_mean"] <= 1
        # how low the window goes: each flow's 10th percentile of its window samples, mean
        want = metrics.mean(float(np.percentile(metrics.dynamics.flow_series(ts, i, lo, hi)["cwnd"], 10)) for i in ids)
        assert summary.loc[g, "cwnd_p10"] == pytest.approx(want, rel=1e-12)
        assert 1 <= summary.loc[g, "cwnd_p10"] < summary.loc[g, "mean_cwnd"]
        # the settling time after the window's start: dynamics.convergence_time per flow
        settle = []
        for i in ids:
            d = metrics.dynamics.flow_series(ts, i, lo, hi)
            settle.append(metrics.dynamics.convergence_time(
                d["time"], d["cwnd"], lo, (lo + (hi - lo) / 2, hi), tol=0.1, average_s=2.0)["seconds"])
        assert all(s >= 1.0 for s in settle)  # the first half-average is skipped
        assert summary.loc[g, "cwnd_settle_s"] == pytest.approx(metrics.mean(settle), rel=1e-12)
    # jin2001's T1, Δ, T2 of group 0's first flow and group 1's (pair_*): convergence_t1_delta_t2
    # from the window's start, ε = 10 on 10-sample averages, first entry; the last group has none
    f0 = [f for f in r.raw["flows"] if f["group"] == 0][0]
    f1 = [f for f in r.raw["flows"] if f["group"] == 1][0]
    d0, d1 = metrics.dynamics.flow_series(ts, f0["id"], lo, hi), metrics.dynamics.flow_series(ts, f1["id"], lo, hi)
    want = metrics.dynamics.convergence_t1_delta_t2(
        d0["time"].to_numpy(), d0["cwnd"].to_numpy(), d1["cwnd"].to_numpy(), start=lo,
        rtt_s=(f0["mean_rtt_s"] + f1["mean_rtt_s"]) / 2, eps=10.0, smooth_s=2.0, t2="enters",
        grace_s=2 * (f0["mean_rtt_s"] + f1["mean_rtt_s"]) / 2)
    assert want["T1"] > 0 and want["delta"] >= 0
    for key, m in (("T1", "pair_t1_rtt"), ("delta", "pair_delta"), ("T2", "pair_t2_rtt")):
        assert summary.loc[0, m] == pytest.approx(want[key], rel=1e-12, nan_ok=True), m
        assert math.isnan(summary.loc[1, m]), m
    assert all(math.isnan(v) or 0 <= v <= 1 for v in summary["cwnd_epoch_r2"])
    series_metrics = ("rate_cov", "cwnd_cov", "cwnd_jain_mean", "cwnd_jain_p10", "cwnd_p10", "cwnd_settle_s",
                      "cwnd_epoch_r2", "pair_t1_rtt", "pair_delta", "pair_t2_rtt")
    sweep = tf.Sweep(scenario_file, seeds=[3], set={"timeseries": 0.2}).run(quiet=True).table.set_index("group")
    for g in (0, 1):
        for m in series_metrics:
            assert sweep.loc[g, m] == summary.loc[g, m] or (math.isnan(sweep.loc[g, m]) and math.isnan(summary.loc[g, m])), (g, m)
    plain = tf.run(tf.Scenario.from_toml(scenario_file), seed=3).group_summary()
    for m in series_metrics:
        assert plain[m].isna().all(), m


def test_formula_rate_is_yang2000_eq2_at_the_groups_mean_loss_rtt_and_timeout():
    # yang2000 §2.4.2: eq. 2 at the averages of the flows' loss rate, RTT and timeout
    g = [dict(flow(0, 1e6), algorithm="gaimd", params={"alpha": 0.31, "beta": 0.125},
              loss_event_rate=p, mean_rtt_s=rtt, mean_rto_s=rto)
         for p, rtt, rto in ((0.01, 0.1, 0.4), (0.03, 0.2, 0.6))]
    want = tf.models.rate(0.31, 0.02, 0.15, keep=0.875, t0=0.5)["rate_eq2"]
    assert metrics.formula_rate_pps(g) == pytest.approx(want, rel=1e-12)
    # TCP is (1, 1/2): eq. 2 is then Padhye's formula
    tcp = [dict(f, algorithm="tcp", params={}) for f in g]
    assert metrics.formula_rate_pps(tcp) == pytest.approx(
        tf.models.rate(1.0, 0.02, 0.15, keep=0.5, t0=0.5)["padhye"], rel=1e-12)
    # no AIMD law (UDP), mixed laws, or no loss: undefined
    assert math.isnan(metrics.formula_rate_pps([dict(g[0], algorithm="pareto")]))
    assert math.isnan(metrics.formula_rate_pps([g[0], tcp[0]]))
    assert math.isnan(metrics.formula_rate_pps([dict(g[0], loss_event_rate=0.0)]))


def test_formula_ratio_cov_is_the_spread_of_the_per_flow_prediction_accuracy():
    base = dict(flow(0, 1e6), algorithm="tcp", params={}, loss_event_rate=0.02, mean_rtt_s=0.1,
                mean_rto_s=0.4)
    pred = tf.models.rate(1.0, 0.02, 0.1, keep=0.5, t0=0.4)["rate_eq2"]
    # same conditions, rates r and 2r: ratios x and x/2, CoV 1/3 whatever the unit
    g = [dict(base, throughput_bps=pred * 8000), dict(base, throughput_bps=pred * 16000)]
    assert metrics.formula_ratio_cov(g) == pytest.approx(1 / 3, rel=1e-12)
    assert metrics.formula_ratio_cov(g[:1]) == 0.0


def test_concave_fraction_tells_concave_convex_and_mixed_epochs():
    concave = [math.sqrt(i) for i in range(11)]          # above its chord
    convex = [float(i * i) for i in range(11)]           # below
    mixed = [math.sqrt(i) for i in range(6)] + [math.sqrt(5) + (i / 5) ** 2 for i in range(1, 6)]
    assert metrics.concave_fraction(concave + [0.5] + concave) == 1.0
    assert metrics.concave_fraction(convex) == 0.0
    assert 0.1 < metrics.concave_fraction(mixed) < 0.9
    # epochs split at decreases; runs shorter than 5 samples are left out
    assert metrics.window_epochs([1, 2, 3, 1, 2, 3, 4, 5, 2]) == [[1, 2, 3, 4, 5]]
    assert math.isnan(metrics.concave_fraction([3, 2, 1]))


def test_sync_frac_counts_reductions_shared_with_another_flow_within_one_sample():
    up = list(range(1, 11))
    a = dict(flow(0, 1.0), samples={"cwnd": up + [5] + up + [5]})       # reduces at 10 and 21
    b = dict(flow(0, 1.0), samples={"cwnd": up + [1, 2] + up[2:] + [3]})  # at 10 and 20
    c = dict(flow(1, 1.0), samples={"cwnd": up * 2 + [1, 2]})            # at 10 and 20
    assert metrics.reduction_indices(a["samples"]["cwnd"]) == [10, 21]
    assert metrics.reduction_indices([5, 4, 3, 6, 2]) == [1, 4]         # a spread decrease counts once
    flows = [a, b, c]
    # a's reductions at 10 and 21: b, c reduce at 10; b, c at 20 (within one sample of 21)
    assert metrics.cwnd_sync_frac([a], flows) == 1.0
    # shifted two samples later, a's second reduction (23) has no partner
    a2 = dict(a, samples={"cwnd": up + [5] + up + [11, 12, 5]})
    assert metrics.reduction_indices(a2["samples"]["cwnd"]) == [10, 23]
    assert metrics.cwnd_sync_frac([a2], [a2, b, c]) == 0.5
    alone = dict(flow(2, 1.0), samples={"cwnd": up + [1] + up})           # at 10 only
    late = dict(flow(2, 1.0), samples={"cwnd": list(range(1, 31)) + [1]})  # at 30 only
    assert metrics.cwnd_sync_frac([late], [late, alone]) == 0.0
    assert math.isnan(metrics.cwnd_sync_frac([dict(flow(0, 1.0))], flows))


def _sync_frac_by_definition(group, all_flows):
    """cwnd_sync_frac as first written: each flow's reductions against the union of every
    other flow's, rebuilt for each group (the oracle of the counted version)."""
    flows = [f for f in all_flows if (f.get("samples") or {}).get("cwnd")]
    if not flows or not all((f.get("samples") or {}).get("cwnd") for f in group):
        return math.nan
    red = {id(f): set(metrics.reduction_indices(f["samples"]["cwnd"])) for f in flows}
    hit = n = 0
    for f in group:
        others = set().union(*(red[id(g)] for g in flows if g is not f)) if len(flows) > 1 else set()
        for i in red[id(f)]:
            n += 1
            hit += bool({i - 1, i, i + 1} & others)
    return hit / n if n else math.nan


def test_metrics_relating_a_group_to_the_run_are_those_of_their_definitions_on_many_groups():
    # share, fraction and cwnd_sync_frac look the rest of the run up once (RunFlows); 300
    # groups of random flows, two directions, missing goodputs and windows, duplicated samples
    rng = np.random.default_rng(5)
    flows = []
    for g in range(300):
        for _ in range(int(rng.integers(1, 5))):
            f = {"id": len(flows), "group": g, "direction": "reverse" if g % 7 == 3 else None,
                 "goodput_bps": None if rng.random() < 0.05 else float(rng.uniform(0, 1e6))}
            if rng.random() < 0.9:
                f["samples"] = {"cwnd": [float(x) for x in rng.integers(1, 6, size=40)]}
            flows.append(f)
    got = metrics.group_metrics(flows, names=["share", "fraction", "cwnd_sync_frac"])
    checked = 0
    for g, fs in metrics.by_group(flows).items():
        d = metrics.direction(fs[0])
        same_dir = metrics.goodputs(f for f in flows if metrics.direction(f) == d)
        want_share = metrics.mean(metrics.goodputs(fs)) / metrics.mean(same_dir)
        want_fraction = math.fsum(metrics.groups._known(metrics.goodputs(fs))) / math.fsum(metrics.groups._known(same_dir))
        for name, want in (("share", want_share), ("fraction", want_fraction),
                           ("cwnd_sync_frac", _sync_frac_by_definition(fs, flows))):
            v = got[g][name]
            assert (math.isnan(v) and math.isnan(want)) or v == want, (g, name, v, want)
            checked += not math.isnan(v)
        # the per-flow share (a sweep's per-flow rows), from a list and from a RunFlows
        for f in fs:
            want = metrics.mean(metrics.goodputs([f])) / metrics.mean(same_dir)
            for run in (flows, metrics.RunFlows(flows)):
                v = metrics.flow_metrics(f, run, names=["share"])["share"]
                assert (math.isnan(v) and math.isnan(want)) or v == want, (f, v, want)
    assert checked > 500
    # a group that is not part of the run (the definition crashed on it) is set against
    # every flow of the run; a flow listed twice is still one flow
    # (reductions at 2, where the random windows have some, and at 47, past their 40 samples)
    outside = [{"id": -1, "group": 0, "samples": {"cwnd": [1.0, 2.0, 1.0] + [2.0] * 44 + [1.0]}}]
    run = [f for f in flows if f.get("samples")][:6]
    assert metrics.cwnd_sync_frac(outside, run) == _sync_frac_by_definition(outside, run + outside)
    assert metrics.cwnd_sync_frac(outside, run) == 0.5
    twice = run[:3] + run[:1]
    assert metrics.cwnd_sync_frac(run[:1], twice) == _sync_frac_by_definition(run[:1], twice)

"""The time-series yardsticks of tcpfriendly.metrics.dynamics on synthetic series with known answers."""
import math

import numpy as np
import pandas as pd
import pytest

from tcpfriendly import metrics
from tcpfriendly.metrics import dynamics as d


def test_one_metrics_layer():
    """The yardsticks live in the metrics package beside the group aggregates, share their
    plain statistics, and the old module paths are gone (no second home)."""
    import importlib.util

    assert d.cov is metrics.cov and d.jain is metrics.jain
    assert metrics.dynamics is d and metrics.group_metrics is metrics.groups.group_metrics
    assert importlib.util.find_spec("tcpfriendly.dynamics") is None
    assert math.isnan(d.cov([float("nan")])) and d.cov([1.0, float("nan"), 3.0]) == pytest.approx(0.5)


def test_cov_and_jain_and_max_ratio():
    assert d.cov([2, 2, 2]) == 0
    assert d.cov([1, 3]) == pytest.approx(0.5)          # sigma 1, mean 2
    assert d.jain([5, 5, 5, 5]) == pytest.approx(1.0)
    assert d.jain([1, 0, 0, 0]) == pytest.approx(0.25)  # 1/n
    assert d.jain([1, 3]) == pytest.approx(16 / 20)
    assert d.max_ratio(2, 8) == 4 and d.max_ratio(8, 2) == 4
    assert d.max_ratio(0, 1) == math.inf and math.isnan(d.max_ratio(0, 0))


def test_mean_ci95_uses_student_t():
    ci = d.mean_ci95([1.0, 2.0, 3.0])
    half = 4.302653 * 1.0 / math.sqrt(3)
    assert ci["mean"] == 2 and ci["lo"] == pytest.approx(2 - half) and ci["hi"] == pytest.approx(2 + half)
    assert d.mean_ci95([5.0])["lo"] == 5.0 and d.mean_ci95([])["n"] == 0


def test_normalisations():
    assert d.normalised(0.8, 1.0) == pytest.approx(0.8)
    assert math.isnan(d.normalised(1.0, 0.0))
    assert d.fair_share_ratio(2e6, 16e6, 16) == pytest.approx(2.0)


def _ts(t, rates, flow=0, cwnd=None):
    return pd.DataFrame({"time": t, "flow": flow, "cwnd": cwnd if cwnd is not None else np.nan,
                         "rate_bps": rates, "srtt_s": 0.1})


def test_binning_and_smoothness_at_a_time_scale():
    t = np.round(np.arange(1, 41) * 0.1, 3)                # 4 s sampled every 0.1 s
    rate = np.where((np.arange(40) // 2) % 2 == 0, 1.0, 3.0)  # alternates every 0.2 s
    ts = _ts(t, rate)
    ends, means = d.binned(t, rate, 0.2)
    assert len(means) == 20 and set(np.round(means, 9)) == {1.0, 3.0}
    assert d.smoothness_cov(ts, 0, bin_s=0.2) == pytest.approx(0.5)
    assert d.smoothness_cov(ts, 0, bin_s=0.4) == pytest.approx(0.0)  # averages out at 0.4 s


def test_geometric_mean_cov():
    t = np.round(np.arange(1, 41) * 0.1, 3)
    low = np.where((np.arange(20) // 2) % 2 == 0, 1.0, 3.0)     # CoV 0.5 before 2 s
    high = np.where((np.arange(20) // 2) % 2 == 0, 9.0, 11.0)   # CoV 0.1 after
    ts = _ts(t, np.concatenate([low, high]))
    assert d.smoothness_cov_geometric(ts, 0, split=2.0, bin_s=0.2) == pytest.approx(math.sqrt(0.05))


def test_jain_over_time():
    t = np.round(np.arange(1, 11) * 1.0, 3)
    ts = pd.concat([_ts(t, np.ones(10), 0), _ts(t, np.r_[np.zeros(5), np.ones(5)], 1)])
    j = d.jain_over_time(ts, bin_s=1.0)
    assert list(j["jain"][:5]) == pytest.approx([0.5] * 5)
    assert list(j["jain"][5:]) == pytest.approx([1.0] * 5)


def _square_cwnd(dt=0.05, period=20.0, cycles=4, low=10.0, high=20.0, ramp_s=2.0):
    """cwnd that is `low` while the CBR is on [kP, kP+P/2) and climbs linearly to `high` in
    ramp_s after it goes off, then falls back at once (in one step) when it comes on."""
    t = np.round(np.arange(dt, cycles * period + 1e-9, dt), 6)
    w = np.empty_like(t)
    for i, x in enumerate(t):
        ph = x % period
        if ph < period / 2:
            w[i] = low
        else:
            w[i] = min(high, low + (high - low) * (ph - period / 2) / ramp_s)
    return t, w


def test_aggressiveness_counts_rtts_to_the_new_steady_window():
    t, w = _square_cwnd()
    rises = [10.0, 30.0, 50.0, 70.0]
    a = d.aggressiveness(t, w, rises, rtt_s=0.1, eps=1.0, period_s=10.0)
    # within 1 packet of 20 when 10 + 10 (x / 2) >= 19, i.e. x = 1.8 s = 18 RTTs
    assert a["n"] == 4
    assert a["mean"] == pytest.approx(18.0, abs=0.6)
    assert a["targets"][0] == pytest.approx(20.0)
    # the RTT at every sample: the round trips are counted, not the seconds / one RTT. With
    # the RTT 0.05 s (an empty queue) for the first 0.9 s of each rise and 0.1 s after it, the
    # 1.8 s are 0.9 / 0.05 + 0.9 / 0.1 = 27 round trips (a run-mean RTT would say 18)
    ph = np.mod(t - 10.0, 20.0)
    rtt = np.where((ph > 1e-9) & (ph <= 0.9 + 1e-9), 0.05, 0.1)
    b = d.aggressiveness(t, w, rises, rtt_s=rtt, eps=1.0, period_s=10.0)
    assert b["seconds"] == a["seconds"]
    assert b["mean"] == pytest.approx(27.0, abs=0.6)
    q = d.rtt_from_queue([0, 9], base_rtt_s=0.04, rate_bps=8e6, wire_bytes=1000)
    assert q[0] == pytest.approx(0.041) and q[1] == pytest.approx(0.05)



def test_steady_cov_is_the_windows_cov_over_each_phases_steady_tail():
    """jin2001 Fig. 19's smoothness after reaching steady state: the CoV of the window over the
    last third of each phase (the samples of the Table 5 measures' W_target), without the
    transition to the new level."""
    t, w = _square_cwnd()
    rises, falls = [10.0, 30.0, 50.0, 70.0], [20.0, 40.0, 60.0]
    # flat levels in every tail: CoV 0 although the ramp and the step are in the phases
    assert d.steady_cov(t, w, rises, 10.0) == [0.0] * 4
    assert d.steady_cov(t, w, falls, 10.0) == [0.0] * 3
    # a sawtooth 18-22 in the tail of the high phases: the population CoV of those samples,
    # while the window before the tail (the ramp) does not count
    saw = w.copy()
    ph = np.mod(t, 20.0)
    tail = (ph > 10.0 + 20.0 / 3) & (ph < 20.0)
    saw[tail] = np.where(np.mod(np.round(t[tail] / 0.05), 2) == 0, 18.0, 22.0)
    got = d.steady_cov(t, saw, rises, 10.0)
    sel = (t > 10.0 + 20.0 / 3) & (t < 20.0)
    assert got[0] == pytest.approx(float(np.std(saw[sel]) / np.mean(saw[sel])))
    assert 0.08 < got[0] < 0.11 and len(got) == 4
    a = d.aggressiveness(t, saw, rises, rtt_s=0.1, period_s=10.0)
    assert a["targets"][0] == pytest.approx(float(np.mean(saw[sel])))
    # a phase that ends after the last sample is left out
    assert d.steady_cov(t, w, [70.0, 75.0], 10.0) == [0.0]

def test_responsiveness_counts_loss_events_until_the_window_is_down():
    t = np.round(np.arange(0.05, 40.0 + 1e-9, 0.05), 6)
    # window 20 until 10 s, then halves at 10.5, 11.5, 12.5 s (loss events) to 2.5, stays
    w = np.full_like(t, 20.0)
    w[t >= 10.5] = 10.0
    w[t >= 11.5] = 5.0
    w[t >= 12.5] = 2.5
    losses = [10.5, 11.5, 12.5, 15.0]   # a later loss at steady state is not counted
    r = d.responsiveness(t, w, [10.0], losses, eps=1.0, period_s=10.0)
    assert r["samples"] == [3.0]
    assert r["seconds"][0] == pytest.approx(2.5, abs=0.06)


def test_convergence_t1_delta_t2():
    t = np.round(np.arange(0.1, 60.0 + 1e-9, 0.1), 6)
    w1 = np.minimum(5 + t, 40.0)          # both grow 1 packet/s from 5 and 25
    w2 = np.minimum(25 + t, 60.0)
    # first decrease at 20 s: both halve; then the difference shrinks linearly to 0 at 50 s
    w1 = np.where(t > 20, 12.5 + (t - 20) * 0.5, w1)
    w2 = np.where(t > 20, 22.5 + (t - 20) * (0.5 - 10 / 30), w2)
    w2 = np.where(t > 50, w1, w2)         # equal from 50 s on
    r = d.convergence_t1_delta_t2(t, w1, w2, start=0.0, rtt_s=0.5, eps=1.0, decrease_times=[20.0, 20.0])
    assert r["T1"] == pytest.approx(40.0)        # 20 s / 0.5 s
    # Δ is the difference at the efficiency line, before the decrease (jin2001 Table 2: W2 - W1
    # for AIMD's equal increments): 45 - 25
    assert r["delta"] == pytest.approx(20.0, abs=0.1)
    # |w1 - w2| = 10 - (t - 20)/3 < 1 from t = 47 s: 94 RTTs
    assert r["T2"] == pytest.approx(94.0, abs=0.5)
    # without the loss log the first fall between samples is the decrease (20.1 s here)
    s = d.convergence_t1_delta_t2(t, w1, w2, start=0.0, rtt_s=0.5, eps=1.0)
    assert s["T1"] == pytest.approx(40.2) and s["delta"] == pytest.approx(20.0, abs=0.1)
    # "enters": the first time within ε; here the difference never comes back out, so the same
    e = d.convergence_t1_delta_t2(t, w1, w2, start=0.0, rtt_s=0.5, eps=1.0, t2="enters")
    assert e["T2"] == pytest.approx(94.0, abs=0.5)
    # a difference that dips within ε and leaves again: "stays" waits, "enters" does not
    w3 = np.where((t > 30) & (t < 31), w1 + 0.5, w2)
    assert d.convergence_t1_delta_t2(t, w1, w3, start=0.0, rtt_s=0.5, eps=1.0, t2="enters")["T2"] \
        == pytest.approx(60.2, abs=0.2)
    assert d.convergence_t1_delta_t2(t, w1, w3, start=0.0, rtt_s=0.5, eps=1.0)["T2"] == pytest.approx(94.0, abs=0.5)
    with pytest.raises(ValueError):
        d.convergence_t1_delta_t2(t, w1, w2, start=0.0, rtt_s=0.5, t2="sometimes")
    # a decrease in the grace period after the start (an old-regime loss) is not T1
    early = np.where((t > 0.55) & (t < 5), w1 - 1, w1)
    g = d.convergence_t1_delta_t2(t, early, w2, start=0.0, rtt_s=0.5, eps=1.0, grace_s=1.0)
    assert g["T1"] == pytest.approx(40.2)
    assert d.convergence_t1_delta_t2(t, early, w2, start=0.0, rtt_s=0.5, eps=1.0)["T1"] == pytest.approx(1.2)


def test_pair_convergence_group_metrics_pair_a_group_with_the_next():
    # two flows in groups 0 and 1 (the chain's two tagged flows): windows as above, sampled
    # every 0.1 s over the measurement window [0, 60]
    from tcpfriendly.metrics import group_metrics
    t = np.round(np.arange(0.1, 60.0 + 1e-9, 0.1), 6)
    w1 = np.where(t > 20, 12.5 + (t - 20) * 0.5, np.minimum(5 + t, 40.0))
    w2 = np.where(t > 20, 22.5 + (t - 20) * (0.5 - 10 / 30), np.minimum(25 + t, 60.0))
    w2 = np.where(t > 50, w1, w2)
    flows = [{"id": 0, "group": 0, "mean_rtt_s": 0.5}, {"id": 1, "group": 1, "mean_rtt_s": 0.5}]
    series = {i: {"time": list(t), "cwnd": list(w), "rate_bps": [1.0] * len(t), "window": (0.0, 60.0, 0.1)}
              for i, w in enumerate((w1, w2))}
    m = group_metrics(flows, ["pair_t1_rtt", "pair_delta", "pair_t2_rtt"], series=series)
    assert m[0]["pair_t1_rtt"] == pytest.approx(40.2)
    assert m[0]["pair_delta"] == pytest.approx(20.0, abs=0.1)
    # ε = 10 on 10-sample centred moving averages (samples i-5 .. i+4): |w1 - w2| = 10 - (t - 20)/3
    # after 20 s, 20 before; the first average without a pre-20-s sample is at 20.6 s: 41.2 RTTs
    assert m[0]["pair_t2_rtt"] == pytest.approx(41.2, abs=0.05)
    assert math.isnan(m[1]["pair_t1_rtt"])    # the last group has no partner


def test_cwnd_epoch_r2_is_one_for_linear_epochs_and_lower_for_curved_ones():
    from tcpfriendly.metrics.groups import cwnd_epoch_r2
    t = [round(0.1 * i, 6) for i in range(1, 301)]
    saw = [10 + (x % 10.0) for x in t]               # linear rise, fall every 10 s
    curved = [10 + (x % 10.0) ** 4 / 100 for x in t]  # convex rise
    lin = {"samples": {"time": t, "cwnd": saw}}
    cur = {"samples": {"time": t, "cwnd": curved}}
    assert cwnd_epoch_r2([lin]) == pytest.approx(1.0)
    assert 0.5 < cwnd_epoch_r2([cur]) < 0.95
    assert math.isnan(cwnd_epoch_r2([{"samples": {"time": t[:5], "cwnd": saw[:5]}}]))  # too short


def test_cwnd_epoch_rounds_and_peak_count_complete_epochs():
    from tcpfriendly.metrics.groups import cwnd_epoch_packets, cwnd_epoch_peak, cwnd_epoch_rounds, cwnd_epochs
    # a saw-tooth: 10 -> 19.9 over 10 s (100 samples of 0.1 s), falling at 10, 20 and 30 s
    t = [round(0.1 * i, 6) for i in range(1, 301)]
    saw = [10 + (x % 10.0) for x in t]
    flow = {"mean_rtt_s": 0.2, "samples": {"time": t, "cwnd": saw, "window": (0.0, 30.0, 0.1)}}
    eps = cwnd_epochs(flow)
    # the first run starts with the window, the last (the sample at 30 s) ends with it
    assert [e["complete"] for e in eps] == [False, True, True, False]
    assert cwnd_epoch_rounds([flow]) == pytest.approx(10.0 / 0.2)  # 100 samples = 10 s = 50 RTTs
    assert cwnd_epoch_peak([flow]) == pytest.approx(19.9)
    # the windows 10.0, 10.1, ..., 19.9 summed, each sample a half RTT: 0.5 * 100 * 14.95
    assert cwnd_epoch_packets([flow]) == pytest.approx(0.5 * 100 * 14.95)
    assert math.isnan(cwnd_epoch_rounds([dict(flow, samples=dict(flow["samples"], cwnd=saw[:90]))]))


def test_trough_metrics_on_a_synthetic_link():
    dt = 0.02
    t = np.round(np.arange(dt, 110 + 1e-9, dt), 6)
    u = np.full_like(t, 0.95)
    u[(t > 50) & (t <= 50.5)] = 0.45                  # dip of 0.5 for 0.5 s after t1
    rate, wire = 10e6, 1040.0
    per_sample = rate * dt / (8 * wire)
    # steady drop rate 5%: drops/(drops+departures) = 0.05 -> drops = dep * 0.05 / 0.95
    drops = u * per_sample * 0.05 / 0.95
    drops[(t > 80) & (t <= 81)] = u[(t > 80) & (t <= 81)] * per_sample * 0.5 / 0.5  # 50% for 1 s
    m = d.trough_metrics(t, u, drops, rate, dt, wire, bin_s=0.1)
    assert m["steady_utilization"] == pytest.approx(95.0)
    assert m["steady_drop_rate"] == pytest.approx(5.0, rel=1e-6)
    assert m["t_util_recover_s"] == pytest.approx(0.6, abs=1e-6)      # first bin back: (50.5, 50.6]
    assert m["utilization_metric"] == pytest.approx(100 * 0.5 * 0.6, rel=1e-6)
    assert m["t_drop_recover_s"] == pytest.approx(1.1, abs=1e-6)      # first bin back: (81.0, 81.1]
    assert m["drop_metric"] == pytest.approx(100 * (0.5 - 0.05) * 1.1, rel=1e-6)
    # a steady-state burst of drops long after t2 is not "the drop rate at t2": the peak is
    # looked for within drop_window after t2 only (it used to give a 25-s "recovery")
    late = drops.copy()
    late[(t > 100) & (t <= 100.1)] = u[(t > 100) & (t <= 100.1)] * per_sample * 0.9 / 0.1
    assert d.trough_metrics(t, u, late, rate, dt, wire, bin_s=0.1)["drop_metric"] == pytest.approx(m["drop_metric"])
    assert d.trough_metrics(t, u, late, rate, dt, wire, bin_s=0.1, drop_window=30.0)["t_drop_recover_s"] > 20
    # the queue keeps the link busy for 0.3 s after t1 before the trough: recovery is counted
    # back to 95% AFTER the fall, from t1
    u2 = u.copy()
    u2[(t > 50) & (t <= 50.3)] = 0.95
    u2[(t > 50.3) & (t <= 51.0)] = 0.45
    m2 = d.trough_metrics(t, u2, drops, rate, dt, wire, bin_s=0.1)
    assert m2["t_util_recover_s"] == pytest.approx(1.1, abs=1e-6)     # first bin back: (51.0, 51.1]
    assert m2["utilization_metric"] == pytest.approx(100 * 0.5 * 1.1, rel=1e-6)


def test_trough_drop_rise_at_t2_is_the_same_drop_rate_binned_coarser():
    # sastry2005 §VI-B: "an increased drop rate (up to 10-15 times the steady-state drop rate!)
    # at t2"; drop_t2_ratio is the drop metric's D(t2) / D_ss, drop_peak_ratio the peak of the
    # same drop rate over peak_bin_s bins / D_ss
    dt = 0.02
    t = np.round(np.arange(dt, 110 + 1e-9, dt), 6)
    u = np.full_like(t, 0.95)
    rate, wire = 10e6, 1040.0
    per_sample = rate * dt / (8 * wire)
    drops = u * per_sample * 0.05 / 0.95                     # 5 % outside the burst
    burst = (t > 80) & (t <= 80.5)
    drops[burst] = u[burst] * per_sample                     # 50 % for 0.5 s after t2
    m = d.trough_metrics(t, u, drops, rate, dt, wire, bin_s=0.1)
    assert m["drop_t2_ratio"] == pytest.approx(0.5 / 0.05, rel=1e-6)
    # over (80, 81]: half the departures with as many drops, half with 5/95 of them
    one_s = (1 + 0.05 / 0.95) / (1 + 0.05 / 0.95 + 2)
    assert m["drop_peak_ratio"] == pytest.approx(one_s / 0.05, rel=1e-6)
    assert d.trough_metrics(t, u, drops, rate, dt, wire, bin_s=0.1, peak_bin_s=0.5)["drop_peak_ratio"] == pytest.approx(10.0, rel=1e-6)
    # no burst: the ratio is 1; no steady drops: not a number
    calm = u * per_sample * 0.05 / 0.95
    assert d.trough_metrics(t, u, calm, rate, dt, wire, bin_s=0.1)["drop_peak_ratio"] == pytest.approx(1.0, rel=1e-6)
    assert math.isnan(d.trough_metrics(t, u, np.zeros_like(t), rate, dt, wire, bin_s=0.1)["drop_peak_ratio"])


def test_convergence_time_up_and_down():
    t = np.arange(1.0, 301.0)
    x = np.where(t <= 100, 1.0, np.minimum(1.0 + (t - 100) / 20.0, 3.0))  # 1 -> 3 in 40 s
    r = d.convergence_time(t, x, 100.0, (200.0, 300.0), tol=0.1, average_s=1.0)
    # within 10% of 3 when 1 + (t-100)/20 >= 2.7: t = 134
    assert r["target"] == pytest.approx(3.0) and r["seconds"] == pytest.approx(34.0, abs=1.0)
    y = np.where(t <= 100, 3.0, 1.0)
    assert d.convergence_time(t, y, 100.0, (200.0, 300.0), tol=0.1, average_s=1.0)["seconds"] <= 1.0
    # an independent target (a stationary run's level): the tail of the phase is not used
    r = d.convergence_time(t, x, 100.0, (200.0, 300.0), tol=0.1, average_s=1.0, target=2.0)
    assert r["target"] == 2.0 and r["seconds"] == pytest.approx(16.0, abs=1.0)  # 1 + s/20 >= 1.8


def test_loss_log_and_shortest_rtt_flow():
    raw = {"loss_events": {"time": [1.0, 2.0, 3.0], "flow": [0, 1, 0], "kind": ["loss", "loss", "timeout"],
                           "window_before": [10, 10, 5], "window_after": [5, 5, 1]}}
    log = d.loss_log(raw)
    assert d.loss_events_between(log, 0, 0.0, 3.0) == 2 and d.loss_events_between(log, 0, 1.0, 2.9) == 0
    assert d.loss_log({}).empty
    flows = pd.DataFrame({"id": [0, 1, 2, 3], "group": [0, 0, 1, 1], "mean_rtt_s": [0.2, 0.1, 0.1, 0.1]})
    assert d.shortest_rtt_flow(flows, 0)["id"] == 1
    assert d.shortest_rtt_flow(flows, 1)["id"] == 2

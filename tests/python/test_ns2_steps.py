"""CBR rate steps (`steps`, `repeat`) in the ns-2 exporter: the events of the exported script,
the refusals of malformed steps, and ns-2 runs against the engine (skipped without `ns`)."""

from __future__ import annotations

import math
import re

import pytest

import tcpfriendly as tf
from tcpfriendly import ns2
from tcpfriendly.ns2 import Ns2Unsupported, export_tcl
from tcpfriendly.ns2 import export as ns2_export

from test_ns2 import NS_MISSING, NS_SKIP, expanded_sample


def _with_cbr(cbr, start=0.5, stop=None, duration=12.0):
    """expanded_sample's four TCP flows plus flow 4: a CBR with the given `cbr` dict."""
    e = expanded_sample(duration=duration, queue="droptail", red=None, limit_pkts=100)
    e["flows"].append({"id": 4, "group": 2, "kind": "cbr", "algorithm": "cbr", "params": {},
                       "cbr": dict(cbr), "direction": "forward", "access_delay_s": 0.001,
                       "receiver_delay_s": 0.0, "access_rate_bps": 150e6, "start_s": start,
                       "stop_s": stop, "ecn": False})
    return e


def _events(script, fid=4):
    """(time, rate_) of every start and the times of every stop of flow `fid`'s CBR."""
    starts = [(float(t), float(r)) for t, r in re.findall(
        rf'^\$ns at (\S+) "\$app\({fid}\) set rate_ (\S+); \$app\({fid}\) start"$', script, re.M)]
    stops = [float(t) for t in re.findall(rf'^\$ns at (\S+) "\$app\({fid}\) stop"$', script, re.M)]
    return starts, stops


STEPS = [[0.0, 2e6], [2.0, 6e6], [4.0, 0.0]]
# 6 Mb/s with 1000-byte packets: the engine's interval is 1333333 ns (rounded), rate_ is the
# rate with that interval
R6 = 8000 * 1e9 / 1333333


def test_steps_are_exported_as_restarts_at_each_step():
    s = export_tcl(_with_cbr({"steps": STEPS, "repeat_s": 6.0, "packet_size": 1000}))
    starts, stops = _events(s)
    # timed from the flow's start (0.5 s), the period starting over at 6.5 s; the 0 b/s step
    # only stops; nothing at or after the run's end (12 s)
    assert starts == [(0.5, 2e6), (2.5, pytest.approx(R6, abs=1e-6)), (6.5, 2e6),
                      (8.5, pytest.approx(R6, abs=1e-6))]
    assert stops == pytest.approx([2.5 - 5e-10, 4.5 - 5e-10, 8.5 - 5e-10, 10.5 - 5e-10], abs=1e-12)
    # each stop is before its step, never at it (see the script's comment)
    assert all(t < s for t, s in zip(stops, (2.5, 4.5, 8.5, 10.5)))
    assert R6 == pytest.approx(6e6, rel=3e-7) and ns2_export._step_rate(2e6, 1000) == 2e6
    # a rate of 0 is never given to ns-2, and no constant rate_ is set before the steps
    assert not re.search(r"rate_ 0(\.0)?\b", s)
    assert not re.search(r"^\$app\(4\) set rate_", s, re.M)
    assert "# CBR rate steps [0.0, 2000000.0], [2.0, 6000000.0], [4.0, 0.0]" in s
    assert "repeated every 6.0 s" in s
    # the events follow the CBR's setup lines in the flow's block
    assert s.index("$app(4) set random_ 0") < s.index('$ns at 0.5 "$app(4) set rate_')


def test_steps_without_repeat_a_flow_stop_and_a_silent_first_step():
    # no repeat: the last step lasts to the flow's end
    s = export_tcl(_with_cbr({"steps": [[0.0, 1e6], [3.0, 4e6]]}, start=1.0))
    starts, stops = _events(s)
    assert starts == [(1.0, 1e6), (4.0, 4e6)] and stops == pytest.approx([4.0 - 5e-10], abs=1e-12)
    # the flow's stop ends the steps: none at or after 9 s, and the source stops at 9 s
    s = export_tcl(_with_cbr({"steps": STEPS, "repeat_s": 6.0}, start=0.5, stop=9.0))
    starts, stops = _events(s)
    assert [t for t, _ in starts] == [0.5, 2.5, 6.5, 8.5]
    assert stops == pytest.approx([2.5 - 5e-10, 4.5 - 5e-10, 8.5 - 5e-10, 9.0], abs=1e-12)
    # a silent first step: nothing at the flow's start, the source starts at its first
    # non-zero step; consecutive silent steps add nothing
    s = export_tcl(_with_cbr({"steps": [[0.0, 0.0], [1.0, 0.0], [2.0, 4e6]], "repeat_s": 5.0}, start=0.0))
    starts, stops = _events(s)
    assert starts == [(2.0, 4e6), (7.0, 4e6)]
    assert stops == pytest.approx([5.0 - 5e-10, 10.0 - 5e-10], abs=1e-12)


def test_step_times_are_the_engines():
    # integer nanoseconds from the flow's start; the period adds up exactly
    times = ns2_export._step_times(0.1, 1e4, [[0.0, 1.0], [0.3, 2.0]], 0.7)
    assert times[:4] == [(100_000_000, 1.0), (400_000_000, 2.0), (800_000_000, 1.0), (1_100_000_000, 2.0)]
    k = len(times) // 2 - 1
    assert times[2 * k] == (100_000_000 + k * 700_000_000, 1.0)
    # up to and including the end (a stop at the end cancels a packet due there)
    assert ns2_export._step_times(0.0, 4.0, STEPS, 6.0)[-1] == (4_000_000_000, 0.0)


def test_malformed_steps_are_refused_by_name():
    for cbr, pattern in [
        ({"steps": [[0.0, 1e6], [1.0, 2e6]], "repeat_s": 1.0}, r"^flows\[2\]\.repeat: 1\.0 must be longer"),
        ({"steps": [[0.0, 1e6], [1.0, -2e6]]}, r"^flows\[2\]\.steps: .*rates >= 0"),
        ({"steps": [[0.5, 1e6]]}, r"^flows\[2\]\.steps: .*increasing times from 0"),
        ({"steps": [[0.0, 1e6], [2.0, 2e6], [1.0, 0.0]]}, r"^flows\[2\]\.steps: "),
        ({"steps": [[0.0, math.nan]]}, r"^flows\[2\]\.steps: "),
        ({"steps": []}, r"^flows\[2\]\.steps: "),
        ({"steps": [[0.0, 1e6]], "rate_bps": 1e6}, r"^flows\[2\]\.steps: a CBR has either steps or a rate"),
        ({"rate_bps": 1e6, "repeat_s": 2.0}, r"^flows\[2\]\.repeat: applies to steps only"),
    ]:
        with pytest.raises(Ns2Unsupported, match=pattern):
            export_tcl(_with_cbr(cbr))


def test_the_s4_scenario_exports():
    """tsao2007 S4's CBR (14 / 9 Mb/s, 50 s each) with its placeholders filled in."""
    sc = tf.Scenario.from_dict({
        "duration": 400, "max_window": 200,
        "bottleneck": {"rate": "15Mbps", "delay": 0.059, "queue": "droptail", "limit": "1.5bdp"},
        "flows": [{"algorithm": "tcp", "params": {}, "recovery": "sack", "access_delay": "1ms", "start": "0..1"},
                  {"algorithm": "cbr", "steps": [[0, "14Mbps"], [50, "9Mbps"]], "repeat": 100,
                   "access_delay": "1ms"}]})
    s = export_tcl(sc.expand(1))
    starts, stops = _events(s, fid=1)
    assert [t for t, _ in starts] == [50.0 * k for k in range(8)]
    # the engine's intervals: 571429 ns (14 Mb/s rounds up) and 888889 ns
    assert [r for _, r in starts[:2]] == pytest.approx([8000e9 / 571429, 8000e9 / 888889], rel=1e-15)
    assert len(stops) == 8 and stops[-1] == pytest.approx(400.0 - 5e-10, abs=1e-12)


# ----------------------------------------------------------------------------------------
# with ns-2
# ----------------------------------------------------------------------------------------

def _scenario(start=0.37, tcp=False):
    flows = [{"algorithm": "cbr", "steps": [[0, "2Mbps"], [2, "6Mbps"], [4, 0]], "repeat": 6,
              "access_delay": "1ms", "start": start}]
    if tcp:
        flows.append({"algorithm": "tcp", "recovery": "sack", "access_delay": "1ms"})
    return {"duration": 12, "seed": 1, "packet_size": 1000,
            "bottleneck": {"rate": "10Mbps", "delay": "20ms", "queue": "droptail", "limit": 50},
            "flows": flows}


# A packet reaches the receiver 21.96 ms after it is sent (1 + 20 ms and three transmissions at
# 100, 10 and 100 Mb/s); a window from 21.5 ms after one step to 21.5 ms after the next holds
# the packets sent from 0.46 ms before the step to 0.46 ms before the next.
LAG = 0.0215


def _per_step(sc, start):
    """CBR packets delivered per step (tcpfriendly, ns-2), each in its own measurement window."""
    out = []
    for a in range(0, 12, 2):
        m = {"from": a + start + LAG, "to": min(a + 2 + start + LAG, 12.0)}
        s = dict(sc, measure=m)
        ours = tf.run(s, seed=1).raw["flows"][0]["packets_delivered"]
        ref = ns2.run_ns2(tf.expand(s, seed=1), sample_interval_s=None)["flows"][0]["packets_delivered"]
        out.append((ours, ref))
    return out


@pytest.mark.skipif(NS_SKIP, reason=NS_MISSING)
def test_ns2_sends_the_engines_packets_step_by_step():
    steps = _per_step(_scenario(), 0.37)
    # 2 Mb/s for 2 s: 500 packets; 6 Mb/s: 1501 (the engine's 1333333 ns interval puts the
    # 1501st 0.5 us before the silent step, in the next window); nothing while silent
    expect = [500, 1500, 1, 500, 1500, 1]
    assert [o for o, _ in steps] == expect
    assert [r for _, r in steps] == expect


@pytest.mark.skipif(NS_SKIP, reason=NS_MISSING)
def test_ns2_steps_with_a_tcp_flow():
    steps = _per_step(_scenario(start=0.0, tcp=True), 0.0)
    print("\nCBR packets per step (tcpfriendly, ns-2):", steps)
    for (ours, ref), rate in zip(steps, [2e6, 6e6, 0, 2e6, 6e6, 0]):
        if rate:
            # the CBR loses a few packets to the TCP flow's queue in both
            assert ours == pytest.approx(ref, rel=0.03)
            assert 0.95 * rate * 2 / 8000 <= ref <= rate * 2 / 8000 + 1
        else:
            # only packets still queued at the step arrive in a silent step
            assert ours < 30 and ref < 30
    for k in (0, 1):
        assert sum(steps[j][0] for j in (k, k + 3)) == pytest.approx(sum(steps[j][1] for j in (k, k + 3)), rel=0.02)


@pytest.mark.skipif(NS_SKIP, reason=NS_MISSING)
def test_ns2_silent_steps_send_nothing():
    sc = {"duration": 8, "seed": 1, "packet_size": 1000,
          "bottleneck": {"rate": "10Mbps", "delay": "20ms", "queue": "droptail", "limit": 50},
          "flows": [{"algorithm": "cbr", "steps": [[0, "2Mbps"], [3, 0]], "access_delay": "1ms"}]}
    # silent from 3 s to the end: nothing arrives after the last packet's 22 ms
    for m, expect in [({"from": 3.1, "to": 8.0}, 0), ({"from": 0.0, "to": 8.0}, 750)]:
        s = dict(sc, measure=m)
        r = ns2.run_ns2(tf.expand(s, seed=1), sample_interval_s=None)["flows"][0]
        ours = tf.run(s, seed=1).raw["flows"][0]
        assert r["packets_delivered"] == ours["packets_delivered"] == expect
    # all sent packets were delivered, none after the step
    assert r["packets_sent"] == ours["packets_sent"] == 750

"""benchmarks/vs_ns2.py's order of runs and its scaled-workload ratios (the `vs_ns2` fixture:
conftest). The simulators' children are replaced by stubs that report given CPU times, so
the test checks what the benchmark does with them, not how fast anything is."""

import json
import sys

import tcpfriendly.ns2


# CPU seconds of tcpfriendly's runs, by (repetition, flows): the host slows down between the
# two repetitions, so the medians alone would pair a fast reference with a slow scaled run
# if the workloads were run one after the other.
CPU = {(0, 4): 1.0, (0, 8): 1.5, (1, 4): 2.0, (1, 8): 2.8}
ARGS = ["--flows", "4", "--duration", "2", "--flows-scale", "8", "--scaled-duration", "2",
        "--reps", "2", "--no-ns3", "--run-json", sys.executable]


def stub_sides(vs_ns2, monkeypatch):
    """Replace both simulators' children by stubs (tcpfriendly's CPU from CPU, ns-2 9 s);
    returns the list of the calls they get, in order."""
    calls = []

    def engine_side(engine, binary, scenario, seed):
        flows = sum(g["count"] for g in scenario["flows"])
        rep = sum(1 for c in calls if c == ("tcpfriendly", flows))
        calls.append(("tcpfriendly", flows))
        t = CPU[(rep, flows)]
        return {"wall_s": t, "cpu_s": t, "peak_mb": 1.0, "delivered_packets": 1000, "events": 4000}

    def ns2_side(script, ns, timeout):
        calls.append(("ns2", script.count("Agent/TCP")))
        return {"wall_s": 9.0, "cpu_s": 9.0, "peak_mb": 20.0, "delivered_packets": 1000}

    monkeypatch.setattr(vs_ns2, "engine_side", engine_side)
    monkeypatch.setattr(vs_ns2, "ns2_side", ns2_side)
    monkeypatch.setattr(tcpfriendly.ns2, "ns2_available", lambda ns: True)
    return calls


def test_workloads_are_interleaved_and_each_repetition_gives_its_ratio(vs_ns2, monkeypatch, capsys):
    calls = stub_sides(vs_ns2, monkeypatch)
    vs_ns2.main(ARGS + ["--json"])
    report = json.loads(capsys.readouterr().out)

    # repetition by repetition, each workload's sides in turn
    assert [c[0] for c in calls] == ["tcpfriendly", "ns2"] * 4
    assert [c[1] for c in calls if c[0] == "tcpfriendly"] == [4, 8, 4, 8]
    ns2_flows = [c[1] for c in calls if c[0] == "ns2"]
    assert ns2_flows[0] == ns2_flows[2] and ns2_flows[1] == ns2_flows[3] and ns2_flows[0] < ns2_flows[1]

    ref, scaled = report["workloads"]
    assert ref["sides"]["tcpfriendly"]["all_cpu_s"] == [1.0, 2.0]
    assert scaled["sides"]["tcpfriendly"]["all_cpu_s"] == [1.5, 2.8]
    # the ratio of the medians (2.15 / 1.5), and the ratio within each repetition
    assert abs(scaled["ns_per_pkt_over_reference"] - 2.15 / 1.5) < 1e-12
    assert scaled["ns_per_pkt_over_reference_reps"] == [1.5, 1.4]
    assert abs(ref["ratio_ns2_over_tcpfriendly"]["cpu"] - 9.0 / 1.5) < 1e-12
    # and ns-2's ratio within each repetition (9 s against 1 s, then against 2 s)
    assert ref["ratio_ns2_over_tcpfriendly_reps"] == [9.0, 4.5]
    assert scaled["ratio_ns2_over_tcpfriendly_reps"] == [6.0, round(9.0 / 2.8, 4)]


def test_the_report_prints_each_ratio_with_its_spread_over_the_repetitions(vs_ns2, monkeypatch, capsys):
    stub_sides(vs_ns2, monkeypatch)
    vs_ns2.main(ARGS)
    out = capsys.readouterr().out
    # reference: ns-2 9 s against 1 s and 2 s (medians 9 / 1.5)
    assert "ratio ns-2 / tcpfriendly: CPU 6.00x, wall 6.00x (repetition by repetition 4.50-9.00x, median 6.75x)" in out
    # 8 flows against 4, repetition by repetition: 1.5 and 1.4 (medians 2.15 / 1.5)
    assert "vs the 4-flow workload: 1.433x (repetition by repetition 1.40-1.50x, median 1.45x)" in out

"""benchmarks/vs_ns2.py's ns-3 side: the workload file it writes for benchmarks/ns3/dumbbell.cc,
its report when ns-3 is missing, and (where Debian's libns3-dev is installed) a short run."""

import os
import shutil
import sys

import pytest


@pytest.fixture(scope="module")
def expanded(vs_ns2):
    import tcpfriendly
    return tcpfriendly.expand(vs_ns2.scenario_dict(3.0, 6, 7), seed=7)


def test_workload_is_numbers_one_flow_line_per_flow(vs_ns2, expanded):
    text = vs_ns2.ns3_workload(expanded)
    records = [line.split() for line in text.splitlines()]
    keys = [r[0] for r in records]
    assert keys[:9] == ["duration", "packet", "max_window", "initial_window", "min_rto", "tick",
                        "initial_rto", "bottleneck", "red"]
    for r in records:  # nothing but numbers after the key: nothing of a scenario reaches C++
        [float(x) for x in r[1:]]
    flows = [r for r in records if r[0] == "flow"]
    assert len(flows) == len(expanded["flows"]) == 6
    for r, f in zip(flows, expanded["flows"]):
        assert float(r[1]) == f["access_delay_s"] and float(r[4]) == f["start_s"]
    b = expanded["bottleneck"]
    red = next(r for r in records if r[0] == "red")
    assert int(red[1]) == b["limit_pkts"] and float(red[2]) == b["red"]["min_th_pkts"]
    assert float(red[5]) == b["red"]["max_p"] and red[6:8] == ["1", "1"]  # gentle, wait


def test_missing_ns3_is_reported_not_fatal(vs_ns2, monkeypatch):
    real_which = shutil.which
    monkeypatch.setattr(vs_ns2.shutil, "which", lambda name: None if name == "pkg-config" else real_which(name))
    got = vs_ns2.ns3_build(sys.stderr)
    assert set(got) == {"error"} and "libns3-dev" in got["error"]


def test_ns3_runs_the_same_workload(vs_ns2, expanded):
    if vs_ns2.ns3_missing():
        # CI installs it (scripts/setup.sh) and sets TCPF_REQUIRE_NS3=1: a miss there is a failure
        if os.environ.get("TCPF_REQUIRE_NS3") == "1":
            pytest.fail("ns-3 is not installed but TCPF_REQUIRE_NS3=1 (apt-get install libns3-dev)")
        pytest.skip("ns-3 is not installed (apt-get install libns3-dev)")
    built = vs_ns2.ns3_build(sys.stderr)
    assert "binary" in built, built
    r = vs_ns2.ns3_side(vs_ns2.ns3_workload(expanded), built["binary"], timeout=120)
    assert "error" not in r and not r.get("did_not_finish"), r
    assert r["events"] > r["delivered_packets"] > 0
    # the same flows, start times and bottleneck: ns-3 delivers about what the engine does
    import tcpfriendly
    ours = tcpfriendly.run(tcpfriendly.Scenario(vs_ns2.scenario_dict(3.0, 6, 7)), seed=7)
    delivered = sum(f["packets_delivered"] for f in ours.raw["flows"])
    assert 0.8 < r["delivered_packets"] / delivered < 1.25, (r["delivered_packets"], delivered)
    # a second build is the cached binary
    assert vs_ns2.ns3_build(sys.stderr) == built
    # a failure of ns-3 is its side's error record, not the end of the benchmark
    bad = vs_ns2.ns3_side("duration 1\n", built["binary"], timeout=60)
    assert set(bad) == {"error"} and "exit 2" in bad["error"] and "at least one flow" in bad["error"], bad
    assert vs_ns2.summarize([bad]) == bad

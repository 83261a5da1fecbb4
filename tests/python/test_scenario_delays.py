"""A flow group's `receiver_delay` takes the forms `access_delay` takes (a time, a range spread
evenly over the group's flows, one time per flow), end to end: the Python API, `tcpf run`, the
ns-2 exporter, and the CLI's error for a bad one."""

import json
import re

import pytest

import tcpfriendly as tf

RANGE_TOML = """\
duration = 20
seed = 3
measure = { from = 5, to = 20 }

[bottleneck]
rate = "5Mbps"
delay = "20ms"
queue = "droptail"
limit = "1bdp"

[[flows]]
count = 3
algorithm = "tcp"
recovery = "sack"
receiver_delay = "0ms..20ms"
start = "0..0.5"
"""


def test_the_python_api_expands_a_receiver_delay_range_per_flow():
    s = (tf.Scenario.dumbbell(rate="5Mbps", delay="20ms", duration=5)
         .add_flows(3, "tcp", receiver_delay="0ms..20ms")
         .add_flows(2, "tcp", receiver_delay=["7ms", "3ms"], access_delay="2ms"))
    flows = s.expand()["flows"]
    assert [f["receiver_delay_s"] for f in flows] == pytest.approx([0.0, 0.01, 0.02, 0.007, 0.003])
    assert [f["access_delay_s"] for f in flows] == pytest.approx([0.001] * 3 + [0.002] * 2)
    n = s.normalized()["flows"]
    assert (n[0]["receiver_delay"], n[1]["receiver_delay"]) == ("0..0.02", [0.007, 0.003])


def test_tcpf_run_gives_each_flow_its_own_rtt(tcpf, write_toml):
    proc = tcpf("run", write_toml(RANGE_TOML), "--json")
    assert proc.returncode == 0, proc.stderr
    rtts = [f["mean_rtt_s"] for f in json.loads(proc.stdout)["flows"]]
    # propagation RTTs 2·(1 + 20 + {0, 10, 20}) ms = 42, 62, 82 ms; the shared queue adds the
    # same delay to all three, so consecutive flows differ by about the 20 ms of extra delay
    assert rtts[0] < rtts[1] < rtts[2], rtts
    assert rtts[0] > 0.042
    for a, b in zip(rtts, rtts[1:]):
        assert b - a == pytest.approx(0.020, abs=0.004), rtts


def test_the_ns2_export_gives_each_receiver_link_its_delay(tcpf, write_toml):
    proc = tcpf("ns2", "export", write_toml(RANGE_TOML))
    assert proc.returncode == 0, proc.stderr
    links = re.findall(r"^\$ns duplex-link \$D\((\d)\) \$R2 \S+ (\S+) ", proc.stdout, re.M)
    assert [(int(i), float(d)) for i, d in links] == [(0, 0.0), (1, 0.01), (2, 0.02)]


BAD = {
    "bad unit": ('"5xs..8ms"', ["unknown time unit 'xs'"]),
    "negative": ('"-2ms"', ["[0, 1e7] s", "'-2ms'"]),
    "wrong list length": ('["1ms", "2ms"]', ["one value per flow (3); got 2"]),
    "reversed range": ('"20ms..1ms"', ["below the lower bound"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_receiver_delay_exits_2_naming_the_field_and_the_forms(tcpf, write_toml, case):
    value, fragments = BAD[case]
    path = write_toml(RANGE_TOML.replace('"0ms..20ms"', value))
    proc = tcpf("run", path)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: flows[0].receiver_delay: "), proc.stderr
    for fragment in fragments + ['"1ms..10ms"', "one time per flow"]:
        assert fragment in lines[0], (fragment, lines[0])

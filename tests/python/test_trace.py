"""Packet traces (issue 16 item 3): the scenario's [trace] table and `tcpf run --trace FILE`,
ns-2 trace lines and pcap, checked against the run's own counters."""

import os
import re
import shutil
import struct
import subprocess
from collections import defaultdict

import pytest

import tcpfriendly
from tcpfriendly.errors import ScenarioError

# 2 TCP SACK flows through a RED/ECN bottleneck with a short buffer (early marks and forced
# drops both happen), counters over the whole run so that they match the trace.
TRACE_TOML = """\
duration = 8
seed = 3
packet_size = 1000

[bottleneck]
rate = "4Mbps"
delay = "20ms"
queue = "red"
ecn = true
limit = 12

[[flows]]
count = 2
algorithm = "tcp"
recovery = "sack"
access_delay = "1ms..5ms"
start = "0..0.5"
"""

# The same without ECN, so that SACK recovery follows drops.
DROP_TOML = TRACE_TOML.replace("ecn = true\n", "")


def _run(toml, trace):
    data = tcpfriendly.Scenario.from_toml_string(toml).to_dict()
    data["trace"] = trace
    return tcpfriendly.run(data)


# ----- a minimal pcap reader (no dependency) ------------------------------------------------
def read_pcap(blob):
    """-> (link type, [(time_ns, orig_len, packet dict)]) for our Ethernet/IPv4/TCP records."""
    magic, major, minor, _, _, snap, linktype = struct.unpack("<IHHiIII", blob[:24])
    assert magic == 0xA1B23C4D and (major, minor) == (2, 4) and snap == 65535
    out, off = [], 24
    while off < len(blob):
        sec, nsec, incl, orig = struct.unpack("<IIII", blob[off:off + 16])
        frame = blob[off + 16:off + 16 + incl]
        assert len(frame) == incl
        off += 16 + incl
        assert frame[12:14] == b"\x08\x00"
        ip = frame[14:]
        assert ip[0] == 0x45 and ip[9] in (6, 17)
        total = struct.unpack(">H", ip[2:4])[0]
        assert orig == 14 + total
        s = sum(struct.unpack(">10H", ip[:20]))
        while s > 0xFFFF:
            s = (s & 0xFFFF) + (s >> 16)
        assert s == 0xFFFF, "bad IPv4 header checksum"
        if ip[9] == 17:  # a UDP source's datagram: its headers only
            sport, dport, length, _ = struct.unpack(">HHHH", ip[20:28])
            assert incl == 14 + 20 + 8 and length == total - 20
            out.append((sec * 10**9 + nsec, orig, {
                "udp": True, "src": ip[12:16], "dst": ip[16:20], "sport": sport, "dport": dport,
                "payload": total - 28}))
            continue
        tcp = ip[20:]
        sport, dport, seq, ack, off_flags = struct.unpack(">HHIIH", tcp[:14])
        hlen = (off_flags >> 12) * 4
        assert 20 <= hlen <= 60 and incl == 14 + 20 + hlen
        opts, sack, ts = tcp[20:hlen], [], None
        i = 0
        while i < len(opts):
            kind = opts[i]
            if kind == 1:
                i += 1
                continue
            length = opts[i + 1]
            body = opts[i + 2:i + length]
            if kind == 8:
                ts = struct.unpack(">II", body)
            elif kind == 5:
                sack = [struct.unpack(">II", body[j:j + 8]) for j in range(0, len(body), 8)]
            i += length
        out.append((sec * 10**9 + nsec, orig, {
            "src": ip[12:16], "dst": ip[16:20], "ecn": ip[1] & 3, "sport": sport, "dport": dport,
            "seq": seq, "ack": ack, "flags": off_flags & 0xFF, "payload": total - 20 - hlen,
            "sack": sack, "ts": ts}))
    return linktype, out


# ----- ns-2 trace -------------------------------------------------------------------------
def test_ns2_trace_counts_match_the_run():
    res = _run(DROP_TOML, {"format": "ns2"})
    assert res.trace is not None
    lines = [ln.split() for ln in res.trace.decode().splitlines()]
    assert lines and all(len(f) == 12 and f[0] in "+-rd" for f in lines)
    times = [float(f[1]) for f in lines]
    assert times == sorted(times) and times[-1] <= 8
    links = res.links.set_index("name")
    # The bottleneck is node 0 -> node 1 in a dumbbell: its drops are the trace's d lines there.
    drops = sum(1 for f in lines if f[0] == "d" and (f[2], f[3]) == ("0", "1"))
    assert drops == links.loc["bottleneck", "drops"] > 0
    flows = res.flows.set_index("id")
    for fid in (0, 1):
        data = [f for f in lines if f[7] == str(fid) and f[4] == "tcp"]
        src, dst = data[0][8].split(".")[0], data[0][9].split(".")[0]
        # Sent: data entering the sender's first link.
        sent = sum(1 for f in data if f[0] == "+" and f[2] == src)
        assert sent == flows.loc[fid, "packets_sent"]
        # Delivered: the in-order prefix of what the sink received.
        got = {int(f[10]) for f in data if f[0] == "r" and f[3] == dst}
        prefix = 0
        while prefix in got:
            prefix += 1
        assert prefix == flows.loc[fid, "packets_delivered"]
        # Every + has its - or d, unless still queued at the end (at most the bottleneck's
        # 12 packets plus one on each access link).
        plus = sum(1 for f in data if f[0] == "+")
        minus_or_drop = sum(1 for f in data if f[0] in "-d")
        assert 0 <= plus - minus_or_drop <= 12 + 2


def test_a_one_flow_bottleneck_counts_exactly_the_arrivals_in_the_window():
    """With one flow its bottleneck is entered only from the flow's access link; it is reported,
    so it is not folded into that link (which would admit packets ahead of their arrival and
    count, at the window's start and end, packets still on the access link): its arrivals in
    the measurement window are exactly the trace's + lines there in [from, to)."""
    # A 10-ms access link holds ~5 packets in flight at the window's start; the flow stops
    # before its end.
    toml = DROP_TOML.replace("count = 2", "count = 1\nstop = 6.5").replace(
        'access_delay = "1ms..5ms"', 'access_delay = "10ms"').replace(
        "duration = 8\n", "duration = 8\nmeasure = { from = 2.0003, to = 7.5 }\n")
    res = _run(toml, {"format": "ns2"})
    lines = [ln.split() for ln in res.trace.decode().splitlines()]
    plus = [float(f[1]) for f in lines if f[0] == "+" and (f[2], f[3]) == ("0", "1")]
    inside = sum(1 for t in plus if 2.0003 <= t < 7.5)
    links = res.links.set_index("name")
    assert 0 < inside < len(plus)
    assert links.loc["bottleneck", "arrivals"] == inside


def test_ns2_filters_keep_only_the_chosen_flow_and_link():
    res = _run(DROP_TOML, {"format": "ns2", "flows": [1], "links": ["bottleneck"]})
    lines = [ln.split() for ln in res.trace.decode().splitlines()]
    assert lines
    assert {f[7] for f in lines} == {"1"}
    assert {(f[2], f[3]) for f in lines} == {("0", "1")}
    assert {f[4] for f in lines} == {"tcp"}


# ----- pcap --------------------------------------------------------------------------------
def _flows_of(records):
    per = defaultdict(lambda: {"data": [], "acks": []})
    for t, orig, p in records:
        if p["payload"] > 0:
            per[bytes(p["src"])]["data"].append((t, p))
        else:
            per[bytes(p["dst"])]["acks"].append((t, p))
    return per


def test_pcap_headers_and_sequence_numbers():
    res = _run(DROP_TOML, {"format": "pcap"})
    linktype, records = read_pcap(res.trace)
    assert linktype == 1
    times = [t for t, _, _ in records]
    assert times == sorted(times)
    per = _flows_of(records)
    assert len(per) == 2
    flows = res.flows.sort_values("id")
    sacked = 0
    for (host, pk), (_, row) in zip(sorted(per.items()), flows.iterrows()):
        data, acks = pk["data"], pk["acks"]
        # Captured at the sender: every data packet it sent, retransmissions included.
        assert len(data) == row["packets_sent"]
        assert all(p["payload"] == 1000 and p["ecn"] == 0 for _, p in data)
        seqs = [p["seq"] for _, p in data]
        assert len(set(seqs)) + row["retransmissions"] == len(seqs)
        assert (max(seqs) - 1) % 1000 == 0
        # Cumulative ACKs never go back; data timestamps are the send times.
        ack_nos = [p["ack"] for _, p in acks]
        assert ack_nos == sorted(ack_nos) and ack_nos[-1] > 1
        assert all(p["ts"][0] == t // 1000 for t, p in data)
        # SACK blocks lie above the cumulative ACK, on packet boundaries.
        for _, p in acks:
            for left, right in p["sack"]:
                assert p["ack"] < left < right and (left - 1) % 1000 == 0
            sacked += bool(p["sack"])
    assert sacked > 0, "SACK recovery with losses should put SACK blocks on the ACKs"


def test_pcap_carries_ecn_bits_through_red_ecn():
    res = _run(TRACE_TOML, {"format": "pcap", "links": ["bottleneck", "bottleneck_reverse"]})
    _, records = read_pcap(res.trace)
    data = [p for _, _, p in records if p["payload"] > 0]
    acks = [p for _, _, p in records if p["payload"] == 0]
    assert data and acks
    # Data is ECN-capable (ECT(0)); a packet the bottleneck marks shows CE as it leaves the
    # link's entrance: one CE packet per mark the run counted there.
    assert {p["ecn"] for p in data} == {2, 3}
    marks = res.links.set_index("name").loc["bottleneck", "marks"]
    assert sum(p["ecn"] == 3 for p in data) == marks > 0
    assert any(p["flags"] & 0x40 for p in acks), "no ECN-echo on any ACK"
    assert any(p["flags"] & 0x80 for p in data), "no CWR on any data packet"


def test_pcap_holds_the_udp_sources_datagrams(tmp_path):
    # A CBR source beside a TCP flow: its datagrams are in the capture (IPv4 + UDP headers,
    # the original length its size on the wire), one per datagram it sent; tshark reads them.
    toml = DROP_TOML.replace("count = 2", "count = 1") + (
        '\n[[flows]]\ncount = 1\nalgorithm = "cbr"\nrate = "1Mbps"\npacket_size = 500\n')
    path = tmp_path / "u.pcap"
    res = _run(toml, {"format": "pcap", "file": str(path)})
    _, records = read_pcap(res.trace)
    udp = [(t, orig, p) for t, orig, p in records if p.get("udp")]
    cbr = res.flows.set_index("algorithm").loc["cbr"]
    assert len(udp) == cbr["packets_sent"] > 0
    assert all(orig == 14 + 500 and p["payload"] == 500 - 28 and (p["sport"], p["dport"]) == (40000, 5001)
               for _, orig, p in udp)
    assert {p["src"][3] for _, _, p in udp} == {2}      # flow 1's sender, 10.0.0.2
    assert sum(1 for _, _, p in records if not p.get("udp") and p["payload"] > 0) == \
        res.flows.set_index("algorithm").loc["tcp", "packets_sent"]
    if shutil.which("tshark"):
        out = subprocess.run(["tshark", "-n", "-r", str(path), "-Y", "udp && !_ws.malformed"],
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert len(out.stdout.splitlines()) == len(udp)


def _reader(name):
    """Skip without the trace reader `name`, except in CI (TCPF_REQUIRE_TRACE_READERS=1, set by
    .ci/run; scripts/setup.sh installs Debian's tshark and tcptrace), where it must be there."""
    if shutil.which(name) is None:
        if os.environ.get("TCPF_REQUIRE_TRACE_READERS") == "1":
            pytest.fail(f"{name} is not installed (scripts/setup.sh installs it)")
        pytest.skip(f"{name} is not installed (scripts/setup.sh installs it with apt-get)")


def test_tshark_reads_the_pcap(tmp_path):
    _reader("tshark")
    path = tmp_path / "t.pcap"
    res = _run(TRACE_TOML, {"format": "pcap", "file": str(path)})
    assert path.read_bytes() == res.trace
    flows = res.flows
    base = ["tshark", "-n", "-r", str(path)]
    every = subprocess.run(base, capture_output=True, text=True, timeout=120)
    assert every.returncode == 0, every.stderr
    assert "Malformed" not in every.stdout

    def count(expr):
        out = subprocess.run(base + ["-Y", expr], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        return len(out.stdout.splitlines())

    assert count("_ws.malformed || _ws.expert.severity == error") == 0
    assert count("tcp.len > 0") == flows["packets_sent"].sum()
    # Captured at the sender, every segment below the highest sequence number sent is a
    # retransmission; tshark calls those sent within 3 ms of the highest one "out-of-order" (its
    # heuristic for captures taken mid-path), so they count here too.
    retx = count("tcp.len > 0 && (tcp.analysis.retransmission || tcp.analysis.fast_retransmission"
                 " || tcp.analysis.spurious_retransmission || tcp.analysis.out_of_order)")
    assert retx == flows["retransmissions"].sum() > 0


def test_tcptrace_reads_the_pcap(tmp_path):
    _reader("tcptrace")
    path = tmp_path / "t.pcap"
    res = _run(TRACE_TOML, {"format": "pcap", "file": str(path)})
    out = subprocess.run(["tcptrace", "-l", "-n", str(path)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr

    def column(label, side=0):  # side 0: sender -> receiver, 1: back; one per connection
        return [int(re.findall(re.escape(label) + r":\s+(\d+)", ln)[side])
                for ln in out.stdout.splitlines() if ln.strip().startswith(label + ":")]

    flows = res.flows.sort_values("id")
    assert column("actual data pkts") == list(flows["packets_sent"])
    assert column("rexmt data pkts") == list(flows["retransmissions"])
    assert "hardware dups" not in out.stdout  # (a line tcptrace prints only when nonzero)
    assert all(n > 0 for n in column("sack pkts sent", 1))


# ----- files, limits, errors ---------------------------------------------------------------
def test_cli_trace_writes_the_file(tcpf, write_toml, tmp_path):
    path = write_toml(DROP_TOML)
    out = tmp_path / "run.tr"
    done = tcpf("run", str(path), "--trace", str(out))
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert text.startswith("+ ") and f"wrote {out}" in done.stdout
    pcap = tmp_path / "run.pcap"
    done = tcpf("run", str(path), "--trace", str(pcap))
    assert done.returncode == 0, done.stderr
    assert read_pcap(pcap.read_bytes())[0] == 1


def test_trace_file_refuses_a_symlink(tmp_path):
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "t.tr"
    os.symlink(target, link)
    with pytest.raises(ScenarioError) as e:
        _run(DROP_TOML, {"file": str(link)})
    assert e.value.field == "trace.file"
    assert target.read_text() == "keep"


def test_the_size_limit_exits_2_naming_the_field(tcpf, write_toml, tmp_path):
    path = write_toml(DROP_TOML + '\n[trace]\nmax_bytes = "20kB"\n')
    out = tmp_path / "big.tr"
    done = tcpf("run", str(path), "--trace", str(out))
    assert done.returncode == 2
    assert "trace.max_bytes" in done.stderr and "Traceback" not in done.stderr
    assert not out.exists()


@pytest.mark.parametrize("table, field", [
    ({"format": "pcapng"}, "trace.format"),
    ({"flows": [2]}, "trace.flows[0]"),
    ({"links": ["nowhere"]}, "trace.links[0]"),
    ({"max_bytes": 10}, "trace.max_bytes"),
    ({"file": ""}, "trace.file"),
    ({"colour": "red"}, "trace.colour"),
])
def test_bad_trace_tables_name_the_field(table, field):
    with pytest.raises(ScenarioError) as e:
        _run(DROP_TOML, table)
    assert e.value.field == field


def test_untraced_runs_are_unchanged():
    plain = tcpfriendly.run(tcpfriendly.Scenario.from_toml_string(DROP_TOML))
    traced = _run(DROP_TOML, {"format": "ns2"})
    assert plain.trace is None
    assert plain.raw["flows"] == traced.raw["flows"] and plain.raw["links"] == traced.raw["links"]


def test_the_normalized_trace_table_round_trips():
    import json

    from tcpfriendly.scenario import _call_engine, native

    data = tcpfriendly.Scenario.from_toml_string(DROP_TOML).to_dict()
    data["trace"] = {"file": "x.pcap", "links": ["bottleneck"], "max_bytes": "1MB"}
    once = _call_engine(native().normalize, json.dumps(data))
    assert json.loads(once)["trace"] == {"format": "pcap", "file": "x.pcap",
                                         "links": ["bottleneck"], "max_bytes": 1000000}
    assert _call_engine(native().normalize, once) == once

"""Memory has a bound (issue 17 item 3): hostile but valid-looking inputs either end quickly
with exit 2 and one line naming the field, or complete in bounded memory; a run that outgrows
`limits.memory` fails alone (a normal exception, never an abort), so a sweep completes its
other points. docs/scenario.md, "Resource limits".

Each CLI run is a child process under a 3 GB address-space limit (so that a regression aborts
the child instead of exhausting the machine); its peak RSS and CPU time come from wait4 in a small
launcher that forks it (see `tcpf`: measured on a child of pytest itself, the peak includes pytest's). An
input that is refused must be refused in < 5 s of CPU (issue 17's acceptance; they take ~0.5 s,
mostly interpreter start-up). A legitimate input that completes is checked for its memory; its
time is bounded only by the watchdog (a run killed at `timeout` fails the test), since how fast
a valid run completes is a speed question for benchmarks/, not for a test on a shared machine.
"""

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import tcpfriendly as tf
from tcpfriendly.sweep import Sweep

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TCPF = [sys.executable, "-m", "tcpfriendly.cli"]
GB = 1 << 30
ADDRESS_SPACE = 3 * GB
MAX_RSS = 2 * GB


# The measured run is a grandchild: a small launcher forks it, limits its address space and
# reports its rusage. A child forked straight from pytest would report pytest's own RSS as its
# peak (Linux keeps the pre-exec high-water mark across exec: a `true` forked from a 400 MB
# process reports ~407 MB), so the bounds below tested the test runner's memory as much as
# tcpf's (a flood run of 166 MB failed the 300 MiB bound at 302 MiB late in a full pytest run).
_LAUNCHER = r"""
import os, resource, signal, sys
limit, report = int(sys.argv[1]), sys.argv[2]
pid = os.fork()
if pid == 0:
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(sys.argv[3], sys.argv[3:])
_, status, ru = os.wait4(pid, 0)
with open(report, "w") as f:
    f.write(f"{ru.ru_maxrss} {ru.ru_utime + ru.ru_stime}")
if os.WIFSIGNALED(status):
    signal.signal(os.WTERMSIG(status), signal.SIG_DFL)
    os.kill(os.getpid(), os.WTERMSIG(status))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def tcpf(*args, timeout=120):
    """(returncode, stdout, stderr, peak RSS in bytes, CPU seconds, wall seconds) of a tcpf run
    under the address-space limit (the run's own rusage, from wait4 in the launcher)."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err, \
            tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "rusage")
        t0 = time.monotonic()
        p = subprocess.Popen([sys.executable, "-c", _LAUNCHER, str(ADDRESS_SPACE), report] + TCPF + list(args),
                             stdout=out, stderr=err, cwd=ROOT, start_new_session=True)
        watchdog = threading.Timer(timeout, lambda: os.killpg(p.pid, signal.SIGKILL))
        watchdog.start()
        try:
            p.wait()
        finally:
            watchdog.cancel()
        wall = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        if os.path.exists(report):
            with open(report) as f:
                maxrss_kb, cpu = f.read().split()
            rss, cpu = int(maxrss_kb) * 1024, float(cpu)
        else:  # the launcher itself was killed (the watchdog): nothing measured
            rss, cpu = 0, float("nan")
        return p.returncode, out.read(), err.read(), rss, cpu, wall


def scenario(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def one_error_line(err, rc):
    lines = err.strip().splitlines()
    assert rc == 2, err[-2000:]
    assert len(lines) == 1 and lines[0].startswith("error: "), err[-2000:]
    return lines[0]


def bounded(rc, err, rss, max_rss=MAX_RSS):
    """A legitimate run completed (not killed by the watchdog) within ``max_rss`` of memory."""
    assert rc == 0, err[-2000:]
    assert rss < max_rss, f"peak RSS {rss / 2**20:.0f} MiB"


DUMBBELL = """\
duration = {duration}
[bottleneck]
rate = "15Mbps"
delay = "20ms"
"""


def test_gaimd_alpha_1e308_runs_with_the_window_capped(tmp_path):
    # Was 23.7 GB before the OOM killer: the window grew without bound.
    s = scenario(tmp_path, DUMBBELL.format(duration=60) + """
[[flows]]
algorithm = "gaimd"
params = { alpha = 1e308, beta = 0.5 }
""")
    rc, out, err, rss, _, _ = tcpf("run", s, "--json")
    bounded(rc, err, rss, max_rss=600 << 20)
    flow = json.loads(out)["flows"][0]
    assert 1 <= flow["mean_cwnd"] <= 1 << 20  # the default window cap


def test_history_k_12_runs_with_the_window_capped(tmp_path):
    # k = 12 is inside the documented range (k > -1). Was > 4 GB: not 2^k state but the per-ACK
    # increase alpha*(W - w0)^-k / W, which for large k and W near w0 throws the window to
    # infinity (alpha itself grows as w_max^12); the default window cap bounds it.
    s = scenario(tmp_path, DUMBBELL.format(duration=60) + """
[[flows]]
algorithm = "history"
params = { k = 12, l = 1 }
""")
    rc, out, err, rss, _, _ = tcpf("run", s, "--json")
    bounded(rc, err, rss, max_rss=600 << 20)
    assert json.loads(out)["flows"][0]["mean_cwnd"] <= 1 << 20


CBR = DUMBBELL + """
[[flows]]
count = {count}
algorithm = "cbr"
rate = "{rate}"
"""


def test_an_unresponsive_flood_is_held_by_its_access_queue(tmp_path):
    # Out of range: refused naming the field.
    rc, _, err, _, _, wall = tcpf("run", scenario(tmp_path, CBR.format(duration=1, count=1, rate="1e15bps")))
    assert "flows[0].rate: must be a rate in [1 b/s, 1e12 b/s]" in one_error_line(err, rc)
    # Two of the fastest valid sources behind 15 Mb/s (access links 150 Mb/s): 12.5 M packets in
    # 0.05 s piled up on the unlimited access links (peak RSS ~500 MB); now each holds 2^20.
    rc, _, err, rss, _, _ = tcpf("run", scenario(tmp_path, CBR.format(duration=0.05, count=2, rate="1000Gbps")))
    bounded(rc, err, rss, max_rss=300 << 20)


def test_a_long_flood_stays_flat(tmp_path):
    # Four 1 Gb/s sources behind 15 Mb/s for 30 s: each access link's backlog grew by ~3.5 MB
    # per simulated second (peak RSS ~510 MB at 30 s, without end); now it stops at 2^20 packets.
    rc, _, err, rss, _, _ = tcpf("run", scenario(tmp_path, CBR.format(duration=30, count=4, rate="1Gbps")))
    bounded(rc, err, rss, max_rss=350 << 20)


@pytest.mark.parametrize("interval,count", [(1e-5, 4), (1e-4, 4)])
def test_too_many_timeseries_samples_are_refused_up_front(tmp_path, interval, count):
    # 10^7 and 10^6 samples over 4 flows (+ 2 links): the latter was already 2.5 GB.
    s = scenario(tmp_path, f"duration = 100\ntimeseries = {interval}\n" + DUMBBELL.format(duration=100).split("\n", 1)[1]
                 + f"\n[[flows]]\ncount = {count}\nalgorithm = \"tcp\"\n")
    rc, _, err, rss, cpu, wall = tcpf("run", s)
    line = one_error_line(err, rc)
    assert line.startswith("error: timeseries: ") and "more than 2000000" in line, line
    assert cpu < 5 and wall < 60


def test_the_memory_guard_ends_the_run_naming_the_setting(tmp_path):
    # 40 unresponsive 1 Gb/s sources, each filling its own access queue (2^20 packets, ~34 MB
    # each): the run outgrows limits.memory and stops with exit 2, one line.
    s = scenario(tmp_path, CBR.format(duration=60, count=40, rate="1Gbps") + "[limits]\nmemory = \"64MB\"\n")
    rc, _, err, rss, cpu, wall = tcpf("run", s)
    line = one_error_line(err, rc)
    assert line.startswith("error: limits.memory: the run outgrew its memory limit of 61 MiB"), line
    assert "packets queued and in flight" in line
    assert rss < 500 << 20 and cpu < 5 and wall < 60


def test_the_default_memory_guard_stops_a_flood_of_floods(tmp_path):
    # 100 such sources need 3.4 GB of access queues: the default 1 GiB guard stops the run.
    s = scenario(tmp_path, CBR.format(duration=60, count=100, rate="1Gbps"))
    rc, _, err, rss, cpu, wall = tcpf("run", s, timeout=300)
    line = one_error_line(err, rc)
    assert line.startswith("error: limits.memory: the run outgrew its memory limit of 1 GiB"), line
    assert rss < MAX_RSS, f"peak RSS {rss / 2**20:.0f} MiB"
    assert wall < 120


@pytest.mark.parametrize("table,field,message", [
    ("[limits]\nmemory = \"1000GB\"", "limits.memory", "must be in [1048576, 68719476736] bytes"),
    ("[limits]\nmemory = \"12 parsecs\"", "limits.memory", "unknown memory unit"),
    ("[limits]\naccess_queue = 0", "limits.access_queue", "must be a whole number in [1, 16777216]"),
    ("[limits]\nwindow = 5", "limits.window", "unknown"),
])
def test_limits_are_validated_naming_the_field(tmp_path, table, field, message):
    s = scenario(tmp_path, CBR.format(duration=1, count=1, rate="1Mbps") + table + "\n")
    rc, _, err, _, _, _ = tcpf("run", s)
    line = one_error_line(err, rc)
    assert line.startswith(f"error: {field}") and message in line, line


def test_limits_normalise_only_when_given():
    base = {"duration": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms"}, "flows": [{"algorithm": "tcp"}]}
    assert "limits" not in tf.normalize(base)
    n = tf.normalize({**base, "limits": {"memory": "512MiB"}})
    assert n["limits"] == {"memory": 512 << 20, "access_queue": 1 << 20}
    assert tf.normalize(n) == n


POISON = """\
duration = 3
[limits]
memory = "4MB"
[bottleneck]
rate = "15Mbps"
delay = "20ms"
[[flows]]
count = 2
algorithm = "cbr"
rate = "5Mbps"
"""


def test_a_run_over_its_memory_limit_raises_and_a_sweep_completes_the_others(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(POISON)
    with pytest.raises(tf.ScenarioError) as e:
        tf.run(tf.Scenario.from_toml_string(POISON.replace('"5Mbps"', '"1Gbps"')))
    assert e.value.field == "limits.memory"
    res = Sweep(str(path), axes={"flows[0].rate": ["5Mbps", "1Gbps", "10Mbps"]}, seeds=1).run(
        out=tmp_path / "o", workers=2, quiet=True)
    assert res.ran == 2 and len(res.failures) == 1
    assert "limits.memory: the run outgrew its memory limit" in res.failure_label(0)
    t = res.table
    ok = t[t["status"] == "ok"]
    assert sorted(ok["flows[0].rate"].unique().tolist()) == ["10Mbps", "5Mbps"]
    bad = t[t["status"] == "failed"]
    assert bad["flows[0].rate"].unique().tolist() == ["1Gbps"]
    assert all("limits.memory" in e for e in bad["error"])

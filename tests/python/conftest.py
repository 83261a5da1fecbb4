"""Shared fixtures: a small scenario (runs in well under a second), a `tcpf` runner and the
benchmark script benchmarks/vs_ns2.py as a module."""

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

# 2 TCP SACK + 2 GAIMD(0.31, keep 0.875) flows, 5 Mbps / 20 ms RED, 10 simulated seconds.
SMALL_TOML = """\
duration = 10
seed = 7
packet_size = 1000
measure = { from = 2, to = 10 }

[bottleneck]
rate = "5Mbps"
delay = "20ms"
queue = "red"
limit = "2.5bdp"

[[flows]]
count = 2
algorithm = "tcp"
recovery = "sack"
access_delay = "1ms..5ms"
start = "0..1"

[[flows]]
count = 2
algorithm = "gaimd"
params = { alpha = 0.31, keep = 0.875 }
access_delay = "1ms..5ms"
start = "0..1"
"""

FLOW_FIELDS = ["id", "group", "algorithm", "params", "direction", "throughput_bps", "goodput_bps",
               "packets_sent", "packets_delivered", "retransmissions", "loss_events", "timeouts",
               "loss_event_rate", "mean_rtt_s", "mean_cwnd"]
LINK_FIELDS = ["name", "utilization", "drops", "marks", "mean_queue_pkts"]


def _tcpf_command():
    script = Path(sys.executable).with_name("tcpf")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "tcpfriendly.cli"]


def default_sigint():
    """``preexec_fn`` for a child that a test interrupts with SIGINT: the default disposition,
    as under a terminal. A suite started in the background by a non-interactive shell (``cmd &``,
    ``nohup``) inherits SIGINT ignored, and an ignored SIGINT stays ignored across exec (Python
    then installs no KeyboardInterrupt handler), so the child would never see the test's Ctrl-C."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="session")
def tcpf():
    """Run the `tcpf` console script: tcpf("run", path, "--json") -> CompletedProcess."""
    base = _tcpf_command()
    env = dict(os.environ)
    env.pop("TCPF_TRACEBACK", None)

    def call(*args, timeout=120):
        return subprocess.run(base + [str(a) for a in args], capture_output=True, text=True,
                              timeout=timeout, env=env, cwd=str(REPO))

    return call


@pytest.fixture
def small_toml():
    return SMALL_TOML


@pytest.fixture
def write_toml(tmp_path):
    """write_toml(text, name="s.toml") -> path of a scenario file in a fresh temp dir."""

    def write(text, name="s.toml"):
        path = tmp_path / name
        path.write_text(text)
        return path

    return write


@pytest.fixture
def small_path(write_toml):
    return write_toml(SMALL_TOML)


def load_script(relpath: str):
    """A script of the repository (scripts/, benchmarks/: not part of the package) as a module."""
    path = REPO / relpath
    spec = importlib.util.spec_from_file_location(path.stem + "_under_test", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def vs_ns2():
    """benchmarks/vs_ns2.py as a module."""
    return load_script("benchmarks/vs_ns2.py")

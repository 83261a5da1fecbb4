#!/usr/bin/env python3
"""tcpfriendly against ns-2 2.35 (and ns-3 when installed): wall and CPU time, cost per delivered packet, peak memory.

Reference workload (jin2001 Figs. 14-17 setting): dumbbell 60 Mbps / 50 ms, RED with jin2001's
Table 4 settings (limit 2.5 x BDP, min_th 0.15 limit, max_th 0.5 limit, q_weight 0.002,
max_p 0.1, gentle, wait), 16 + 16 SACK flows (two groups of standard TCP) with access delays
spread over 1-10 ms and starts in the first second, 1000-byte packets, max window 128,
500 simulated seconds. Scaled workloads: the same with 320 / 1 000 / 3 200 flows and the
bottleneck rate scaled with the flows (60 Mbps x flows / 32), `--scaled-duration` seconds.

Both simulators run in this invocation on the same expanded scenario
(`tcpfriendly.expand` -> `tcpfriendly.ns2.export_tcl`), each as a child process timed with
`os.wait4`: wall time, CPU time (user + system) and peak resident memory of the child.
tcpfriendly's child is the `run_json` example of tcpf-core (the engine without Python: scenario
JSON on stdin, the result JSON of `tcpf run --json` on stdout), built profile-guided as
scripts/setup.sh builds the extension (scripts/pgo.py; `--no-pgo`: the plain release build;
the two give identical results), or with `--engine python` a
Python interpreter calling `tcpfriendly.run` (its CPU time then includes start-up and imports).
ns-2's child is `ns` on the exported script (start-up, Tcl, route computation, simulation),
without the Tcl cwnd/RTT sampler; it is killed after `--timeout` seconds and reported as
"did not finish". Sides alternate (A B A B ...) for `--reps` repetitions, the workloads are
interleaved too (each repetition runs every workload), and medians are printed.
ns-3, when installed (Debian's libns3-dev: pkg-config's ns3-core and a C++ compiler), is a third
side: benchmarks/ns3/dumbbell.cc, built once against it (target/ns3/), runs the same expanded
scenario, read as a file of numbers (NewReno + SACK with classic recovery, RED queue discs, no
delayed ACKs); `--ns3-reps` runs of it (1: it takes minutes where the others take seconds),
killed after `--ns3-timeout` seconds (`--timeout`'s value unless given); `--no-ns3` leaves it out.

    .venv/bin/python benchmarks/vs_ns2.py                   # reference + 320 / 1000 / 3200 flows
    .venv/bin/python benchmarks/vs_ns2.py --quick           # a short version (~1 min)
    .venv/bin/python benchmarks/vs_ns2.py --flows-scale ''  # the reference workload only
    .venv/bin/python benchmarks/vs_ns2.py --duration 100 --flows 8 --json
    .venv/bin/python benchmarks/vs_ns2.py --baseline OLD/run_json --no-ns2   # engine A/B
    .venv/bin/python benchmarks/vs_ns2.py --flows-scale '' --no-ns2 \
        --baseline target/release/examples/run_json       # profile-guided against plain
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, NoReturn, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.append(os.path.join(ROOT, "python"))  # fallback when not installed

RATE_BPS = 60e6
REF_FLOWS = 32
DELAY_S = 0.05
PACKET = 1000
RUN_JSON = os.path.join(ROOT, "target", "release", "examples", "run_json")
# The profile-guided build (scripts/pgo.py), the one scripts/setup.sh builds the extension as.
RUN_JSON_PGO = os.path.join(ROOT, "target", "pgo", "use", "release", "examples", "run_json")


def scenario_dict(duration: float, flows: int, seed: int, rate_bps: float = RATE_BPS) -> Dict[str, Any]:
    """The reference workload as a scenario dict (TOML structure)."""
    half = flows // 2
    groups = [half, flows - half]
    return {
        "duration": duration,
        "seed": seed,
        "packet_size": PACKET,
        "max_window": 128,
        "bottleneck": {
            "rate": f"{rate_bps / 1e6:g}Mbps", "delay": "50ms", "queue": "red", "limit": "2.5bdp",
            # min_th / max_th default to 0.15 / 0.5 of the limit (jin2001 Table 4)
            "red": {"q_weight": 0.002, "max_p": 0.1, "gentle": True, "wait": True},
        },
        "flows": [
            {"count": n, "algorithm": "tcp", "recovery": "sack",
             "access_delay": "1ms..10ms", "start": "0..1"}
            for n in groups if n > 0
        ],
    }


def fallback_expanded(duration: float, flows: int, seed: int, rate_bps: float = RATE_BPS) -> Dict[str, Any]:
    """Expanded scenario written out by hand, for when the compiled engine is not available.
    Mirrors the engine's expansion: access delays evenly spread per group, starts uniform in
    [0, 1), limit 2.5 x BDP with BDP from the mean two-way propagation delay."""
    rng = random.Random(seed)
    half = flows // 2
    out, delays = [], []
    fid = 0
    for g, n in enumerate([half, flows - half]):
        for k in range(n):
            d = 0.001 + 0.009 * (k / (n - 1) if n > 1 else 0.5)
            delays.append(d)
            out.append({"id": fid, "group": g, "kind": "tcp", "algorithm": "tcp", "params": {},
                        "recovery": "sack", "direction": "forward", "access_delay_s": d,
                        "receiver_delay_s": 0.0, "access_rate_bps": 10 * rate_bps,
                        "start_s": rng.random(), "stop_s": None, "ecn": False})
            fid += 1
    rtt = sum(2 * (d + DELAY_S) for d in delays) / len(delays)
    limit = round(2.5 * rate_bps * rtt / (8 * PACKET))
    return {
        "seed": seed, "duration_s": duration, "measure": {"from_s": 0.0, "to_s": duration},
        "packet_size": PACKET, "max_window": 128,
        "tcp": {"initial_window": 2, "tick_s": 0.01, "min_rto_s": 0.2, "initial_rto_s": 3.0,
                "max_rto_s": 60.0, "delayed_ack": False, "delack_timeout_s": 0.1, "ack_size": 40},
        "bottleneck": {"rate_bps": rate_bps, "delay_s": DELAY_S, "queue": "red", "limit_pkts": limit,
                       "ecn": False, "loss": None,
                       "red": {"min_th_pkts": 0.15 * limit, "max_th_pkts": 0.5 * limit,
                               "q_weight": 0.002, "max_p": 0.1, "gentle": True, "wait": True,
                               "mean_pkt_size": PACKET}},
        "flows": out, "scenario": {},
    }


# ---------------------------------------------------------------------------------------------
# Children


# A child's ru_maxrss starts at the RSS of the process it was forked from (Linux records the
# forked copy's high-water mark at exec), i.e. this Python process with tcpfriendly and its
# dependencies imported (~100 MB). GNU time, forked by us but small itself, forks the measured
# program and reports that program's own peak; its CPU time reaches us through wait4 (a wait4
# on `time` includes the child it waited for).
GNU_TIME = "/usr/bin/time"


def peak_method() -> str:
    if os.access(GNU_TIME, os.X_OK):
        return "ru_maxrss of the simulator process (via GNU time)"
    return ("ru_maxrss of the child, an upper bound: it includes this script's RSS at fork "
            "(install GNU time for the exact figure)")


def run_child(argv: List[str], stdin_text: str = "", cwd: Optional[str] = None,
              timeout: Optional[float] = None) -> Dict[str, Any]:
    """Run `argv` with `stdin_text` on stdin; wall time, CPU time (user + system, from
    `os.wait4`) and peak RSS of the child, its stdout and stderr. Killed after `timeout` s."""
    with tempfile.TemporaryFile("w+") as fin, tempfile.TemporaryFile("w+") as fout, \
            tempfile.TemporaryFile("w+") as ferr, tempfile.NamedTemporaryFile("r") as fpeak:
        fin.write(stdin_text)
        fin.flush()
        fin.seek(0)
        gnu_time = os.access(GNU_TIME, os.X_OK)
        if gnu_time:
            argv = [GNU_TIME, "-q", "-f", "%M", "-o", fpeak.name, *argv]
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=fin, stdout=fout, stderr=ferr, cwd=cwd,
                                start_new_session=True)
        killed, done = threading.Event(), threading.Event()

        def kill() -> None:
            # Kill the simulator under GNU time first, so that time reaps it and its CPU time
            # until then still reaches us; the whole group if that is not possible.
            killed.set()
            try:
                with open(f"/proc/{proc.pid}/task/{proc.pid}/children") as fh:
                    kids = [int(k) for k in fh.read().split()]
            except OSError:
                kids = []
            for k in kids if gnu_time else []:
                try:
                    os.kill(k, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            if not (gnu_time and kids) or not done.wait(5):
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

        timer = threading.Timer(timeout, kill) if timeout else None
        if timer:
            timer.start()
        try:
            _, status, ru = os.wait4(proc.pid, 0)
            done.set()
        finally:
            if timer:
                timer.cancel()
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        fout.seek(0)
        ferr.seek(0)
        # ru_maxrss is in KiB on Linux, bytes on macOS; GNU time's %M in KiB
        peak_mb = ru.ru_maxrss / (1 << 20 if sys.platform == "darwin" else 1 << 10)
        if gnu_time:
            text = fpeak.read().split()
            if text and text[-1].isdigit():
                peak_mb = int(text[-1]) / 1024
        return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_mb": peak_mb,
                "returncode": proc.returncode, "timed_out": killed.is_set(),
                "stdout": fout.read(), "stderr": ferr.read()}


PY_CHILD = (
    "import json, sys, tcpfriendly\n"
    "res = tcpfriendly.run(tcpfriendly.Scenario(json.load(sys.stdin)), seed=int(sys.argv[1]))\n"
    "print(json.dumps(res.raw))\n"
)


def engine_side(engine: str, binary: str, scenario: Dict[str, Any], seed: int) -> Dict[str, Any]:
    if engine == "python":
        argv = [sys.executable, "-c", PY_CHILD, str(seed)]
    else:
        argv = [binary]
    r = run_child(argv, json.dumps(scenario))
    if r["returncode"] != 0:
        raise SystemExit(f"vs_ns2: tcpfriendly child failed (exit {r['returncode']}):\n{r['stderr'][-2000:]}")
    out = json.loads(r["stdout"])
    return {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_mb": r["peak_mb"],
            "delivered_packets": delivered_packets(out), "events": int(out["events"])}


def delivered_packets(result: Dict[str, Any]) -> int:
    """The unique data packets an engine result delivered in order: the denominator of every
    cost per packet the benchmarks print."""
    return int(sum(f["packets_delivered"] for f in result["flows"]))


def pgo_script():
    """scripts/pgo.py as a module: the profile, the flags of a profile-guided build and the cargo
    command of each product (one home)."""
    scripts = os.path.join(ROOT, "scripts")
    if scripts not in sys.path:
        sys.path.insert(0, scripts)
    import pgo
    return pgo


def build_run_json(env: Optional[Dict[str, str]] = None) -> None:
    """`cargo build` of the run_json example (into target/release, or where `env` points for the
    profile-guided build): a no-op when it is up to date with the sources."""
    subprocess.run(pgo_script().BUILDS["run_json"], cwd=ROOT, check=True, env=env)


def run_on_file(binary: str, name: str, text: str, timeout: float) -> Dict[str, Any]:
    """A reference simulator's child: `text` written to `name` in a fresh directory, `binary`
    run on it there, killed after `timeout` s. run_child's record, or the side's "did not
    finish" record when it was killed."""
    work = tempfile.mkdtemp(prefix="tcpf-vs-")
    try:
        path = os.path.join(work, name)
        with open(path, "w") as fh:
            fh.write(text)
        r = run_child([binary, path], cwd=work, timeout=timeout)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if r["timed_out"]:
        return {"did_not_finish": True, "timeout_s": timeout, "wall_s": r["wall_s"],
                "cpu_s": r["cpu_s"], "peak_mb": r["peak_mb"]}
    return r


def ns2_side(script: str, ns_binary: str, timeout: float) -> Dict[str, Any]:
    from tcpfriendly import ns2
    r = run_on_file(ns_binary, "scenario.tcl", script, timeout)
    if r.get("did_not_finish"):
        return r
    parsed = ns2.parse_output(r["stdout"])
    if r["returncode"] != 0 or not parsed["links"]:
        raise SystemExit(f"vs_ns2: ns-2 failed (exit {r['returncode']}):\n{r['stderr'][-2000:]}")
    return {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_mb": r["peak_mb"],
            "delivered_packets": int(parsed["total"]["delivered_pkts"])}


# ns-3: one fixed C++ program (benchmarks/ns3/dumbbell.cc) built against the installed ns-3
# (Debian's libns3-dev) and fed the expanded scenario as a file of numbers.
NS3_SOURCE = os.path.join(HERE, "ns3", "dumbbell.cc")
NS3_MODULES = ["ns3-core", "ns3-network", "ns3-internet", "ns3-point-to-point", "ns3-applications",
               "ns3-traffic-control"]
NS3_INSTALL = "apt-get install libns3-dev"


def ns3_missing() -> Optional[str]:
    """Why ns-3 cannot be built against here (None: it can): its pkg-config entries and a C++
    compiler."""
    pkg = shutil.which("pkg-config")
    if pkg is None or subprocess.run([pkg, "--exists", *NS3_MODULES]).returncode != 0:
        return f"ns-3 not installed (no pkg-config entry ns3-core: {NS3_INSTALL}): not compared"
    if ns3_compiler() is None:
        return "ns-3 is installed but there is no C++ compiler (c++ or $CXX): not compared"
    return None


def ns3_compiler() -> Optional[str]:
    return shutil.which(os.environ.get("CXX") or "c++") or shutil.which("g++")


def ns3_build(log: Any) -> Dict[str, Any]:
    """Build benchmarks/ns3/dumbbell.cc against the installed ns-3 (once per source, ns-3
    version and compiler: target/ns3/dumbbell-<hash>). {"binary", "version"}, or {"error"}
    saying why ns-3 is not compared."""
    why = ns3_missing()
    if why:
        return {"error": why}
    cxx, pkg = ns3_compiler(), shutil.which("pkg-config")
    version = subprocess.run([pkg, "--modversion", "ns3-core"], capture_output=True, text=True).stdout.strip()
    # The include and library directories and the modules, not the .pc files' whole Cflags and
    # Libs: Debian's name libraries of other packages (libgsl.so of libgsl-dev) not needed here.
    var = {v: subprocess.run([pkg, f"--variable={v}", "ns3-core"], capture_output=True,
                             text=True).stdout.strip() for v in ("includedir", "libdir")}
    flags = [f"-I{var['includedir']}", f"-L{var['libdir']}", f"-Wl,-rpath,{var['libdir']}",
             *(f"-l{m}" for m in NS3_MODULES)]
    with open(NS3_SOURCE, "rb") as fh:
        source = fh.read()
    key = hashlib.sha256(source + "\0".join([version, cxx, *flags]).encode()).hexdigest()[:16]
    out_dir = os.path.join(ROOT, "target", "ns3")
    binary = os.path.join(out_dir, f"dumbbell-{key}")
    if not os.path.exists(binary):
        os.makedirs(out_dir, exist_ok=True)
        print(f"vs_ns2: building the ns-3 {version} workload ({os.path.relpath(NS3_SOURCE, ROOT)}; not timed)",
              file=log, flush=True)
        tmp = binary + f".tmp{os.getpid()}"
        r = subprocess.run([cxx, "-O2", "-std=c++17", NS3_SOURCE, "-o", tmp, *flags],
                           capture_output=True, text=True)
        if r.returncode != 0:
            if os.path.exists(tmp):
                os.unlink(tmp)
            return {"error": f"ns-3 {version} is installed but {os.path.relpath(NS3_SOURCE, ROOT)} did not "
                             f"build: {r.stderr.strip()[-600:]}"}
        os.replace(tmp, binary)  # nothing half-written under the final name
    return {"binary": binary, "version": version}


def ns3_workload(expanded: Dict[str, Any]) -> str:
    """The expanded scenario as benchmarks/ns3/dumbbell.cc reads it (numbers only: nothing of a
    scenario reaches a compiler or an interpreter)."""
    b, tcp, red = expanded["bottleneck"], expanded["tcp"], expanded["bottleneck"]["red"]
    lines = [f"duration {float(expanded['duration_s'])!r}",
             f"packet {int(expanded['packet_size'])}",
             f"max_window {int(expanded['max_window'])}",
             f"initial_window {int(tcp['initial_window'])}",
             f"min_rto {float(tcp['min_rto_s'])!r}",
             f"tick {float(tcp['tick_s'])!r}",
             f"initial_rto {float(tcp['initial_rto_s'])!r}",
             f"bottleneck {float(b['rate_bps'])!r} {float(b['delay_s'])!r}",
             f"red {int(b['limit_pkts'])} {float(red['min_th_pkts'])!r} {float(red['max_th_pkts'])!r} "
             f"{float(red['q_weight'])!r} {float(red['max_p'])!r} {int(bool(red['gentle']))} "
             f"{int(bool(red['wait']))} {float(red['mean_pkt_size'])!r}"]
    for f in expanded["flows"]:
        lines.append(f"flow {float(f['access_delay_s'])!r} {float(f['receiver_delay_s'])!r} "
                     f"{float(f['access_rate_bps'])!r} {float(f['start_s'])!r}")
    return "\n".join(lines) + "\n"


def ns3_side(workload: str, binary: str, timeout: float) -> Dict[str, Any]:
    r = run_on_file(binary, "workload.txt", workload, timeout)
    if r.get("did_not_finish"):
        return r
    got = dict(line.split(None, 1) for line in r["stdout"].splitlines() if " " in line)
    if r["returncode"] != 0 or "delivered_packets" not in got:
        # reported, not fatal: the other sides' figures stand (ns-3 is a library build of
        # someone else's; a crash of it is not this benchmark's failure)
        why = f"signal {-r['returncode']}" if r["returncode"] < 0 else f"exit {r['returncode']}"
        tail = " ".join(r["stderr"].split())[-300:]
        return {"error": f"ns-3 failed ({why}){': ' + tail if tail else ''}"}
    return {"wall_s": r["wall_s"], "cpu_s": r["cpu_s"], "peak_mb": r["peak_mb"],
            "delivered_packets": int(got["delivered_packets"]), "events": int(got["events"])}


# ---------------------------------------------------------------------------------------------
# Report


def run_order(reps: int, plans: List[Dict[str, Any]]) -> List[Tuple[int, Dict[str, Any], str]]:
    """The order of the runs: (repetition, workload plan, side), repetition by repetition,
    each workload in turn and, within a workload, each of its sides in turn."""
    return [(rep, plan, side) for rep in range(reps) for plan in plans for side in plan["sides"]]


def spread_of(each: List[float]) -> str:
    """' (repetition by repetition LO-HIx, median Mx)' for the ratios of the repetitions, ''
    for fewer than two: how far the host's speed moved the pairs around the ratio of medians."""
    if len(each) < 2:
        return ""
    return (f" (repetition by repetition {min(each):.2f}-{max(each):.2f}x, "
            f"median {statistics.median(each):.2f}x)")


def summarize(runs: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Medians over the repetitions, plus cost per delivered packet."""
    if not runs:
        return {}
    failed = [r for r in runs if "error" in r]
    if failed:
        return {"error": failed[0]["error"]}
    if any(r.get("did_not_finish") for r in runs):
        first = next(r for r in runs if r.get("did_not_finish"))
        return {"did_not_finish": True, "timeout_s": first["timeout_s"], "cpu_s_when_killed": first["cpu_s"],
                "peak_mb": max(r["peak_mb"] for r in runs), "reps": len(runs)}
    s: Dict[str, Any] = {"reps": len(runs)}
    for k in ("wall_s", "cpu_s", "peak_mb"):
        s[k] = statistics.median(r[k] for r in runs)
        s["all_" + k] = [round(r[k], 4) for r in runs]
    s["delivered_packets"] = runs[0]["delivered_packets"]
    d = s["delivered_packets"]
    if d > 0:
        s["cpu_ns_per_pkt"] = s["cpu_s"] * 1e9 / d
        s["wall_ns_per_pkt"] = s["wall_s"] * 1e9 / d
        s["delivered_per_cpu_s"] = d / s["cpu_s"] if s["cpu_s"] > 0 else None
    if "events" in runs[0]:
        s["events"] = runs[0]["events"]
        s["events_per_pkt"] = s["events"] / d if d else None
    return s


def machine() -> Dict[str, Any]:
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    load = os.getloadavg() if hasattr(os, "getloadavg") else None
    return {"cpu": model, "cores": os.cpu_count(), "load_at_start": load,
            "python": platform.python_version(), "system": platform.platform()}


def fmt_side(name: str, s: Dict[str, Any]) -> str:
    if "error" in s:
        return f"    {name:22s} not run: {s['error']}"
    if s.get("did_not_finish"):
        return (f"    {name:22s} did not finish (killed after {s['timeout_s']:g} s wall, "
                f"{s['cpu_s_when_killed']:.1f} s CPU)")
    ev = f"{s['events_per_pkt']:6.2f}" if s.get("events_per_pkt") is not None else "     -"
    return (f"    {name:22s} {s['wall_s']:8.2f} {s['cpu_s']:8.2f} {s['delivered_packets'] / 1e6:9.2f}"
            f" {s.get('cpu_ns_per_pkt', float('nan')):8.0f} {ev} {s['peak_mb']:8.1f}")


# ---------------------------------------------------------------------------------------------
# Options: every value is checked while parsing, before anything is built or run.

MAX_SECONDS = 1e7  # the engine's bound on a scenario's duration (scenario.duration: (0, 1e7] s)
MAX_SEED = (1 << 53) - 1  # the engine's seed range: [0, 2^53)
MAX_FLOWS = 100_000  # the scaled rate 60 Mbps x flows / 32 stays far below the engine's 1e12 b/s
MAX_REPS = 1000
MAX_TIMEOUT_S = 1e6
STARTS = " (the flows start during the first second)"


class Parser(argparse.ArgumentParser):
    """Usage errors as the one line ``error: <message>`` and exit 2 (the `tcpf` error policy),
    not argparse's usage block."""

    def error(self, message: str) -> "NoReturn":  # type: ignore[override]
        sys.stdout.flush()
        message = " ".join(message.split())
        if message.startswith("argument "):  # "argument --reps: ..." -> "--reps: ..."
            message = message[len("argument "):]
        sys.stderr.write(f"error: {message}\n")
        raise SystemExit(2)


def seconds(lo: float, hi: float, why: str = "") -> Any:
    """An argparse type: a finite number of seconds in (lo, hi]."""
    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = float("nan")
        if not (v == v and lo < v <= hi):  # NaN fails both comparisons
            raise argparse.ArgumentTypeError(f"must be a number of seconds in ({lo:g}, {hi:.0e}]"
                                             f"{why}; got {text!r}".replace("e+0", "e"))
        return v
    return parse


def count(lo: int, hi: int, what: str = "an integer") -> Any:
    """An argparse type: an integer in [lo, hi]."""
    def parse(text: str) -> int:
        try:
            v = int(text.strip())
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be {what} in [{lo}, {hi}]; got {text!r}")
        return v
    return parse


def flow_counts(text: str) -> List[int]:
    """--flows-scale: comma-separated flow counts, each in [1, MAX_FLOWS]; '' for none."""
    one = count(1, MAX_FLOWS)
    try:
        return [one(x) for x in text.split(",") if x.strip()]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"must be comma-separated integers in [1, {MAX_FLOWS}] "
                                         f"(or '' for none); got {text!r}") from None


def main(argv: Optional[list] = None) -> int:
    ap = Parser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=seconds(1, MAX_SECONDS, STARTS), default=None,
                    help="simulated seconds of the reference workload, in (1, 1e7] (500; 100 with --quick)")
    ap.add_argument("--flows", type=count(1, MAX_FLOWS), default=REF_FLOWS,
                    help=f"SACK flows of the reference workload, split into two groups, in [1, {MAX_FLOWS}] (32)")
    ap.add_argument("--flows-scale", type=flow_counts, default=None,
                    help="comma-separated flow counts of the scaled workloads, rate = 60 Mbps x "
                         "flows / 32 ('320,1000,3200'; '' for none)")
    ap.add_argument("--scaled-duration", type=seconds(1, MAX_SECONDS, STARTS), default=None,
                    help="simulated seconds of the scaled workloads, in (1, 1e7] (20; 5 with --quick)")
    ap.add_argument("--reps", type=count(1, MAX_REPS), default=None,
                    help=f"repetitions of every side of every workload, interleaved (sides and "
                         f"workloads in turn), in [1, {MAX_REPS}]; medians are printed (3; 1 with --quick)")
    ap.add_argument("--timeout", type=seconds(0, MAX_TIMEOUT_S), default=None,
                    help="ns-2 (and ns-3, unless --ns3-timeout) is killed after this many seconds: 'did not finish' (300; 60 with --quick)")
    ap.add_argument("--quick", action="store_true", help="a short version (defaults in parentheses above)")
    ap.add_argument("--seed", type=count(0, MAX_SEED, "a non-negative integer"), default=1)
    ap.add_argument("--ns", default="ns", help="ns-2 binary (ns)")
    ap.add_argument("--no-ns2", action="store_true", help="do not time ns-2")
    ap.add_argument("--no-ns3", action="store_true",
                    help=f"do not time ns-3 (timed when installed: {NS3_INSTALL}; built from "
                         "benchmarks/ns3/dumbbell.cc on first use)")
    ap.add_argument("--ns3-timeout", type=seconds(0, MAX_TIMEOUT_S), default=None,
                    help="ns-3 is killed after this many seconds (--timeout's value; ns-3 needs about "
                         "5 CPU minutes for the 500-s reference on a 2-core Xeon)")
    ap.add_argument("--ns3-reps", type=count(1, MAX_REPS), default=1,
                    help="repetitions of ns-3 per workload, interleaved with the first ones of the "
                         "others (1: ns-3 takes minutes where the others take seconds)")
    ap.add_argument("--engine", choices=["run_json", "python"], default="run_json",
                    help="tcpfriendly's child: the run_json example (default) or python + tcpfriendly.run")
    ap.add_argument("--run-json", default=None,
                    help="run_json binary (the default is built with cargo first, so that it matches the "
                         "sources: profile-guided as the extension, scripts/pgo.py)")
    ap.add_argument("--no-pgo", action="store_true",
                    help="time the plain release build of run_json instead of the profile-guided one")
    ap.add_argument("--baseline", default=None,
                    help="another run_json binary (e.g. an older revision) timed interleaved as a third side")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    q = args.quick
    duration = args.duration if args.duration is not None else (100.0 if q else 500.0)
    scaled_duration = args.scaled_duration if args.scaled_duration is not None else (5.0 if q else 20.0)
    reps = args.reps if args.reps is not None else (1 if q else 3)
    timeout = args.timeout if args.timeout is not None else (60.0 if q else 300.0)
    ns3_timeout = args.ns3_timeout if args.ns3_timeout is not None else timeout
    scaled = args.flows_scale if args.flows_scale is not None else [320, 1000, 3200]
    build_default = args.run_json is None
    if build_default:
        args.run_json = RUN_JSON if args.no_pgo else RUN_JSON_PGO
    elif args.engine == "run_json" and not os.path.exists(args.run_json):
        ap.error(f"--run-json: {args.run_json} does not exist")
    if args.baseline and not os.path.exists(args.baseline):
        ap.error(f"--baseline: {args.baseline} does not exist")

    # ---- the engine binaries (every option is checked above: nothing is built for bad input) ----
    log = sys.stderr
    if args.engine == "run_json" and build_default:
        # always, not only when missing: a binary left from older sources would be timed instead
        # of the engine of this tree (cargo does nothing when it is up to date)
        env = None
        if not args.no_pgo:
            pgo = pgo_script()
            try:
                env = pgo.build_env(pgo.make(force=False))
            except SystemExit as e:
                raise SystemExit(f"vs_ns2: no profile-guided build here (exit {e.code}); --no-pgo "
                                 "times the plain build")
        print("vs_ns2: cargo build --release -p tcpf-core --example run_json"
              f"{'' if args.no_pgo else ' (profile-guided, scripts/pgo.py)'} (up to date with the "
              "sources; not timed)", file=log)
        build_run_json(env)

    from tcpfriendly import ns2
    have_ns2 = not args.no_ns2 and ns2.ns2_available(args.ns)
    try:
        from tcpfriendly import expand
    except ImportError:  # the compiled module is not built
        expand = None
        if args.engine == "python":
            raise SystemExit("vs_ns2: --engine python needs the compiled module (bash scripts/setup.sh)")

    workloads = [(args.flows, duration, RATE_BPS)]  # the reference keeps 60 Mbps whatever --flows
    workloads += [(n, scaled_duration, RATE_BPS * n / REF_FLOWS) for n in scaled]

    report: Dict[str, Any] = {
        "machine": machine(), "engine": args.engine,
        "run_json": os.path.relpath(args.run_json, ROOT) if args.engine == "run_json" else None,
        "baseline": args.baseline, "reps": reps, "ns2_timeout_s": timeout,
        "ns3_timeout_s": ns3_timeout, "peak": peak_method(),
        "ns3": {"error": "--no-ns3"} if args.no_ns3 else ns3_build(log),
        "workloads": [],
    }
    have_ns3 = "binary" in report["ns3"]
    if not have_ns2:
        report["ns2_error"] = ("--no-ns2" if args.no_ns2
                               else f"ns-2 binary {args.ns!r} not found (apt-get install ns2)")

    # Every workload's scenario (and the reference simulators' inputs) first, then the runs:
    # repetition by repetition, each workload's sides in turn (A B A B ... within a workload,
    # and the workloads interleaved too), so that a drift of the host's speed hits every side
    # and every workload alike: the scaled workloads' cost relative to the reference is then a
    # ratio of runs made at the same time, not minutes apart.
    plans: List[Dict[str, Any]] = []
    for flows, dur, rate in workloads:
        sc = scenario_dict(dur, flows, args.seed, rate)
        sides: Dict[str, List[Dict[str, Any]]] = {"tcpfriendly": []}
        if args.baseline:
            sides["baseline"] = []
        script = workload = None
        if have_ns2 or have_ns3:
            expanded = expand(sc, seed=args.seed) if expand else fallback_expanded(dur, flows, args.seed, rate)
        if have_ns2:
            sides["ns2"] = []
            script = ns2.export_tcl(expanded, sample_interval_s=None)
        if have_ns3:
            sides["ns3"] = []
            workload = ns3_workload(expanded)
        plans.append({"flows": flows, "dur": dur, "rate": rate, "scenario": sc, "sides": sides,
                      "script": script, "workload": workload})
    for rep, plan, side in run_order(reps, plans):
        runs = plan["sides"][side]
        # a reference simulator once killed (or failed) is not run again
        if side in ("ns2", "ns3") and any(r.get("did_not_finish") or "error" in r for r in runs):
            continue
        if side == "ns2":
            r = ns2_side(plan["script"], args.ns, timeout)
        elif side == "ns3":
            if rep >= args.ns3_reps:
                continue
            r = ns3_side(plan["workload"], report["ns3"]["binary"], ns3_timeout)
        elif side == "baseline":
            r = engine_side("run_json", args.baseline, plan["scenario"], args.seed)
        else:
            r = engine_side(args.engine, args.run_json, plan["scenario"], args.seed)
        runs.append(r)
        done = ("did not finish" if r.get("did_not_finish") else r["error"] if "error" in r
                else f"{r['cpu_s']:.2f} s CPU")
        print(f"vs_ns2:   rep {rep + 1}/{reps} {plan['flows']} flows, {plan['rate'] / 1e6:g} Mbps, "
              f"{plan['dur']:g} s, {side}: {done}", file=log, flush=True)

    for plan in plans:
        flows, rate, dur, sides = plan["flows"], plan["rate"], plan["dur"], plan["sides"]
        w: Dict[str, Any] = {"flows": flows, "rate_bps": rate, "duration_s": dur,
                             "sides": {k: summarize(v) for k, v in sides.items()}}
        if not have_ns2:
            w["sides"]["ns2"] = {"error": report["ns2_error"]}
        if not have_ns3:
            w["sides"]["ns3"] = {"error": report["ns3"]["error"]}
        tf = w["sides"]["tcpfriendly"]
        for other in ("ns2", "ns3"):
            ns = w["sides"][other]
            if "cpu_s" in ns and tf.get("cpu_s"):
                w[f"ratio_{other}_over_tcpfriendly"] = {"cpu": ns["cpu_s"] / tf["cpu_s"],
                                                       "wall": ns["wall_s"] / tf["wall_s"]}
                # the CPU ratio within each repetition (the two runs made seconds apart)
                w[f"ratio_{other}_over_tcpfriendly_reps"] = [
                    round(c / c0, 4) for c, c0 in zip(ns["all_cpu_s"], tf["all_cpu_s"]) if c0 > 0]
            elif ns.get("did_not_finish") and tf.get("cpu_s"):
                # a lower bound: the CPU time the simulator had used when it was killed
                w[f"ratio_{other}_over_tcpfriendly"] = {"cpu_at_least": ns["cpu_s_when_killed"] / tf["cpu_s"]}
        if "baseline" in w["sides"] and tf.get("cpu_s"):
            b = w["sides"]["baseline"]
            w["ratio_baseline_over_tcpfriendly"] = {"cpu": b["cpu_s"] / tf["cpu_s"], "wall": b["wall_s"] / tf["wall_s"]}
        report["workloads"].append(w)

    ref = report["workloads"][0]["sides"]["tcpfriendly"]
    for w in report["workloads"][1:]:
        t = w["sides"]["tcpfriendly"]
        if ref.get("cpu_ns_per_pkt") and t.get("cpu_ns_per_pkt"):
            w["ns_per_pkt_over_reference"] = t["cpu_ns_per_pkt"] / ref["cpu_ns_per_pkt"]
            # the same ratio within each repetition (the two runs made a few seconds apart)
            w["ns_per_pkt_over_reference_reps"] = [
                round((c / t["delivered_packets"]) / (c0 / ref["delivered_packets"]), 4)
                for c, c0 in zip(t["all_cpu_s"], ref["all_cpu_s"])]

    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    m = report["machine"]
    load = ", ".join(f"{x:.2f}" for x in m["load_at_start"]) if m["load_at_start"] else "?"
    print(f"machine: {m['cpu']}, {m['cores']} cores, load average at start {load}")
    tside = ("tcpfriendly (python)" if args.engine != "run_json" else
             "tcpfriendly (PGO)" if args.run_json == RUN_JSON_PGO else "tcpfriendly (run_json)")
    print(f"tcpfriendly child: {report['run_json'] or 'python -c tcpfriendly.run'}; "
          f"medians of {reps} interleaved repetition{'s' if reps > 1 else ''}; "
          f"ns-2 killed after {timeout:g} s, ns-3 after {ns3_timeout:g} s")
    n3 = report["ns3"]
    print(f"ns-3: {n3['version']}, {os.path.relpath(n3['binary'], ROOT)} (benchmarks/ns3/dumbbell.cc: "
          f"NewReno + SACK, classic recovery, RED queue disc); {args.ns3_reps} repetition"
          f"{'s' if args.ns3_reps > 1 else ''}" if "binary" in n3 else f"ns-3: {n3['error']}")
    print(f"peak MB: {report['peak']}")
    print("workload: dumbbell, RED (jin2001 Table 4), SACK flows in two groups, 50 ms, "
          "rate = 60 Mbps x flows / 32")
    print(f"    {'side':22s} {'wall s':>8s} {'CPU s':>8s} {'M pkts':>9s} {'ns/pkt':>8s} {'ev/pkt':>6s} {'peak MB':>8s}")
    for w in report["workloads"]:
        print(f"  {w['flows']} flows, {w['rate_bps'] / 1e6:g} Mbps, {w['duration_s']:g} s simulated")
        print(fmt_side(tside, w["sides"]["tcpfriendly"]))
        if "baseline" in w["sides"]:
            print(fmt_side("baseline (run_json)", w["sides"]["baseline"]))
        print(fmt_side("ns-2 2.35", w["sides"]["ns2"]))
        if "binary" in report["ns3"]:
            print(fmt_side(f"ns-3 {report['ns3']['version']}", w["sides"]["ns3"]))
        for other, label in (("ns2", "ns-2"), ("ns3", "ns-3")):
            r = w.get(f"ratio_{other}_over_tcpfriendly")
            if r and "cpu" in r:
                print(f"    ratio {label} / tcpfriendly: CPU {r['cpu']:.2f}x, wall {r['wall']:.2f}x"
                      f"{spread_of(w.get(f'ratio_{other}_over_tcpfriendly_reps', []))}")
            elif r:
                print(f"    ratio {label} / tcpfriendly: CPU > {r['cpu_at_least']:.1f}x "
                      f"({label}'s CPU when killed / tcpfriendly's)")
        b = w.get("ratio_baseline_over_tcpfriendly")
        if b:
            print(f"    ratio baseline / tcpfriendly: CPU {b['cpu']:.3f}x, wall {b['wall']:.3f}x")
        if "ns_per_pkt_over_reference" in w:
            print(f"    tcpfriendly ns/pkt vs the {report['workloads'][0]['flows']}-flow workload: "
                  f"{w['ns_per_pkt_over_reference']:.3f}x"  # 3 places: the goal is <= 1.5
                  f"{spread_of(w['ns_per_pkt_over_reference_reps'])}")
    print("ns/pkt = CPU ns per delivered packet (unique data packets delivered in order; ns-3: "
          "in-order bytes at the sinks / packet size); ev/pkt = each simulator's own events per "
          "delivered packet")
    return 0


if __name__ == "__main__":
    sys.exit(main())

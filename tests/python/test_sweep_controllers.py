"""Sweeps over Python controllers: `Sweep(controllers=)`, `tcpfriendly.sweep.sweep(controllers=)` and
`tcpf sweep --controller` run a researcher's class at every grid point, key its runs by the
class's code (an edited class reruns), and refuse what cannot run it (processes, Dask, ns-2)."""
import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

import tcpfriendly as tf
from tcpfriendly.sweep import RunStore, Sweep, SweepError, sweep

from test_controllers_py import PyGaimd, scenario

BETAS = [0.125, 0.5]


def _sweep(algorithm, **kw):
    return Sweep(scenario(algorithm, {"alpha": 0.2}), {"flows[0].params.beta": BETAS}, seeds=2,
                 metrics=["share", "loss_events", "mean_cwnd", "goodput_bps_mean"], **kw)


def test_a_sweep_of_a_python_controller_matches_the_builtin_law_point_for_point(monkeypatch):
    from tcpfriendly.sweep import executors

    shipped = []
    real = executors.ProcessExecutor.run

    def spy(self, todo, collector):
        if self.shipped is not None:  # (a built-in sweep may use a warm pool too)
            shipped.append((len(todo), self.shipped))
        return real(self, todo, collector)

    monkeypatch.setattr(executors.ProcessExecutor, "run", spy)
    builtin = _sweep("gaimd").run(quiet=True).table
    mine = _sweep("pygaimd", controllers={"pygaimd": PyGaimd}).run(quiet=True, workers=2).table
    # on 2 worker processes, each loading the class from its module
    assert [(n, specs) for n, (specs, _) in shipped] == [(4, {"pygaimd": "test_controllers_py:PyGaimd"})]
    one = _sweep("pygaimd", controllers={"pygaimd": PyGaimd}).run(quiet=True, workers=1).table
    assert len(shipped) == 1  # one worker: this thread
    assert list(mine["algorithm"].unique()) == ["pygaimd", "tcp"]
    cols = ["share", "loss_events", "mean_cwnd", "goodput_bps_mean"]
    assert (mine["status"] == "ok").all() and len(mine) == len(BETAS) * 2 * 2
    assert mine[cols].values.tolist() == builtin[cols].values.tolist() == one[cols].values.tolist()
    # the axis really moved the law: a smaller decrease takes a larger share
    g = mine[mine["group"] == 0].groupby("flows[0].params.beta")["share"].mean()
    assert g[0.125] > g[0.5]


def test_sweep_function_takes_controllers_and_leaves_the_callers_sweep_alone():
    sw = _sweep("pygaimd")
    with pytest.raises(SweepError, match="unknown algorithm 'pygaimd'"):
        sw.plan()
    res = sweep(sw, controllers={"pygaimd": PyGaimd}, quiet=True)
    assert res.ran == 4 and (res.table["status"] == "ok").all()
    assert sw.controllers == {}


def test_bad_controllers_are_refused_before_anything_runs(tmp_path):
    with pytest.raises(SweepError, match=r"controllers\['x'\]: must be a subclass"):
        _sweep("x", controllers={"x": object})
    with pytest.raises(SweepError, match="'tcp' is a built-in algorithm") as e:
        _sweep("pygaimd", controllers={"tcp": PyGaimd}).plan()
    assert e.value.field == "controllers"
    with pytest.raises(SweepError, match=r"point flows\[0\]\.params\.beta=0\.125: flows\[0\]\.params: "
                                         r"PyGaimd\(alpha, gamma, beta\) failed: TypeError"):
        Sweep(scenario("pygaimd", {"alpha": 0.2, "gamma": 1}), {"flows[0].params.beta": BETAS},
              controllers={"pygaimd": PyGaimd}).plan()
    sw = _sweep("pygaimd", controllers={"pygaimd": PyGaimd})
    with pytest.raises(SweepError, match="dask: a sweep with Python controllers"):
        sw.run(tmp_path / "a", dask="local", quiet=True)
    for executor in ("processes", "threads"):
        with pytest.raises(SweepError, match="executor: a sweep with Python controllers chooses its own"):
            sw.run(tmp_path / "b", executor=executor, quiet=True)
    sw.simulator = "tcpf"
    ns2 = Sweep(scenario("pygaimd", {}), controllers={"pygaimd": PyGaimd})
    ns2._simulator = "ns2"  # (the check of `ns` on PATH is not what this tests)
    ns2.engine_id = lambda: "ns2-test"
    with pytest.raises(SweepError, match="ns-2 cannot run a Python controller"):
        ns2.plan()
    assert not os.listdir(tmp_path)  # nothing written by a refused sweep


def test_a_class_without_source_runs_but_is_never_stored(tmp_path):
    ns = {"tf": tf}
    exec(textwrap.dedent("""
        class Typed(tf.Controller):
            def on_loss_event(self, ev):
                self.ssthresh = self.cwnd = max(ev.window * 0.7, 2.0)
        """), ns)
    sw = Sweep(scenario("typed", {}), {"flows[0].count": [1, 2]}, metrics=["share"],
               controllers={"typed": ns["Typed"]})
    _, runs = sw.plan()
    assert sw.unsourced_keys == {r.key for r in runs}
    first = sw.run(tmp_path, quiet=True)
    assert first.ran == 2 and (first.table["status"] == "ok").all()
    store = RunStore(str(tmp_path), create=False)
    assert not any(store.has(r.key) for r in runs)
    again = sw.run(tmp_path, quiet=True)
    assert (again.ran, again.cached) == (2, 0)
    assert again.table["share"].tolist() == first.table["share"].tolist()


# the test's own PyGaimd as a user's file (alpha and beta from the spec)
MY_CC = "import tcpfriendly as tf\n" + inspect.getsource(PyGaimd).replace("PyGaimd", "MyCC")


SPEC = """
seeds = 2
metrics = ["share"]
[scenario]
duration = 10
[scenario.bottleneck]
rate = "10Mbps"
delay = "20ms"
[[scenario.flows]]
count = 2
algorithm = "mine"
[[scenario.flows]]
count = 2
algorithm = "tcp"
[axes]
"flows[0].params.beta" = [0.125, 0.5]
"""


def _tcpf(cwd, *args):
    return subprocess.run([sys.executable, "-m", "tcpfriendly.cli", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)


def test_cli_sweep_with_a_controller_caches_by_the_class_code(tmp_path):
    (tmp_path / "my_cc.py").write_text(MY_CC)
    (tmp_path / "sw.toml").write_text(SPEC)
    ctl = ["--controller", "mine=my_cc.py:MyCC"]
    r = _tcpf(tmp_path, "sweep", "sw.toml", "--out", "o", *ctl)
    assert r.returncode == 0, r.stderr
    assert "4 run now, 0 cached" in r.stdout
    record = json.loads((tmp_path / "o" / "sweep.json").read_text())
    assert record["controllers"] == {"mine": f"{tmp_path / 'my_cc.py'}:MyCC"}
    rows = (tmp_path / "o" / "results.csv").read_text().splitlines()
    assert len(rows) == 1 + 2 * 2 * 2 and sum(",mine," in row for row in rows) == 4
    r = _tcpf(tmp_path, "sweep", "sw.toml", "--out", "o", *ctl)
    assert r.returncode == 0 and "0 run now, 4 cached" in r.stdout, r.stdout
    # its report names the class, shows the normalised base scenario, and the command that
    # regenerates it passes the class
    r = _tcpf(tmp_path, "report", "o", "-o", "r.html")
    assert r.returncode == 0, r.stderr
    page = (tmp_path / "r.html").read_text()
    assert f"tcpf sweep sweep.toml --controller mine={tmp_path / 'my_cc.py'}:MyCC --out o" in page
    assert "Python controllers</h3>" in page and "Base scenario at the first grid point" in page
    # the same law edited: every run of it is redone
    edited = MY_CC.replace("ev.window * (1.0 - removed)", "ev.window * (1 - removed)")
    assert edited != MY_CC
    (tmp_path / "my_cc.py").write_text(edited)
    r = _tcpf(tmp_path, "sweep", "sw.toml", "--out", "o", *ctl)
    assert r.returncode == 0 and "4 run now, 0 cached" in r.stdout, r.stdout
    for extra, said in ((["--processes"], "--processes: a sweep with Python controllers"),
                        (["--threads"], "--threads: a sweep with Python controllers"),
                        (["--dask", "local"], "--dask: a sweep with Python controllers"),
                        (["--simulator", "ns2"], "ns-2 cannot run a Python controller"),
                        (["--controller", "tcp=my_cc.py:MyCC"], "'tcp' is a built-in algorithm")):
        r = _tcpf(tmp_path, "sweep", "sw.toml", "--out", "refused", *ctl, *extra)
        assert r.returncode == 2 and said in r.stderr, (extra, r.stderr)
        assert "Traceback" not in r.stderr
    assert not (tmp_path / "refused").exists()
    # without the controller, the name is unknown (exit 2, naming it)
    r = _tcpf(tmp_path, "sweep", "sw.toml", "--out", "o2")
    assert r.returncode == 2 and "unknown algorithm 'mine'" in r.stderr

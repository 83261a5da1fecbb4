"""tcpf evaluate on the sweep engine's executors: identical results on 1 and 2 workers, a
resumable run cache, TCP reference runs shared between schemes, the progress bar only on
request/terminal, and the command line's bad input (exit 2, one line naming it)."""
import json
import os

import pytest

from tcpfriendly.evaluate import core, evaluate, runner
from tcpfriendly.evaluate.core import evaluate_many

from test_cli import assert_one_line_error

# S2 shortened: 3 CV[RTT] points x 1 seed x 2 group orders = 6 runs of 30 simulated seconds
S2 = {"only": ["s2"], "quick": True, "seeds": 1,
      "assumptions": {"tsao2007/s2-low-multiplexing": {"duration": 30, "warmup": 10}}}
# S1 shortened: 3 CV points x 1 seed, X and TCP under the identical loss process
S1 = {"only": ["s1"], "quick": True, "seeds": 1,
      "assumptions": {"tsao2007/s1-nonperiodic": {"duration": 120, "warmup": 20}}}


def _doc(ev):
    d = ev.to_json()
    d.pop("wall_s")
    d.pop("runs")  # how many were cached or ran: differs between a first run and a resume
    return json.dumps(d, sort_keys=True, default=str)


@pytest.fixture
def count_runs(monkeypatch):
    """Count the simulations actually run (the executors' task calls runner.run_job)."""
    calls = []
    real = runner.run_job

    def counting(job, controllers=None):
        calls.append(job.key("x"))
        return real(job, controllers)

    monkeypatch.setattr(runner, "run_job", counting)
    return calls


def test_one_and_two_workers_give_identical_results():
    one = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, workers=1, **S2)
    two = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, workers=2, **S2)
    assert _doc(one) == _doc(two)
    assert set(one.grades) == {"S2 hom", "S2 het"}


def test_the_cache_resumes_only_the_missing_runs(tmp_path, count_runs):
    first = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, out=str(tmp_path), workers=2, **S2)
    files = sorted((tmp_path / "runs").glob("*.json"))
    assert len(files) == len(count_runs) == 6
    assert not list((tmp_path / "runs").glob(".*.tmp"))  # written atomically
    for f in files[:2]:  # as if interrupted before these two finished
        f.unlink()
    count_runs.clear()
    again = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, out=str(tmp_path), workers=2, **S2)
    assert len(count_runs) == 2
    assert again.runs == {"schemes": 1, "listed": 6, "distinct": 6, "cached": 4, "ran": 2}
    assert _doc(again) == _doc(first)
    count_runs.clear()
    evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, out=str(tmp_path), workers=1, **S2)
    assert count_runs == []


def test_a_rebuilt_engine_reruns_the_cached_runs(tmp_path, count_runs, monkeypatch):
    """The package version stays the same when the engine changes: the engine build's id in
    the cache key keeps an evaluation after an engine change from reusing the old build's runs,
    and the same build finds them all."""
    from tcpfriendly import version
    real = version.engine_id()
    before = runner.cache_version("s2")
    assert real in before.split(":") and runner.cache_version("s2") == before
    evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, out=str(tmp_path), workers=2, **S2)
    assert len(count_runs) == 6
    count_runs.clear()
    monkeypatch.setattr(version, "engine_id", lambda: real + "-rebuilt")
    assert runner.cache_version("s2") == before.replace(real, real + "-rebuilt")
    ev = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, out=str(tmp_path), workers=2, **S2)
    assert len(count_runs) == 6 and ev.runs["cached"] == 0
    assert len(list((tmp_path / "runs").glob("*.json"))) == 12
    count_runs.clear()
    monkeypatch.setattr(version, "engine_id", lambda: real)
    ev = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, out=str(tmp_path), workers=2, **S2)
    assert count_runs == [] and ev.runs["cached"] == 6


def test_the_tcp_reference_runs_once_for_all_schemes(count_runs):
    evs = evaluate_many([("gaimd", {"alpha": 0.2, "beta": 0.125}), ("simd", {"beta": 0.0625})],
                        workers=2, **S1)
    # 3 CV points: 3 GAIMD + 3 SIMD + 3 TCP runs (not 6 TCP runs)
    assert len(count_runs) == 9 and len(set(count_runs)) == 9
    single = evaluate("simd", {"beta": 0.0625}, workers=1, **S1)
    assert _doc(evs[1]) == _doc(single)


def test_progress_bar_only_when_asked_or_on_a_terminal(capsys):
    evaluate("tcp", workers=2, **S1)  # pytest's stderr is not a terminal: no bar
    assert capsys.readouterr().err == ""
    evaluate("tcp", workers=2, progress=True, **S1)
    err = capsys.readouterr().err
    assert "evaluate tcp [" in err and "3/3" in err


def test_a_failed_simulation_is_one_error_not_a_hang(monkeypatch):
    def broken(job, controllers=None):
        raise RuntimeError("engine said no")

    monkeypatch.setattr(runner, "run_job", broken)
    with pytest.raises(runner.EvaluationFailed, match="engine said no"):
        evaluate("tcp", workers=2, **S1)


def test_workers_and_dask_with_python_controllers_are_bad_input():
    import tcpfriendly as tf

    with pytest.raises(tf.ScenarioError, match="workers: must be a positive integer"):
        evaluate("tcp", workers=0, **S1)

    class Mine(tf.Controller):
        pass

    with pytest.raises(tf.ScenarioError, match="dask: Python controllers run on this machine"):
        evaluate("mine", controllers={"mine": Mine}, dask="local", **S1)


@pytest.mark.parametrize("params, fragment", [
    (",,", "an empty item"),
    ("alpha=0.2,,beta=0.125", "an empty item"),
    ("alpha=0.2,", "an empty item"),
    ("=0.2", "KEY=VALUE"),
    ("alpha=", "KEY=VALUE"),
    ("alpha=0.2,alpha=0.3", "alpha given twice"),
    ("alpha=nan", "must be a finite number"),
])
def test_malformed_params_exit_2_naming_params(tcpf, params, fragment):
    assert_one_line_error(tcpf("evaluate", "gaimd", "--params", params, "--quick"), 2,
                          "--params", fragment)


def test_params_keep_formulas_as_text_and_commas_inside_parentheses():
    from tcpfriendly.evaluate.cli import parse_params

    # typed by the registry entry (the engine's coerce_untyped, as `tcpf model --param`):
    # the documented example's "0.2" is a formula (a constant), not the number 0.2
    assert parse_params(["increase=0.2,decrease=0.125*w"], "formula") == {"increase": "0.2", "decrease": "0.125*w"}
    assert parse_params(["increase=max(1, w/8),decrease=min(0.5*w,10)", "x=2"], "formula") == \
        {"increase": "max(1, w/8)", "decrease": "min(0.5*w,10)", "x": 2}
    assert parse_params(["alpha=0.2,beta=0.125"], "gaimd") == {"alpha": 0.2, "beta": 0.125}
    assert parse_params(["alpha=0.2,rule=slow"], "mine") == {"alpha": 0.2, "rule": "slow"}  # a Python controller's


def test_the_documented_formula_evaluation_runs(tcpf):
    # docs/evaluate.md and `tcpf evaluate --help`: it failed with "params.increase: must be a
    # formula in a string ... got 0.2" when --params read 0.2 as a number
    proc = tcpf("evaluate", "formula", "--params", "increase=0.2,decrease=0.125*w", "--quick",
                "--only", "s2", "--seeds", "1", "--json")
    assert proc.returncode == 0, proc.stderr
    ev = json.loads(proc.stdout)
    assert ev["params"] == {"increase": "0.2", "decrease": "0.125*w"} and ev["grades"]["S2 hom"] in "OΔX"
    assert_one_line_error(tcpf("evaluate", "formula", "--params", "increase=max(1,w/8", "--quick"), 2,
                          "--params: unbalanced parentheses")


def test_unknown_algorithm_exits_2_with_one_line(tcpf):
    assert_one_line_error(tcpf("evaluate", "nosuch"), 2, "unknown algorithm 'nosuch'")
    assert_one_line_error(tcpf("evaluate", "gaimd", "--dask", ""), 2, "--dask")


def test_one_controller_loader_for_run_and_evaluate(tmp_path, tcpf):
    import importlib

    from tcpfriendly.controller import load_controllers

    main = importlib.import_module("tcpfriendly.cli.main")

    mod = tmp_path / "mine.py"
    mod.write_text("import tcpfriendly as tf\nclass Mine(tf.Controller):\n    pass\n")
    assert main._load_controllers([f"mine={mod}:Mine"])["mine"].__name__ == "Mine"
    assert load_controllers([f"mine={mod}:Mine"])["mine"].__name__ == "Mine"
    # the same message from both commands
    line_run = assert_one_line_error(
        tcpf("run", "examples/quickstart.toml", "--controller", f"mine={mod}:Nope"), 2)
    line_eval = assert_one_line_error(
        tcpf("evaluate", "mine", "--quick", "--controller", f"mine={mod}:Nope"), 2)
    assert line_run == line_eval and "--controller mine: cannot load" in line_run


def test_dask_gives_the_same_results_as_local_threads(tmp_path):
    distributed = pytest.importorskip("distributed")
    import logging

    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    client = distributed.Client(cluster)
    try:
        on_dask = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, dask=client,
                           out=str(tmp_path), **S2)
    finally:
        client.close()
        cluster.close()
    local = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, workers=1, **S2)
    assert _doc(on_dask) == _doc(local)
    assert len(list((tmp_path / "runs").glob("*.json"))) == 6  # the client stored each run


def test_table4_markdown_counts_only_the_columns_run():
    from tcpfriendly.evaluate.report import table4_markdown, table4_text

    ev = evaluate("gaimd", {"alpha": 0.2, "beta": 0.125}, workers=2, **S2)
    md = table4_markdown([ev])
    text = table4_text([ev])
    import re

    # S2 only: two of gaimd's seven Table 4 grades are compared, the others are "-"
    m = re.search(r"Matching grades \(quick\): \*\*(\d) of 2\*\*", md)
    assert m and re.search(rf"Matching grades: {m.group(1)} of 2\b", text)
    assert md.count("\n- gaimd S2") == 2 - int(m.group(1))  # one line per disagreement
    assert "| gaimd | - |" in md


def test_a_reducer_s_cache_hash_covers_the_metrics_it_calls_and_no_other_reducer():
    """The run cache is keyed by the code of the one reducer that made the reduction and the
    metrics it calls: editing the trough test's metric invalidates the trough runs, not S1's."""
    closure = {k: runner._source_closure(f) for k, f in runner.REDUCERS.items()}
    trough_metric = "tcpfriendly.metrics.dynamics.trough_metrics\n"
    assert trough_metric in closure["trough"]
    assert trough_metric not in closure["single_flow"]
    assert "def aggressiveness(" in closure["impulse"] and "def aggressiveness(" not in closure["s2"]
    assert "def reduce_s2(" in closure["s2"] and "def reduce_s2(" not in closure["series"]
    hashes = {k: runner.reducer_code_hash(k) for k in runner.REDUCERS}
    assert len(set(hashes.values())) == len(hashes)


def test_the_reducer_hashes_do_not_depend_on_what_else_is_imported():
    """A resumed evaluation in another process (CLI, notebook, Dask worker) must find the same
    keys, whatever that process imported before."""
    import subprocess
    import sys
    code = ("import sys\n{pre}from tcpfriendly.evaluate import runner\n"
            "print(sorted((k, runner.reducer_code_hash(k)) for k in runner.REDUCERS))")
    outs = {subprocess.run([sys.executable, "-c", code.format(pre=pre)], capture_output=True, text=True,
                           check=True).stdout
            for pre in ("", "import tcpfriendly.reproduce, tcpfriendly.sweep, tcpfriendly.plot\n")}
    assert len(outs) == 1 and "trough" in outs.pop()


def test_python_controller_runs_are_cached_by_the_class_source(tmp_path):
    """An edited controller file must not reuse the old class's cached runs (the cache key
    held only the algorithm's name); a class without a readable source is not cached."""
    from tcpfriendly.controller import fingerprint, load_controllers

    mod = tmp_path / "law.py"

    def load(alpha):
        mod.write_text("import tcpfriendly as tf\n"
                       "class Law(tf.Controller):\n"
                       "    def on_ack(self, ack):\n"
                       f"        self.cwnd = min(self.cwnd + {alpha} / self.cwnd, self.max_window)\n")
        return load_controllers([f"law={mod}:Law"])

    out = tmp_path / "ev"
    first = load(1.0)
    a = evaluate("law", controllers=first, out=str(out), **S1)
    stats = {}
    runner.execute(_s1_jobs("law", first), out=str(out), controllers=first, stats=stats)
    assert stats["cached"] == stats["distinct"] and stats["ran"] == 0
    edited = load(0.2)
    assert fingerprint(first["law"]) != fingerprint(edited["law"])
    runner.execute(_s1_jobs("law", edited), out=str(out), controllers=edited, stats=stats)
    law_runs = stats["distinct"] - stats["cached"]
    assert law_runs > 0 and stats["ran"] == law_runs   # the law's runs again, TCP's cached
    b = evaluate("law", controllers=edited, out=str(out), **S1)
    assert a.numbers != b.numbers
    # the evaluation says where the class came from, and its report's rerun command loads it
    from tcpfriendly.report.evaluate import _command
    assert b.to_json()["controller"] == f"law={mod}:Law"
    assert f"--controller law={mod}:Law" in _command(b.to_json(), str(out))

    ns = {}
    exec("import tcpfriendly as tf\nclass Typed(tf.Controller):\n    def on_ack(self, ack):\n"
         "        self.cwnd += 1 / self.cwnd\n", ns)
    assert fingerprint(ns["Typed"]) is None
    from tcpfriendly.controller import Controller, origin
    assert origin(ns["Typed"]) is None and origin(Controller) == "tcpfriendly.controller:Controller"
    before = set(os.listdir(out / "runs"))
    runner.execute(_s1_jobs("typed", {"typed": ns["Typed"]}), out=str(out),
                   controllers={"typed": ns["Typed"]}, stats=stats)
    assert stats["ran"] > 0 and set(os.listdir(out / "runs")) - before == set()


def _s1_jobs(name, controllers):
    from tcpfriendly.evaluate.core import _plan
    return _plan(name, None, controllers, S1["quick"], S1["seeds"], None, S1["assumptions"],
                 S1["only"], 1, "tcpf").jobs


LAW = ("import tcpfriendly as tf\n"
       "class Law(tf.Controller):\n"
       "    def on_loss_event(self, ev):\n"
       "        self.ssthresh = self.cwnd = max(ev.window * {keep}, 2.0)\n")


def test_python_controllers_run_on_worker_processes_with_the_same_results(tmp_path, monkeypatch):
    """A --controller file (or an importable module) is loaded again in each worker process,
    so its runs use every core; the evaluation is the one of a single thread, value for value."""
    from tcpfriendly.controller import fingerprint, load_controllers, shippable
    from tcpfriendly.sweep import executors

    mod = tmp_path / "law.py"
    mod.write_text(LAW.format(keep=0.7))
    classes = load_controllers([f"law={mod}:Law"])
    assert shippable(classes) == {"law": f"{mod}:Law"}
    shipped = []
    real = executors.TaskProcessExecutor.run

    def spy(self, todo, collector):
        shipped.append(len(todo))
        return real(self, todo, collector)

    monkeypatch.setattr(executors.TaskProcessExecutor, "run", spy)
    two = evaluate("law", controllers=classes, workers=2, **S1)
    assert shipped == [3]  # the law's 3 runs on processes (its 3 TCP references on threads)
    one = evaluate("law", controllers=classes, workers=1, **S1)
    assert shipped == [3]  # one worker: this thread
    assert _doc(one) == _doc(two)
    # a class that cannot be loaded again as the same code stays in this process
    ns = {}
    exec(LAW.format(keep=0.5), ns)
    assert shippable({"typed": ns["Law"]}) is None  # typed at a prompt: no file
    main_law = type("Law", (classes["law"],), {"__module__": "__main__"})
    assert shippable({"law": main_law}) is None  # the main script: a worker would run it again
    # a file edited after the parent loaded it is an error in the worker, not a second law
    prints = {"law": fingerprint(classes["law"])}
    mod.write_text(LAW.format(keep=0.9))
    from tcpfriendly.controller import worker_controllers
    with pytest.raises(RuntimeError, match="law: .*law.py:Law changed since this run started"):
        worker_controllers({"law": f"{mod}:Law"}, prints)


def test_a_failing_task_on_worker_processes_fails_its_run_alone():
    from tcpfriendly.sweep.executors import Collector, TaskProcessExecutor
    from tcpfriendly.sweep.runner import Progress

    collector = Collector(None, Progress(3, enabled=False), None)
    runs = [_Item(k) for k in (1, 2, 3)]
    assert TaskProcessExecutor(2, print, _half).run(runs, collector) is False
    assert collector.tables == {1: 0.5, 3: 1.5}
    assert [(run.key, msg) for run, msg in collector.failures] == [(2, "even")]


class _Item:
    """A run for the executors: anything with a key (and picklable)."""

    def __init__(self, key):
        self.key = key


def _half(item):
    if item.key % 2 == 0:
        raise ValueError("even")
    return item.key / 2

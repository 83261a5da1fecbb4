"""Sweeps (issue #8): spec and axis paths, validation before any run, the local executor,
caching and resumption (including a real SIGINT), the tidy table, plots."""

import io
import json
import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

import tcpfriendly as tf
from tcpfriendly import sweep as sw
from tcpfriendly.sweep import Sweep, SweepError, run_key, set_path
from tcpfriendly.sweep.plot import summarize, t975

from conftest import REPO, _tcpf_command, default_sigint


@pytest.fixture(autouse=True, scope="module")
def _no_warm_pool_after_this_module():
    """The process executor's pool stays warm for the life of the process and executor="auto"
    then uses it: stop it, so that later test modules (which may patch functions of this
    process) run sweeps on threads as before."""
    yield
    from tcpfriendly.sweep.executors import shutdown_pools

    shutdown_pools()


def stored(out):
    """The run keys stored in ``out/runs`` (whatever files hold them)."""
    return set(sw.RunStore(str(out), create=False).stored_keys())

# 1 TCP SACK + 1 GAIMD flow, 5 Mbps / 20 ms RED, 5 simulated seconds: about 1 ms per run.
TINY = """\
duration = 5
seed = 3
measure = { from = 1, to = 5 }

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

[[flows]]
count = 2
algorithm = "gaimd"
params = { alpha = 0.31, beta = 0.125 }
access_delay = "1ms..5ms"
"""

SPEC = """\
scenario = "tiny.toml"
seeds = 3

[axes]
"flows[1].params.beta" = [0.0625, 0.125, 0.25]
"bottleneck.rate" = ["1.5Mbps", "5Mbps"]
"""


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


@pytest.fixture
def spec_path(tmp_path, tiny):
    path = tmp_path / "spec.toml"
    path.write_text(SPEC)
    return path


def grid_sweep(tiny, seeds=3, **kw):
    return Sweep(tiny, axes={"flows[1].params.beta": [0.0625, 0.125, 0.25],
                             "bottleneck.rate": ["1.5Mbps", "5Mbps"]}, seeds=seeds, **kw)


# ----- paths and the spec ---------------------------------------------------------------------
def test_set_path_creates_missing_table_keys_and_refuses_bad_indices():
    data = {"bottleneck": {"rate": "5Mbps"}, "flows": [{"count": 1}, {"count": 2}]}
    set_path(data, "bottleneck.loss.p", 0.01)
    set_path(data, "flows[1].params.beta", 0.25)
    set_path(data, "duration", 7)
    assert data["bottleneck"]["loss"] == {"p": 0.01}
    assert data["flows"][1]["params"] == {"beta": 0.25}
    assert data["duration"] == 7
    with pytest.raises(SweepError, match=r"^axis flows\[5\]\.count: index 5 is out of range: "
                                         r"flows has 2 entries"):
        set_path(data, "flows[5].count", 1)
    with pytest.raises(SweepError, match=r"bottleneck\.rate is a string, not a table"):
        set_path(data, "bottleneck.rate.x", 1)
    with pytest.raises(SweepError, match=r"tcp does not exist"):
        set_path(data, "tcp[0].tick", 1)
    with pytest.raises(SweepError, match="not a path"):
        set_path(data, "flows[x].count", 1)


def test_spec_from_toml_axes_zip_set_seeds(tmp_path, tiny):
    (tmp_path / "s.toml").write_text("""
scenario = "tiny.toml"
seeds = [4, 9]
metrics = ["share", "link.utilization"]
[set]
"flows[0].recovery" = "newreno"
[axes]
bottleneck.rate = ["1.5Mbps", "5Mbps"]        # unquoted dotted keys work too
[[zip]]
"flows[1].params.alpha" = [0.1, 0.2, 0.4]
"flows[1].params.beta" = [0.0625, 0.125, 0.25]
""")
    s = Sweep.from_toml(tmp_path / "s.toml")
    assert s.seeds == [4, 9]
    assert s.axis_paths == ["bottleneck.rate", "flows[1].params.alpha", "flows[1].params.beta"]
    points = s.points()
    assert len(points) == 6
    assert points[0] == {"bottleneck.rate": "1.5Mbps", "flows[1].params.alpha": 0.1,
                         "flows[1].params.beta": 0.0625}
    assert points[5] == {"bottleneck.rate": "5Mbps", "flows[1].params.alpha": 0.4,
                         "flows[1].params.beta": 0.25}
    scen = s.scenario_at(points[4], seed=9)
    assert scen["flows"][0]["recovery"] == "newreno" and scen["seed"] == 9
    assert scen["flows"][1]["params"] == {"alpha": 0.2, "beta": 0.125}
    _, runs = s.plan()
    assert [(r.point, r.seed) for r in runs[:3]] == [(0, 4), (0, 9), (1, 4)]


def test_seed_count_starts_at_the_scenario_seed(tiny):
    assert Sweep(tiny, seeds=3).seeds == [3, 4, 5]
    assert Sweep(tiny, seeds=2, base_seed=10).seeds == [10, 11]


@pytest.mark.parametrize("spec, message", [
    ('scenario = "tiny.toml"\nbogus = 1', r"^bogus: unknown sweep key"),
    ('seeds = 2', r"^scenario: missing"),
    ('scenario = "tiny.toml"\nseeds = 0', r"^seeds: must be at least 1"),
    ('scenario = "tiny.toml"\nseeds = [1, 1]', r"^seeds: the list repeats a seed"),
    ('scenario = "tiny.toml"\nmetrics = ["speed"]', r"^metrics: unknown metric 'speed'"),
    ('scenario = "tiny.toml"\n[axes]\nduration = 5', r"^axis duration: must be a list of values"),
    ('scenario = "tiny.toml"\n[axes]\nduration = []', r"^axis duration: needs at least one value"),
    ('scenario = "tiny.toml"\n[axes]\nseed = [1, 2]', r"^axis seed: use `seeds"),
    ('scenario = "tiny.toml"\n[[zip]]\nduration = [5, 6]\n"tcp.tick" = [0.1]',
     r"^zip\[0\]: zipped axes need lists of the same length \(duration has 2, tcp.tick has 1\)"),
    ('scenario = "tiny.toml"\n[axes]\nduration = [5]\n[[zip]]\nduration = [6]',
     r"^axis duration: appears twice"),
    ('scenario = "missing.toml"', r"cannot read scenario file .*missing.toml"),
])
def test_bad_specs_are_named(tmp_path, tiny, spec, message):
    (tmp_path / "bad.toml").write_text(spec)
    with pytest.raises(tf.ScenarioError, match=message):
        Sweep.from_toml(tmp_path / "bad.toml").plan()


def test_run_key_covers_scenario_seed_version_engine_and_metric_definitions(tiny):
    from tcpfriendly import metrics
    from tcpfriendly.version import engine_id
    n = tf.normalize(tiny)
    k, canonical = run_key(n, 1, "0.1.0")
    # a run file computed by another engine build or under older metric definitions is never
    # reused
    assert json.loads(canonical) == {"scenario": n, "seed": 1, "version": "0.1.0",
                                     "engine": engine_id(), "metrics": metrics.VERSION}
    assert run_key(n, 1, "0.1.0", engine=engine_id()) == (k, canonical)
    assert run_key(n, 1, "0.1.0") == (k, canonical)
    assert run_key(n, 1, "0.1.0", engine=engine_id() + "x")[0] != k
    assert run_key(n, 2, "0.1.0")[0] != k
    assert run_key(n, 1, "0.1.1")[0] != k
    assert run_key(dict(n, duration=6.0), 1, "0.1.0")[0] != k
    # The key is of the normalized scenario: two spellings of one rate are one run.
    s = Sweep(tiny, axes={"bottleneck.rate": ["5Mbps", 5000000, "5000kbps"]}, seeds=2)
    _, runs = s.plan()
    assert len(runs) == 6 and len({r.key for r in runs}) == 2
    assert runs[0].key == run_key(json.loads(json.dumps(tf.normalize(dict(
        tf.Scenario.from_toml(tiny).to_dict(), seed=3)))), 3)[0]


# ----- validation before anything runs ---------------------------------------------------------
def test_cli_bad_axis_path_fails_before_any_run(tcpf, tmp_path, tiny):
    (tmp_path / "bad.toml").write_text(
        'scenario = "tiny.toml"\nseeds = 2\n[axes]\n"flows[5].params.beta" = [0.1, 0.2]\n')
    out = tmp_path / "out"
    p = tcpf("sweep", tmp_path / "bad.toml", "--out", out)
    assert p.returncode == 2
    assert p.stderr.splitlines() == [
        "error: axis flows[5].params.beta: index 5 is out of range: flows has 2 entries "
        "(flows[0]..flows[1])"]
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert not out.exists()


def test_cli_invalid_combination_names_the_point(tcpf, tmp_path, tiny):
    (tmp_path / "bad.toml").write_text(
        'scenario = "tiny.toml"\nseeds = 2\n[axes]\n"flows[1].params.beta" = [0.125, 1.5]\n'
        '"bottleneck.rate" = ["5Mbps", "fast"]\n')
    out = tmp_path / "out"
    p = tcpf("sweep", tmp_path / "bad.toml", "--out", out)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        'error: point flows[1].params.beta=0.125, bottleneck.rate="fast": bottleneck.rate:')
    assert lines[0].endswith("(3 of 4 points are invalid)")
    assert not out.exists()


def test_cli_bad_options(tcpf, spec_path, tmp_path):
    p = tcpf("sweep", spec_path, "--workers", "0", "--out", tmp_path / "o")
    assert p.returncode == 2 and p.stderr.startswith("error: --workers:")
    p = tcpf("sweep", spec_path, "--dask", "tcp://127.0.0.1:1", "--workers", "2")
    assert p.returncode == 2 and p.stderr.startswith("error: --workers:")
    p = tcpf("sweep", tmp_path / "nope.toml")
    assert p.returncode == 2 and p.stderr.startswith("error: cannot read sweep file")
    # an --out that is a file: the library says `out`, the CLI `--out`
    (tmp_path / "file").write_text("")
    p = tcpf("sweep", spec_path, "--out", tmp_path / "file")
    assert p.returncode == 2 and p.stderr.startswith(f"error: --out: {tmp_path / 'file'} exists and is not a directory")


def test_library_errors_name_the_parameter(spec_path, tmp_path):
    sweep = Sweep.from_toml(spec_path)
    with pytest.raises(SweepError, match=r"^workers: must be a positive integer, got 0$") as err:
        sw.run_sweep(sweep, None, workers=0)
    assert err.value.field == "workers"
    (tmp_path / "file").write_text("")
    with pytest.raises(SweepError, match=r"^out: .* exists and is not a directory$") as err:
        sw.run_sweep(sweep, tmp_path / "file")
    assert err.value.field == "out"


# ----- running, the table, caching ---------------------------------------------------------------
def test_local_sweep_table_matches_direct_runs(tiny, tmp_path):
    s = grid_sweep(tiny)
    res = s.run(out=tmp_path / "o", workers=2, quiet=True)
    t = res.table
    assert (res.total, res.ran, res.cached, res.failures) == (18, 18, 0, [])
    assert len(t) == 6 * 3 * 2
    assert list(t.columns[:7]) == ["point", "flows[1].params.beta", "bottleneck.rate", "seed",
                                   "group", "algorithm", "recovery"]
    for col in sw.GROUP_METRICS + ["link.bottleneck.utilization", "link.bottleneck.drops",
                                   "link.bottleneck.marks", "link.bottleneck.mean_queue_pkts",
                                   "link.bottleneck_reverse.utilization", "run", "status",
                                   "error"]:
        assert col in t.columns, col
    assert t["seed"].tolist()[:6] == [3, 3, 4, 4, 5, 5]
    assert t["flows[1].params.beta"].dtype == float
    # One row checked against tf.run of the same scenario and seed.
    row = t[(t["flows[1].params.beta"] == 0.25) & (t["bottleneck.rate"] == "1.5Mbps")
            & (t["seed"] == 4) & (t["group"] == 1)].iloc[0]
    scen = tf.Scenario.from_toml(tiny).to_dict()
    scen["flows"][1]["params"]["beta"] = 0.25
    scen["bottleneck"]["rate"] = "1.5Mbps"
    r = tf.run(scen, seed=4)
    g = r.flows[r.flows["group"] == 1]
    assert row["n_flows"] == 2 and row["algorithm"] == "gaimd"
    assert json.loads(row["params"]) == {"alpha": 0.31, "beta": 0.25}
    assert row["goodput_bps_mean"] == pytest.approx(g["goodput_bps"].mean(), rel=1e-12)
    assert row["goodput_bps_sum"] == pytest.approx(g["goodput_bps"].sum(), rel=1e-12)
    assert row["share"] == pytest.approx(g["goodput_bps"].mean() / r.flows["goodput_bps"].mean())
    assert row["timeouts"] == g["timeouts"].sum()
    # pooled over the group (loss events / packets sent), as tcpf run's summary reports it
    assert row["loss_event_rate"] == g["loss_events"].sum() / g["packets_sent"].sum()
    x = g["goodput_bps"]
    assert row["jain"] == pytest.approx(x.sum() ** 2 / (len(x) * (x ** 2).sum()))
    link = r.links.iloc[0]
    assert row["link.bottleneck.drops"] == link["drops"]
    assert row["link.bottleneck.mean_queue_pkts"] == pytest.approx(link["mean_queue_pkts"])
    # The files: the runs (in batch files), the tidy table in Parquet and CSV, the spec.
    out = tmp_path / "o"
    assert stored(out) == set(t["run"]) and len(stored(out)) == 18
    assert not list((out / "runs").glob(".*"))  # no temporaries left
    pd.testing.assert_frame_equal(pd.read_parquet(out / "results.parquet"), t)
    assert len(pd.read_csv(out / "results.csv")) == len(t)
    record = json.loads((out / "sweep.json").read_text())
    assert record["axes"] == ["flows[1].params.beta", "bottleneck.rate"]
    assert {r["key"] for r in record["runs"]} == set(t["run"])
    # the engine build the run keys name, recorded beside the package version
    from tcpfriendly.version import engine_id
    assert record["engine"] == engine_id() and len(record["engine"]) == 16


def test_same_table_with_one_and_two_workers(tiny, tmp_path):
    a = grid_sweep(tiny).run(out=tmp_path / "a", workers=1, quiet=True)
    b = grid_sweep(tiny).run(out=tmp_path / "b", workers=2, quiet=True)
    c = grid_sweep(tiny).run(workers=2, quiet=True)  # in memory, no files
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    pd.testing.assert_frame_equal(a.table, c.table, check_exact=True)
    assert (tmp_path / "a" / "results.csv").read_bytes() == (tmp_path / "b" / "results.csv").read_bytes()


def test_cache_and_resume_only_missing_runs(tiny, tmp_path):
    out = tmp_path / "o"
    first = grid_sweep(tiny).run(out=out, quiet=True)
    again = grid_sweep(tiny).run(out=out, quiet=True)
    assert (again.ran, again.cached) == (0, 18)
    pd.testing.assert_frame_equal(first.table, again.table, check_exact=True)
    # Keep 13 of the 18 runs: the store rewritten without 5 of them.
    store = sw.RunStore(str(out))
    keep = sorted(stored(out))[5:]
    tables = {k: store.try_load(k) for k in keep}
    for f in (out / "runs").iterdir():
        f.unlink()
    store = sw.RunStore(str(out))
    for k in keep:
        store.save(k, tables[k])
    store.flush()
    lines = []
    resumed = sw.run_sweep(grid_sweep(tiny), out, log=lines.append)
    assert lines[0] == "sweep: 18 runs (6 points x 3 seeds): 13 already done, 5 to run"
    assert (resumed.ran, resumed.cached) == (5, 13)
    pd.testing.assert_frame_equal(first.table, resumed.table, check_exact=True)
    # More seeds reuse the runs already there.
    more = grid_sweep(tiny, seeds=4).run(out=out, quiet=True)
    assert (more.ran, more.cached) == (6, 18)
    # A batch another process writes after a store has listed the directory (a process
    # worker storing its own chunk) is seen once the store refreshes its listing: the count a
    # Ctrl-C prints is read this way.
    reader = sw.RunStore(str(out), create=False)
    late = sorted(stored(out))[0]
    table = reader.try_load(late)
    for f in (out / "runs").iterdir():
        f.unlink()
    writer = sw.RunStore(str(out))
    assert writer.try_load(late) is None
    fresh = sw.RunStore(str(out), create=False)
    assert fresh.try_load(late) is None  # lists the (now empty) directory
    writer.save(late, table)
    writer.flush()
    assert fresh.try_load(late) is None  # its listing predates the batch
    fresh.refresh()
    assert fresh.try_load(late).num_rows == table.num_rows


def test_a_rebuilt_engine_reruns_every_run_and_the_same_build_none(tiny, tmp_path, monkeypatch):
    """The package version stays the same when the engine changes: the engine build's id in
    the key is what keeps a rerun after an engine change from reusing the old build's runs."""
    from tcpfriendly import version
    out = tmp_path / "o"
    first = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    assert (first.ran, first.cached) == (6, 0)
    same = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    assert (same.ran, same.cached) == (0, 6)
    real = version.engine_id()
    monkeypatch.setattr(version, "engine_id", lambda: real + "-rebuilt")
    rebuilt = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    assert (rebuilt.ran, rebuilt.cached) == (6, 0)
    monkeypatch.setattr(version, "engine_id", lambda: real)
    back = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    assert (back.ran, back.cached) == (0, 6)


def test_failed_runs_are_reported_and_retried_on_rerun(tiny, tmp_path, monkeypatch):
    real = sw.execute

    def flaky(scenario_json, seed, key, per_flow=False):
        if seed == 4 and '"beta":0.25' in scenario_json:
            raise RuntimeError("engine exploded")
        return real(scenario_json, seed, key, per_flow)

    from tcpfriendly.sweep import executors  # where the thread executor looks it up
    monkeypatch.setattr(executors, "execute", flaky)
    # threads: the patched function runs in this process (a warm process pool would not see it)
    res = grid_sweep(tiny).run(out=tmp_path / "o", workers=2, quiet=True, executor="threads")
    assert len(res.failures) == 2 and res.ran == 16 and res.missing == 2
    assert "seed 4: engine exploded" in res.failure_label(0)
    # 16 runs x 2 flow groups, and one row per failed run (status "failed", the message)
    assert len(res.table) == 16 * 2 + 2
    bad = res.table[res.table["status"] == "failed"]
    assert bad["seed"].tolist() == [4, 4] and bad["flows[1].params.beta"].tolist() == [0.25, 0.25]
    assert bad["error"].tolist() == ["engine exploded"] * 2 and bad["share"].isna().all()
    monkeypatch.setattr(executors, "execute", real)
    again = grid_sweep(tiny).run(out=tmp_path / "o", quiet=True)
    assert (again.ran, again.cached, again.failures) == (2, 16, [])


def test_metric_selection(tiny):
    s = grid_sweep(tiny, seeds=1, metrics=["share", "link.utilization", "link.bottleneck.drops"])
    t = s.run(quiet=True).table
    # group metrics in the spec's order, then link columns link by link (bottleneck first)
    assert list(t.columns[9:]) == ["share", "link.bottleneck.utilization", "link.bottleneck.drops",
                                   "link.bottleneck_reverse.utilization", "run", "status",
                                   "error"]


def test_axis_values_of_mixed_kinds_become_json_text(tiny):
    s = Sweep(tiny, axes={"bottleneck.loss": [{"model": "bernoulli", "p": 0.01}, None]}, seeds=1)
    t = s.run(quiet=True).table
    assert t["bottleneck.loss"].tolist()[::2] == ['{"model":"bernoulli","p":0.01}', "null"]
    s = Sweep(tiny, axes={"flows[0].count": [1, 2], "bottleneck.red.max_p": [0.05, 0.2]}, seeds=1)
    t = s.run(quiet=True).table
    assert t["flows[0].count"].dtype == "int64" and t["n_flows"].tolist()[:2] == [1, 2]


def test_stale_temporaries_of_dead_processes_are_removed(tiny, tmp_path):
    runs = tmp_path / "o" / "runs"
    runs.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True).stdout.strip()
    stale = runs / f".abc.parquet.{dead}.123.tmp"
    stale.write_text("partial")
    mine = runs / f".def.parquet.{os.getpid()}.1.tmp"
    mine.write_text("partial")
    grid_sweep(tiny, seeds=1).run(out=tmp_path / "o", quiet=True)
    assert not stale.exists() and mine.exists()


def test_progress_bar_shows_count_rate_and_eta():
    buf = io.StringIO()
    bar = sw.Progress(3, enabled=True, stream=buf)
    for _ in range(3):
        bar.update(True)
    bar.close()
    text = buf.getvalue()
    assert "3/3" in text and "runs/s" in text and "ETA" in text and text.endswith("\n")
    quiet = io.StringIO()
    sw.Progress(3, enabled=False, stream=quiet).update(True)
    assert quiet.getvalue() == ""


# ----- the CLI ---------------------------------------------------------------------------------
def test_cli_sweep_writes_table_and_is_quiet_without_a_tty(tcpf, spec_path, tmp_path):
    out = tmp_path / "o"
    p = tcpf("sweep", spec_path, "--out", out, "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert p.stderr == "sweep: 18 runs (6 points x 3 seeds): 0 already done, 18 to run\n"
    assert p.stdout.startswith("sweep: 18/18 runs done (18 run now, 0 cached) in ")
    assert "36 rows" in p.stdout and str(out / "results.csv") in p.stdout
    t = pd.read_csv(out / "results.csv")
    assert len(t) == 36 and "flows[1].params.beta" in t.columns
    # then the summary table: a row per point and group, mean ± CI over the 3 seeds
    lines = p.stdout.splitlines()
    assert lines[1] == "mean ± 95% CI half-width over 3 seeds, per grid point and flow group:"
    assert lines[2].split()[:6] == ["flows[1].params.beta", "bottleneck.rate", "group", "algorithm", "seeds", "share"]
    rows = [line.split() for line in lines[3:]]
    assert len(rows) == 12 and all(r[4] == "3" and r[6] == "±" for r in rows), lines
    first = t[(t["flows[1].params.beta"] == 0.0625) & (t["bottleneck.rate"] == "1.5Mbps") & (t["group"] == 1)]
    assert rows[1][:4] == ["0.0625", "1.5Mbps", "1", "gaimd"]
    assert float(rows[1][5]) == pytest.approx(first["share"].mean(), rel=1e-3)
    assert "every seed gave the same numbers" not in p.stdout    # RED and start ranges differ
    p = tcpf("sweep", "run", spec_path, "--out", out, "--dry-run")
    assert p.returncode == 0 and "18 already done, 0 to run (dry run" in p.stdout
    assert "point 5: flows[1].params.beta=0.25, bottleneck.rate='5Mbps'" in p.stdout


def test_sweep_text_is_the_report_table_cut_to_its_first_rows(tiny, tmp_path):
    from tcpfriendly.report.sweep_summary import sweep_text

    res = grid_sweep(tiny, seeds=2).run(out=tmp_path / "a", workers=1, quiet=True)
    text = sweep_text(res, max_rows=2).splitlines()
    assert len(text) == 1 + 1 + 2 + 1
    assert text[-1] == (f"  ... first 2 of 12 rows: every run is in the results table "
                        f"(`tcpf report {res.out}` for the page with figures)")
    # the same cells as the report's table (one home: report.sweep_summary._rows)
    html = res._repr_html_()
    parts = text[2].split()
    assert parts[6] == "±"
    assert f">{parts[5]} ± {parts[7]}</td>" in html      # the first row's share


def test_cli_sweep_says_when_the_seeds_gave_the_same_runs(tcpf, tmp_path):
    # DropTail, fixed delays and start times, no timeout: the seeds (TCP's timer phase) change
    # nothing, and the table's CI of 0 is explained rather than left to look like precision
    (tmp_path / "fixed.toml").write_text(TINY.replace('queue = "red"', 'queue = "droptail"')
                                         .replace('access_delay = "1ms..5ms"', 'access_delay = "2ms"'))
    (tmp_path / "spec.toml").write_text('scenario = "fixed.toml"\nseeds = 2\n[axes]\n'
                                        '"bottleneck.rate" = ["5Mbps", "6Mbps"]\n')
    p = tcpf("sweep", tmp_path / "spec.toml", "--out", tmp_path / "o")
    assert p.returncode == 0, p.stderr
    assert "note: at 2 of 2 points every seed gave the same numbers" in p.stdout
    t = pd.read_csv(tmp_path / "o" / "results.csv")
    assert (t.groupby(["bottleneck.rate", "group"])["share"].nunique() == 1).all()


def test_cli_plot_line_and_heatmap(tcpf, spec_path, tmp_path):
    from tcpfriendly.sweep.plot import plot

    out = tmp_path / "o"
    assert tcpf("sweep", spec_path, "--out", out).returncode == 0
    line = tmp_path / "line.png"
    p = tcpf("sweep", "plot", out, "--x", "flows[1].params.beta", "--y", "share",
             "--hue", "bottleneck.rate", "--group", "1", "--out", line)
    assert p.returncode == 0, p.stderr
    assert p.stdout == f"wrote {line}\n"
    assert line.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    heat = tmp_path / "heat.png"
    plot(out, kind="heatmap", x="flows[1].params.beta", hue="bottleneck.rate",
         y="link.bottleneck.drops", out=heat)
    assert heat.stat().st_size > 1000
    fig = plot(out, x="flows[1].params.beta", y="share", where={"bottleneck.rate": "5Mbps"},
               out=tmp_path / "groups.png")  # one line per flow group
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "share 1 (fair)", "group 0 (tcp)", "group 1 (gaimd)"]
    one = plot(out, x="flows[1].params.beta", y="share", group=1, where={"bottleneck.rate": "5Mbps"},
               out=tmp_path / "one.png")  # the title names the group's algorithm
    assert one.axes[0].get_title().endswith("group 1 (gaimd), bottleneck.rate=5Mbps")
    # the library names its parameters; the CLI names its flags
    with pytest.raises(tf.ScenarioError, match=r"^where: these axes vary and are neither x "
                                               r"nor hue: bottleneck.rate \(1.5Mbps, 5Mbps\)") as err:
        plot(out, x="flows[1].params.beta", y="share", out=tmp_path / "x.png")
    assert err.value.field == "where"
    with pytest.raises(tf.ScenarioError, match=r"^y: 'speed' is not a metric"):
        plot(out, x="flows[1].params.beta", y="speed", out=tmp_path / "x.png")
    with pytest.raises(tf.ScenarioError, match=r"^hue: a heatmap needs a second axis"):
        plot(out, kind="heatmap", x="bottleneck.rate", y="share", group=0, out=tmp_path / "x.png")
    p = tcpf("sweep", "plot", out, "--x", "flows[1].params.beta", "--y", "speed", "--out", tmp_path / "x.png")
    assert p.returncode == 2 and p.stderr.startswith("error: --y: 'speed' is not a metric"), p.stderr
    assert p.stderr.count("\n") == 1
    p = tcpf("sweep", "plot", tmp_path, "--x", "a", "--y", "share", "--out", tmp_path / "x.png")
    assert p.returncode == 2 and "no sweep results here" in p.stderr


def test_summarize_mean_and_t_interval():
    df = pd.DataFrame({"x": [1, 1, 1, 2], "v": [1.0, 2.0, 3.0, 5.0]})
    s = summarize(df, ["x"], "v")
    assert s["mean"].tolist() == [2.0, 5.0] and s["n"].tolist() == [3, 1]
    assert s["ci95"][0] == pytest.approx(4.302653 / 3 ** 0.5)
    assert pd.isna(s["ci95"][1])
    assert t975(9) == pytest.approx(2.262157) and t975(60) == pytest.approx(2.000298, abs=1e-5)


# ----- Ctrl-C ----------------------------------------------------------------------------------
#: Runs of SLOW in the Ctrl-C tests: enough that the interrupt, sent once 3 are stored (run files
#: are written about once a second), comes before the last one ends on a fast host (a SLOW run
#: takes 50-100 ms of CPU; 40 runs were all done first on a host where 2 workers did ~35 runs/s).
SLOW_SEEDS = 200
SLOW = """\
duration = 100
seed = 1
measure = { from = 10, to = 100 }
[bottleneck]
rate = "20Mbps"
delay = "20ms"
queue = "red"
limit = "2.5bdp"
[[flows]]
count = 4
algorithm = "tcp"
recovery = "sack"
access_delay = "1ms..5ms"
[[flows]]
count = 4
algorithm = "gaimd"
params = { alpha = 0.31, beta = 0.125 }
access_delay = "1ms..5ms"
"""


@pytest.mark.parametrize("local", [["--workers", "1"], ["--workers", "2", "--processes"]],
                         ids=["threads", "processes"])
def test_sigint_keeps_finished_runs_and_rerun_runs_only_the_missing(tmp_path, local):
    (tmp_path / "slow.toml").write_text(SLOW)
    spec = tmp_path / "spec.toml"
    spec.write_text(f'scenario = "slow.toml"\nseeds = {SLOW_SEEDS}\n')
    out = tmp_path / "o"
    runs = out / "runs"
    env = dict(os.environ)
    env.pop("TCPF_TRACEBACK", None)
    cmd = _tcpf_command() + ["sweep", str(spec), "--out", str(out), *local]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(REPO), env=env, preexec_fn=default_sigint)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if runs.is_dir() and len(stored(out)) >= 3:
            break
        time.sleep(0.01)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    done = sorted(stored(out))
    assert 3 <= len(done) < SLOW_SEEDS
    assert not list(runs.glob(".*"))  # nothing half-written
    errors = [l for l in stderr.splitlines() if l.startswith("error:")]
    assert errors == [f"error: interrupted: {len(done)} of {SLOW_SEEDS} runs done and kept in {out}; "
                      f"rerun to finish the {SLOW_SEEDS - len(done)} missing"]
    assert "Traceback" not in stderr
    partial = pd.read_parquet(out / "results.parquet")
    assert len(partial) == 2 * len(done) and set(partial["run"]) == set(done)
    store = sw.RunStore(str(out), create=False)
    for key in done:
        assert store.try_load(key).num_rows == 2
    # Rerun: only the missing runs.
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=str(REPO), env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert f"sweep: {SLOW_SEEDS} runs (1 point x {SLOW_SEEDS} seeds): {len(done)} already done, {SLOW_SEEDS - len(done)} to run" \
        in p.stderr
    assert f"({SLOW_SEEDS - len(done)} run now, {len(done)} cached)" in p.stdout
    full = pd.read_parquet(out / "results.parquet")
    assert len(full) == 2 * SLOW_SEEDS and full["seed"].tolist()[::2] == list(range(1, SLOW_SEEDS + 1))


def test_bare_tcpf_sweep_prints_help(tcpf):
    p = tcpf("sweep")
    assert p.returncode == 0 and p.stdout.startswith("Usage: tcpf sweep")
    assert "plot" in p.stdout and p.stderr == ""


# ----- hardening (issue 17): grid size, corrupt cache files, a poisoned point -------------------
def test_grid_size_is_refused_before_anything_is_expanded(tcpf, tmp_path, tiny):
    from tcpfriendly.sweep.core import MAX_RUNS

    axes = "".join(f'"flows[1].params.p{i}" = {list(range(10))}\n' for i in range(9))
    (tmp_path / "grid.toml").write_text(f'scenario = "tiny.toml"\n[axes]\n{axes}')
    (tmp_path / "seeds.toml").write_text('scenario = "tiny.toml"\nseeds = 1000000000\n')
    for spec, field in (("grid.toml", "axes.flows[1].params.p0"), ("seeds.toml", "seeds")):
        for extra in ([], ["--dry-run"]):
            start = time.monotonic()
            p = tcpf("sweep", tmp_path / spec, "--out", tmp_path / "o", *extra)
            assert time.monotonic() - start < 5
            assert p.returncode == 2 and p.stdout == "", (p.stdout, p.stderr)
            assert p.stderr.count("\n") == 1 and p.stderr.startswith(f"error: {field}: "), p.stderr
            assert "1000000000 runs" in p.stderr and f"limit of {MAX_RUNS}" in p.stderr
    assert not (tmp_path / "o").exists()
    # the library: a range of 10**9 values or seeds is refused from its length alone
    start = time.monotonic()
    with pytest.raises(SweepError) as err:
        Sweep(tiny, axes={"duration": range(1, 10**9)})
    assert err.value.field == "axes.duration"
    with pytest.raises(SweepError) as err:
        Sweep(tiny, axes={"duration": [5, 6]}, seeds=10**9)
    assert err.value.field == "seeds"
    with pytest.raises(SweepError) as err:
        Sweep(tiny, axes={"duration": [5, 6]}, seeds=range(10**9))
    assert err.value.field == "seeds"
    assert time.monotonic() - start < 1
    ok = Sweep(tiny, axes={"duration": list(range(5, 15))}, seeds=MAX_RUNS // 10)
    assert ok.size() == (10, MAX_RUNS // 10)


def _one_batch_per_run(out):
    """Rewrite the store of ``out`` with one batch file per run; returns the files."""
    store = sw.RunStore(str(out))
    tables = {k: store.try_load(k) for k in sorted(stored(out))}
    for f in (out / "runs").iterdir():
        f.unlink()
    store = sw.RunStore(str(out))
    for key, t in tables.items():
        store.save(key, t)
        store.flush()
    return sorted((out / "runs").iterdir())


def test_empty_or_corrupt_run_files_are_redone_and_repaired(tiny, tmp_path):
    out = tmp_path / "o"
    first = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    files = _one_batch_per_run(out)
    assert len(files) == 6
    files[0].write_bytes(b"")                       # 0 bytes
    files[1].write_bytes(files[1].read_bytes()[:100])  # truncated
    files[2].write_bytes(files[3].read_bytes())     # another run's file
    again = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    assert (again.ran, again.cached, again.failures) == (3, 3, [])
    pd.testing.assert_frame_equal(first.table, again.table, check_exact=True)
    third = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)  # repaired: nothing to redo
    assert (third.ran, third.cached) == (0, 6)
    import pyarrow.parquet as pq

    for f in (out / "runs").iterdir():  # the unreadable batches were removed (or rewritten)
        pq.read_table(f)


def test_run_files_of_the_one_file_per_run_layout_are_still_read(tiny, tmp_path):
    import pyarrow.parquet as pq

    out = tmp_path / "o"
    first = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    store = sw.RunStore(str(out))
    tables = {k: store.try_load(k) for k in sorted(stored(out))}
    for f in (out / "runs").iterdir():
        f.unlink()
    for key, t in tables.items():  # <key>.parquet, the key in its footer, as older versions wrote
        pq.write_table(t.replace_schema_metadata({"tcpfriendly.key": key}),
                       out / "runs" / f"{key}.parquet")
    again = grid_sweep(tiny, seeds=1).run(out=out, quiet=True)
    assert (again.ran, again.cached) == (0, 6)
    pd.testing.assert_frame_equal(first.table, again.table, check_exact=True)


POISON_SPEC = """\
scenario = "tiny.toml"
seeds = 2

[axes]
"flows[1].algorithm" = ["formula"]
"flows[1].params" = [{ increase = "1", decrease = "0.5*w" },
                     { increase = "log(w-w)", decrease = "0.5*w" },
                     { increase = "2", decrease = "0.5*w" }]
"""


def test_cli_poisoned_point_fails_alone_and_is_reported(tcpf, tmp_path, tiny):
    # log(w-w) parses, and evaluates to -inf when the flow first grows: a run-time failure
    (tmp_path / "poison.toml").write_text(POISON_SPEC)
    out = tmp_path / "o"
    p = tcpf("sweep", tmp_path / "poison.toml", "--out", out, "--workers", "2")
    assert p.returncode == 1, (p.stdout, p.stderr)
    assert p.stdout.startswith("sweep: 4/6 runs done (4 run now, 0 cached, 2 failed)")
    failed_lines = [l for l in p.stdout.splitlines() if l.startswith("  failed: point 1: ")]
    assert len(failed_lines) == 2 and all("evaluated to -inf" in l for l in failed_lines)
    assert p.stderr.splitlines()[-1].startswith("error: 2 of 6 runs failed")
    t = pd.read_csv(out / "results.csv", keep_default_na=False)
    assert t["status"].tolist() == ["ok"] * 4 + ["failed"] * 2 + ["ok"] * 4
    bad = t[t["status"] == "failed"]
    assert bad["point"].tolist() == [1, 1] and bad["seed"].tolist() == [3, 4]
    assert all('formula increase = "log(w-w)" evaluated to -inf' in e for e in bad["error"])
    assert (t[t["status"] == "ok"]["error"] == "").all()
    assert len(stored(out)) == 4


def test_any_exception_of_a_run_fails_that_run_alone(tiny, monkeypatch):
    from tcpfriendly.sweep import executors

    class Panic(BaseException):  # what a Rust panic raises through PyO3
        pass

    real = executors.execute

    def poisoned(scenario_json, seed, key, per_flow=False):
        if '"beta":0.125' in scenario_json:
            raise Panic("index out of bounds")
        return real(scenario_json, seed, key, per_flow)

    monkeypatch.setattr(executors, "execute", poisoned)
    res = grid_sweep(tiny, seeds=2).run(workers=2, quiet=True, executor="threads")
    assert (res.total, res.ran, len(res.failures)) == (12, 8, 4)
    assert [(r.point, r.seed) for r, _ in res.failures] == [(2, 3), (2, 4), (3, 3), (3, 4)]
    assert {m for _, m in res.failures} == {"Panic: index out of bounds"}
    t = res.table
    assert (t[t["point"].isin([2, 3])]["status"] == "failed").all()
    assert (t[~t["point"].isin([2, 3])]["status"] == "ok").all() and len(t) == 8 * 2 + 4


def test_summaries_and_plots_leave_failed_runs_out(tiny, monkeypatch, tmp_path):
    from tcpfriendly.sweep import executors
    from tcpfriendly.sweep.plot import plot

    real = executors.execute

    def poisoned(scenario_json, seed, key, per_flow=False):
        if seed == 4 and '"beta":0.25' in scenario_json:
            raise RuntimeError("poisoned")
        return real(scenario_json, seed, key, per_flow)

    monkeypatch.setattr(executors, "execute", poisoned)
    res = grid_sweep(tiny, seeds=2).run(out=tmp_path / "o", quiet=True, executor="threads")
    assert res.table["status"].tolist().count("failed") == 2  # rows without metrics, and...
    s = summarize(res.table, ["flows[1].params.beta", "bottleneck.rate", "group"], "share")
    assert len(s) == 6 * 2 and s["n"].tolist() == [2] * 8 + [1] * 4
    fig = plot(tmp_path / "o", x="flows[1].params.beta", y="share", hue="bottleneck.rate",
               group=1, out=tmp_path / "share.png")
    assert fig is not None and (tmp_path / "share.png").stat().st_size > 0


# ----- the process executor (issue 15) --------------------------------------------------------
def test_processes_give_the_threads_table_byte_for_byte(tiny, tmp_path):
    threads = grid_sweep(tiny).run(out=tmp_path / "t", workers=2, quiet=True)
    procs = grid_sweep(tiny).run(out=tmp_path / "p", workers=2, quiet=True, executor="processes")
    assert (procs.ran, procs.failures) == (18, [])
    pd.testing.assert_frame_equal(threads.table, procs.table, check_exact=True)
    for name in ("results.csv", "results.parquet"):
        assert (tmp_path / "t" / name).read_bytes() == (tmp_path / "p" / name).read_bytes()
    assert stored(tmp_path / "p") == set(threads.table["run"])
    again = grid_sweep(tiny).run(out=tmp_path / "p", quiet=True, executor="processes")
    assert (again.ran, again.cached) == (0, 18)


def test_processes_and_threads_give_the_same_table_with_failures_and_many_chunks(tiny, tmp_path):
    """Enough runs for chunks of several sizes, a failing point among them: the process
    executor's table and files are the thread executor's, row for row and byte for byte."""
    spec = POISON_SPEC.replace("seeds = 2", "seeds = 12")
    (tmp_path / "poison.toml").write_text(spec)
    res = {}
    for executor in ("threads", "processes"):
        res[executor] = Sweep.from_toml(tmp_path / "poison.toml").run(
            out=tmp_path / executor, workers=2, quiet=True, executor=executor)
    t, p = res["threads"], res["processes"]
    assert (p.total, p.ran, len(p.failures)) == (t.total, t.ran, len(t.failures)) == (36, 24, 12)
    assert [(r.point, r.seed, m) for r, m in p.failures] == \
        [(r.point, r.seed, m) for r, m in t.failures]
    pd.testing.assert_frame_equal(t.table, p.table, check_exact=True)
    for name in ("results.csv", "results.parquet"):
        assert (tmp_path / "threads" / name).read_bytes() == \
            (tmp_path / "processes" / name).read_bytes()
    assert stored(tmp_path / "processes") == stored(tmp_path / "threads")


def test_runs_table_slices_are_each_runs_own_table(tiny):
    """One table for many runs (what a worker process builds): each run's slice, its columns
    selected, equals the run's own table, also when runs have different columns (a link more)
    or no rows at all."""
    _, runs = grid_sweep(tiny, seeds=1).plan()
    results = [(r.key, sw.execute(r.scenario_json, r.seed, r.key)) for r in runs[:3]]
    extra = [dict(row, **{"link.extra.drops": 7}) for row in results[1][1]]
    results = [results[0], ("k-extra", extra), ("k-empty", []), results[1], results[2]]
    table, entries = sw.store.runs_table(results)
    assert [e[0] for e in entries] == [key for key, _ in results]
    for (key, rows), (k, first, count, columns) in zip(results, entries):
        own = sw.rows_table(rows)
        assert (k, count, columns) == (key, own.num_rows, own.column_names)
        mine = table.slice(first, count).select(columns)
        assert mine.schema.equals(own.schema)  # (Table.equals would call NaN != NaN)
        pd.testing.assert_frame_equal(mine.to_pandas(), own.to_pandas(), check_exact=True)
    assert "link.extra.drops" in table.column_names


def test_auto_executor_takes_processes_where_they_scale(monkeypatch):
    from tcpfriendly.sweep import executors
    from tcpfriendly.sweep.runner import AUTO_PROCESS_RUNS, local_executor

    executors.shutdown_pools()
    monkeypatch.setattr(executors, "main_is_importable", lambda: True)
    import tcpfriendly.sweep.runner as runner
    monkeypatch.setattr(runner, "main_is_importable", lambda: True)
    assert local_executor("auto", 1, 10 * AUTO_PROCESS_RUNS) == "threads"  # one worker
    assert local_executor("auto", 2, AUTO_PROCESS_RUNS - 1) == "threads"  # a cold pool: not worth it
    assert local_executor("auto", 2, AUTO_PROCESS_RUNS) == "processes"
    assert local_executor("threads", 2, 10 * AUTO_PROCESS_RUNS) == "threads"
    assert local_executor("processes", 1, 1) == "processes"
    monkeypatch.setattr(runner, "main_is_importable", lambda: False)  # an unguarded script
    assert local_executor("auto", 2, 10 * AUTO_PROCESS_RUNS) == "threads"
    executors.process_pool(2)  # a warm pool is used for any sweep of 2 runs or more
    try:
        assert local_executor("auto", 2, 2) == "processes"
        assert local_executor("auto", 3, 100) == "threads"
    finally:
        executors.shutdown_pools()
    assert local_executor("auto", 2, 2) == "threads"


def test_threads_scale_where_the_python_of_a_run_hardly_holds_the_gil():
    from tcpfriendly.sweep.executors import THREADS_GIL_SHARE, threads_scale

    assert THREADS_GIL_SHARE == 0.2
    long = [(0.045, 0.0435), (0.047, 0.0455)]  # jin2001-red-32, 120 s: 1.5 ms of Python
    short = [(0.0037, 0.0019), (0.0036, 0.0018)]  # the same at 5 s: half the run is Python
    assert threads_scale(long, 2) and not threads_scale(short, 2)
    assert not threads_scale(long, 8)  # 8 x 1.5 ms > 0.2 x 46 ms: the GIL would be the limit
    assert threads_scale([(0.010, 0.0091)], 2) and not threads_scale([(0.010, 0.0089)], 2)  # 0.2 of 10 ms
    assert not threads_scale([], 2) and not threads_scale([(0.0, 0.0)], 2)
    assert threads_scale([(0.010, 0.0101)], 2)  # (timer jitter: no negative Python time)


@pytest.mark.parametrize("scale", [True, False])
def test_auto_times_the_first_runs_on_threads_then_keeps_what_scales(tiny, tmp_path, monkeypatch,
                                                                       scale):
    """With a warm pool, ``auto`` runs one run per worker on threads, timed (the run and its
    engine), and the rest on threads or on the pool as :func:`threads_scale` says: the table
    and files are the thread executor's byte for byte either way, and the result names what
    ran the runs."""
    from tcpfriendly.sweep import executors

    seen = []

    def decide(samples, workers):
        seen.append((list(samples), workers))
        return scale

    monkeypatch.setattr(executors, "threads_scale", decide)
    threads = grid_sweep(tiny).run(out=tmp_path / "t", workers=2, quiet=True, executor="threads")
    assert threads.executor == "threads"
    executors.process_pool(2)
    try:
        auto = grid_sweep(tiny).run(out=tmp_path / "a", workers=2, quiet=True)
    finally:
        executors.shutdown_pools()
    assert auto.executor == ("threads" if scale else "processes") and (auto.ran, auto.failures) == (18, [])
    [(samples, workers)] = seen
    assert workers == 2 and len(samples) == 2
    assert all(0 < engine <= run for run, engine in samples)
    pd.testing.assert_frame_equal(threads.table, auto.table, check_exact=True)
    for name in ("results.csv", "results.parquet"):
        assert (tmp_path / "t" / name).read_bytes() == (tmp_path / "a" / name).read_bytes()
    assert stored(tmp_path / "a") == stored(tmp_path / "t")
    again = grid_sweep(tiny).run(out=tmp_path / "a", workers=2, quiet=True)
    assert (again.ran, again.cached, again.executor) == (0, 18, None)


def test_chunks_shrink_to_the_end_and_stay_long_enough():
    from tcpfriendly.sweep.executors import MAX_CHUNK_SECONDS, MIN_CHUNK_SECONDS, _chunk_size
    from tcpfriendly.sweep.store import BATCH_RUNS

    def sizes(n, workers, run_s):
        out, left = [], n
        while left:
            out.append(_chunk_size(left, workers, run_s))
            left -= out[-1]
        return out

    assert _chunk_size(200, 2, None) == 1  # the first chunks: the run time is not known yet
    short = sizes(200, 2, 0.003)  # quickstart at 5 s: 3 ms a run
    assert sum(short) == 200 and short == sorted(short, reverse=True)
    assert short[0] == 50 and min(short[:-1]) * 0.003 >= MIN_CHUNK_SECONDS
    long = sizes(40, 2, 0.08)  # jin2001-red-32: 80 ms a run
    assert sum(long) == 40 and long[0] == 10 and long[-3:] == [1, 1, 1]
    assert max(sizes(60, 2, 0.4)) * 0.4 <= MAX_CHUNK_SECONDS  # a second of runs at most...
    assert sizes(3, 2, 30.0) == [1, 1, 1]  # ...or one run
    assert max(sizes(100_000, 2, 1e-4)) == BATCH_RUNS


def test_processes_a_dead_worker_fails_the_unfinished_runs_and_a_rerun_redoes_them(tmp_path):
    from tcpfriendly.sweep import executors

    (tmp_path / "slow.toml").write_text(SLOW)
    sweep = Sweep(tmp_path / "slow.toml", seeds=16)
    killed = []

    def kill_a_worker(run, ok):  # after the first chunk: others are running or waiting
        if not killed:
            killed.append(executors.pool_pids()[0])
            os.kill(killed[0], signal.SIGKILL)

    res = sweep.run(out=tmp_path / "o", workers=2, quiet=True, executor="processes",
                    on_run=kill_a_worker)
    assert killed and 1 <= res.ran < 16 and res.ran + len(res.failures) == 16
    assert all("terminated abruptly" in m for _, m in res.failures)
    assert not executors.pool_is_warm(2)  # the broken pool is dropped...
    again = sweep.run(out=tmp_path / "o", workers=2, quiet=True, executor="processes")
    assert (again.ran, again.cached, again.failures) == (16 - res.ran, res.ran, [])  # ...and remade


@pytest.mark.parametrize("at", [1, 3])
def test_processes_a_ctrl_c_right_after_a_submit_leaves_no_chunk_untracked(tmp_path, monkeypatch, at):
    """The race of a Ctrl-C between ``pool.submit`` and recording its future (the chunk was
    sent, the sweep did not know): made deterministic by raising SIGINT inside the pool's
    ``submit`` of chunk ``at``. Every chunk sent must be cancelled or waited for, so that when
    the sweep returns no worker stores a run any more, the runs it counts are those on disk,
    and a rerun runs only the missing ones. (The old code lost track of that chunk: with
    ``at=1`` it was stored a few hundred milliseconds after the sweep had counted 0 runs.)"""
    from concurrent.futures import wait

    from tcpfriendly.sweep import SweepInterrupted, executors

    (tmp_path / "slow.toml").write_text(SLOW)
    real_pool = executors.process_pool
    sent = []

    class InterruptedInSubmit:
        def __init__(self, pool):
            self.pool = pool

        def __getattr__(self, name):
            return getattr(self.pool, name)

        def submit(self, fn, *args):
            fut = self.pool.submit(fn, *args)
            sent.append(fut)
            if len(sent) == at:  # the chunk is the pool's; its future is not yet returned
                signal.raise_signal(signal.SIGINT)
            return fut

    monkeypatch.setattr(executors, "process_pool",
                        lambda workers, start=True: InterruptedInSubmit(real_pool(workers, start)))
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as under a terminal
    out = tmp_path / "o"
    try:
        with pytest.raises(SweepInterrupted) as stop:
            Sweep(tmp_path / "slow.toml", seeds=6).run(out=out, workers=2, quiet=True,
                                                       executor="processes")
    finally:
        signal.signal(signal.SIGINT, before)
    res = stop.value.result
    counted = stored(out)
    assert len(sent) >= at
    _, not_done = wait(sent, timeout=60)  # whatever was sent has finished (and stored) now
    assert not not_done
    assert stored(out) == counted  # nothing was stored after the sweep returned its count
    ran = {run[0] for f in sent if not f.cancelled() for run in f.result()[1]}
    assert ran == counted  # every chunk that ran was waited for and counted
    assert (res.cached, res.ran, res.failures) == (0, len(counted), [])
    assert len(counted) < 6 and set(res.table["run"]) == counted
    monkeypatch.setattr(executors, "process_pool", real_pool)
    again = Sweep(tmp_path / "slow.toml", seeds=6).run(out=out, workers=2, quiet=True,
                                                       executor="processes")
    assert (again.cached, again.ran, again.failures) == (len(counted), 6 - len(counted), [])


def test_threads_a_run_finished_after_a_second_ctrl_c_is_not_stored_behind_the_count(
        tiny, tmp_path, monkeypatch):
    """A thread abandoned at a second Ctrl-C cannot be stopped: it finishes its run after the
    sweep counted the runs on disk. That run must not be stored then (the count would be below
    what is on disk): the store is closed before the count, and a rerun redoes the run. Made
    deterministic: the second run started waits for the test; the first Ctrl-C comes with the first
    finished run, the second 0.3 s later; every save writes at once (BATCH_SECONDS = 0)."""
    import threading

    from tcpfriendly.sweep import SweepInterrupted, executors, store as store_mod

    real_execute = executors.execute
    release, calls, blocked = threading.Event(), [], []

    def execute(scenario_json, seed, key, per_flow=False):
        calls.append(seed)
        if len(calls) == 2:
            blocked.append(threading.current_thread())
            assert release.wait(30)
        return real_execute(scenario_json, seed, key, per_flow)

    monkeypatch.setattr(executors, "execute", execute)
    monkeypatch.setattr(store_mod, "BATCH_SECONDS", 0.0)
    timers = []

    def ctrl_c_twice(run, ok):
        if not timers:
            timers.append(threading.Timer(0.3, signal.raise_signal, (signal.SIGINT,)))
            timers[0].start()
            signal.raise_signal(signal.SIGINT)

    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as under a terminal
    out = tmp_path / "o"
    lines = []
    try:
        with pytest.raises(SweepInterrupted) as stop:
            sw.run_sweep(Sweep(tiny, seeds=4), out, workers=2, executor="threads",
                         log=lines.append, on_run=ctrl_c_twice)
        timers[0].join()
    finally:
        signal.signal(signal.SIGINT, before)
        release.set()
    assert lines[-1] in ("abandoned 1 run in progress", "abandoned 2 runs in progress")
    res = stop.value.result
    counted = stored(out)
    blocked[0].join(30)  # the abandoned run has finished now
    assert not blocked[0].is_alive()
    assert stored(out) == counted  # and was not stored behind the count
    assert 1 <= len(counted) <= 3 and (res.cached, res.ran) == (0, len(counted))
    assert set(res.table["run"]) == counted
    again = Sweep(tiny, seeds=4).run(out=out, workers=2, quiet=True, executor="threads")
    assert (again.cached, again.ran, again.failures) == (len(counted), 4 - len(counted), [])


def test_a_closed_store_waits_for_the_batch_being_written_and_stores_nothing_more(
        tmp_path, monkeypatch):
    import threading

    import pyarrow as pa

    from tcpfriendly.sweep import store as store_mod

    t = pa.table({"run": ["a"], "seed": [1]})
    store = sw.RunStore(str(tmp_path / "o"))
    real_write, writing, go = store_mod.write_batch, threading.Event(), threading.Event()

    def slow_write(directory, tbl, runs):
        writing.set()
        assert go.wait(30)
        return real_write(directory, tbl, runs)

    monkeypatch.setattr(store_mod, "write_batch", slow_write)
    store.save("a", t)
    flusher = threading.Thread(target=store.flush)
    flusher.start()
    assert writing.wait(30)
    closer = threading.Thread(target=store.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive()  # close waits for the batch being written...
    go.set()
    closer.join(30)
    flusher.join(30)
    assert stored(tmp_path / "o") == {"a"}  # ...which is stored
    store.save("b", t)
    store.flush()
    assert stored(tmp_path / "o") == {"a"}  # and nothing after it


def test_processes_a_failing_run_fails_alone(tiny, tmp_path):
    (tmp_path / "poison.toml").write_text(POISON_SPEC)
    res = Sweep.from_toml(tmp_path / "poison.toml").run(workers=2, quiet=True,
                                                        executor="processes")
    assert (res.total, res.ran, len(res.failures)) == (6, 4, 2)
    assert [(r.point, r.seed) for r, _ in res.failures] == [(1, 3), (1, 4)]
    assert all("evaluated to -inf" in m for _, m in res.failures)


def test_executor_must_be_auto_threads_or_processes(tiny, tcpf, tmp_path):
    with pytest.raises(SweepError) as err:
        grid_sweep(tiny).run(quiet=True, executor="fork")
    assert err.value.field == "executor"
    (tmp_path / "spec.toml").write_text(f'scenario = "{tiny}"\nseeds = 1\n')
    p = tcpf("sweep", tmp_path / "spec.toml", "--processes", "--dask", "local")
    assert p.returncode == 2 and "--processes" in p.stderr and "Traceback" not in p.stderr
    p = tcpf("sweep", tmp_path / "spec.toml", "--processes", "--threads")
    assert p.returncode == 2 and "--threads" in p.stderr and "Traceback" not in p.stderr


@pytest.mark.parametrize("where", ["base", "axis"])
def test_a_trace_in_a_sweep_is_refused_before_any_run(tmp_path, tiny, where):
    """A [trace] table (in the base scenario or set by an axis) would make every run of the
    grid write the same file; the sweep refuses it up front, naming `trace`, instead of
    recording each run's trace and discarding it."""
    if where == "base":
        path = tmp_path / "traced.toml"
        path.write_text(TINY + '\n[trace]\nfile = "run.pcap"\n')
        s = Sweep(path, axes={"bottleneck.rate": ["1.5Mbps", "5Mbps"]})
    else:
        s = Sweep(tiny, axes={"trace.file": ["a.pcap", "b.pcap"]})
    with pytest.raises(SweepError, match=r"^trace: a sweep writes no packet traces"):
        s.plan()
    assert not (tmp_path / "run.pcap").exists()

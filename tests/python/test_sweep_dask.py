"""Sweeps on a real Dask LocalCluster (2 worker processes): the same table as the local
executor, a killed worker loses nothing, `tcpf sweep --dask ADDRESS` and `--dask local`."""

import logging
import os
import signal

import pandas as pd
import pytest

distributed = pytest.importorskip("distributed")

from tcpfriendly.sweep import Sweep, run_sweep  # noqa: E402

from test_sweep import SLOW, SLOW_SEEDS, TINY, stored  # noqa: E402


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       dashboard_address=":0", silence_logs=logging.ERROR)
    c = distributed.Client(cluster)
    yield c
    c.close()
    cluster.close()


@pytest.fixture
def tiny(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(TINY)
    return path


def acceptance_sweep(tiny):
    # 2 x 3 x 10 seeds = 60 runs
    return Sweep(tiny, axes={"bottleneck.rate": ["1.5Mbps", "5Mbps"],
                             "flows[1].params.beta": [0.0625, 0.125, 0.25]}, seeds=10)


def test_dask_table_identical_to_local(client, tiny, tmp_path):
    local = acceptance_sweep(tiny).run(out=tmp_path / "local", workers=2, quiet=True)
    seen = []
    on_dask = run_sweep(acceptance_sweep(tiny), tmp_path / "dask", dask=client, quiet=True,
                        on_run=lambda run, ok: seen.append(ok))
    assert (on_dask.total, on_dask.ran, on_dask.failures) == (60, 60, [])
    assert seen == [True] * 60  # streamed back one by one
    assert len(local.table) == 60 * 2
    pd.testing.assert_frame_equal(local.table, on_dask.table, check_exact=True)
    for name in ("results.csv", "results.parquet"):
        assert (tmp_path / "local" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes()
    assert stored(tmp_path / "local") == stored(tmp_path / "dask") == set(local.table["run"])


def test_cli_dask_address(tcpf, client, tiny, tmp_path):
    (tmp_path / "spec.toml").write_text(
        'scenario = "tiny.toml"\nseeds = 3\n[axes]\n"flows[1].params.beta" = [0.0625, 0.25]\n')
    p = tcpf("sweep", tmp_path / "spec.toml", "--out", tmp_path / "d", "--dask",
             client.scheduler.address)
    assert p.returncode == 0, p.stderr
    p2 = tcpf("sweep", tmp_path / "spec.toml", "--out", tmp_path / "l")
    assert p2.returncode == 0, p2.stderr
    assert (tmp_path / "d" / "results.csv").read_bytes() == (tmp_path / "l" / "results.csv").read_bytes()


def test_unreachable_scheduler(tiny, tmp_path, monkeypatch):
    from tcpfriendly.sweep import dask_executor as sweep_dask

    monkeypatch.setattr(sweep_dask, "DASK_CONNECT_TIMEOUT", "1s")
    with pytest.raises(RuntimeError, match="^dask: cannot connect to the Dask scheduler at tcp://127.0.0.1:9"):
        run_sweep(Sweep(tiny, seeds=2), tmp_path / "x", dask="tcp://127.0.0.1:9", quiet=True)


def test_a_refused_scheduler_address_is_refused_without_the_clients_retries(tiny, tmp_path, monkeypatch):
    """distributed's Client retries a refused connection until DASK_CONNECT_TIMEOUT (10 s); a
    port nobody listens on is refused by the probe before any Client is made."""
    import socket

    import distributed

    from tcpfriendly.sweep import dask_executor as sweep_dask

    with socket.socket() as s:  # a free port, closed again: nothing listens there
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    class NoClient:  # a type (the executor tests isinstance(dask, distributed.Client))
        def __init__(self, *a, **k):
            raise AssertionError("a Client was made for a refused address")

    monkeypatch.setattr(distributed, "Client", NoClient)
    with pytest.raises(sweep_dask.DaskConnectError, match=f"^dask: .*connection refused.*port {port}"):
        run_sweep(Sweep(tiny, seeds=2), tmp_path / "x", dask=f"tcp://127.0.0.1:{port}", quiet=True)
    assert not (tmp_path / "x").exists()  # nothing written


def _worker_log_level():
    import logging

    return logging.getLogger("distributed.worker").getEffectiveLevel()


def test_our_local_clusters_workers_log_only_critical_messages():
    """A worker whose heartbeat met the closed scheduler at teardown printed an ERROR with a
    traceback on tcpf sweep --dask local's stderr (CI): the workers' distributed loggers are at
    CRITICAL (LocalCluster's silence_logs reaches only their nanny logger), the environment is
    restored afterwards."""
    import logging
    import os

    from tcpfriendly.sweep import dask_executor as sweep_dask

    before = os.environ.get(sweep_dask._QuietLogs.ENV)
    with sweep_dask._QuietLogs(True):
        client, cluster, _ = sweep_dask._client("local", 1)
        try:
            levels = client.run(_worker_log_level)
        finally:
            client.close()
            cluster.close()
    assert levels and set(levels.values()) == {logging.CRITICAL}, levels
    assert os.environ.get(sweep_dask._QuietLogs.ENV) == before


def test_cli_dask_local_cluster(tcpf, tiny, tmp_path):
    (tmp_path / "spec.toml").write_text(
        'scenario = "tiny.toml"\nseeds = 4\n[axes]\n"bottleneck.rate" = ["1.5Mbps", "5Mbps"]\n')
    p = tcpf("sweep", tmp_path / "spec.toml", "--out", tmp_path / "d", "--dask", "local",
             "--workers", "2")
    assert p.returncode == 0, p.stderr
    assert p.stderr == "sweep: 8 runs (2 points x 4 seeds): 0 already done, 8 to run\n"
    local = Sweep.from_toml(tmp_path / "spec.toml").run(quiet=True).table
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "d" / "results.parquet"), local,
                                  check_exact=True)


def test_killing_a_worker_loses_no_finished_run(client, tmp_path):
    (tmp_path / "slow.toml").write_text(SLOW)
    sweep = Sweep(tmp_path / "slow.toml", seeds=24)
    out = tmp_path / "o"
    killed = []

    def kill_one(run, ok):
        if len(killed) == 0:
            pids = client.run(os.getpid)  # {worker address: pid}
            victim = sorted(pids.values())[0]
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)

    res = run_sweep(sweep, out, dask=client, quiet=True, on_run=kill_one)
    assert killed
    keys = stored(out)
    # Every run either finished (retried on the other/restarted worker) or is reported failed;
    # every finished run is stored.
    assert res.ran + len(res.failures) == 24
    assert len(keys) == res.ran and set(res.table["run"]) == keys
    lines = []
    again = run_sweep(Sweep(tmp_path / "slow.toml", seeds=24), out, workers=2, log=lines.append)
    assert lines[0] == f"sweep: 24 runs (1 point x 24 seeds): {res.ran} already done, " \
                       f"{24 - res.ran} to run"
    assert (again.ran, again.cached, again.failures) == (24 - res.ran, res.ran, [])
    reference = Sweep(tmp_path / "slow.toml", seeds=24).run(workers=2, quiet=True).table
    pd.testing.assert_frame_equal(again.table, reference, check_exact=True)
    client.wait_for_workers(2, timeout=30)  # the nanny restarted the killed worker


def test_ctrl_c_with_dask_local_keeps_finished_runs(tmp_path):
    """Ctrl-C in a terminal signals the whole process group: the sweep and its LocalCluster's
    worker processes. The sweep stops cleanly (no worker tracebacks) and keeps what finished."""
    import subprocess
    import time

    from conftest import REPO, _tcpf_command, default_sigint

    (tmp_path / "slow.toml").write_text(SLOW)
    spec = tmp_path / "spec.toml"
    spec.write_text(f'scenario = "slow.toml"\nseeds = {SLOW_SEEDS}\n')
    out = tmp_path / "o"
    env = dict(os.environ)
    env.pop("TCPF_TRACEBACK", None)
    cmd = _tcpf_command() + ["sweep", str(spec), "--out", str(out), "--dask", "local",
                             "--workers", "2"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=str(REPO), env=env, start_new_session=True,
                            preexec_fn=default_sigint)
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "runs").is_dir() and len(stored(out)) >= 3:
            break
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert "Traceback" not in stderr
    done = len(stored(out))
    assert 3 <= done < SLOW_SEEDS
    assert stderr.splitlines()[-1] == (f"error: interrupted: {done} of {SLOW_SEEDS} runs done and kept in "
                                       f"{out}; rerun to finish the {SLOW_SEEDS - done} missing")
    p = subprocess.run(_tcpf_command() + ["sweep", str(spec), "--out", str(out)],
                       capture_output=True, text=True, cwd=str(REPO), env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    assert f"{done} already done, {SLOW_SEEDS - done} to run" in p.stderr
    assert len(pd.read_parquet(out / "results.parquet")) == 2 * SLOW_SEEDS


def test_dask_poisoned_point_fails_alone_like_the_local_executor(client, tmp_path):
    from tcpfriendly.sweep import Sweep
    from test_sweep import POISON_SPEC

    (tmp_path / "tiny.toml").write_text(TINY)
    (tmp_path / "poison.toml").write_text(POISON_SPEC)
    local = Sweep.from_toml(tmp_path / "poison.toml").run(out=tmp_path / "l", workers=2, quiet=True)
    on_dask = run_sweep(Sweep.from_toml(tmp_path / "poison.toml"), tmp_path / "d", dask=client,
                        quiet=True)
    assert (on_dask.total, on_dask.ran, len(on_dask.failures)) == (6, 4, 2)
    assert [(r.point, r.seed) for r, _ in on_dask.failures] == [(1, 3), (1, 4)]
    assert [m for _, m in on_dask.failures] == [m for _, m in local.failures]
    assert "evaluated to -inf" in on_dask.failures[0][1]
    pd.testing.assert_frame_equal(local.table, on_dask.table, check_exact=True)
    assert (tmp_path / "l" / "results.csv").read_bytes() == (tmp_path / "d" / "results.csv").read_bytes()


def test_a_worker_of_another_engine_build_stops_the_sweep_and_stores_nothing(client, tiny, tmp_path,
                                                                            monkeypatch, capsys):
    """The run keys name the planning process's engine build; a worker whose engine is another
    build would store its results under them (a wrong cache entry): it refuses the task, and
    the sweep stops with an error naming both builds (exit 2), with no run stored. The
    mismatch is made here by giving the planning process another engine id."""
    from tcpfriendly import version
    from tcpfriendly.cli.main import main
    from tcpfriendly.sweep import SweepError

    real = version.engine_id()  # the workers' (the same install)
    monkeypatch.setattr(version, "engine_id", lambda: "planner-build")
    out = tmp_path / "o"
    with pytest.raises(SweepError) as err:
        run_sweep(Sweep(tiny, seeds=4), out, dask=client, quiet=True)
    assert type(err.value).__name__ == "EngineMismatchError"
    message = str(err.value)
    assert message.startswith("dask: the Dask worker tcp://")
    assert f"runs engine build {real}, but the runs were planned and are cached for build " \
           "planner-build" in message
    assert "install the same tcpfriendly build on the workers" in message
    assert stored(out) == set()
    assert not (out / "results.parquet").exists()

    (tmp_path / "spec.toml").write_text('scenario = "tiny.toml"\nseeds = 3\n')
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", str(tmp_path / "spec.toml"), "--out", str(tmp_path / "c"), "--dask",
              client.scheduler.address])
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1].startswith("error: --dask: the Dask worker tcp://")
    assert f"build {real}" in lines[-1] and "build planner-build" in lines[-1]
    assert stored(tmp_path / "c") == set()
    # the same sweep with the workers' build runs and stores every run
    monkeypatch.setattr(version, "engine_id", lambda: real)
    res = run_sweep(Sweep(tiny, seeds=4), out, dask=client, quiet=True)
    assert (res.ran, res.cached, res.failures) == (4, 0, [])
    assert stored(out) == set(res.table["run"])


def test_tasks_of_other_engine_users_are_checked_too(client, monkeypatch):
    """``tcpf evaluate`` runs its own tasks on Dask (``task=``) and caches their values under
    keys naming the engine build: a worker of another build refuses them as well."""
    import operator

    from tcpfriendly import version
    from tcpfriendly.sweep.core import Run
    from tcpfriendly.sweep.dask_executor import DaskExecutor, EngineMismatchError
    from tcpfriendly.sweep.executors import Collector
    from tcpfriendly.sweep.runner import Progress

    jobs = [Run(0, seed, f"k{seed}", "{}", "") for seed in (1, 2)]
    task = operator.attrgetter("seed")
    collector = Collector(None, Progress(2, enabled=False), None)
    assert DaskExecutor(client, task=task).run(jobs, collector) is False
    assert collector.tables == {"k1": 1, "k2": 2}
    real = version.engine_id()
    monkeypatch.setattr(version, "engine_id", lambda: real + "-other")
    collector = Collector(None, Progress(2, enabled=False), None)
    with pytest.raises(EngineMismatchError, match=f"runs engine build {real}, but the runs were "
                                                  f"planned and are cached for build {real}-other"):
        DaskExecutor(client, task=task).run(jobs, collector)
    assert collector.tables == {} and collector.failures == []


def test_a_ctrl_c_while_the_runs_are_submitted_is_an_interrupted_sweep(client, tiny, tmp_path,
                                                                      monkeypatch):
    """Submitting many runs takes a while: a Ctrl-C then stops the sweep like any other
    (SweepInterrupted with its result, the submitted runs cancelled, nothing stored behind
    the count), not a bare KeyboardInterrupt without a summary."""
    from tcpfriendly.sweep import SweepInterrupted

    real_submit = client.submit
    sent = []

    def submit(*args, **kw):
        sent.append(real_submit(*args, **kw))
        if len(sent) == 2:
            signal.raise_signal(signal.SIGINT)
        return sent[-1]

    monkeypatch.setattr(client, "submit", submit)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as under a terminal
    caught = None
    try:
        run_sweep(Sweep(tiny, seeds=4), tmp_path / "o", dask=client, quiet=True)
    except KeyboardInterrupt as exc:
        caught = exc
    finally:
        signal.signal(signal.SIGINT, before)
    assert isinstance(caught, SweepInterrupted)
    res = caught.result
    assert len(sent) == 2 and (res.cached, res.failures) == (0, [])
    assert stored(tmp_path / "o") == set(res.table["run"]) and res.ran == len(set(res.table["run"]))

"""An error raised on the calling thread while the executors' runs are in flight (a result
that cannot be stored, an ``on_run`` callback that raises) ends cleanly: no run starts any
more, the runs in progress end before the error propagates, and the process exits with the
CLI's code and one error line. Before, a thread executor's worker thread still inside the
engine when the interpreter finalized aborted the process (SIGABRT, exit 134) after the
error line; a process executor's workers went on storing runs after the sweep had failed."""

import os
import subprocess
import sys
import textwrap
import time

import pytest

from tcpfriendly.sweep import Sweep, run_sweep

from conftest import REPO
from test_sweep import TINY, stored

ABORTED = (134, -6)  # SIGABRT: as an exit status through a shell, or as a signal

# TINY run for 30 simulated seconds (tens of ms per run): runs are still in flight when the
# first result comes back
LONGER = TINY.replace("duration = 5", "duration = 30").replace("to = 5", "to = 30")


def _python(script: str, *args, timeout: float = 120) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("TCPF_TRACEBACK", None)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=env)


def _assert_clean_exit(p: subprocess.CompletedProcess, code: int, message: str) -> None:
    assert p.returncode not in ABORTED, p.stderr
    assert "Fatal Python error" not in p.stderr
    assert p.returncode == code, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], p.stderr


def test_evaluate_whose_cache_cannot_be_written_exits_with_one_line_not_an_abort(tmp_path):
    """`tcpf evaluate --workers 2 --out D` whose run cache fails to write (OSError, e.g. a full
    disk) as the first run finishes, the other worker's run still in the engine: the runtime
    exit code (1) and one line; before the fix, exit 134 after that line."""
    p = _python("""
        import sys
        from tcpfriendly.evaluate import runner

        def save(self, key, value):
            raise OSError(28, "No space left on device (test)")

        runner.RunCache.save = save
        from tcpfriendly.cli.main import main
        main(["evaluate", "gaimd", "--quick", "--only", "s1", "--out", sys.argv[1], "--workers", "2"])
    """, tmp_path / "o")
    _assert_clean_exit(p, 1, "No space left on device (test)")


def test_sweep_on_threads_whose_on_run_raises_ends_its_runs_first(tmp_path):
    """run_sweep on 2 threads whose on_run callback raises at the first finished run: the
    exception propagates once no run is in progress (the script exits 3 with its line), no
    abort at exit, and no run is stored after it propagated."""
    (tmp_path / "longer.toml").write_text(LONGER)
    p = _python("""
        import os, sys, time
        from tcpfriendly.sweep import Sweep, run_sweep

        def on_run(run, ok):
            raise OSError("on_run failed (test)")

        out = sys.argv[2]
        try:
            run_sweep(Sweep(sys.argv[1], seeds=40), out, workers=2, executor="threads",
                      on_run=on_run, quiet=True)
        except OSError as exc:
            before = sorted(os.listdir(os.path.join(out, "runs")))
            time.sleep(0.5)
            after = sorted(os.listdir(os.path.join(out, "runs")))
            print(f"error: {exc}; stored after it: {len(after) - len(before)}", file=sys.stderr)
            sys.exit(3)
    """, tmp_path / "longer.toml", tmp_path / "o")
    _assert_clean_exit(p, 3, "on_run failed (test); stored after it: 0")


def test_sweep_on_processes_whose_on_run_raises_stores_nothing_afterwards(tmp_path):
    """The process executor, same failure: the chunks not started are cancelled and those in
    progress end before the exception propagates, so no worker stores a run of the failed
    sweep afterwards (before: they went on with every chunk in flight)."""
    (tmp_path / "longer.toml").write_text(LONGER)
    calls = []

    def on_run(run, ok):
        calls.append(run.key)
        raise OSError("on_run failed (test)")

    out = tmp_path / "o"
    with pytest.raises(OSError, match="on_run failed"):
        run_sweep(Sweep(tmp_path / "longer.toml", seeds=40), out, workers=2,
                  executor="processes", on_run=on_run, quiet=True)
    assert len(calls) == 1
    before = stored(out)
    time.sleep(1.0)
    assert stored(out) == before
    assert len(before) < 40  # the sweep did stop: not every run was done


# ----- a bad --dask is refused before anything is written ------------------------------------
MALFORMED = ("nonsense://x", "not an address")


@pytest.mark.parametrize("address", MALFORMED)
def test_sweep_with_a_malformed_dask_address_writes_nothing(tcpf, tmp_path, address):
    """`tcpf sweep SPEC --dask nonsense://x --out D`: exit 2, one line naming --dask, and no D
    (before: D/sweep.json, D/runs and the manifest were written, then the error, not naming
    --dask)."""
    pytest.importorskip("distributed")
    (tmp_path / "tiny.toml").write_text(TINY)
    (tmp_path / "spec.toml").write_text('scenario = "tiny.toml"\nseeds = 2\n')
    out = tmp_path / "d"
    p = tcpf("sweep", tmp_path / "spec.toml", "--out", out, "--dask", address, "--no-progress")
    _assert_clean_exit(p, 2, f"error: --dask: not a Dask scheduler address: {address!r}")
    assert not out.exists()


@pytest.mark.parametrize("command", [("evaluate", "gaimd", "--quick"),
                                     ("reproduce", "yang2000", "--quick")])
def test_evaluate_and_reproduce_with_a_malformed_dask_address_write_nothing(tcpf, tmp_path, command):
    """The same for `tcpf evaluate` (it made D/runs first) and `tcpf reproduce` (it ran and
    printed the analytic experiments first, then failed naming `dask`)."""
    pytest.importorskip("distributed")
    out = tmp_path / "d"
    p = tcpf(*command, "--out", out, "--dask", "nonsense://x")
    _assert_clean_exit(p, 2, "error: --dask: not a Dask scheduler address: 'nonsense://x'")
    assert p.stdout == ""
    assert not out.exists()


def test_an_unreachable_scheduler_is_bad_input_naming_dask_and_writes_nothing(tmp_path, monkeypatch,
                                                                              capsys):
    """An address where no scheduler answers: `dask: cannot connect ...` (a SweepError, still a
    RuntimeError), before the output directory is made; `tcpf sweep` exits 2 naming --dask."""
    pytest.importorskip("distributed")
    from tcpfriendly.cli.main import main
    from tcpfriendly.sweep import SweepError
    from tcpfriendly.sweep import dask_executor as sweep_dask

    monkeypatch.setattr(sweep_dask, "DASK_CONNECT_TIMEOUT", "1s")
    (tmp_path / "tiny.toml").write_text(TINY)
    out = tmp_path / "x"
    with pytest.raises(SweepError, match="^dask: cannot connect to the Dask scheduler at "
                                         "tcp://127.0.0.1:9: ") as err:
        run_sweep(Sweep(tmp_path / "tiny.toml", seeds=2), out, dask="tcp://127.0.0.1:9", quiet=True)
    assert isinstance(err.value, RuntimeError)
    assert not out.exists()

    (tmp_path / "spec.toml").write_text('scenario = "tiny.toml"\nseeds = 2\n')
    with pytest.raises(SystemExit) as exit_:
        main(["sweep", str(tmp_path / "spec.toml"), "--out", str(out), "--dask", "tcp://127.0.0.1:9"])
    assert exit_.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: --dask: cannot connect to the Dask scheduler at tcp://127.0.0.1:9: "), lines
    assert not out.exists()


# ----- a run abandoned at a second Ctrl-C, still inside the engine at exit ----------------------
_ABANDONED = r"""
import atexit, sys, threading, time
import typer
from tcpfriendly.sweep import executors
from tcpfriendly.cli.errors import fail, run_app

abandon = sys.argv[1] == "1"
if abandon:  # as _run_threads leaves a thread it abandoned at a second Ctrl-C
    t = threading.Thread(target=time.sleep, args=(60,), name="tcpf-sweep-0", daemon=True)
    t.start()
    executors._abandoned.append(t)
atexit.register(lambda: print("finalized", flush=True))
app = typer.Typer()

@app.command()
def go():
    print("summary", flush=False)  # buffered: must still reach stdout
    fail(130, "interrupted")  # as after a sweep's "abandoned 1 run in progress"

run_app(app, [], "x")
"""


@pytest.mark.parametrize("abandon", [False, True])
def test_the_cli_does_not_finalize_with_a_run_left_in_the_engine(tmp_path, abandon):
    """A thread abandoned at a second Ctrl-C that comes back from the engine while the
    interpreter finalizes aborts the process (SIGABRT) after the error line: with such a thread
    alive the CLI flushes its output and leaves without finalizing (no atexit handler runs),
    with the same exit code and the same one error line; without one it exits normally."""
    script = tmp_path / "abandoned.py"
    script.write_text(_ABANDONED)
    p = subprocess.run([sys.executable, str(script), "1" if abandon else "0"], capture_output=True,
                       text=True, timeout=60, env={**os.environ, "PYTHONPATH": str(REPO / "python")})
    assert p.returncode == 130 and p.stderr == "error: interrupted\n", (p.returncode, p.stderr)
    assert p.stdout.startswith("summary\n")
    assert ("finalized" in p.stdout) is (not abandon), p.stdout

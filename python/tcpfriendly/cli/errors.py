"""The CLI error policy, in one place: every `tcpf` command and sub-app runs through
:func:`run_app`.

Bad input -- an invalid scenario, malformed TOML, a missing file, a bad option -- exits 2
(:data:`EXIT_BAD_INPUT`); a failure while running exits 1 (:data:`EXIT_RUNTIME`); Ctrl-C
exits 130. Either way stderr gets exactly one line, ``error: <message>``, and never a
traceback (set ``TCPF_TRACEBACK=1`` to see one while debugging).
"""

import os
import sys
from contextlib import contextmanager
from typing import Any, Iterator, List, Mapping, NoReturn, Optional

import typer

from ..errors import ScenarioError, one_line

# Click's exception classes, found through typer's public BadParameter so this works with
# typer versions that vendor click and with those that depend on it.
_CLICK_MRO = {cls.__name__: cls for cls in typer.BadParameter.__mro__}
_UsageError = _CLICK_MRO["UsageError"]
_ClickException = _CLICK_MRO["ClickException"]

EXIT_BAD_INPUT = 2
EXIT_RUNTIME = 1
EXIT_INTERRUPTED = 130


def fail(code: int, message: str) -> NoReturn:
    """Exit with ``code`` after the one line ``error: <message>`` on stderr."""
    sys.stdout.flush()
    sys.stderr.write(f"error: {one_line(message)}\n")
    sys.stderr.flush()
    raise SystemExit(code)


@contextmanager
def as_flags(flags: Mapping[str, str]) -> Iterator[None]:
    """Library errors name the parameter (``workers: must be ...``); inside this block, one
    whose field is a key of ``flags`` is re-raised naming the command's flag instead
    (``--workers: must be ...``), same class and message."""
    try:
        yield
    except ScenarioError as exc:
        flag = flags.get(exc.field) if exc.field else None
        if flag is None:
            raise
        raise type(exc)(f"{flag}: {exc.message}", field=flag) from None


def run_app(app: typer.Typer, argv: Optional[List[str]], prog_name: str) -> NoReturn:
    """Run a Typer app with the error policy; always ends in SystemExit (or, when a run thread
    abandoned at a second Ctrl-C is still inside the engine, in ``os._exit`` with the same code:
    :func:`_leave_if_runs_left_in_engine`)."""
    try:
        _run_app(app, argv, prog_name)
    except SystemExit as exc:
        _leave_if_runs_left_in_engine(exc.code)
        raise


def _leave_if_runs_left_in_engine(code: Any) -> None:
    """A run thread abandoned at a second Ctrl-C (sweep.executors.runs_left_in_engine) that
    comes back from the engine while the interpreter finalizes aborts the process (SIGABRT,
    exit 134) after our one error line: then flush our output and leave at once, without
    finalizing. Every finished run is already stored and closed by then."""
    executors = sys.modules.get("tcpfriendly.sweep.executors")
    if executors is None or not executors.runs_left_in_engine():
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else (0 if code is None else EXIT_RUNTIME))


def _run_app(app: typer.Typer, argv: Optional[List[str]], prog_name: str) -> NoReturn:
    debug = os.environ.get("TCPF_TRACEBACK") == "1"
    try:
        code = app(args=argv, prog_name=prog_name, standalone_mode=False)
    except (typer.Exit, SystemExit):
        raise
    except typer.Abort:
        fail(EXIT_RUNTIME, "aborted")
    except _UsageError as exc:
        hint = ""
        ctx = getattr(exc, "ctx", None)
        if ctx is not None:
            hint = f" (see '{ctx.command_path} --help')"
        fail(exc.exit_code, exc.format_message() + hint)
    except _ClickException as exc:
        fail(exc.exit_code, exc.format_message())
    except KeyboardInterrupt:
        fail(EXIT_INTERRUPTED, "interrupted")
    except BrokenPipeError:
        # The reader went away (e.g. `tcpf algorithms | head`): stop quietly.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        raise SystemExit(EXIT_RUNTIME)
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        if debug:
            raise
        if isinstance(exc, ValueError):  # ScenarioError and other bad-input errors
            fail(EXIT_BAD_INPUT, str(exc))
        if isinstance(exc, RuntimeError):
            fail(EXIT_RUNTIME, str(exc))
        if isinstance(exc, ImportError):
            fail(EXIT_RUNTIME, str(exc))
        if isinstance(exc, OSError):
            where = f"{exc.filename}: " if getattr(exc, "filename", None) else ""
            fail(EXIT_RUNTIME, f"{where}{exc.strerror or exc}")
        fail(EXIT_RUNTIME, f"internal error: {type(exc).__name__}: {exc}")
    raise SystemExit(code if isinstance(code, int) else 0)

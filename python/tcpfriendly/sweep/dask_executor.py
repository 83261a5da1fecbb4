"""The Dask executor of :mod:`tcpfriendly.sweep` (imported only when ``dask=`` is given), a
sibling of :class:`~.executors.ThreadExecutor` behind the same :class:`~.executors.Executor`
protocol.

Runs are submitted with ``retries`` (a run lost with its worker is rerun elsewhere; the
scheduler also reschedules what a dead worker held), results stream back with
``as_completed`` and the client writes each run's file, so workers need tcpfriendly installed
but no shared disk: the SAME build of it, since every task carries the engine build the run
keys name (:func:`tcpfriendly.version.engine_id`, taken in the planning process) and a worker
whose engine is another build refuses it (:class:`OtherEngine`; the sweep stops with
:class:`EngineMismatchError` and stores nothing that worker computed). With ``dask="local"``
we own a ``LocalCluster``: its worker processes ignore SIGINT (a terminal's Ctrl-C reaches the
whole process group; the sweep handles it and closes the cluster) and its in-process scheduler
logs only errors.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import uuid
from contextlib import contextmanager
from typing import Any, Callable, Iterator, List, Optional, Tuple

try:
    import distributed
    from distributed import WorkerPlugin, as_completed
except ImportError:  # pragma: no cover - dask is a dependency; a clear error if it is missing
    distributed = None
    WorkerPlugin = object

from .core import Run, SweepError
from .executors import Collector, RunFailed, default_workers, execute_or_failure  # noqa: F401
from .store import rows_table

__all__ = ["DaskExecutor", "run_on_dask", "connected", "DASK_CONNECT_TIMEOUT", "DaskConnectError",
           "EngineMismatchError"]

DASK_CONNECT_TIMEOUT = "10s"  # to reach a scheduler given by address
_LOGGERS = ("distributed", "distributed.scheduler", "distributed.core", "distributed.nanny",
            "distributed.worker")


class IgnoreSigint(WorkerPlugin):
    """Our LocalCluster's workers leave Ctrl-C to the sweep (which closes the cluster)."""

    name = "tcpfriendly-ignore-sigint"

    def setup(self, worker) -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)


class _QuietLogs:
    """While we own a LocalCluster, its scheduler, nannies and workers log only critical
    messages: at its shutdown a worker whose heartbeat meets the closed scheduler logs an ERROR
    with a traceback on our stderr (a race of the teardown, nothing lost; seen in CI); a run's
    own failure reaches the client as the task's exception and is reported by the sweep. The
    in-process loggers are set here; the worker processes read DASK_LOGGING__DISTRIBUTED when
    they start (LocalCluster's silence_logs reaches only their nanny logger)."""

    ENV = "DASK_LOGGING__DISTRIBUTED"

    def __init__(self, active: bool):
        self.active = active
        self.saved: List[Tuple[Any, int]] = []
        self.env: Optional[str] = None

    def __enter__(self):
        if self.active:
            for name in _LOGGERS:
                logger = logging.getLogger(name)
                self.saved.append((logger, logger.level))
                logger.setLevel(logging.CRITICAL)
            self.env = os.environ.get(self.ENV)
            os.environ[self.ENV] = "critical"
        return self

    def __exit__(self, *exc) -> None:
        for logger, level in self.saved:
            logger.setLevel(level)
        if self.active:
            if self.env is None:
                os.environ.pop(self.ENV, None)
            else:
                os.environ[self.ENV] = self.env


class DaskConnectError(SweepError, RuntimeError):
    """The Dask scheduler given by address cannot be reached (refused, timed out): bad input
    naming ``dask`` (a :class:`~.core.SweepError`), and a ``RuntimeError`` as it always was."""


class EngineMismatchError(SweepError):
    """A Dask worker's engine is another build than the one this sweep's run keys name: its
    results would be stored (cached) under the wrong build's keys, so the sweep stops. The
    message names both builds and the worker."""


class OtherEngine:
    """What a worker returns instead of running a task planned for another engine build
    (:func:`run_checked`): its own build and address. A value, not an exception, so that Dask
    neither retries the task nor logs a traceback for it."""

    __slots__ = ("engine", "worker")

    def __init__(self, engine: str, worker: str):
        self.engine, self.worker = engine, worker


def _worker_address() -> str:
    try:
        return distributed.get_worker().address
    except Exception:  # noqa: BLE001 - not on a Dask worker (a test calling it directly)
        return "?"


def run_checked(engine: str, fn: Callable[..., Any], *args: Any) -> Any:
    """On a worker: ``fn(*args)`` if this worker's engine build is ``engine`` (the build the
    planning process keyed the run on), else :class:`OtherEngine` without running anything."""
    from ..version import engine_id

    mine = engine_id()
    if mine != engine:
        return OtherEngine(mine, _worker_address())
    return fn(*args)


def _mismatch(other: OtherEngine, planned: str) -> EngineMismatchError:
    return EngineMismatchError.at(
        "dask", f"the Dask worker {other.worker} runs engine build {other.engine}, but the "
                f"runs were planned and are cached for build {planned} (this machine's "
                "tcpfriendly.version.engine_id()): install the same tcpfriendly build on the "
                "workers as here (or run without --dask); nothing that worker computed was "
                "stored")


def _client(dask: Any, workers: Optional[int]):
    """(client, cluster-or-None, owned) for ``dask``: "local", an address or a Client."""
    if distributed is None:
        raise ImportError("the Dask executor needs dask.distributed: "
                          "pip install 'dask[distributed]'")
    if isinstance(dask, distributed.Client):
        return dask, None, False
    if not isinstance(dask, str) or not dask.strip():
        raise SweepError.at("dask", f"expected 'local' or a scheduler address, got {dask!r}")
    if dask == "local":
        cluster = distributed.LocalCluster(
            n_workers=workers or default_workers(), threads_per_worker=1, processes=True,
            dashboard_address=":0", silence_logs=logging.CRITICAL)  # the workers' logs: see _QuietLogs
        try:
            client = distributed.Client(cluster)
            client.register_plugin(IgnoreSigint(), name=IgnoreSigint.name)
            return client, cluster, True
        except BaseException:
            cluster.close()
            raise
    _refused_at_once(dask)
    try:
        return distributed.Client(dask, timeout=DASK_CONNECT_TIMEOUT), None, True
    except (OSError, TimeoutError) as exc:
        raise DaskConnectError.at("dask", f"cannot connect to the Dask scheduler at {dask}: "
                                          f"{' '.join(str(exc).split())}") from None
    except (ValueError, TypeError) as exc:  # distributed's word on a malformed address
        raise SweepError.at("dask", f"not a Dask scheduler address: {dask!r} ("
                                    f"{' '.join(str(exc).split())}); expected 'local' or an "
                                    "address such as tcp://host:8786") from None


def _refused_at_once(address: str) -> None:
    """A ``tcp://host:port`` whose host refuses the connection is refused now: distributed's
    Client retries a refused connection until its timeout (DASK_CONNECT_TIMEOUT, 10 s). A probe
    that does not get an answer (a host that drops packets, a name that does not resolve) or
    an address of another form leaves the decision to the Client."""
    import socket
    from urllib.parse import urlsplit

    if not address.startswith("tcp://"):
        return
    try:
        parts = urlsplit(address)
        host, port = parts.hostname, parts.port
    except ValueError:
        return
    if not host or port is None:
        return
    try:
        with socket.create_connection((host, port), timeout=1.0):
            return
    except ConnectionRefusedError:
        raise DaskConnectError.at("dask", f"cannot connect to the Dask scheduler at {address}: "
                                          f"connection refused (nothing listens on port {port} "
                                          f"of {host})") from None
    except OSError:
        return


@contextmanager
def connected(dask: Any, workers: Optional[int] = None) -> Iterator[Any]:
    """``dask`` ready for one or more sweeps (their ``dask=``), reached when the block is
    entered, so that a caller entering it first writes nothing for a bad address: None, "local"
    and a ``distributed.Client`` as they are (each sweep on "local" starts its own
    LocalCluster); a scheduler address as a Client connected now and closed at the end of the
    block. A malformed address is a :class:`~.core.SweepError`, an unreachable one a
    :class:`DaskConnectError`, both naming ``dask``."""
    if dask is None or (isinstance(dask, str) and dask == "local") or \
            (distributed is not None and isinstance(dask, distributed.Client)):
        yield dask
        return
    client = _client(dask, workers)[0]
    try:
        yield client
    finally:
        client.close()


def _submit_all(todo: List[Run], client, collector: Collector, retries: int,
                task: Optional[Callable[[Any], Any]] = None) -> bool:
    """Submit ``todo`` and store each result as it arrives. True if interrupted by Ctrl-C
    (results already finished are kept; the rest are cancelled)."""
    from ..version import engine_id

    engine = engine_id()  # the build the run keys name: a worker of another build refuses
    futures = {}
    batch = uuid.uuid4().hex[:8]  # fresh task keys: a resubmitted run never meets a cancelled one
    handled = set()

    def submit_all() -> None:
        for run in todo:
            args = (run,) if task is not None else \
                (run.scenario_json, run.seed, run.key, run.per_flow)
            fut = client.submit(run_checked, engine, task or execute_or_failure, *args,
                                key=f"tcpf-run-{run.key}-{batch}", pure=False, retries=retries)
            futures[fut] = run

    def take(fut) -> None:
        run = futures[fut]
        handled.add(fut)
        try:
            value = fut.result()
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of this run (KilledWorker
            # after the retries, an error raised on the worker) fails it alone
            collector.fail(run, exc)
            return
        if isinstance(value, OtherEngine):  # nothing of it is stored: the sweep stops
            raise _mismatch(value, engine)
        try:
            if task is not None:  # the task's value goes to the collector as it is
                collector.ok(run, value)
                return
            rows = value
            if isinstance(rows, RunFailed):
                collector.fail_message(run, rows.message)
                return
            table = rows_table(rows, run)
            if collector.store is not None:
                collector.store.save(run.key, table)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - a run whose rows cannot be stored (or
            # whose value the collector refuses) fails alone
            collector.fail(run, exc)
        else:
            collector.ok(run, table)

    try:  # a Ctrl-C while submitting (many runs take a while) is a Ctrl-C like any other
        submit_all()
        for fut in as_completed(list(futures)):
            take(fut)
        return False
    except EngineMismatchError:  # the runs collected so far (other workers, this build) stay
        collector.progress.close()
        client.cancel([f for f in futures if f not in handled])
        raise
    except KeyboardInterrupt:
        collector.progress.close()
        rest = [f for f in futures if f not in handled]
        try:
            for fut in rest:
                if fut.status == "finished":
                    take(fut)
        finally:
            client.cancel([f for f in rest if f not in handled])
        return True


def run_on_dask(todo: List[Run], dask: Any, workers: Optional[int], collector: Collector,
                retries: int = 2, task: Optional[Callable[[Any], Any]] = None) -> bool:
    """Run ``todo`` on ``dask`` ("local", a scheduler address or a ``distributed.Client``).
    Returns True if interrupted by Ctrl-C."""
    with _QuietLogs(dask == "local"):
        client, cluster, owned = _client(dask, workers)
        try:
            return _submit_all(todo, client, collector, retries, task)
        finally:
            if owned:
                client.close()
            if cluster is not None:
                cluster.close()


class DaskExecutor:
    """Runs on ``dask``: "local" (a LocalCluster of ``workers`` processes), a scheduler address
    or a ``distributed.Client``; each run is submitted with ``retries``. ``task``: as for
    :class:`~.executors.ThreadExecutor` (a module-level function, so workers can import it)."""

    kind = "dask"

    def __init__(self, dask: Any, workers: Optional[int] = None, retries: int = 2,
                 task: Optional[Callable[[Any], Any]] = None):
        self.dask, self.workers, self.retries, self.task = dask, workers, retries, task

    def run(self, todo: List[Run], collector: Collector) -> bool:
        return run_on_dask(todo, self.dask, self.workers, collector, self.retries, self.task)

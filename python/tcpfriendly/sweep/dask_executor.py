"""The Dask executor of :mod:`tcpfriendly.sweep` (imported only when ``dask=`` is given), a
sibling of :class:`~.executors.ThreadExecutor` behind the same :class:`~.executors.Executor`
protocol.

Runs are submitted with ``retries`` (a run lost with its worker is rerun elsewhere; the
scheduler also reschedules what a dead worker held), results stream back with
``as_completed`` and the client writes each run's file, so workers need tcpfriendly installed
but no shared disk. With ``dask="local"`` we own a ``LocalCluster``: its worker processes
ignore SIGINT (a terminal's Ctrl-C reaches the whole process group; the sweep handles it and
closes the cluster) and its in-process scheduler logs only errors.
"""

from __future__ import annotations

import logging
import signal
import threading
import uuid
from typing import Any, Callable, List, Optional, Tuple

try:
    import distributed
    from distributed import WorkerPlugin, as_completed
except ImportError:  # pragma: no cover - dask is a dependency; a clear error if it is missing
    distributed = None
    WorkerPlugin = object

from .core import Run, SweepError
from .executors import Collector, RunFailed, default_workers, execute_or_failure  # noqa: F401
from .store import rows_table

__all__ = ["DaskExecutor", "run_on_dask", "DASK_CONNECT_TIMEOUT"]

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
    """While we own a LocalCluster, its in-process scheduler and nannies log only errors."""

    def __init__(self, active: bool):
        self.active = active
        self.saved: List[Tuple[Any, int]] = []

    def __enter__(self):
        if self.active:
            for name in _LOGGERS:
                logger = logging.getLogger(name)
                self.saved.append((logger, logger.level))
                logger.setLevel(logging.ERROR)
        return self

    def __exit__(self, *exc) -> None:
        for logger, level in self.saved:
            logger.setLevel(level)


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
            dashboard_address=":0", silence_logs=logging.ERROR)
        try:
            client = distributed.Client(cluster)
            client.register_plugin(IgnoreSigint(), name=IgnoreSigint.name)
            return client, cluster, True
        except BaseException:
            cluster.close()
            raise
    try:
        return distributed.Client(dask, timeout=DASK_CONNECT_TIMEOUT), None, True
    except (OSError, TimeoutError) as exc:
        raise RuntimeError(f"cannot connect to the Dask scheduler at {dask}: {exc}") from None


def _submit_all(todo: List[Run], client, collector: Collector, retries: int,
                task: Optional[Callable[[Any], Any]] = None) -> bool:
    """Submit ``todo`` and store each result as it arrives. True if interrupted by Ctrl-C
    (results already finished are kept; the rest are cancelled)."""
    futures = {}
    batch = uuid.uuid4().hex[:8]  # fresh task keys: a resubmitted run never meets a cancelled one
    for run in todo:
        args = (run,) if task is not None else (run.scenario_json, run.seed, run.key, run.per_flow)
        fut = client.submit(task or execute_or_failure, *args,
                            key=f"tcpf-run-{run.key}-{batch}", pure=False, retries=retries)
        futures[fut] = run
    handled = set()

    def take(fut) -> None:
        run = futures[fut]
        handled.add(fut)
        try:
            if task is not None:  # the task's value goes to the collector as it is
                value = fut.result()
                collector.ok(run, value)
                return
            rows = fut.result()
            if isinstance(rows, RunFailed):
                collector.fail_message(run, rows.message)
                return
            table = rows_table(rows, run)
            if collector.store is not None:
                collector.store.save(run.key, table)
        except KeyboardInterrupt:
            raise
        except BaseException as exc:  # noqa: BLE001 - any failure of this run (KilledWorker
            # after the retries, an error raised on the worker) fails it alone
            collector.fail(run, exc)
        else:
            collector.ok(run, table)

    try:
        for fut in as_completed(list(futures)):
            take(fut)
        return False
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

    def __init__(self, dask: Any, workers: Optional[int] = None, retries: int = 2,
                 task: Optional[Callable[[Any], Any]] = None):
        self.dask, self.workers, self.retries, self.task = dask, workers, retries, task

    def run(self, todo: List[Run], collector: Collector) -> bool:
        return run_on_dask(todo, self.dask, self.workers, collector, self.retries, self.task)

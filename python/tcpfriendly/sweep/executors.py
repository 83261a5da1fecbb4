"""Executors of a sweep: whatever runs the planned runs implements :class:`Executor`
(``run(todo, collector) -> interrupted``). :class:`ThreadExecutor` (local threads; the engine
releases the GIL) and :class:`ProcessExecutor` (local processes, for runs so short that their
Python work matters) live here, :class:`~.dask_executor.DaskExecutor` is their sibling. All run
:func:`execute` per run and report to a :class:`Collector`."""

from __future__ import annotations

import json
import os
import queue
import signal
import threading
from typing import TYPE_CHECKING, Any, Callable, Protocol, Dict, List, Mapping, Optional, Tuple

from .. import metrics as _metrics
from ..scenario import _call_engine, native
from .core import _INT_METRICS, LINK_METRICS, Run
from .store import RunStore, rows_table

if TYPE_CHECKING:  # annotations only
    from .runner import Progress


class Executor(Protocol):
    """Runs ``todo`` and reports every run to ``collector`` (``ok``/``fail``, on the calling
    thread); returns True if interrupted by Ctrl-C (finished runs are kept)."""

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        ...


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def run_rows(raw: Mapping[str, Any], key: str, seed: int) -> List[Dict[str, Any]]:
    """The per-group rows of one engine result (dict): identity columns, the group metrics
    (:func:`tcpfriendly.metrics.group_metrics`) and ``link.<name>.<metric>`` for every link."""
    flows = raw.get("flows") or []
    link_cols: Dict[str, Any] = {}
    for link in raw.get("links") or []:
        for m in LINK_METRICS:
            v = link.get(m)
            link_cols[f"link.{link.get('name')}.{m}"] = (
                (int(v) if v is not None else None) if m in _INT_METRICS else _num(v))
    values = _metrics.group_metrics(flows, series=_metrics.window_samples(raw))
    rows = []
    for group, fs in _metrics.by_group(flows).items():
        first = fs[0]
        row: Dict[str, Any] = {
            "run": key, "seed": int(seed), "group": group,
            "algorithm": str(first.get("algorithm")),
            "recovery": first.get("recovery"),
            "params": json.dumps(first.get("params") or {}, sort_keys=True, separators=(",", ":")),
            "direction": _metrics.direction(first),
        }
        row.update({m: (None if v is None else int(v)) if m in _INT_METRICS else float(v)
                    for m, v in values[group].items()})
        row.update(link_cols)
        rows.append(row)
    return rows


def execute(scenario_json: str, seed: int, key: str) -> List[Dict[str, Any]]:
    """Run one scenario (the GIL is released while the engine runs) and return its rows.
    A module-level function, so Dask workers can run it."""
    text = _call_engine(native().run, scenario_json, int(seed), None)
    return run_rows(json.loads(text), key, seed)


class RunFailed:
    """What :func:`execute_or_failure` returns for a run that raised on a worker (a process of
    :class:`ProcessExecutor`, a Dask worker): its message. A failing run is not a failing task,
    so Dask neither logs a traceback for it nor retries it (the same scenario and seed would
    fail the same way); ``retries`` are left for lost workers."""

    __slots__ = ("message",)

    def __init__(self, message: str):
        self.message = message

    def __str__(self) -> str:
        return self.message


def execute_or_failure(scenario_json: str, seed: int, key: str):
    """:func:`execute` on a worker: its rows, or a :class:`RunFailed` when the run raised (any
    exception: an engine error, a memory guard, a panic)."""
    try:
        return execute(scenario_json, seed, key)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - the run fails alone
        return RunFailed(_error_text(exc))


def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Collector:
    """Receives finished and failed runs (on the calling thread)."""

    def __init__(self, store: Optional[RunStore], progress: Progress,
                 on_run: Optional[Callable[[Run, bool], None]]):
        self.store, self.progress, self.on_run = store, progress, on_run
        self.tables: Dict[str, Any] = {}
        self.failures: List[Tuple[Run, str]] = []

    def ok(self, run: Run, table) -> None:
        self.tables[run.key] = table
        self.progress.update(True)
        if self.on_run is not None:
            self.on_run(run, True)

    def fail(self, run: Run, exc: BaseException) -> None:
        self.fail_message(run, _error_text(exc))

    def fail_message(self, run: Run, message: str) -> None:
        self.failures.append((run, message))
        self.progress.update(False)
        if self.on_run is not None:
            self.on_run(run, False)


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, (ValueError, RuntimeError)) and text else \
        f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run_and_store(run: Run, store: Optional[RunStore], task: Optional[Callable[[Any], Any]] = None):
    if task is not None:  # another engine user's per-run work (it stores nothing here)
        return task(run)
    table = rows_table(execute(run.scenario_json, run.seed, run.key), run)
    if store is not None:
        store.save(run.key, table)
    return table


def _run_threads(todo: List[Run], workers: int, collector: Collector,
                 log: Callable[[str], None], task: Optional[Callable[[Any], Any]] = None) -> bool:
    """Run ``todo`` on ``workers`` threads (the engine releases the GIL). Each thread stores
    its run's file itself. Returns True if interrupted by Ctrl-C: the first Ctrl-C stops
    starting runs and waits for those in progress; a second abandons them."""
    pending = list(reversed(todo))
    lock = threading.Lock()
    stop = threading.Event()
    results: "queue.Queue[Optional[Tuple[Run, Any, Optional[BaseException]]]]" = queue.Queue()
    running = [0]

    def worker() -> None:
        try:
            while not stop.is_set():
                with lock:
                    if not pending:
                        break
                    run = pending.pop()
                    running[0] += 1
                try:
                    table = _run_and_store(run, collector.store, task)
                except BaseException as exc:  # noqa: BLE001 - any failure (a Rust panic is a
                    # BaseException) fails this run alone; the thread goes on with the next
                    results.put((run, None, exc))
                else:
                    results.put((run, table, None))
                finally:
                    with lock:
                        running[0] -= 1
        finally:
            results.put(None)

    n = max(1, min(workers, len(todo)))
    threads = [threading.Thread(target=worker, name=f"tcpf-sweep-{i}", daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    alive = n

    def drain(block_s: float) -> None:
        nonlocal alive
        try:
            item = results.get(timeout=block_s)
        except queue.Empty:
            return
        if item is None:
            alive -= 1
        elif item[2] is None:
            collector.ok(item[0], item[1])
        else:
            collector.fail(item[0], item[2])

    try:
        while alive:
            drain(0.2)
        return False
    except KeyboardInterrupt:
        stop.set()
        collector.progress.close()
        with lock:
            busy = running[0]
        if busy:
            log(f"interrupted: finishing the {busy} run{'s' if busy != 1 else ''} in progress "
                "(Ctrl-C again to abandon)")
        try:
            while alive:
                drain(0.2)
        except KeyboardInterrupt:
            with lock:
                busy = running[0]
            log(f"abandoned {busy} run{'s' if busy != 1 else ''} in progress")
        return True


class ThreadExecutor:
    """``workers`` local threads; each stores its run's file itself.

    ``task``: for other users of the executors (``tcpf evaluate``): ``task(run) -> value``
    runs instead of the sweep's own run, ``run`` is any object with a ``key``, and the value
    goes to ``collector.ok`` (the executor stores nothing; the collector does)."""

    def __init__(self, workers: int, log: Callable[[str], None],
                 task: Optional[Callable[[Any], Any]] = None):
        self.workers, self.log, self.task = workers, log, task

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        return _run_threads(todo, self.workers, collector, self.log, self.task)


# ----- processes ------------------------------------------------------------------------------
def _ignore_sigint() -> None:
    """A worker process leaves Ctrl-C (which a terminal sends to the whole process group) to
    the sweep."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _execute_chunk(items: List[Tuple[str, int, str]]) -> List[Any]:
    """Rows (or a :class:`RunFailed`) of each ``(scenario_json, seed, key)``, in a worker."""
    return [execute_or_failure(*item) for item in items]


class ProcessExecutor:
    """``workers`` local processes (started with ``spawn``), for sweeps whose runs are so short
    that the Python work per run (parsing the engine's JSON, building the rows) is a large part
    of a run: threads hold the GIL for it, processes do not. A worker returns a run's rows; the
    calling process builds the run's table and stores it, exactly as a thread would, so the
    table and the files are the thread executor's byte for byte. Runs go out in small chunks
    (fewer messages); a chunk whose process dies fails its runs alone. The first Ctrl-C cancels
    the chunks not started and waits for those in progress; a second abandons them."""

    def __init__(self, workers: int, log: Callable[[str], None]):
        self.workers, self.log = workers, log

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed

        n = max(1, min(self.workers, len(todo)))
        size = max(1, min(16, len(todo) // (8 * n)))
        chunks = [todo[i:i + size] for i in range(0, len(todo), size)]
        pool = ProcessPoolExecutor(n, mp_context=multiprocessing.get_context("spawn"),
                                   initializer=_ignore_sigint)
        futures = {pool.submit(_execute_chunk, [(r.scenario_json, r.seed, r.key) for r in c]): c
                   for c in chunks}
        handled = set()
        abandoned = False

        def take(fut) -> None:
            if fut in handled:
                return
            handled.add(fut)
            chunk = futures[fut]
            try:
                results = fut.result()
            except BaseException as exc:  # noqa: BLE001 - the worker died: its chunk fails
                for run in chunk:
                    collector.fail(run, exc)
                return
            for run, rows in zip(chunk, results):
                if isinstance(rows, RunFailed):
                    collector.fail_message(run, rows.message)
                    continue
                try:
                    table = rows_table(rows, run)
                    if collector.store is not None:
                        collector.store.save(run.key, table)
                except Exception as exc:  # noqa: BLE001 - as a thread's failure to store
                    collector.fail(run, exc)
                else:
                    collector.ok(run, table)

        try:
            for fut in as_completed(futures):
                take(fut)
            return False
        except KeyboardInterrupt:
            for fut in futures:
                fut.cancel()  # those not started
            collector.progress.close()
            busy = sum(len(futures[f]) for f in futures if f.running())
            if busy:
                self.log(f"interrupted: finishing the {busy} run{'s' if busy != 1 else ''} in "
                         "progress (Ctrl-C again to abandon)")
            try:
                for fut in as_completed([f for f in futures if not f.cancelled()]):
                    take(fut)
            except KeyboardInterrupt:
                abandoned = True
                self.log("abandoned the runs in progress")
            return True
        finally:
            pool.shutdown(wait=not abandoned, cancel_futures=True)

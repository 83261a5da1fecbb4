"""Executors of a sweep: whatever runs the planned runs implements :class:`Executor`
(``run(todo, collector) -> interrupted``). :class:`ThreadExecutor` (local threads; the engine
releases the GIL) lives here, :class:`~.dask_executor.DaskExecutor` is its sibling. Both run
:func:`execute` per run and report to a :class:`Collector`."""

from __future__ import annotations

import json
import os
import queue
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

"""Executors of a sweep: whatever runs the planned runs implements :class:`Executor`
(``run(todo, collector) -> interrupted``). :class:`ThreadExecutor` (local threads; the engine
releases the GIL), :class:`ProcessExecutor` (local processes, for runs so short that their
Python work matters) and :class:`AutoExecutor` (which of the two scales, timed on the first
runs) live here, :class:`~.dask_executor.DaskExecutor` is their sibling. All run
:func:`execute` per run and report to a :class:`Collector`."""

from __future__ import annotations

import atexit
import json
import os
import queue
import re
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any, Callable, Protocol, Dict, List, Mapping, Optional, Tuple

from .. import metrics as _metrics
from ..scenario import _call_engine, native
from .core import _INT_METRICS, LINK_METRICS, Run
from .store import RunStore, rows_table

if TYPE_CHECKING:  # annotations only
    from .runner import Progress


class Executor(Protocol):
    """Runs ``todo`` and reports every run to ``collector`` (``ok``/``fail``, on the calling
    thread); returns True if interrupted by Ctrl-C (finished runs are kept). ``kind`` names
    what runs them (``"threads"``, ``"processes"``, ``"dask"``: :attr:`SweepResult.executor`)."""

    kind: str

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        ...


def _num(x: Any) -> float:
    return float("nan") if x is None else float(x)


def _identity(key: str, seed: int, group: int, flow: Mapping[str, Any]) -> Dict[str, Any]:
    return {"run": key, "seed": int(seed), "group": group,
            "algorithm": str(flow.get("algorithm")),
            "recovery": flow.get("recovery"),
            "params": json.dumps(flow.get("params") or {}, sort_keys=True, separators=(",", ":")),
            "direction": _metrics.direction(flow)}


def _typed(values: Mapping[str, Any]) -> Dict[str, Any]:
    return {m: (None if v is None else int(v)) if m in _INT_METRICS else float(v)
            for m, v in values.items()}


def flow_rows(flows: List[Mapping[str, Any]], key: str, seed: int) -> List[Dict[str, Any]]:
    """One row per flow of a run (result order): the identity columns of its group's row,
    ``flow`` (its id) and :func:`tcpfriendly.metrics.flow_metrics`."""
    rows = []
    every = _metrics.RunFlows(flows)
    for f in flows:
        row = _identity(key, seed, int(f.get("group", 0)), f)
        row["flow"] = int(f.get("id", len(rows)))
        row.update(_typed(_metrics.flow_metrics(f, every)))
        rows.append(row)
    return rows


def run_rows(raw: Mapping[str, Any], key: str, seed: int, per_flow: bool = False) -> List[Dict[str, Any]]:
    """The per-group rows of one engine result (dict): identity columns, the group metrics
    (:func:`tcpfriendly.metrics.group_metrics`) and ``link.<name>.<metric>`` for every link.
    ``per_flow``: then one row per flow (:func:`flow_rows`), told apart by their ``flow``
    column (null on the group rows; :func:`~.store.split_flows` separates them)."""
    flows = raw.get("flows") or []
    link_cols: Dict[str, Any] = {}
    for link in raw.get("links") or []:
        for m, v in _metrics.link_metrics(link, LINK_METRICS).items():
            link_cols[f"link.{link.get('name')}.{m}"] = (
                (int(v) if v is not None else None) if m in _INT_METRICS else _num(v))
    values = _metrics.group_metrics(flows, series=_metrics.window_samples(raw))
    rows = []
    for group, fs in _metrics.by_group(flows).items():
        row: Dict[str, Any] = _identity(key, seed, group, fs[0])
        row.update(_typed(values[group]))
        row.update(link_cols)
        rows.append(row)
    if per_flow:
        rows.extend(flow_rows(list(flows), key, seed))
    return rows


def execute(scenario_json: str, seed: int, key: str, per_flow: bool = False,
            controllers: Optional[Mapping[str, type]] = None,
            engine_s: Optional[List[float]] = None) -> List[Dict[str, Any]]:
    """Run one scenario (the GIL is released while the engine runs) and return its rows
    (:func:`run_rows`). A module-level function, so Dask workers can run it. ``controllers``:
    Python controller classes by name (run in this process, on this thread). ``engine_s``: a
    list the engine call's wall seconds are appended to (:class:`AutoExecutor` times it)."""
    extra = (dict(controllers),) if controllers else ()
    start = time.perf_counter()
    text = _call_engine(native().run, scenario_json, int(seed), None, *extra)
    if engine_s is not None:
        engine_s.append(time.perf_counter() - start)
    return run_rows(json.loads(text), key, seed, per_flow)


def execute_ns2(scenario_json: str, seed: int, key: str, per_flow: bool = False) -> List[Dict[str, Any]]:
    """:func:`execute` with ns-2 as the simulator: the run's scenario expanded for ``seed`` (the
    flows, delays and start times tcpfriendly would simulate), exported to an ns-2 script and
    run by ``ns`` (:func:`tcpfriendly.ns2.run_ns2`, with its sampler of windows, RTTs and RTOs
    and the scenario's time series), its results read back into the engine's schema, then the
    same rows. A scenario the exporter cannot express raises its
    :class:`~tcpfriendly.ns2.Ns2Unsupported` (naming the element) before ``ns`` starts."""
    from ..ns2 import run_ns2
    from ..scenario import Scenario

    expanded = Scenario(json.loads(scenario_json)).expand(int(seed))
    raw = run_ns2(expanded, series_interval_s=(expanded.get("scenario") or {}).get("timeseries"))
    return run_rows(raw, key, seed, per_flow)


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


def execute_or_failure(scenario_json: str, seed: int, key: str, per_flow: bool = False,
                       controllers: Optional[Mapping[str, type]] = None):
    """:func:`execute` on a worker: its rows, or a :class:`RunFailed` when the run raised (any
    exception: an engine error, a memory guard, a panic)."""
    try:
        return execute(scenario_json, seed, key, per_flow, controllers)
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


def _run_and_store(run: Run, store: Optional[RunStore], task: Optional[Callable[[Any], Any]] = None,
                   controllers: Optional[Mapping[str, type]] = None,
                   engine_s: Optional[List[float]] = None):
    """A sweep's run on this thread: its rows table, stored in ``store`` when given.
    ``controllers``: Python controller classes its flows use; ``engine_s``: as for
    :func:`execute` (tcpfriendly's engine only)."""
    if task is not None:  # another engine user's per-run work (it stores nothing here)
        return task(run)
    timed = {"engine_s": engine_s} if engine_s is not None else {}  # (only when asked)
    if controllers:
        rows = execute(run.scenario_json, run.seed, run.key, run.per_flow, controllers, **timed)
    elif getattr(run, "simulator", "tcpf") == "ns2":
        rows = execute_ns2(run.scenario_json, run.seed, run.key, run.per_flow)
    else:
        rows = execute(run.scenario_json, run.seed, run.key, run.per_flow, **timed)
    table = rows_table(rows, run)
    if store is not None:
        store.save(run.key, table)
    return table


#: Run threads that :func:`_run_threads` left running (abandoned at a second Ctrl-C): they may
#: still be inside the engine. See :func:`runs_left_in_engine`.
_abandoned: List[threading.Thread] = []


def runs_left_in_engine() -> bool:
    """True while a run thread abandoned at a second Ctrl-C is still running. Such a thread
    coming back from the engine while the interpreter finalizes aborts the process (SIGABRT,
    exit 134), so the CLI then leaves without finalizing (:func:`tcpfriendly.cli.errors.run_app`)."""
    return any(t.is_alive() for t in _abandoned)


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

    def drain(block_s: float, report: bool = True) -> None:
        """One outcome (or a thread's end) from the queue; ``report=False``: not passed on."""
        nonlocal alive
        try:
            item = results.get(timeout=block_s)
        except queue.Empty:
            return
        if item is None:
            alive -= 1
        elif not report:
            pass
        elif item[2] is None:
            collector.ok(item[0], item[1])
        else:
            collector.fail(item[0], item[2])

    try:
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
        except BaseException:
            # raised on this thread (the collector could not store a result, an on_run callback
            # raised): start no more runs and wait for those in progress before it propagates. A
            # thread left inside the engine when the interpreter finalizes aborts the process
            # (SIGABRT, exit 134) instead of reporting the error. A Ctrl-C meanwhile abandons them.
            stop.set()
            while alive:  # the runs in progress end; their outcomes are not reported
                drain(0.2, report=False)
            raise
    finally:
        if alive:  # threads that have not ended their loop were abandoned (a second Ctrl-C):
            # remembered, see runs_left_in_engine
            _abandoned.extend(t for t in threads if t.is_alive())


class ThreadExecutor:
    """``workers`` local threads; each stores its run's file itself.

    ``task``: for other users of the executors (``tcpf evaluate``): ``task(run) -> value``
    runs instead of the sweep's own run, ``run`` is any object with a ``key``, and the value
    goes to ``collector.ok`` (the executor stores nothing; the collector does)."""

    kind = "threads"

    def __init__(self, workers: int, log: Callable[[str], None],
                 task: Optional[Callable[[Any], Any]] = None):
        self.workers, self.log, self.task = workers, log, task

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        return _run_threads(todo, self.workers, collector, self.log, self.task)


# ----- processes ------------------------------------------------------------------------------
class _HeldSigint:
    """A block that a Ctrl-C cannot cut in half: on the main thread, while the block runs, a
    Ctrl-C is held and handed to the previous handler (``KeyboardInterrupt`` by default) as the
    block ends. The process executor hands chunks to its pool in such a block, so a chunk sent
    is always a chunk recorded (a Ctrl-C between ``pool.submit`` and recording its future would
    leave a worker computing and storing a chunk the sweep neither waits for nor counts).
    Elsewhere (another thread, or SIGINT ignored or left to the system) it does nothing."""

    def __enter__(self) -> "_HeldSigint":
        self.held, self.handler = False, None
        if threading.current_thread() is threading.main_thread():
            handler = signal.getsignal(signal.SIGINT)
            if callable(handler):
                self.handler = handler
                signal.signal(signal.SIGINT, self._hold)
        return self

    def _hold(self, signum, frame) -> None:
        self.held = True

    def __exit__(self, *exc) -> None:
        if self.handler is not None:
            signal.signal(signal.SIGINT, self.handler)
            if self.held:
                self.handler(signal.SIGINT, None)


def _init_worker() -> None:
    """A worker process leaves Ctrl-C (which a terminal sends to the whole process group) to
    the sweep, and imports what its runs need once (it then serves sweep after sweep)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in _PRELOAD:
        __import__(name)
    native()


# What a run imports (pandas: the run's JSON goes through metrics that use it), loaded once by
# the forkserver (its workers inherit it) or by each spawned worker.
_PRELOAD = ("tcpfriendly.sweep.executors", "tcpfriendly.sweep.store", "pyarrow", "pyarrow.parquet",
            "pandas")


def _warm() -> int:
    return os.getpid()


def _execute_chunk(items: List[Tuple[str, int, str, bool]], store_dir: Optional[str],
                   shipped: Optional[Tuple[Dict[str, str], Dict[str, str]]] = None):
    """In a worker process: run each ``(scenario_json, seed, key, per_flow)`` of a chunk and return
    ``(table, runs, failures, store_error, seconds)``: the rows of the chunk's successful runs as ONE
    table (:func:`~.store.runs_table`; each run's ``[key, first, rows, columns]`` in ``runs``),
    ``failures`` ``[(key, message)]``, and, with ``store_dir``, the chunk stored there as one
    batch file by the worker itself (``store_error``: why it could not be, else None), and the
    chunk's wall time. ``shipped``: (specs, fingerprints) of the Python controllers the runs use,
    loaded here (:func:`tcpfriendly.controller.worker_controllers`)."""
    from .store import runs_table, write_batch

    start = time.perf_counter()
    results, failures = [], []
    controllers = None
    if shipped is not None:
        from ..controller import worker_controllers
        try:
            controllers = worker_controllers(*shipped)
        except Exception as exc:  # noqa: BLE001 - every run of the chunk fails with the reason
            return None, [], [(item[2], _error_text(exc)) for item in items], None, \
                time.perf_counter() - start
    for scenario_json, seed, key, per_flow in items:
        rows = execute_or_failure(scenario_json, seed, key, per_flow, controllers)
        if isinstance(rows, RunFailed):
            failures.append((key, rows.message))
        else:
            results.append((key, rows))
    table, runs = runs_table(results)
    store_error = None
    if store_dir is not None and table is not None and any(r[2] for r in runs):
        try:
            write_batch(store_dir, table, runs)
        except Exception as exc:  # noqa: BLE001 - the sweep stores these runs itself
            store_error = _error_text(exc)
    return table, runs, failures, store_error, time.perf_counter() - start


# A chunk's fixed cost in a worker (a message, one Arrow table, one run file) is about one
# short run (3 ms): chunks are kept at least this long once the run time is known, so that
# short runs go out by the dozen while the last chunks of long runs are single runs.
MIN_CHUNK_SECONDS = 0.025
# ... and at most this long, so that the first Ctrl-C (which waits for the chunks in progress)
# and the last chunks of a sweep wait for about a second of runs, not for a long share of them.
MAX_CHUNK_SECONDS = 1.0


def _chunk_size(left: int, workers: int, run_seconds: Optional[float]) -> int:
    """The next chunk's size (guided scheduling): half of what is left per worker, at most
    :data:`~.store.BATCH_RUNS` runs (a chunk is one run file), and, given ``run_seconds``
    (the mean run time so far), at least :data:`MIN_CHUNK_SECONDS` and at most
    :data:`MAX_CHUNK_SECONDS` of runs; one run while no run time is known (the first chunks).
    The chunks shrink as the sweep ends, so that the workers finish together."""
    from .store import BATCH_RUNS

    if run_seconds is None:
        return 1 if left else 0
    size = -(-left // (2 * workers))
    if run_seconds > 0:
        size = min(size, int(MAX_CHUNK_SECONDS / run_seconds))
        size = max(size, int(MIN_CHUNK_SECONDS / run_seconds) + 1)
    return max(1, min(BATCH_RUNS, size, left))


_POOL_LOCK = threading.Lock()
_POOLS: Dict[int, Any] = {}  # worker count -> its warm ProcessPoolExecutor


def _pool_context():
    import multiprocessing

    # forkserver: one fresh process imports tcpfriendly once, then every worker is a cheap
    # fork of it (never a fork of this process, which may run threads); spawn elsewhere
    if "forkserver" in multiprocessing.get_all_start_methods():
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(list(_PRELOAD))
        return ctx
    return multiprocessing.get_context("spawn")  # pragma: no cover - not Linux


def process_pool(workers: int, start: bool = True):
    """The warm pool of ``workers`` worker processes, kept between sweeps (its start-up,
    0.5-1 s of a core for the imports, is paid once per Python process and worker count). ``start``: submit a no-op per worker so that they start now (e.g. while the sweep
    is planned)."""
    from concurrent.futures import ProcessPoolExecutor

    with _POOL_LOCK:
        pool = _POOLS.get(workers)
        if pool is not None and getattr(pool, "_broken", False):
            _drop_pool_locked(workers, kill=False)
            pool = None
        if pool is None:
            pool = ProcessPoolExecutor(workers, mp_context=_pool_context(),
                                       initializer=_init_worker)
            _POOLS[workers] = pool
            if start:
                for _ in range(workers):
                    pool.submit(_warm)
        return pool


_GUARD = re.compile(r"""^if\s+__name__\s*==\s*['"]__main__['"]\s*:""", re.M)


def main_is_importable() -> bool:
    """Whether worker processes may start here: they import the main module (as every
    ``spawn``/``forkserver`` process does), which must not start a sweep again. True for the
    ``tcpf`` command, ``python -m`` of a tcpfriendly module, an interactive session and a
    script with an ``if __name__ == "__main__":`` guard; ``executor="auto"`` takes threads
    otherwise."""
    main = sys.modules.get("__main__")
    name = getattr(getattr(main, "__spec__", None), "name", None) or ""
    if name.startswith("tcpfriendly."):
        return True
    path = getattr(main, "__file__", None)
    if not path:
        return True  # interactive, -c: nothing to import
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return _GUARD.search(f.read()) is not None
    except OSError:
        return False


def pool_is_warm(workers: int) -> bool:
    """A warm pool of ``workers`` processes exists (see :func:`process_pool`)."""
    pool = _POOLS.get(workers)
    return pool is not None and not getattr(pool, "_broken", False)


def pool_pids() -> List[int]:
    """The process ids of the warm pools' workers (for CPU accounting in benchmarks)."""
    with _POOL_LOCK:
        return [pid for pool in _POOLS.values()
                for pid in list(getattr(pool, "_processes", None) or {})]


KILL_WAIT_SECONDS = 5.0  # a terminated worker is gone in milliseconds; never wait longer


def _drop_pool_locked(workers: int, kill: bool) -> None:
    pool = _POOLS.pop(workers, None)
    if pool is None:
        return
    if kill:  # abandoned runs: stop them now rather than at exit, and wait until they are
        # gone, so that the sweep counts the stored runs once no worker can store one more
        procs = list((getattr(pool, "_processes", None) or {}).values())
        for proc in procs:
            try:
                proc.terminate()
            except Exception:  # noqa: BLE001 - already gone
                pass
        for proc in procs:
            try:
                proc.join(KILL_WAIT_SECONDS)
            except Exception:  # noqa: BLE001 - already gone
                pass
    pool.shutdown(wait=False, cancel_futures=True)


def shutdown_pools() -> None:
    """Stop the warm worker processes (also called when Python exits)."""
    with _POOL_LOCK:
        for workers in list(_POOLS):
            _drop_pool_locked(workers, kill=False)


# At exit, while every module is still there: a pool left for the interpreter's teardown to
# collect runs its shutdown callback after ``multiprocessing.util`` is gone, and Python
# prints "Exception ignored in ... weakref_cb" (seen at the end of a full test run).
atexit.register(shutdown_pools)


class ProcessExecutor:
    """``workers`` local processes, for sweeps whose runs are so short that the Python work per
    run (parsing the engine's JSON, the group metrics, the Arrow table) is a large part of a
    run: threads hold the GIL for it, processes do not. The pool is started once per Python
    process and kept warm (:func:`process_pool`). Runs go out in chunks of decreasing size
    (:func:`_chunk_size`), two per worker in flight; a worker runs a whole chunk, builds ONE Arrow table of its rows, stores
    it as one run file itself (with ``out``) and returns the table: the calling process only
    slices it per run. The slices are the thread executor's tables value for value (the same
    rows, types and columns), so the results are the same byte for byte. A run that raises
    fails alone; a worker process that dies breaks the pool (as in any
    ``ProcessPoolExecutor``): the runs not finished fail, to be redone by a rerun, and the next
    sweep starts a new pool. The first Ctrl-C cancels the chunks not started and waits for
    those in progress; a second abandons them (the worker processes are stopped, and waited
    for). A Ctrl-C never falls between handing a chunk to the pool and recording it
    (:class:`_HeldSigint`): when :meth:`run` returns, no worker stores a run of it any more, so
    the runs on disk are the runs done."""

    kind = "processes"

    def __init__(self, workers: int, log: Callable[[str], None],
                 shipped: Optional[Tuple[Dict[str, str], Dict[str, str]]] = None):
        # shipped: the Python controllers' (specs, fingerprints), loaded in each worker
        self.workers, self.log, self.shipped = workers, log, shipped

    def prepare(self) -> None:
        """Start the worker processes now (they import while the sweep plans)."""
        process_pool(self.workers)

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        store_dir = collector.store.dir if collector.store is not None else None
        left = list(reversed(todo))  # popped from the end: plan order
        timing = [0.0, 0]  # wall seconds and runs of the finished chunks

        def next_unit():
            per_run = timing[0] / timing[1] if timing[1] else None
            size = _chunk_size(len(left), self.workers, per_run)
            chunk = [left.pop() for _ in range(size)]
            items = [(r.scenario_json, r.seed, r.key, r.per_flow) for r in chunk]
            return _execute_chunk, (items, store_dir, self.shipped), chunk

        def take(fut, chunk) -> None:
            try:
                table, runs, failures, store_error, seconds = fut.result()
            except BaseException as exc:  # noqa: BLE001 - the worker died: its chunk fails
                for run in chunk:
                    collector.fail(run, exc)
                return
            timing[0] += seconds
            timing[1] += len(chunk)
            failed = dict(failures)
            placed = {key: (first, count, columns) for key, first, count, columns in runs}
            names = table.column_names if table is not None else None
            whole = names is not None and all(columns == names for _, _, columns in placed.values())
            for run in chunk:  # in the chunk's order, as a thread would finish them
                if run.key in failed:
                    collector.fail_message(run, failed[run.key])
                    continue
                first, count, columns = placed[run.key]
                t = table.slice(first, count)
                if not whole:
                    t = t.select(columns)
                if store_error is not None and collector.store is not None:
                    try:  # the worker could not store it: store it here, as a thread would
                        collector.store.save(run.key, t)
                    except Exception as exc:  # noqa: BLE001 - as a thread's failure to store
                        collector.fail(run, exc)
                        continue
                collector.ok(run, t)

        return _drive_pool(self.workers, self.log, collector, left, next_unit, take)


# AutoExecutor keeps threads when the Python work of a run (decoding, group metrics, its table
# and file: it holds the GIL) times the workers is at most this share of the run. Measured on 2
# cores (2026-12-06, benchmarks/README, sweep_scaling): runs of 9 ms with 1.6 ms of Python
# (share 0.35) scaled alike on threads and processes (1.86x); at 16 ms (share 0.19) threads
# scaled 1.84x, processes 1.78x; at 45 ms (0.07) threads were ahead in most alternating
# comparisons, by 1-5 %, within the host's noise, for less CPU per run (no messages, nothing
# sliced in the calling process).
THREADS_GIL_SHARE = 0.2


def threads_scale(samples: List[Tuple[float, float]], workers: int) -> bool:
    """Whether ``workers`` threads scale on runs timed as ``samples`` [(run seconds, engine
    seconds)] (the GIL released for the engine only): the median run's Python seconds times
    ``workers`` at most :data:`THREADS_GIL_SHARE` of its seconds. False without a sample."""
    if not samples:
        return False
    import statistics

    run = statistics.median(t for t, _ in samples)
    python = statistics.median(max(0.0, t - e) for t, e in samples)
    return run > 0 and workers * python <= THREADS_GIL_SHARE * run


class AutoExecutor:
    """``executor="auto"`` where the warm pool of :class:`ProcessExecutor` is at hand: the first
    runs (one per worker) on threads, each timed (the run, and the engine within it), then the
    rest on threads if they scale there (:func:`threads_scale`: long runs, whose Python work
    hardly holds the GIL), else on the pool (short runs). Both give the same table, value for
    value. ``kind``: what ran the runs after the first ("threads" or "processes"), and
    ``samples`` the timings it was chosen on."""

    def __init__(self, workers: int, log: Callable[[str], None]):
        self.workers, self.log = workers, log
        self.kind = "threads"
        self.samples: List[Tuple[float, float]] = []

    def run(self, todo: List[Run], collector: "Collector") -> bool:
        first, rest = todo[:self.workers], todo[self.workers:]

        def timed(run: Run):
            engine: List[float] = []
            start = time.perf_counter()
            table = _run_and_store(run, collector.store, engine_s=engine)
            if engine:  # (list.append: safe from several threads)
                self.samples.append((time.perf_counter() - start, engine[0]))
            return table

        interrupted = _run_threads(first, self.workers, collector, self.log, timed)
        if interrupted or not rest:
            return interrupted
        if threads_scale(self.samples, self.workers):
            return _run_threads(rest, self.workers, collector, self.log)
        self.kind = "processes"
        return ProcessExecutor(self.workers, self.log).run(rest, collector)


def _drive_pool(workers: int, log: Callable[[str], None], collector: "Collector", left: List[Any],
                next_unit: Callable[[], Tuple[Callable[..., Any], tuple, List[Any]]],
                take: Callable[[Any, List[Any]], None]) -> bool:
    """Hand the runs of ``left`` (popped from its end) to the warm pool of ``workers``
    processes, a unit at a time (``next_unit() -> (function, args, runs)``), two units per
    worker in flight, and pass each finished future with its runs to ``take``. Returns True if
    interrupted by Ctrl-C (the first cancels the units not started and waits for those in
    progress; a second abandons them and stops the workers). A pool that breaks (a worker
    died) fails the runs not sent, and is replaced at the next use. The one driver of
    :class:`ProcessExecutor` and :class:`TaskProcessExecutor`."""
    from concurrent.futures import FIRST_COMPLETED, wait

    pool = process_pool(workers)
    futures: Dict[Any, List[Any]] = {}
    abandoned = False

    def submit() -> None:
        # a Ctrl-C waits for the end of the block: every unit sent is in futures (waited for)
        with _HeldSigint():
            while left and len(futures) < 2 * workers:
                fn, args, runs = next_unit()
                try:
                    futures[pool.submit(fn, *args)] = runs
                except Exception as exc:  # noqa: BLE001 - the pool broke (a worker died):
                    for run in runs + left[::-1]:  # the runs not sent fail (a
                        collector.fail(run, exc)  # rerun redoes them)
                    left.clear()

    def drain(refill: bool) -> None:
        while futures:
            done, _ = wait(list(futures), return_when=FIRST_COMPLETED)
            for fut in done:
                take(fut, futures.pop(fut))
            if refill:
                submit()

    try:
        submit()
        drain(refill=True)
        return False
    except KeyboardInterrupt:
        left.clear()
        try:  # (a second Ctrl-C from here on abandons what is in progress)
            for fut in list(futures):
                if fut.cancel():  # not started
                    futures.pop(fut)
            collector.progress.close()
            busy = sum(len(runs) for runs in futures.values())
            if busy:
                log(f"interrupted: finishing the {busy} run{'s' if busy != 1 else ''} "
                    "in progress (Ctrl-C again to abandon)")
            drain(refill=False)
        except KeyboardInterrupt:
            abandoned = True
            log("abandoned the runs in progress")
        return True
    except BaseException:
        # raised here (the collector could not store a result, an on_run callback
        # raised): no unit goes out any more and those in progress end before it
        # propagates, so that no worker stores a run after run() returns.
        # A Ctrl-C meanwhile abandons them (the workers are stopped)
        left.clear()
        for fut in list(futures):
            if fut.cancel():
                futures.pop(fut)
        try:
            wait(list(futures))
        except KeyboardInterrupt:
            abandoned = True
            raise
        raise
    finally:
        broken = getattr(pool, "_broken", False)
        if abandoned or broken:
            with _POOL_LOCK:
                if _POOLS.get(workers) is pool:
                    _drop_pool_locked(workers, kill=abandoned)


class TaskProcessExecutor:
    """``task(run)`` on the warm worker processes (:func:`process_pool`), one run per message,
    for other users of the executors whose per-run work holds the GIL (``tcpf evaluate``'s and
    a sweep's Python controllers, loaded in each worker from where they came from). ``task``
    and the runs must pickle; ``task``'s value goes to ``collector.ok``, its exception to
    ``collector.fail``. Ctrl-C and a broken pool as :class:`ProcessExecutor`."""

    kind = "processes"

    def __init__(self, workers: int, log: Callable[[str], None], task: Callable[[Any], Any]):
        self.workers, self.log, self.task = workers, log, task

    def run(self, todo: List[Any], collector: "Collector") -> bool:
        left = list(reversed(todo))

        def next_unit():
            run = left.pop()
            return self.task, (run,), [run]

        def take(fut, runs) -> None:
            try:
                value = fut.result()
            except BaseException as exc:  # noqa: BLE001 - the run (or its worker) failed
                collector.fail(runs[0], exc)
            else:
                collector.ok(runs[0], value)

        return _drive_pool(self.workers, self.log, collector, left, next_unit, take)

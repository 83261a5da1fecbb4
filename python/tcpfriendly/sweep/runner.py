"""Running a sweep: the plan, the cache, an executor, the tidy table (:func:`run_sweep`)."""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .core import (FLOW_METRICS, GROUP_METRICS, Run, SweepError, SweepInterrupted, SweepOutputError, _label,
                   check_simulator, check_workers)
from .executors import (AutoExecutor, Collector, Executor, ProcessExecutor, ThreadExecutor, default_workers,
                        main_is_importable, pool_is_warm)
from ..errors import path_arg
from ..outfiles import OutputError, claim
from .store import RunStore, _write_outputs, _write_spec, legacy_identity, read_record, split_flows

# ----- progress -----------------------------------------------------------------------------
def _clock(seconds: float) -> str:
    if not math.isfinite(seconds):
        return "--:--"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


class Progress:
    """A one-line progress bar on stderr (done/total, rate, ETA); silent when disabled."""

    def __init__(self, total: int, enabled: bool, stream=None, label: str = "sweep"):
        self.total, self.enabled, self.label = total, enabled and total > 0, label
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.done = self.failed = 0
        self._last = 0.0
        self._width = 0

    def update(self, ok: bool) -> None:
        if ok:
            self.done += 1
        else:
            self.failed += 1
        self.render()

    def render(self, force: bool = False) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = self.done + self.failed
        if not force and now - self._last < 0.1 and finished < self.total:
            return
        self._last = now
        elapsed = now - self.start
        rate = finished / elapsed if elapsed > 0 else 0.0
        eta = (self.total - finished) / rate if rate > 0 else float("inf")
        width = 24
        fill = int(width * finished / self.total)
        line = (f"{self.label} [{'#' * fill}{'.' * (width - fill)}] {finished}/{self.total} "
                f"{100 * finished / self.total:3.0f}%  {rate:.2f} runs/s  "
                f"elapsed {_clock(elapsed)}  ETA {_clock(eta)}")
        if self.failed:
            line += f"  {self.failed} failed"
        pad = max(0, self._width - len(line))
        self._width = len(line)
        self.stream.write("\r" + line + " " * pad)
        self.stream.flush()

    def close(self) -> None:
        if self.enabled and self._width:
            self.render(force=True)
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0


# ----- results ------------------------------------------------------------------------------
class SweepResult:
    """The outcome of :meth:`Sweep.run`.

    Attributes:
        table: the tidy table (pandas DataFrame): one row per run x flow group, with columns
            ``point``, one per axis path, ``seed``, ``group``, ``algorithm``, ``recovery``,
            ``params``, ``direction``, the metrics and ``run`` (the run's key).
        total: distinct runs in the sweep; ``cached``: found already done; ``ran``: finished
            now; ``failures``: ``[(Run, message)]``; ``interrupted``: stopped by Ctrl-C.
        out: the output directory (or None); ``paths``: the files written there.
        simulator: ``"tcpf"`` or ``"ns2"``, who ran the runs (the sweep's ``simulator``).
        flows: with ``per_flow`` (the spec's ``per_flow = true``, ``tcpf sweep --per-flow``),
            the per-flow table (pandas DataFrame; ``flows.parquet``/``flows.csv`` in ``out``):
            one row per run x flow of the runs that finished, with ``point``, the axis columns
            as in :attr:`table`, ``seed``, ``flow`` (the flow's id), ``group``, ``algorithm``,
            ``recovery``, ``params``, ``direction``, every metric of
            :data:`tcpfriendly.metrics.FLOW_METRICS` and ``run``. None when the sweep did not
            ask for per-flow rows.
        executor: what ran the runs: ``"threads"``, ``"processes"`` or ``"dask"`` (with
            ``executor="auto"``, what it chose; see :func:`local_executor`), None when every
            run was already done.
    """

    def __init__(self, table, total: int, cached: int, ran: int,
                 failures: List[Tuple[Run, str]], interrupted: bool, out: Optional[str],
                 paths: List[str], elapsed: float, points: List[Dict[str, Any]], flows=None,
                 simulator: str = "tcpf", executor: Optional[str] = None):
        self.table, self.total, self.cached, self.ran = table, total, cached, ran
        self.failures, self.interrupted, self.out, self.paths = failures, interrupted, out, paths
        self.elapsed, self.points, self.flows, self.simulator = elapsed, points, flows, simulator
        self.executor = executor

    @property
    def missing(self) -> int:
        return self.total - self.cached - self.ran

    @property
    def complete(self) -> bool:
        return self.missing == 0

    def failure_label(self, i: int = 0) -> str:
        run, message = self.failures[i]
        point = self.points[run.point]
        label = ", ".join(f"{p}={_label(v)}" for p, v in point.items()) or "the base scenario"
        return f"{label}, seed {run.seed}: {message}"

    def __repr__(self) -> str:
        return (f"<SweepResult: {self.cached + self.ran}/{self.total} runs done"
                f"{' in ns-2' if self.simulator == 'ns2' else ''}, "
                f"{len(self.failures)} failed, {len(self.table)} rows>")

    def _repr_html_(self) -> str:
        """Jupyter's display: the summary table and first figure of ``tcpf report`` on a sweep."""
        from ..report.sweep_summary import sweep_html
        return sweep_html(self)


def _axis_column(values: List[Any]) -> List[Any]:
    """Axis values as one column type: numbers, strings or booleans as they are; anything
    else (tables, arrays, mixed kinds) as JSON text."""
    kinds = set()
    for v in values:
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, (int, float)):
            kinds.add("num")
        elif isinstance(v, str):
            kinds.add("str")
        else:
            kinds.add("other")
    if len(kinds) == 1 and kinds != {"other"}:
        if kinds == {"num"} and any(isinstance(v, float) for v in values):
            return [float(v) for v in values]
        return list(values)
    return [v if isinstance(v, str) and kinds <= {"str"} else _label(v) for v in values]


def _axis_columns(paths: List[str], points: List[Dict[str, Any]],
                  point_of_row: List[int]) -> Dict[str, List[Any]]:
    """The axis columns of rows from the points ``point_of_row`` (:func:`_axis_column`)."""
    axis_cols = {}
    for path in paths:
        column = _axis_column([points[i][path] for i in range(len(points))])
        axis_cols[path] = [column[i] for i in point_of_row]
    return axis_cols


STATUS_COLUMNS = ["status", "error"]


def _assemble(sweep, points: List[Dict[str, Any]], runs: List[Run], tables: Mapping[str, Any],
              metrics: List[str], failed: Optional[Mapping[str, str]] = None):
    """The tidy table of the runs in ``tables`` (plan order), and one row per run in
    ``failed`` (``{key: message}``: status "failed", the message in ``error``, no metrics)."""
    import pandas as pd
    import pyarrow as pa

    failed = failed or {}
    paths = sweep.axis_paths
    ident = ["seed", "group", "algorithm", "recovery", "params", "direction"]
    parts, point_of_row, status, error = [], [], [], []
    for run in runs:
        t = tables.get(run.key)
        if t is not None:
            status.extend(["ok"] * t.num_rows)
            error.extend([""] * t.num_rows)
        elif run.key in failed:
            t = pa.table({"run": pa.array([run.key], pa.string()),
                          "seed": pa.array([run.seed], pa.int64())})
            status.append("failed")
            error.append(failed[run.key])
        else:
            continue
        parts.append(t)
        point_of_row.extend([run.point] * t.num_rows)
    if not parts:
        return pd.DataFrame(columns=["point", *paths, *ident,
                                     *[m for m in metrics if m in GROUP_METRICS], "run",
                                     *STATUS_COLUMNS])
    # one concatenation, then the status columns once (not two appends per run)
    table = pa.concat_tables(parts, promote_options="default").replace_schema_metadata(None)
    table = table.append_column("status", pa.array(status, pa.string()))
    table = table.append_column("error", pa.array(error, pa.string()))
    df = table.to_pandas()
    for col in ident:
        if col not in df.columns:
            df[col] = None
    axis_cols = _axis_columns(paths, points, point_of_row)
    keep: List[str] = []
    for m in metrics:
        if m in GROUP_METRICS:
            if m not in df.columns:
                df[m] = float("nan")
            keep.append(m)
        elif m.count(".") == 1:  # link.<metric>: every link
            suffix = "." + m.split(".", 1)[1]
            keep.extend(c for c in df.columns if c.startswith("link.") and c.endswith(suffix)
                        and c.count(".") == 2)
        else:
            if m not in df.columns:
                df[m] = float("nan")
            keep.append(m)
    seen = set()
    metric_cols = [c for c in keep if not (c in seen or seen.add(c))]
    # keep link columns in the order the runs list them (bottleneck first)
    link_order = [c for c in df.columns if c in set(metric_cols) and c.startswith("link.")]
    metric_cols = [c for c in metric_cols if not c.startswith("link.")] + link_order
    front = pd.DataFrame({"point": pd.Series(point_of_row, dtype="int64"), **axis_cols})
    out = pd.concat([front, df[ident + metric_cols + ["run"] + STATUS_COLUMNS]], axis=1)
    return out


FLOW_ID_COLUMNS = ["seed", "flow", "group", "algorithm", "recovery", "params", "direction"]


def _assemble_flows(sweep, points: List[Dict[str, Any]], runs: List[Run], flows: Mapping[str, Any]):
    """The per-flow table (:attr:`SweepResult.flows`) of the runs in ``flows`` (their flow
    rows, :func:`~.store.split_flows`), in plan order and each run's flow order."""
    import pandas as pd
    import pyarrow as pa

    columns = FLOW_ID_COLUMNS + FLOW_METRICS + ["run"]
    parts, point_of_row = [], []
    for run in runs:
        t = flows.get(run.key)
        if t is not None:
            parts.append(t)
            point_of_row.extend([run.point] * t.num_rows)
    if not parts:
        return pd.DataFrame(columns=["point", *sweep.axis_paths, *columns])
    df = pa.concat_tables(parts, promote_options="default").replace_schema_metadata(None).to_pandas()
    front = pd.DataFrame({"point": pd.Series(point_of_row, dtype="int64"),
                          **_axis_columns(sweep.axis_paths, points, point_of_row)})
    return pd.concat([front, df[columns]], axis=1)


def _claim(sweep, out_dir: str, force: bool):
    """The output directory of ``sweep`` (:func:`tcpfriendly.outfiles.claim`): new, empty or
    this same spec's; a directory with another spec's table is refused unless ``force``."""
    def legacy(directory: str) -> Optional[str]:
        try:
            entries = set(os.listdir(directory))
        except OSError:
            return None
        if entries <= {"runs"} and os.path.isdir(os.path.join(directory, "runs")):
            return identity  # only a cache of run files: content-addressed, safe to share
        return legacy_identity(directory)

    identity = sweep.identity()
    try:
        claimed = claim(out_dir, "sweep", identity, force=force, field="out",
                        files=["sweep.json", "results.parquet", "results.csv", "flows.parquet",
                               "flows.csv"], legacy=legacy)
    except OutputError as exc:  # before anything runs: also a SweepError, as it always was
        raise SweepOutputError(str(exc), field=exc.field) from None
    if not force:
        _check_coverage(sweep, out_dir)
    return claimed


def _check_coverage(sweep, out_dir: str) -> None:
    """The same study may grow in ``out_dir`` (more seeds, more axis values), but not lose runs
    its table has: a spec whose grid misses some (point, seed) of the recorded ``sweep.json``
    would replace that table with a smaller one, so it is refused (unless ``force``)."""
    path = os.path.join(out_dir, "sweep.json")
    if os.path.islink(path) or not os.path.isfile(path):
        return
    try:
        record = read_record(out_dir)
        old_points = record["points"]
        old = {(json.dumps(old_points[r["point"]], sort_keys=True), int(r["seed"]))
               for r in record["runs"]}
    except (OSError, ValueError, KeyError, IndexError, TypeError, AttributeError):
        return  # not a readable record (a ScenarioError is a ValueError): nothing to protect
        # beyond the manifest
    seeds = set(sweep.seeds)
    grid = {json.dumps(p, sort_keys=True) for p in sweep.points()}
    lost = sorted((p, s) for p, s in old if p not in grid or s not in seeds)
    if lost:
        point, seed = lost[0]
        raise SweepOutputError.at("out", f"{out_dir} holds the table of a sweep with {len(lost)} "
                                         f"run{'s' if len(lost) != 1 else ''} this spec does not "
                                         f"have (e.g. {point}, seed {seed}); running it there "
                                         "would replace that table: use --force to replace it, "
                                         "or choose another directory")


def _execute(executor: Executor, todo: List[Run], collector: Collector,
             store: Optional[RunStore]) -> bool:
    """``executor.run(todo, collector)``; then the last batch of run files, and nothing more
    (:meth:`~.store.RunStore.close`: a thread abandoned at a second Ctrl-C may finish a run
    after the sweep counted the runs on disk)."""
    try:
        return executor.run(todo, collector)
    finally:
        if store is not None:
            try:
                store.flush()
            finally:
                store.close()


def run_sweep(sweep, out: "Optional[os.PathLike[str] | str]" = None, *,
              workers: Optional[int] = None, dask: Any = None, progress: Optional[bool] = None,
              quiet: bool = False, on_run: Optional[Callable[[Run, bool], None]] = None,
              log: Optional[Callable[[str], None]] = None, force: bool = False,
              executor: str = "auto") -> SweepResult:
    """Run a sweep.

    Args:
        out: directory for the run files, ``results.parquet``/``results.csv`` and
            ``sweep.json``; runs already stored there are not recomputed. ``None`` keeps
            everything in memory (no caching). It must be new, empty or this same spec's
            output (see :mod:`tcpfriendly.outfiles`).
        workers: local threads or processes (default: every core), or LocalCluster workers
            with ``dask="local"``.
        dask: ``None`` (local threads), ``"local"`` (start a ``LocalCluster``), a scheduler
            address (``"tcp://host:8786"``) or a ``distributed.Client``.
        progress: show a progress bar on stderr (default: when stderr is a terminal).
        quiet: no status lines and no progress bar.
        on_run: called as ``on_run(run, ok)`` on the calling thread after each run.
        log: where status lines go (default: stderr).
        force: write into ``out`` even if it holds another spec's table (replaced) or files
            tcpfriendly did not write; stored runs are shared (they are keyed by content).
        executor: without ``dask``, ``"threads"`` (the engine releases the GIL),
            ``"processes"`` (:class:`~.executors.ProcessExecutor`: for short runs, whose Python
            work per run holds the GIL) or ``"auto"`` (the default, :func:`local_executor`:
            threads, or :class:`~.executors.AutoExecutor` where a pool is worth it); the same
            table either way.

    A run that fails (any exception from the engine or a worker) fails alone: the others
    complete, and the table has one row for it with ``status = "failed"`` and the message in
    ``error`` (successful rows: ``status = "ok"``, empty ``error``); :attr:`SweepResult.failures`
    lists them.

    Raises:
        SweepError: the spec or a grid point is invalid (before anything runs), or ``dask``
            is a malformed or unreachable scheduler address (before anything is written;
            unreachable: :class:`~.dask_executor.DaskConnectError`, also a RuntimeError).
        OutputError: ``out`` holds another output (unless ``force``), or a file cannot be
            written (the message names it).
        SweepInterrupted: Ctrl-C; finished runs are stored and ``.result`` has the table.
    """
    check_workers(workers, cls=SweepError)
    if executor not in EXECUTORS:
        raise SweepError.at("executor", f"must be one of {', '.join(EXECUTORS)}, got {executor!r}")
    controllers = getattr(sweep, "controllers", None) or {}
    if controllers:
        _check_controller_executor(dask, executor)  # (ns-2: refused by the plan, naming controllers)
    executor = _simulator_executor(sweep, dask, executor)
    log = log or _to_stderr
    say = (lambda message: None) if quiet else log
    start = time.monotonic()
    out_dir = path_arg(out, "out", "a directory path") if out is not None else None
    claimed = _claim(sweep, out_dir, force) if out_dir is not None else None
    points, runs = sweep.plan()
    if dask is None:  # (once the spec and out are valid) a process pool starts while we read
        n = workers or default_workers()  # the stored runs
        if local_executor(executor, n, len(runs)) == "processes":
            ProcessExecutor(n, say).prepare()
    with dask_session(dask, workers) as reached:  # an address is reached here, before anything
        # is written (a bad one: a SweepError naming dask)
        store = RunStore(out_dir) if out_dir is not None else None
        unique: Dict[str, Run] = {}
        for run in runs:
            unique.setdefault(run.key, run)
        tables: Dict[str, Any] = {}
        unsourced = sweep.unsourced_keys if controllers else set()
        if store is not None:
            tables.update(_stored(store, unique, unsourced))
        done_keys = set(tables)
        todo = [run for k, run in unique.items() if k not in done_keys]
        if claimed is not None:
            _write_spec(claimed, sweep, points, runs)
            claimed.commit(extra=["runs/"], remove_stale=False)
        shape = f"{len(points)} point{'s' if len(points) != 1 else ''} x {len(sweep.seeds)} seed" \
                f"{'s' if len(sweep.seeds) != 1 else ''}"
        dup = len(runs) - len(unique)
        say(f"sweep{' in ns-2' if _ns2(sweep) else ''}: {len(unique)} runs ({shape}{f'; {dup} duplicate' if dup else ''}): "
            f"{len(done_keys)} already done, {len(todo)} to run")
        if progress is None:
            progress = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        bar = Progress(len(todo), enabled=bool(progress) and not quiet)
        collector = Collector(store, bar, on_run)
        interrupted, kind = False, None
        if todo:
            chosen = _controller_pool(controllers, workers, say, store, unsourced) \
                if controllers else _executor(reached, workers, say, executor, len(todo))
            interrupted, kind = _execute(chosen, todo, collector, store), chosen.kind
    bar.close()
    ran_keys = set(collector.tables)
    tables.update(collector.tables)
    if store is not None:  # runs finished by threads abandoned at a second Ctrl-C, or
        # stored by a process worker whose chunk a Ctrl-C kept from being collected
        store.refresh()
        for key in unique:
            if key not in tables:
                t = store.try_load(key)
                if t is not None:
                    tables[key] = t
                    ran_keys.add(key)
    # failures in plan order (executors report them as they finish); a run reported failed
    # whose file was stored after all (a worker that stored its chunk and died before returning
    # it, a thread abandoned at a second Ctrl-C) is done, not failed: counted once
    failures = sorted((f for f in collector.failures if f[0].key not in tables),
                      key=lambda f: (f[0].point, f[0].seed))
    failed = {run.key: message for run, message in failures}
    split = {k: split_flows(t) for k, t in tables.items()}
    df = _assemble(sweep, points, runs, {k: g for k, (g, _) in split.items()}, sweep.metrics, failed)
    flows = _assemble_flows(sweep, points, runs, {k: f for k, (_, f) in split.items() if f is not None}) \
        if sweep.per_flow else None
    paths = [os.path.join(out_dir, "sweep.json")] if out_dir is not None else []
    if claimed is not None:
        paths = _write_outputs(claimed, df, flows) + paths
        claimed.commit(extra=["runs/"])
    result = SweepResult(df, total=len(unique), cached=len(done_keys), ran=len(ran_keys),
                         failures=failures, interrupted=interrupted, out=out_dir, paths=paths,
                         elapsed=time.monotonic() - start, points=points, flows=flows, simulator=_simulator(sweep),
                         executor=kind)
    if interrupted:
        raise SweepInterrupted(result)
    return result


def _stored(store: RunStore, keys, unsourced: set) -> Dict[str, Any]:
    """The runs of ``keys`` stored in ``store`` (an empty or corrupt file is a missing run: redone),
    but those of a Python controller with no source file (never read from or written to out)."""
    found = {}
    for k in keys:
        if k not in unsourced:
            t = store.try_load(k)
            if t is not None:
                found[k] = t
    return found


def _to_stderr(message: str) -> None:
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


def _simulator(sweep) -> str:
    return getattr(sweep, "simulator", "tcpf")


def _ns2(sweep) -> bool:
    return _simulator(sweep) == "ns2"


def _check_controller_executor(dask: Any, executor: str) -> None:
    """The executor of a sweep with Python controllers is chosen by :func:`_controller_pool`
    (local processes or this thread): Dask and an explicit executor are refused by name."""
    if dask is not None:
        raise SweepError("dask: a sweep with Python controllers runs on this machine; run it "
                         "without Dask", field="dask")
    if executor != "auto":
        raise SweepError(f"executor: a sweep with Python controllers chooses its own (local "
                         f"processes when the classes can be loaded there, else this thread); "
                         f"leave it \"auto\", not {executor!r}", field="executor")


def _controller_pool(controllers: Mapping[str, type], workers: Optional[int],
                     log: Callable[[str], None], store: Optional[RunStore], unsourced: set) -> Executor:
    """The executor of a sweep with Python controllers: worker processes that load the classes
    again from where they came from (:func:`tcpfriendly.controller.shippable`: a
    ``--controller`` file or an importable module), else this thread, one run at a time."""
    from ..controller import fingerprint, shippable

    n = workers or default_workers()
    specs = shippable(controllers) if n > 1 and main_is_importable() else None
    if specs is None:
        return ThreadExecutor(1, log, _ControllerTask(controllers, store, unsourced))
    return ProcessExecutor(n, log, (specs, {k: fingerprint(c) for k, c in controllers.items()}))


class _ControllerTask:
    """A run of a sweep with Python controllers (:class:`~.executors.ThreadExecutor`'s task):
    the engine with the classes, the run's rows, its file stored unless its class has no
    source (``unsourced``)."""

    def __init__(self, controllers: Mapping[str, type], store: Optional[RunStore], unsourced: set):
        self.controllers, self.store, self.unsourced = dict(controllers), store, unsourced

    def __call__(self, run: Run):
        from .executors import _run_and_store

        store = None if run.key in self.unsourced else self.store
        return _run_and_store(run, store, controllers=self.controllers)


def _simulator_executor(sweep, dask: Any, executor: str) -> str:
    """``executor`` for the sweep's simulator: with ``simulator = "ns2"`` each run is an ``ns``
    process, started from local threads ("threads"; a SweepError naming dask with Dask)."""
    if not _ns2(sweep):
        return executor
    check_simulator("ns2", dask)
    return "threads"


EXECUTORS = ("auto", "threads", "processes")
# executor="auto" considers processes (with 2 workers or more) from this many runs to do, or
# when their pool is already warm. A cold pool costs 0.5-1 s of a core (its forkserver imports
# tcpfriendly, pyarrow and pandas); processes gain about 0.4 ms per short run over threads (2
# workers), and lose a few per cent on long runs (AutoExecutor then keeps threads): below about
# a thousand runs a cold pool does not pay.
AUTO_PROCESS_RUNS = 1000


def local_executor(executor: str, workers: int, runs: int) -> str:
    """What ``executor`` ("auto", "threads" or "processes") means for ``runs`` runs to do on
    ``workers`` local workers: "threads" or "processes". Threads with one worker (a process
    would only add messages) and for a few runs while no warm pool exists; processes
    otherwise, where the Python work per run (about a third of a short run) would hold the
    GIL; for "auto" that means :class:`~.executors.AutoExecutor`, which times the first runs
    on threads and keeps threads for runs long enough to scale there. A cold pool is started
    only where worker processes may import the main module
    (:func:`~.executors.main_is_importable`); a warm one is always used."""
    if executor != "auto":
        return executor
    if workers < 2 or runs < 2:
        return "threads"
    if pool_is_warm(workers):
        return "processes"
    return "processes" if runs >= AUTO_PROCESS_RUNS and main_is_importable() else "threads"


def dask_session(dask: Any, workers: Optional[int] = None):
    """A context manager giving ``dask`` ready for one or more sweeps
    (:func:`~.dask_executor.connected`: a scheduler address is reached as the block starts and
    closed as it ends); None, without importing Dask, when ``dask`` is None."""
    if dask is None:
        return contextlib.nullcontext(None)
    from .dask_executor import connected

    return connected(dask, workers)


def _executor(dask: Any, workers: Optional[int], log: Callable[[str], None],
              executor: str = "auto", runs: int = 0) -> Executor:
    """Local threads or processes, or Dask when ``dask`` is given (imported only then)."""
    if dask is None:
        n = workers or default_workers()
        if local_executor(executor, n, runs) == "processes":
            return ProcessExecutor(n, log) if executor == "processes" else AutoExecutor(n, log)
        return ThreadExecutor(n, log)
    from .dask_executor import DaskExecutor

    return DaskExecutor(dask, workers)

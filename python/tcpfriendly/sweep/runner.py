"""Running a sweep: the plan, the cache, an executor, the tidy table (:func:`run_sweep`)."""

from __future__ import annotations

import math
import os
import sys
import time
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple

from .core import GROUP_METRICS, Run, SweepError, SweepInterrupted, _RUN_ID_COLUMNS, _label
from .executors import Collector, Executor, ThreadExecutor, default_workers
from .store import RunStore, _write_outputs, _write_spec

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
    """

    def __init__(self, table, total: int, cached: int, ran: int,
                 failures: List[Tuple[Run, str]], interrupted: bool, out: Optional[str],
                 paths: List[str], elapsed: float, points: List[Dict[str, Any]]):
        self.table, self.total, self.cached, self.ran = table, total, cached, ran
        self.failures, self.interrupted, self.out, self.paths = failures, interrupted, out, paths
        self.elapsed, self.points = elapsed, points

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
        return (f"<SweepResult: {self.cached + self.ran}/{self.total} runs done, "
                f"{len(self.failures)} failed, {len(self.table)} rows>")


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


def _assemble(sweep, points: List[Dict[str, Any]], runs: List[Run], tables: Mapping[str, Any],
              metrics: List[str]):
    """The tidy table of the runs in ``tables`` (plan order)."""
    import pandas as pd
    import pyarrow as pa

    paths = sweep.axis_paths
    parts, point_of_row = [], []
    for run in runs:
        t = tables.get(run.key)
        if t is None:
            continue
        t = t.replace_schema_metadata(None)
        parts.append(t)
        point_of_row.extend([run.point] * t.num_rows)
    if not parts:
        return pd.DataFrame(columns=["point", *paths, *_RUN_ID_COLUMNS[1:],
                                     *[m for m in metrics if m in GROUP_METRICS], "run"])
    df = pa.concat_tables(parts, promote_options="default").to_pandas()
    axis_cols = {}
    for path in paths:
        column = _axis_column([points[i][path] for i in range(len(points))])
        axis_cols[path] = [column[i] for i in point_of_row]
    keep: List[str] = []
    for m in metrics:
        if m in GROUP_METRICS:
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
    ident = ["seed", "group", "algorithm", "recovery", "params", "direction"]
    out = pd.concat([front, df[ident + metric_cols + ["run"]]], axis=1)
    return out


def run_sweep(sweep, out: "Optional[os.PathLike[str] | str]" = None, *,
              workers: Optional[int] = None, dask: Any = None, progress: Optional[bool] = None,
              quiet: bool = False, on_run: Optional[Callable[[Run, bool], None]] = None,
              log: Optional[Callable[[str], None]] = None) -> SweepResult:
    """Run a sweep.

    Args:
        out: directory for the run files, ``results.parquet``/``results.csv`` and
            ``sweep.json``; runs already stored there are not recomputed. ``None`` keeps
            everything in memory (no caching).
        workers: local threads (default: every core), or LocalCluster workers with
            ``dask="local"``.
        dask: ``None`` (local threads), ``"local"`` (start a ``LocalCluster``), a scheduler
            address (``"tcp://host:8786"``) or a ``distributed.Client``.
        progress: show a progress bar on stderr (default: when stderr is a terminal).
        quiet: no status lines and no progress bar.
        on_run: called as ``on_run(run, ok)`` on the calling thread after each run.
        log: where status lines go (default: stderr).

    Raises:
        SweepError: the spec or a grid point is invalid (before anything runs).
        SweepInterrupted: Ctrl-C; finished runs are stored and ``.result`` has the table.
    """
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise SweepError.at("workers", f"must be a positive integer, got {workers!r}")
    if log is None:
        def log(message: str) -> None:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
    say = (lambda message: None) if quiet else log
    start = time.monotonic()
    points, runs = sweep.plan()
    out_dir = os.fspath(out) if out is not None else None
    if out_dir is not None and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise SweepError.at("out", f"{out_dir} exists and is not a directory")
    store = RunStore(out_dir) if out_dir is not None else None
    unique: Dict[str, Run] = {}
    for run in runs:
        unique.setdefault(run.key, run)
    stored = {k for k in unique if store is not None and store.has(k)}
    done_keys = [k for k in unique if k in stored]
    todo = [run for k, run in unique.items() if k not in stored]
    if out_dir is not None:
        _write_spec(out_dir, sweep, points, runs)
    shape = f"{len(points)} point{'s' if len(points) != 1 else ''} x {len(sweep.seeds)} seed" \
            f"{'s' if len(sweep.seeds) != 1 else ''}"
    dup = len(runs) - len(unique)
    say(f"sweep: {len(unique)} runs ({shape}{f'; {dup} duplicate' if dup else ''}): "
        f"{len(done_keys)} already done, {len(todo)} to run")
    if progress is None:
        progress = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
    bar = Progress(len(todo), enabled=bool(progress) and not quiet)
    collector = Collector(store, bar, on_run)
    interrupted = False
    if todo:
        interrupted = _executor(dask, workers, say).run(todo, collector)
    bar.close()
    tables = dict(collector.tables)
    for key in done_keys:
        tables[key] = store.load(key)
    if store is not None:  # runs finished by threads abandoned at a second Ctrl-C
        for key in unique:
            if key not in tables and store.has(key):
                tables[key] = store.load(key)
    df = _assemble(sweep, points, runs, tables, sweep.metrics)
    paths = [os.path.join(out_dir, "sweep.json")] if out_dir is not None else []
    if out_dir is not None:
        paths = _write_outputs(out_dir, df) + paths
    ran = len([k for k in tables if k not in set(done_keys)])
    result = SweepResult(df, total=len(unique), cached=len(done_keys), ran=ran,
                         failures=collector.failures, interrupted=interrupted, out=out_dir,
                         paths=paths, elapsed=time.monotonic() - start, points=points)
    if interrupted:
        raise SweepInterrupted(result)
    return result


def _executor(dask: Any, workers: Optional[int], log: Callable[[str], None]) -> Executor:
    """Local threads, or Dask when ``dask`` is given (imported only then)."""
    if dask is None:
        return ThreadExecutor(workers or default_workers(), log)
    from .dask_executor import DaskExecutor

    return DaskExecutor(dask, workers)

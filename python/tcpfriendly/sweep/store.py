"""Sweep storage: the finished runs in batch files (``OUT/runs/batch-<digest>.parquet``,
written atomically, see :class:`RunStore`), the tidy table (``results.parquet``, ``results.csv``) and ``sweep.json``."""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ScenarioError, ScenarioFileError
from ..outfiles import OutDir, atomic_write, make_dir, stale_temp_pid
from .core import _INT_METRICS, FLOW_METRICS, Run, spec_identity

_ID_FIELDS = ("run", "seed", "group", "algorithm", "recovery", "params", "direction")


def _keys(rows: List[Dict[str, Any]]) -> List[str]:
    """Every key of ``rows`` in first-appearance order (a run's group rows all have the first
    row's keys; its per-flow rows add ``flow`` and the per-flow metrics after them)."""
    keys = dict.fromkeys(rows[0]) if rows else {}
    for row in rows[1:]:
        if len(row) != len(keys) or any(c not in keys for c in row):
            keys.update(dict.fromkeys(row))
    return list(keys)


def _column_names(rows: List[Dict[str, Any]]) -> List[str]:
    """The column names of a run's table (:func:`rows_table`): the identity columns, then the
    rows' other keys in first-appearance order."""
    return [*_ID_FIELDS, *(c for c in _keys(rows) if c not in _ID_FIELDS)]


def _schema_for(rows: List[Dict[str, Any]]):
    import pyarrow as pa

    fields = [pa.field("run", pa.string()), pa.field("seed", pa.int64()),
              pa.field("group", pa.int64()), pa.field("algorithm", pa.string()),
              pa.field("recovery", pa.string()), pa.field("params", pa.string()),
              pa.field("direction", pa.string())]
    names = {f.name for f in fields}
    for name in _keys(rows):
        if name in names:
            continue
        metric = name.rsplit(".", 1)[-1]
        fields.append(pa.field(name, pa.int64() if metric in _INT_METRICS else pa.float64()))
    return pa.schema(fields)


def rows_table(rows: List[Dict[str, Any]], run: Optional[Run] = None):
    """The rows of one run as a pyarrow Table (the run file's content)."""
    import pyarrow as pa

    schema = _schema_for(rows)
    if run is not None:
        from ..version import __version__

        schema = schema.with_metadata({"tcpfriendly.key": run.key,
                                       "tcpfriendly.version": __version__,
                                       "tcpfriendly.run": run.canonical})
    return pa.Table.from_pylist(rows, schema=schema)


# ----- storage ------------------------------------------------------------------------------
BATCH_PREFIX = "batch-"
BATCH_RUNS = 256  # runs per batch file at most
BATCH_SECONDS = 1.0  # a run finishing this long after the last write is written at once

def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class RunStore:
    """``OUT/runs/``: the finished runs, stored in batches. :meth:`save` buffers a run's table;
    every :data:`BATCH_RUNS` runs or :data:`BATCH_SECONDS` seconds (and at :meth:`flush`, which
    a sweep calls when its executor returns, interrupted or not) the buffered runs are written
    as ONE file ``batch-<digest>.parquet`` (atomically: :func:`tcpfriendly.outfiles.atomic_write`)
    whose footer lists each run's key, rows and columns. One file per run cost a Parquet write
    and a rename per run (about 1.8 ms, more than the engine on a short run).

    Reading (:meth:`try_load`): a run counts as stored when a batch lists it and its rows read
    back whole and name that run; an unreadable batch (empty, truncated, corrupt) is a set of
    missing runs, redone, and the file is removed when the store is opened for writing. The
    one-file-per-run layout of older versions (``<key>.parquet``, the key in the footer) is
    still read. A crash loses at most the buffered runs (redone on the next run)."""

    def __init__(self, out: str, create: bool = True):
        self.out = out
        self.dir = os.path.join(out, "runs")
        self.create = create
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # no batch being written
        self._writing = 0  # batches taken and not yet written
        self._closed = False
        self._pending: List[Tuple[str, Any]] = []
        self._last_write = time.monotonic()
        self._index: Optional[Dict[str, List[Tuple[str, Any]]]] = None
        self._batches: Dict[str, Any] = {}  # path -> its Table (or None: unreadable)
        if create:
            make_dir(self.dir, "out")
            self._clean_stale()

    def _clean_stale(self) -> None:
        """Remove temporaries left by a killed sweep (never those of a live process)."""
        for name in os.listdir(self.dir):
            pid = stale_temp_pid(name)
            if pid is not None and pid != os.getpid() and not _pid_alive(pid):
                try:
                    os.unlink(os.path.join(self.dir, name))
                except OSError:
                    pass

    def path(self, key: str) -> str:
        """The one-file-per-run path of ``key`` (the layout of older versions, still read)."""
        return os.path.join(self.dir, f"{key}.parquet")

    # ----- reading ------------------------------------------------------------------------
    def _scan(self) -> Dict[str, List[Tuple[str, Any]]]:
        """key -> [(path, entry)]: ``entry`` is (first row, rows, columns) in a batch, or None
        for a one-run file. Batches in name order; a footer that cannot be read is skipped."""
        import pyarrow.parquet as pq

        index: Dict[str, List[Tuple[str, Any]]] = {}
        try:
            names = sorted(os.listdir(self.dir))
        except OSError:
            names = []
        for name in names:
            path = os.path.join(self.dir, name)
            if name.startswith(".") or not name.endswith(".parquet") or os.path.islink(path):
                continue
            if not name.startswith(BATCH_PREFIX):
                index.setdefault(name[:-len(".parquet")], []).append((path, None))
                continue
            try:
                meta = pq.read_schema(path).metadata or {}
                runs = json.loads(meta[b"tcpfriendly.runs"].decode("utf-8"))
                for key, first, count, columns in runs:
                    index.setdefault(str(key), []).append((path, (int(first), int(count),
                                                                  [str(c) for c in columns])))
            except Exception:  # noqa: BLE001 - an unreadable batch: its runs are missing
                self._bad(path)
        return index

    def _bad(self, path: str) -> None:
        self._batches[path] = None
        if self.create:  # ours to repair: its runs are redone into a new batch
            try:
                os.unlink(path)
            except OSError:
                pass

    def _batch(self, path: str):
        import pyarrow.parquet as pq

        if path not in self._batches:
            try:
                self._batches[path] = pq.read_table(path)
            except Exception:  # noqa: BLE001 - a corrupt batch: its runs are missing
                self._bad(path)
        return self._batches[path]

    def refresh(self) -> None:
        """Forget the listing of the directory, so that the next read sees the batches other
        processes wrote since (the process pool's workers store their own chunks)."""
        self._index = None

    def has(self, key: str) -> bool:
        """Some file lists ``key`` (cheap: footers only; :meth:`try_load` checks the rows)."""
        if self._index is None:
            self._index = self._scan()
        for path, entry in self._index.get(key, []):
            if entry is not None or self._has_single(path, key):
                return True
        return False

    def _has_single(self, path: str, key: str) -> bool:
        import pyarrow.parquet as pq

        try:
            meta = pq.read_schema(path).metadata or {}
        except Exception:  # noqa: BLE001 - any unreadable file is a missing run
            return False
        return meta.get(b"tcpfriendly.key") == key.encode()

    def try_load(self, key: str):
        """The stored table of ``key``, or None when no file holds it whole (the run is then
        redone)."""
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        if self._index is None:
            self._index = self._scan()
        for path, entry in self._index.get(key, []):
            try:
                if entry is None:
                    if self._has_single(path, key):
                        return pq.read_table(path)
                    continue
                table = self._batch(path)
                if table is None:
                    continue
                first, count, columns = entry
                t = table.slice(first, count).select(columns)
                if count > 0 and t.num_rows == count and \
                        pc.all(pc.equal(t.column("run"), key)).as_py():
                    return t
            except Exception:  # noqa: BLE001 - a corrupt file is a missing run
                continue
        return None

    # ----- writing ------------------------------------------------------------------------
    def save(self, key: str, table) -> None:
        """Buffer the run ``key`` (thread-safe); write a batch when one is due. Once the store
        is closed (:meth:`close`), nothing: the run is not stored (a rerun redoes it)."""
        with self._lock:
            if self._closed:
                return
            self._pending.append((key, table))
            due = len(self._pending) >= BATCH_RUNS or \
                time.monotonic() - self._last_write >= BATCH_SECONDS
            batch = self._take() if due else []
        self._write(batch)

    def flush(self) -> None:
        """Write the buffered runs now."""
        with self._lock:
            batch = self._take()
        self._write(batch)

    def close(self) -> None:
        """Store nothing more: wait for the batches being written, then drop every later
        :meth:`save` (and what is buffered: :meth:`flush` first). A sweep closes its store
        before it counts the runs on disk, so that a run finished after the count (by a thread
        abandoned at a second Ctrl-C, which cannot be stopped) is not stored behind it: the
        count stays what is on disk, and a rerun redoes that run."""
        with self._lock:
            self._closed = True
            self._pending = []
            while self._writing:
                self._idle.wait()

    def _take(self) -> List[Tuple[str, Any]]:
        """(under the lock) The buffered runs, to be written by :meth:`_write`."""
        batch, self._pending = self._pending, []
        self._last_write = time.monotonic()
        self._index = None  # rescanned on the next lookup
        if batch:
            self._writing += 1
        return batch

    def _write(self, batch: List[Tuple[str, Any]]) -> None:
        if not batch:
            return
        try:
            import pyarrow as pa

            runs, first = [], 0
            for key, t in batch:
                runs.append([key, first, t.num_rows, t.column_names])
                first += t.num_rows
            table = pa.concat_tables([t.replace_schema_metadata(None) for _, t in batch],
                                     promote_options="default")
            write_batch(self.dir, table, runs)
        finally:
            with self._lock:
                self._writing -= 1
                self._idle.notify_all()

    def stored_keys(self) -> List[str]:
        """Every run key some file in the store lists (footers only), sorted."""
        return sorted(self._scan())


def write_batch(directory: str, table, runs: List[List[Any]]) -> str:
    """Write ``table`` (the rows of several runs, one after the other) as one batch file in
    ``directory`` (a store's ``runs/``): ``runs`` lists each run as ``[key, first row, rows,
    columns]`` and goes to the footer; the name is the digest of the keys. Used by
    :class:`RunStore` and by the process executor's workers, which store their chunks
    themselves."""
    import hashlib

    import pyarrow.parquet as pq

    from ..version import __version__

    table = table.replace_schema_metadata({
        "tcpfriendly.version": __version__,
        "tcpfriendly.runs": json.dumps(runs, separators=(",", ":"))})
    digest = hashlib.sha256("\n".join(str(r[0]) for r in runs).encode()).hexdigest()[:32]
    # not fsync'ed: a batch lost or emptied by a power cut fails to read back and its runs
    # are redone
    return atomic_write(os.path.join(directory, f"{BATCH_PREFIX}{digest}.parquet"),
                        lambda f: pq.write_table(table, f), force=True, sync=False)


def runs_table(results: List[Tuple[str, List[Dict[str, Any]]]]):
    """``(table, runs)``: the rows of several runs (``[(key, rows)]``) as ONE table, and each
    run's ``[key, first row, rows, columns]`` in it. A run's slice of the table, with its
    columns selected, equals :func:`rows_table` of its rows; building one table for many runs
    costs about what one run's table costs (a pyarrow table has a large fixed cost per column).
    Consecutive runs with the same columns share a schema; the parts are concatenated with
    missing columns as nulls (selected away again per run)."""
    import pyarrow as pa

    parts, runs, first = [], [], 0
    group: List[Dict[str, Any]] = []
    columns: Optional[List[str]] = None

    def close() -> None:
        if columns is not None:
            parts.append(pa.Table.from_pylist(group, schema=_schema_for(group)))

    for key, rows in results:
        cols = _column_names(rows)
        if cols != columns:
            close()
            group, columns = [], cols
        group.extend(rows)
        runs.append([key, first, len(rows), cols])
        first += len(rows)
    close()
    if not parts:
        return None, runs
    table = parts[0] if len(parts) == 1 else pa.concat_tables(parts, promote_options="default")
    return table, runs


def split_flows(table) -> Tuple[Any, Any]:
    """``(group rows, flow rows)`` of a run's table: a run of a sweep with ``per_flow`` stores
    both in one table (:func:`~.executors.run_rows`), its per-flow rows tagged by a non-null
    ``flow`` column. The group rows keep the columns a run without per-flow rows has (same
    order), the flow rows the identity columns, ``flow`` and the per-flow metrics; flow rows is
    None for a run stored without them."""
    import pyarrow.compute as pc

    if "flow" not in table.column_names:
        return table, None
    tagged = pc.is_valid(table.column("flow"))
    first = table.column_names.index("flow")
    groups = table.filter(pc.invert(tagged)).select(table.column_names[:first])
    flows = table.filter(tagged).select([*_ID_FIELDS, "flow", *FLOW_METRICS])
    return groups, flows


def load_results(out: "os.PathLike[str] | str"):
    """The tidy table a sweep wrote to ``out`` (``results.parquet``) as a DataFrame."""
    import pandas as pd

    path = os.path.join(os.fspath(out), "results.parquet")
    if not os.path.exists(path):
        raise ScenarioFileError(f"{path}: no sweep results here (not a sweep's output directory, "
                                "or its sweep has not finished)")
    return pd.read_parquet(path)


NO_FLOWS = ("no per-flow table: the sweep did not ask for one (per_flow = true in its spec, "
            "or tcpf sweep --per-flow; its runs are then redone with per-flow rows)")


def load_flows(out: "os.PathLike[str] | str"):
    """The per-flow table a sweep with ``per_flow`` wrote to ``out`` (``flows.parquet``): one
    row per run x flow. A :class:`~tcpfriendly.errors.ScenarioFileError` when there is none."""
    import pandas as pd

    path = os.path.join(os.fspath(out), "flows.parquet")
    if not os.path.exists(path):
        if os.path.exists(os.path.join(os.fspath(out), "results.parquet")):
            raise ScenarioFileError(f"{path}: {NO_FLOWS}")
        raise ScenarioFileError(f"{path}: no sweep results here (not a sweep's output directory, "
                                "or its sweep has not finished)")
    return pd.read_parquet(path)


def _write_outputs(out: OutDir, df, flows=None) -> List[str]:
    from ..results import _csv_ready

    written = []
    for name, table in (("results", df), ("flows", flows)):
        if table is None:
            continue
        written.append(out.write_with(f"{name}.parquet",
                                      lambda f, t=table: t.to_parquet(f, index=False, engine="pyarrow")))
        written.append(out.write_text(f"{name}.csv", _csv_ready(table).to_csv(index=False)))
    return written


def spec_record(sweep, points, runs) -> Dict[str, Any]:
    from ..version import __version__

    record = {
        "tcpfriendly": __version__,
        # what the run keys name: the engine build (tcpfriendly.version.engine_id), or ns-2's
        # identity with simulator = "ns2" (Sweep.engine_id)
        "engine": sweep.engine_id(),
        "spec": sweep.spec(),
        "axes": sweep.axis_paths,
        "points": points,
        "runs": [{"point": r.point, "seed": r.seed, "key": r.key} for r in runs],
    }
    controllers = getattr(sweep, "controllers", None)
    if controllers:  # the Python classes the flow groups named: where each was loaded from
        # (`--controller NAME=` form; None for a class typed at a prompt)
        from ..controller import origin
        record["controllers"] = {n: origin(c) for n, c in controllers.items()}
    return record


def _write_spec(out: OutDir, sweep, points, runs) -> str:
    text = json.dumps(spec_record(sweep, points, runs), indent=1, ensure_ascii=False) + "\n"
    return out.write_text("sweep.json", text)


def read_record(directory: str, field: Optional[str] = "DIR") -> Dict[str, Any]:
    """``DIRECTORY/sweep.json`` (:func:`spec_record`'s object) through the one bounded JSON
    reader (scenario.read_json_object): a ScenarioError naming ``field`` and the file when it
    cannot be read, is not a JSON object, or its parts are not what :func:`spec_record` writes
    (``axes`` a list of names, ``points`` and ``runs`` lists of objects, ``spec`` and
    ``controllers`` objects): a hand-edited record fails here, not inside a reader."""
    from ..results import MAX_RESULT_BYTES
    from ..scenario import read_json_object
    path = os.path.join(directory, "sweep.json")
    record = read_json_object(path, "sweep record", field, MAX_RESULT_BYTES)

    def bad(what: str) -> ScenarioError:
        return ScenarioError.at(field, f"{path}: not a sweep record ({what})")

    axes = record.get("axes", [])
    if not isinstance(axes, list) or not all(isinstance(a, str) for a in axes):
        raise bad("axes is not a list of names")
    for key in ("points", "runs"):
        items = record.get(key, [])
        if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
            raise bad(f"{key} is not a list of objects")
    for key in ("spec", "controllers"):
        if record.get(key) is not None and not isinstance(record[key], dict):
            raise bad(f"{key} is not an object")
    return record


def legacy_identity(directory: str) -> Optional[str]:
    """The identity of a sweep written before output manifests existed: the spec recorded in
    its ``sweep.json`` (None when there is none)."""
    path = os.path.join(directory, "sweep.json")
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    try:
        spec = read_record(directory).get("spec")
    except ScenarioError:
        return None
    return spec_identity(spec) if isinstance(spec, dict) else None

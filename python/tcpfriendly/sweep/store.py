"""Sweep storage: one Parquet file per finished run (``OUT/runs/<key>.parquet``, written
atomically), the tidy table (``results.parquet``, ``results.csv``) and ``sweep.json``."""

from __future__ import annotations

import json
import os
import threading
from typing import Any, Callable, Dict, List, Optional

from ..errors import ScenarioFileError
from .core import _INT_METRICS, Run

def _schema_for(rows: List[Dict[str, Any]]):
    import pyarrow as pa

    fields = [pa.field("run", pa.string()), pa.field("seed", pa.int64()),
              pa.field("group", pa.int64()), pa.field("algorithm", pa.string()),
              pa.field("recovery", pa.string()), pa.field("params", pa.string()),
              pa.field("direction", pa.string())]
    names = {f.name for f in fields}
    columns = list(rows[0]) if rows else []
    for name in columns:
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
def _atomic_write(path: str, write: Callable[[str], None]) -> None:
    directory, base = os.path.split(path)
    tmp = os.path.join(directory, f".{base}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class RunStore:
    """``OUT/runs/<key>.parquet``: one file per finished run, written atomically."""

    def __init__(self, out: str):
        self.out = out
        self.dir = os.path.join(out, "runs")
        os.makedirs(self.dir, exist_ok=True)
        self._clean_stale()

    def _clean_stale(self) -> None:
        """Remove temporaries left by a killed sweep (never those of a live process)."""
        for name in os.listdir(self.dir):
            if name.startswith(".") and name.endswith(".tmp"):
                parts = name.split(".")
                try:
                    pid = int(parts[-3])
                except (IndexError, ValueError):
                    continue
                if pid != os.getpid() and not _pid_alive(pid):
                    try:
                        os.unlink(os.path.join(self.dir, name))
                    except OSError:
                        pass

    def path(self, key: str) -> str:
        return os.path.join(self.dir, f"{key}.parquet")

    def has(self, key: str) -> bool:
        return os.path.exists(self.path(key))

    def save(self, key: str, table) -> None:
        import pyarrow.parquet as pq

        _atomic_write(self.path(key), lambda tmp: pq.write_table(table, tmp))

    def load(self, key: str):
        import pyarrow.parquet as pq

        return pq.read_table(self.path(key))


def load_results(out: "os.PathLike[str] | str"):
    """The tidy table a sweep wrote to ``out`` (``results.parquet``) as a DataFrame."""
    import pandas as pd

    path = os.path.join(os.fspath(out), "results.parquet")
    if not os.path.exists(path):
        raise ScenarioFileError(f"{path}: no sweep results here (not a sweep's output directory, "
                                "or its sweep has not finished)")
    return pd.read_parquet(path)


def _write_outputs(out: str, df) -> List[str]:
    from ..results import _csv_ready

    written = []
    path = os.path.join(out, "results.parquet")
    _atomic_write(path, lambda tmp: df.to_parquet(tmp, index=False, engine="pyarrow"))
    written.append(path)
    path = os.path.join(out, "results.csv")
    _atomic_write(path, lambda tmp: _csv_ready(df).to_csv(tmp, index=False))
    written.append(path)
    return written


def _write_spec(out: str, sweep, points, runs) -> str:
    from ..version import __version__

    record = {
        "tcpfriendly": __version__,
        "spec": sweep.spec(),
        "axes": sweep.axis_paths,
        "points": points,
        "runs": [{"point": r.point, "seed": r.seed, "key": r.key} for r in runs],
    }
    path = os.path.join(out, "sweep.json")

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=1, ensure_ascii=False)
            f.write("\n")

    _atomic_write(path, write)
    return path

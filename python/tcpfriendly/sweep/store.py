"""Sweep storage: one Parquet file per finished run (``OUT/runs/<key>.parquet``, written
atomically), the tidy table (``results.parquet``, ``results.csv``) and ``sweep.json``."""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional

from ..errors import ScenarioFileError
from ..outfiles import OutDir, OutputError, atomic_write, stale_temp_pid
from .core import _INT_METRICS, Run, spec_identity

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
def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


class RunStore:
    """``OUT/runs/<key>.parquet``: one file per finished run, written atomically
    (:func:`tcpfriendly.outfiles.atomic_write`). A file that cannot be read back as that run
    (empty, truncated, corrupt, another run's) counts as missing: the run is redone and the
    file replaced."""

    def __init__(self, out: str, create: bool = True):
        self.out = out
        self.dir = os.path.join(out, "runs")
        if create:
            try:
                os.makedirs(self.dir, exist_ok=True)
            except OSError as exc:
                raise OutputError.at("out", f"cannot create {self.dir}: "
                                            f"{exc.strerror or exc}") from None
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
        return os.path.join(self.dir, f"{key}.parquet")

    def has(self, key: str) -> bool:
        """A file is stored for ``key`` and its Parquet footer names that run (cheap: the
        data is not read)."""
        import pyarrow.parquet as pq

        path = self.path(key)
        if os.path.islink(path) or not os.path.isfile(path):
            return False
        try:
            meta = pq.read_schema(path).metadata or {}
        except Exception:  # noqa: BLE001 - any unreadable file is a missing run
            return False
        return meta.get(b"tcpfriendly.key") == key.encode()

    def save(self, key: str, table) -> None:
        import pyarrow.parquet as pq

        # not fsync'ed (about 5 ms a file): a run file lost or emptied by a power cut fails
        # has() and the run is redone
        atomic_write(self.path(key), lambda f: pq.write_table(table, f), force=True, sync=False)

    def load(self, key: str):
        import pyarrow.parquet as pq

        return pq.read_table(self.path(key))

    def try_load(self, key: str):
        """The stored table of ``key``, or None when it is missing or cannot be read back
        whole (the run is then redone)."""
        if not self.has(key):
            return None
        try:
            return self.load(key)
        except Exception:  # noqa: BLE001 - a corrupt file is a missing run
            return None


def load_results(out: "os.PathLike[str] | str"):
    """The tidy table a sweep wrote to ``out`` (``results.parquet``) as a DataFrame."""
    import pandas as pd

    path = os.path.join(os.fspath(out), "results.parquet")
    if not os.path.exists(path):
        raise ScenarioFileError(f"{path}: no sweep results here (not a sweep's output directory, "
                                "or its sweep has not finished)")
    return pd.read_parquet(path)


def _write_outputs(out: OutDir, df) -> List[str]:
    from ..results import _csv_ready

    written = []
    written.append(out.write_with("results.parquet",
                                  lambda f: df.to_parquet(f, index=False, engine="pyarrow")))
    written.append(out.write_text("results.csv", _csv_ready(df).to_csv(index=False)))
    return written


def spec_record(sweep, points, runs) -> Dict[str, Any]:
    from ..version import __version__

    return {
        "tcpfriendly": __version__,
        "spec": sweep.spec(),
        "axes": sweep.axis_paths,
        "points": points,
        "runs": [{"point": r.point, "seed": r.seed, "key": r.key} for r in runs],
    }


def _write_spec(out: OutDir, sweep, points, runs) -> str:
    text = json.dumps(spec_record(sweep, points, runs), indent=1, ensure_ascii=False) + "\n"
    return out.write_text("sweep.json", text)


def legacy_identity(directory: str) -> Optional[str]:
    """The identity of a sweep written before output manifests existed: the spec recorded in
    its ``sweep.json`` (None when there is none)."""
    path = os.path.join(directory, "sweep.json")
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            spec = json.loads(f.read().decode("utf-8")).get("spec")
        return spec_identity(spec) if isinstance(spec, dict) else None
    except (OSError, ValueError, AttributeError):
        return None

"""Parameter sweeps: a base scenario x axes x seeds, run on every local core or on Dask.

    from tcpfriendly.sweep import Sweep
    sw = Sweep("examples/jin2001-red-32.toml",
               set={"flows[1].algorithm": "gaimd"},
               axes={"flows[1].params.beta": [0.0625, 0.125, 0.25],
                     "bottleneck.rate": ["1.5Mbps", "15Mbps"]},
               seeds=10)
    res = sw.run(out="out/beta")        # all local cores; dask="local" or "tcp://host:8786"
    res.table                           # one row per run x flow group: axes, seed, metrics

or from a TOML spec (``Sweep.from_toml``; ``tcpf sweep FILE.toml``)::

    scenario = "jin2001-red-32.toml"    # relative to the spec file, or an inline [scenario] table
    seeds = 10                          # seeds base_seed .. base_seed+9, or a list of seeds
    base_seed = 1                       # default: the scenario's `seed`, else 1
    metrics = ["goodput_bps_mean", "share", "link.utilization"]    # default: all

    [set]                               # fixed overrides, applied before the axes
    "flows[1].algorithm" = "gaimd"

    [axes]                              # the grid: every combination of these values
    "flows[1].params.beta" = [0.0625, 0.125, 0.25]
    "bottleneck.rate" = ["1.5Mbps", "15Mbps"]

    [[zip]]                             # one more grid axis whose paths advance together
    "flows[1].params.alpha" = [0.1, 0.2]
    "tcp.tick" = [0.1, 0.5]

Paths address the scenario as written in TOML: dotted keys with list indices. A key missing
from an existing table is created; an index past the end of a list is an error. Every run is
validated (``tcpfriendly.normalize``) before anything runs.

Caching: each run is keyed by a SHA-256 of (normalized scenario with the seed, seed,
``tcpfriendly.__version__``). With ``out=DIR`` a finished run is stored in
``DIR/runs/<key>.parquet`` (written to a temporary name, then renamed), and a run whose file
exists is never recomputed, so rerunning an interrupted sweep runs only what is missing.
``DIR/results.parquet`` and ``DIR/results.csv`` (the tidy table) are rebuilt from the run
files at the end; ``DIR/sweep.json`` records the spec, the grid points and each run's key.
"""

from __future__ import annotations

import builtins
import copy
import hashlib
import itertools
import json
import math
import os
import queue
import re
import sys
import threading
import time
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import metrics as _metrics
from .errors import ScenarioError, ScenarioFileError
from .scenario import Scenario, _call_engine, _read_toml, as_scenario, native

__all__ = [
    "Sweep", "SweepError", "SweepInterrupted", "SweepResult", "GROUP_METRICS", "LINK_METRICS",
    "load_results", "run_key",
]

# Per-group aggregates of the flow table (one row per run x flow group): the metrics of
# tcpfriendly.metrics, defined there once.
GROUP_METRICS = list(_metrics.GROUP_METRICS)
# Per-link metrics, as columns link.<name>.<metric> on every row of the run.
LINK_METRICS = ["utilization", "drops", "marks", "mean_queue_pkts"]
_INT_METRICS = _metrics.INT_METRICS
# Identity columns of a run file (before the metrics).
_RUN_ID_COLUMNS = ["run", "seed", "group", "algorithm", "recovery", "params", "direction"]
_SPEC_KEYS = ["scenario", "seeds", "base_seed", "metrics", "set", "axes", "zip", "name",
              "description"]
_RESERVED_COLUMNS = set(["point"] + _RUN_ID_COLUMNS + GROUP_METRICS)

Value = Any
PathToken = Union[str, int]


class SweepError(ScenarioError):
    """A sweep spec is invalid: a bad axis path, value, seed list or metric, or a grid point
    the engine rejects. Raised before any run starts; the message names the axis/key."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :meth:`Sweep.run`. Finished runs are kept (and stored with ``out``);
    :attr:`result` is the :class:`SweepResult` of what finished."""

    def __init__(self, result: "SweepResult"):
        super().__init__("sweep interrupted")
        self.result = result


# ----- axis paths ---------------------------------------------------------------------------
_PATH_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\])*(?:\.[A-Za-z_][A-Za-z0-9_-]*(?:\[\d+\])*)*")
_TOKEN_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]")


def parse_path(path: str, what: str = "axis") -> List[PathToken]:
    """``"flows[1].params.beta"`` -> ``["flows", 1, "params", "beta"]``."""
    if not isinstance(path, str) or not _PATH_RE.fullmatch(path):
        raise SweepError(f"{what} {path!r}: not a path into the scenario (use dotted keys with "
                         "list indices, e.g. flows[1].params.beta)", field=str(path))
    return [m.group(1) if m.group(1) is not None else int(m.group(2))
            for m in _TOKEN_RE.finditer(path)]


def _render(tokens: Sequence[PathToken]) -> str:
    out = ""
    for t in tokens:
        out += f"[{t}]" if isinstance(t, int) else (f".{t}" if out else t)
    return out


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    return "null" if value is None else type(value).__name__


def set_path(data: Dict[str, Any], path: str, value: Any, what: str = "axis") -> None:
    """Set ``path`` in the scenario dict ``data`` (in place). A key missing from an existing
    table is created (as a table when the path goes on); an index past a list's end, or a
    path through a string/number, is a :class:`SweepError` naming ``what path``."""
    tokens = parse_path(path, what)
    node: Any = data
    for i, tok in enumerate(tokens):
        last = i == len(tokens) - 1
        where = _render(tokens[:i]) or "the scenario"
        if isinstance(tok, int):
            if not isinstance(node, list):
                raise SweepError(f"{what} {path}: {where} is {_kind(node)}, not an array", field=path)
            if tok >= len(node):
                span = f" ({where}[0]..{where}[{len(node) - 1}])" if node else ""
                raise SweepError(f"{what} {path}: index {tok} is out of range: {where} has "
                                 f"{len(node)} entr{'y' if len(node) == 1 else 'ies'}{span}",
                                 field=path)
        else:
            if not isinstance(node, dict):
                raise SweepError(f"{what} {path}: {where} is {_kind(node)}, not a table", field=path)
        if last:
            node[tok] = copy.deepcopy(value)
            return
        nxt = tokens[i + 1]
        if isinstance(tok, str) and node.get(tok) is None:
            if isinstance(nxt, int):
                raise SweepError(f"{what} {path}: {_render(tokens[:i + 1])} does not exist "
                                 "(an index needs an existing array)", field=path)
            node[tok] = {}
        node = node[tok]


# ----- the spec -----------------------------------------------------------------------------
def _label(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _flatten_axes(table: Mapping[str, Any], what: str, prefix: str = "") -> Dict[str, List[Any]]:
    """``{"bottleneck": {"rate": [...]}}`` (unquoted TOML keys) -> ``{"bottleneck.rate": [...]}``."""
    out: Dict[str, List[Any]] = {}
    for key, values in table.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(values, Mapping):
            out.update(_flatten_axes(values, what, path))
            continue
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise SweepError(f"{what} {path}: must be a list of values, got {_label(values) if _jsonable(values) else repr(values)}",
                             field=path)
        values = list(values)
        if not values:
            raise SweepError(f"{what} {path}: needs at least one value", field=path)
        out[path] = values
    return out


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


def _check_seed_value(seed: Any, what: str) -> int:
    if hasattr(seed, "item") and not isinstance(seed, (int, float)):
        seed = seed.item()
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise SweepError(f"{what}: must be a non-negative integer, got {seed!r}", field=what.split()[0])
    return int(seed)


def _resolve_metrics(metrics: Optional[Iterable[str]]) -> List[str]:
    if metrics is None:
        return list(GROUP_METRICS) + [f"link.{m}" for m in LINK_METRICS]
    if isinstance(metrics, str) or not isinstance(metrics, Iterable):
        raise SweepError(f"metrics: must be a list of metric names, got {metrics!r}", field="metrics")
    out: List[str] = []
    known = ", ".join(GROUP_METRICS + [f"link.{m}" for m in LINK_METRICS]
                      + ["link.<name>.<metric>"])
    for name in metrics:
        ok = isinstance(name, str) and (
            name in GROUP_METRICS
            or (name.startswith("link.") and name.rsplit(".", 1)[-1] in LINK_METRICS
                and name.count(".") in (1, 2) and all(name.split(".")))
        )
        if not ok:
            raise SweepError(f"metrics: unknown metric {name!r} (known: {known})", field="metrics")
        if name not in out:
            out.append(name)
    if not out:
        raise SweepError("metrics: needs at least one metric", field="metrics")
    return out


class Run:
    """One simulation of the sweep: grid point ``point`` with ``seed``."""

    __slots__ = ("point", "seed", "key", "scenario_json", "canonical")

    def __init__(self, point: int, seed: int, key: str, scenario_json: str, canonical: str):
        self.point, self.seed, self.key = point, seed, key
        self.scenario_json, self.canonical = scenario_json, canonical

    def __repr__(self) -> str:
        return f"Run(point={self.point}, seed={self.seed}, key={self.key[:12]}...)"


def run_key(normalized: Mapping[str, Any], seed: int, version: Optional[str] = None) -> Tuple[str, str]:
    """(key, canonical text): the content hash of a run and the JSON it hashes."""
    if version is None:
        from . import __version__ as version
    canonical = json.dumps({"scenario": normalized, "seed": int(seed), "version": version,
                            "metrics": _metrics.VERSION},
                           sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32], canonical


class Sweep:
    """A base scenario, fixed overrides (``set``), grid axes, zipped axes, seeds and metrics.

    Args:
        scenario: a :class:`~tcpfriendly.Scenario`, a dict shaped like the TOML file, or the
            path of a TOML scenario.
        axes: ``{path: [values...]}``; the grid is the product of every axis (in order, the
            last varying fastest).
        zip: a list of ``{path: [values...]}`` tables; within one table the lists have the
            same length and advance together, and each table is one more grid axis.
        set: ``{path: value}`` applied to the base scenario before the axes.
        seeds: a count N (seeds ``base_seed .. base_seed+N-1``) or a list of seeds.
        base_seed: first seed when ``seeds`` is a count (default: the scenario's ``seed``,
            else 1).
        metrics: the metric columns of the result table (default: all of
            :data:`GROUP_METRICS` and ``link.<name>.<metric>`` for :data:`LINK_METRICS`).
    """

    def __init__(self, scenario: Any, axes: Optional[Mapping[str, Sequence[Any]]] = None, *,
                 zip: Optional[Sequence[Mapping[str, Sequence[Any]]]] = None,  # noqa: A002
                 set: Optional[Mapping[str, Any]] = None,  # noqa: A002
                 seeds: Union[int, Sequence[int]] = 1, base_seed: Optional[int] = None,
                 metrics: Optional[Sequence[str]] = None, name: Optional[str] = None):
        try:
            base = as_scenario(scenario)
        except TypeError as exc:
            raise SweepError(f"scenario: {exc}", field="scenario") from None
        self.scenario: Dict[str, Any] = base.to_dict()
        self.name = name
        self.set: Dict[str, Any] = {}
        for path, value in (set or {}).items():
            parse_path(path, "set")
            self.set[path] = copy.deepcopy(value)
        self.axes: Dict[str, List[Any]] = _flatten_axes(axes or {}, "axis")
        self.zip: List[Dict[str, List[Any]]] = []
        if zip is not None and (isinstance(zip, Mapping) or not isinstance(zip, Sequence)):
            raise SweepError("zip: must be a list of tables {path: [values...]} "
                             "([[zip]] in TOML)", field="zip")
        for i, group in enumerate(zip or []):
            if not isinstance(group, Mapping) or not group:
                raise SweepError(f"zip[{i}]: must be a non-empty table of path = [values...]",
                                 field=f"zip[{i}]")
            flat = _flatten_axes(group, "zipped axis")
            lengths = {p: len(v) for p, v in flat.items()}
            if len(builtins.set(lengths.values())) > 1:
                desc = ", ".join(f"{p} has {n}" for p, n in lengths.items())
                raise SweepError(f"zip[{i}]: zipped axes need lists of the same length ({desc})",
                                 field=f"zip[{i}]")
            self.zip.append(flat)
        seen: Dict[str, str] = {}
        for path in self.axis_paths:
            parse_path(path, "axis")
            if path in seen:
                raise SweepError(f"axis {path}: appears twice", field=path)
            seen[path] = path
            if path == "seed":
                raise SweepError("axis seed: use `seeds = N` or `seeds = [...]` to vary the seed",
                                 field=path)
            if path in _RESERVED_COLUMNS:
                raise SweepError(f"axis {path}: clashes with the result column {path!r}", field=path)
        if base_seed is None:
            s = self.scenario.get("seed")
            base_seed = s if isinstance(s, int) and not isinstance(s, bool) else 1
        self.base_seed = _check_seed_value(base_seed, "base_seed")
        if isinstance(seeds, bool):
            raise SweepError(f"seeds: must be a count or a list of seeds, got {seeds!r}", field="seeds")
        if isinstance(seeds, int) or (hasattr(seeds, "item") and not isinstance(seeds, Sequence)):
            count = _check_seed_value(seeds, "seeds")
            if count < 1:
                raise SweepError("seeds: must be at least 1", field="seeds")
            self.seeds = [self.base_seed + i for i in range(count)]
        elif isinstance(seeds, Sequence) and not isinstance(seeds, str):
            self.seeds = [_check_seed_value(s, f"seeds[{i}]") for i, s in enumerate(seeds)]
            if not self.seeds:
                raise SweepError("seeds: needs at least one seed", field="seeds")
            if len(builtins.set(self.seeds)) != len(self.seeds):
                raise SweepError("seeds: the list repeats a seed", field="seeds")
        else:
            raise SweepError(f"seeds: must be a count or a list of seeds, got {seeds!r}", field="seeds")
        self.metrics = _resolve_metrics(metrics)
        self._plan: Optional[Tuple[List[Dict[str, Any]], List[Run]]] = None

    # ----- constructors -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], base_dir: str = ".") -> "Sweep":
        """A sweep from a spec dict shaped like the TOML file; a ``scenario`` path is relative
        to ``base_dir``."""
        if not isinstance(spec, Mapping):
            raise SweepError("sweep spec: must be a table")
        unknown = [k for k in spec if k not in _SPEC_KEYS]
        if unknown:
            raise SweepError(f"{unknown[0]}: unknown sweep key (known: {', '.join(_SPEC_KEYS)})",
                             field=str(unknown[0]))
        if "scenario" not in spec:
            raise SweepError("scenario: missing: give the base scenario as a path "
                             "(scenario = \"file.toml\") or an inline [scenario] table",
                             field="scenario")
        scenario = spec["scenario"]
        if isinstance(scenario, str):
            path = scenario if os.path.isabs(scenario) else os.path.join(base_dir, scenario)
            scenario = Scenario.from_toml(path)
        elif not isinstance(scenario, Mapping):
            raise SweepError(f"scenario: must be a path or a table, got {_kind(scenario)}",
                             field="scenario")
        for key, kind in (("set", Mapping), ("axes", Mapping)):
            if key in spec and not isinstance(spec[key], kind):
                raise SweepError(f"{key}: must be a table of path = value", field=key)
        name = spec.get("name")
        return cls(scenario, spec.get("axes"), zip=spec.get("zip"), set=spec.get("set"),
                   seeds=spec.get("seeds", 1), base_seed=spec.get("base_seed"),
                   metrics=spec.get("metrics"), name=name if isinstance(name, str) else None)

    @classmethod
    def from_toml_string(cls, text: str, source: str = "<string>", base_dir: str = ".") -> "Sweep":
        return cls.from_dict(_read_toml(text, source), base_dir)

    @classmethod
    def from_toml(cls, path: "os.PathLike[str] | str") -> "Sweep":
        """Read a sweep spec file (a base ``scenario`` path in it is relative to the file)."""
        name = os.fspath(path)
        try:
            with open(name, "rb") as f:
                text = f.read().decode("utf-8")
        except OSError as exc:
            raise ScenarioFileError(f"cannot read sweep file {name}: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise SweepError(f"malformed TOML in {name}: not UTF-8 text ({exc.reason})") from None
        return cls.from_toml_string(text, name, os.path.dirname(os.path.abspath(name)))

    # ----- the grid -----------------------------------------------------------------------
    @property
    def axis_paths(self) -> List[str]:
        """Every varying path, in column order (plain axes, then zipped ones)."""
        return list(self.axes) + [p for group in self.zip for p in group]

    def points(self) -> List[Dict[str, Any]]:
        """The grid: one ``{path: value}`` dict per point, the last axis varying fastest."""
        dims: List[List[Dict[str, Any]]] = [[{p: v} for v in vs] for p, vs in self.axes.items()]
        for group in self.zip:
            n = len(next(iter(group.values())))
            dims.append([{p: vs[i] for p, vs in group.items()} for i in range(n)])
        out = []
        for combo in itertools.product(*dims):
            point: Dict[str, Any] = {}
            for part in combo:
                point.update(part)
            out.append(point)
        return out

    def scenario_at(self, point: Mapping[str, Any], seed: Optional[int] = None) -> Dict[str, Any]:
        """The scenario dict of one grid point (``set`` then the axis values; ``seed`` set)."""
        data = copy.deepcopy(self.scenario)
        for path, value in self.set.items():
            set_path(data, path, value, "set")
        for path, value in point.items():
            set_path(data, path, value, "axis")
        if seed is not None:
            data["seed"] = seed
        return data

    def plan(self) -> Tuple[List[Dict[str, Any]], List[Run]]:
        """Validate every run and compute its key: (points, runs), runs ordered by point then
        seed. Raises :class:`SweepError` naming the axis (a bad path) or the point (a value
        combination the engine rejects) before anything runs."""
        if self._plan is not None:
            return self._plan
        from . import __version__

        core = native()
        points = self.points()
        runs: List[Run] = []
        bad: List[str] = []
        first_error = None
        for i, point in enumerate(points):
            label = ", ".join(f"{p}={_label(v)}" for p, v in point.items()) or "the base scenario"
            try:
                base = self.scenario_at(point)
                Scenario(base)  # plain JSON types, naming the field otherwise
            except ScenarioError as exc:
                if isinstance(exc, SweepError):
                    raise
                raise SweepError(f"point {label}: {exc}") from None
            for seed in self.seeds:
                data = dict(base)
                data["seed"] = seed
                text = json.dumps(data, separators=(",", ":"), allow_nan=False)
                try:
                    normalized = json.loads(_call_engine(core.normalize, text))
                except ScenarioError as exc:
                    bad.append(label)
                    first_error = first_error or f"point {label}: {exc}"
                    break
                key, canonical = run_key(normalized, seed, __version__)
                runs.append(Run(i, seed, key, text, canonical))
        if bad:
            more = f" ({len(bad)} of {len(points)} points are invalid)" if len(bad) > 1 else ""
            raise SweepError(first_error + more)
        self._plan = (points, runs)
        return self._plan

    def spec(self) -> Dict[str, Any]:
        """The sweep as a plain dict (what ``OUT/sweep.json`` records)."""
        return {"name": self.name, "scenario": self.scenario, "set": self.set, "axes": self.axes,
                "zip": self.zip, "seeds": self.seeds, "metrics": self.metrics}

    # ----- running ------------------------------------------------------------------------
    def run(self, out: "Optional[os.PathLike[str] | str]" = None, *, workers: Optional[int] = None,
            dask: Any = None, progress: Optional[bool] = None, quiet: bool = False,
            on_run: Optional[Callable[["Run", bool], None]] = None) -> "SweepResult":
        """Run every missing run and return a :class:`SweepResult` (its ``table`` is the tidy
        result). See :func:`run_sweep` for the arguments."""
        return run_sweep(self, out, workers=workers, dask=dask, progress=progress, quiet=quiet,
                         on_run=on_run)

    def __repr__(self) -> str:
        n = 1
        for vs in self.axes.values():
            n *= len(vs)
        for g in self.zip:
            n *= len(next(iter(g.values())))
        return f"<Sweep: {n} points x {len(self.seeds)} seeds, axes {self.axis_paths}>"


# ----- one run: engine -> per-group rows ----------------------------------------------------
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
    values = _metrics.group_metrics(flows)
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
        from . import __version__

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

    def __init__(self, total: int, enabled: bool, stream=None):
        self.total, self.enabled = total, enabled and total > 0
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
        line = (f"sweep [{'#' * fill}{'.' * (width - fill)}] {finished}/{self.total} "
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


# ----- executors ----------------------------------------------------------------------------
def default_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class _Collector:
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
        self.failures.append((run, _error_text(exc)))
        self.progress.update(False)
        if self.on_run is not None:
            self.on_run(run, False)


def _error_text(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if isinstance(exc, (ValueError, RuntimeError)) and text else \
        f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _run_and_store(run: Run, store: Optional[RunStore]):
    table = rows_table(execute(run.scenario_json, run.seed, run.key), run)
    if store is not None:
        store.save(run.key, table)
    return table


def _run_threads(todo: List[Run], workers: int, collector: _Collector,
                 log: Callable[[str], None]) -> bool:
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
                    table = _run_and_store(run, collector.store)
                except Exception as exc:  # noqa: BLE001 - reported per run
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


def _assemble(sweep: Sweep, points: List[Dict[str, Any]], runs: List[Run], tables: Mapping[str, Any],
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


def load_results(out: "os.PathLike[str] | str"):
    """The tidy table a sweep wrote to ``out`` (``results.parquet``) as a DataFrame."""
    import pandas as pd

    path = os.path.join(os.fspath(out), "results.parquet")
    if not os.path.exists(path):
        raise ScenarioFileError(f"{path}: no sweep results here (run `tcpf sweep FILE.toml --out "
                                f"{os.fspath(out)}` first)")
    return pd.read_parquet(path)


def _write_outputs(out: str, df) -> List[str]:
    from .results import _csv_ready

    written = []
    path = os.path.join(out, "results.parquet")
    _atomic_write(path, lambda tmp: df.to_parquet(tmp, index=False, engine="pyarrow"))
    written.append(path)
    path = os.path.join(out, "results.csv")
    _atomic_write(path, lambda tmp: _csv_ready(df).to_csv(tmp, index=False))
    written.append(path)
    return written


def _write_spec(out: str, sweep: Sweep, points, runs) -> str:
    from . import __version__

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


def run_sweep(sweep: Sweep, out: "Optional[os.PathLike[str] | str]" = None, *,
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
        raise SweepError(f"--workers: must be a positive integer, got {workers!r}", field="--workers")
    if log is None:
        def log(message: str) -> None:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
    say = (lambda message: None) if quiet else log
    start = time.monotonic()
    points, runs = sweep.plan()
    out_dir = os.fspath(out) if out is not None else None
    if out_dir is not None and os.path.exists(out_dir) and not os.path.isdir(out_dir):
        raise SweepError(f"--out: {out_dir} exists and is not a directory", field="--out")
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
    collector = _Collector(store, bar, on_run)
    interrupted = False
    if todo:
        if dask is None:
            n = workers or default_workers()
            interrupted = _run_threads(todo, n, collector, say)
        else:
            from .sweep_dask import run_on_dask

            interrupted = run_on_dask(todo, dask, workers, collector)
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


def sweep(spec: Any, out: "Optional[os.PathLike[str] | str]" = None, **kwargs) -> SweepResult:
    """Run a sweep given as a :class:`Sweep`, a spec dict or the path of a TOML spec."""
    if isinstance(spec, Sweep):
        sw = spec
    elif isinstance(spec, Mapping):
        sw = Sweep.from_dict(spec)
    else:
        sw = Sweep.from_toml(spec)
    return run_sweep(sw, out, **kwargs)

"""A sweep spec: the base scenario, fixed overrides, axes, zipped axes, seeds and metrics
(:class:`Sweep`), axis paths into the scenario, and the validated plan of runs."""

from __future__ import annotations

import builtins
import copy
import itertools
import json
import os
import re
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from ..errors import ScenarioError
from ..scenario import Scenario, _call_engine, _read_toml, as_scenario, native, read_toml_file
from .core import (FLOW_METRICS, GROUP_METRICS, LINK_METRICS, MAX_RUNS, Run, SweepError, check_simulator, _RUN_ID_COLUMNS,
                   _jsonable, _kind, _label, run_key, spec_identity)

if TYPE_CHECKING:  # annotations only
    from .runner import SweepResult

_SPEC_KEYS = ["scenario", "seeds", "base_seed", "metrics", "per_flow", "set", "axes", "zip", "name",
              "description", "simulator"]
_RESERVED_COLUMNS = set(["point", "flow"] + _RUN_ID_COLUMNS + GROUP_METRICS + FLOW_METRICS)

Value = Any
PathToken = Union[str, int]


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
        if len(values) > MAX_RUNS:  # before copying: a huge range is refused, not expanded
            raise SweepError(f"axes.{path}: {len(values)} values, over the limit of {MAX_RUNS} "
                             "runs per sweep", field=f"axes.{path}")
        values = list(values)
        if not values:
            raise SweepError(f"{what} {path}: needs at least one value", field=path)
        out[path] = values
    return out


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
        per_flow: also a per-flow table (one row per run x flow, every metric of
            :data:`~tcpfriendly.metrics.FLOW_METRICS`): :attr:`SweepResult.flows`,
            ``flows.parquet``/``flows.csv`` in ``out`` (default: False).
        simulator: ``"tcpf"`` (tcpfriendly's engine, the default) or ``"ns2"``: every run is
            exported to an ns-2 script (:mod:`tcpfriendly.ns2`) and run by the installed
            ``ns``, its results read back into the same table (metrics ns-2 does not report
            are empty). A point ns-2 cannot express fails alone, with the exporter's reason.
            Runs on local threads (each ``ns`` is a process of its own); not with Dask.
        controllers: window controllers written in Python, ``{name: class}`` as
            :func:`tcpfriendly.run` takes them: flow groups (in the scenario, ``set`` or an
            axis) use them by ``name`` as their ``algorithm``. Their runs go on local worker
            processes that load each class again from where it came from (a ``--controller``
            file or an importable module), else one at a time on the calling thread (a class
            typed at a prompt or defined in the main script; the engine calls the class on
            every ACK, holding the GIL); not on Dask, nor in ns-2. A run's key includes each class's
            :func:`~tcpfriendly.controller.fingerprint`, so an edited class reruns its points;
            a class with no source file (typed at a prompt) is never stored in ``out``.
    """

    def __init__(self, scenario: Any, axes: Optional[Mapping[str, Sequence[Any]]] = None, *,
                 zip: Optional[Sequence[Mapping[str, Sequence[Any]]]] = None,  # noqa: A002
                 set: Optional[Mapping[str, Any]] = None,  # noqa: A002
                 seeds: Union[int, Sequence[int]] = 1, base_seed: Optional[int] = None,
                 metrics: Optional[Sequence[str]] = None, name: Optional[str] = None,
                 per_flow: bool = False, simulator: str = "tcpf",
                 controllers: Optional[Mapping[str, type]] = None):
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
            self._check_size(count)  # before the list of seeds is built
            self.seeds = [self.base_seed + i for i in range(count)]
        elif isinstance(seeds, Sequence) and not isinstance(seeds, str):
            self._check_size(len(seeds))
            self.seeds = [_check_seed_value(s, f"seeds[{i}]") for i, s in enumerate(seeds)]
            if not self.seeds:
                raise SweepError("seeds: needs at least one seed", field="seeds")
            if len(builtins.set(self.seeds)) != len(self.seeds):
                raise SweepError("seeds: the list repeats a seed", field="seeds")
        else:
            raise SweepError(f"seeds: must be a count or a list of seeds, got {seeds!r}", field="seeds")
        self.metrics = _resolve_metrics(metrics)
        self._plan: Optional[Tuple[List[Dict[str, Any]], List[Run]]] = None
        self.per_flow = per_flow
        self.simulator = simulator
        self.controllers = controllers

    @property
    def per_flow(self) -> bool:
        """Whether the sweep also makes a per-flow table (its runs' keys depend on it)."""
        return self._per_flow

    @per_flow.setter
    def per_flow(self, value: bool) -> None:
        if hasattr(value, "item") and not isinstance(value, (bool, int, float, str)):
            value = value.item()
        if not isinstance(value, bool):
            raise SweepError(f"per_flow: must be true or false, got "
                             f"{_label(value) if _jsonable(value) else repr(value)}", field="per_flow")
        self._per_flow = value
        self._plan = None  # the run keys change with it

    @property
    def simulator(self) -> str:
        """What runs the simulations: ``"tcpf"`` or ``"ns2"`` (see the class)."""
        return self._simulator

    @simulator.setter
    def simulator(self, value: str) -> None:
        self._simulator = check_simulator(value)
        self._plan = None  # the run keys change with it

    @property
    def controllers(self) -> Dict[str, type]:
        """The Python controllers the sweep's flow groups may name (see the class)."""
        return self._controllers

    @controllers.setter
    def controllers(self, value: Optional[Mapping[str, type]]) -> None:
        from ..results import check_controller_classes

        try:
            self._controllers = check_controller_classes({} if value is None else value)
        except ScenarioError as exc:
            raise SweepError(str(exc), field="controllers") from None
        self._plan = None  # the run keys change with them
        self._unsourced: "builtins.set[str]" = builtins.set()

    @property
    def unsourced_keys(self) -> "builtins.set[str]":
        """Keys of planned runs whose Python controller has no source file to fingerprint
        (:func:`~tcpfriendly.controller.fingerprint` is None): keyed by the class's identity
        in this process, they are never stored in (or read from) a sweep's ``out``."""
        self.plan()
        return self._unsourced

    def engine_id(self) -> str:
        """The identity of what runs this sweep's simulations, which its run keys name:
        :func:`tcpfriendly.version.engine_id` (tcpfriendly's engine build) or, with
        ``simulator = "ns2"``, :func:`tcpfriendly.ns2.ns2_engine_id` (the ``ns`` binary and the
        exporter; a SweepError naming ``simulator`` when ``ns`` is not on PATH)."""
        if self.simulator == "ns2":
            from ..ns2 import ns2_engine_id
            try:
                return ns2_engine_id()
            except FileNotFoundError:
                raise SweepError("simulator: ns2 needs ns-2's `ns` on PATH (Debian, Ubuntu: "
                                 "apt-get install ns2)", field="simulator") from None
        from ..version import engine_id
        return engine_id()

    # ----- size ---------------------------------------------------------------------------
    def _factors(self) -> List[Tuple[str, int]]:
        """(field, length) of every grid dimension: ``axes.PATH`` and ``zip[i]``."""
        dims = [(f"axes.{p}", len(vs)) for p, vs in self.axes.items()]
        dims += [(f"zip[{i}]", len(next(iter(g.values())))) for i, g in enumerate(self.zip)]
        return dims

    def _check_size(self, n_seeds: int) -> None:
        """Refuse a sweep of more than :data:`MAX_RUNS` runs, computed from the lengths alone
        (nothing is expanded), naming its largest factor (an axis, a zip group or ``seeds``)."""
        factors = self._factors() + [("seeds", int(n_seeds))]
        total = 1
        for _, n in factors:
            total *= n
        if total <= MAX_RUNS:
            return
        field, largest = max(factors, key=lambda f: f[1])
        points = total // max(1, int(n_seeds))
        raise SweepError(f"{field}: the sweep would have {total} runs ({points} grid points x "
                         f"{n_seeds} seeds), over the limit of {MAX_RUNS} runs per sweep; its "
                         f"largest factor is {field} ({largest}): make it smaller, or split the "
                         "sweep", field=field)

    def size(self) -> Tuple[int, int]:
        """(grid points, seeds), computed without expanding the grid."""
        n = 1
        for _, k in self._factors():
            n *= k
        return n, len(self.seeds)

    def identity(self) -> str:
        """What its output directory's manifest records: see :func:`spec_identity`."""
        return spec_identity(self.spec())

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
                   metrics=spec.get("metrics"), name=name if isinstance(name, str) else None,
                   per_flow=spec.get("per_flow", False), simulator=spec.get("simulator", "tcpf"))

    @classmethod
    def from_toml_string(cls, text: str, source: str = "<string>", base_dir: str = ".") -> "Sweep":
        return cls.from_dict(_read_toml(text, source), base_dir)

    @classmethod
    def from_toml(cls, path: "os.PathLike[str] | str") -> "Sweep":
        """Read a sweep spec file (a base ``scenario`` path in it is relative to the file)."""
        name = os.fspath(path)
        return cls.from_dict(read_toml_file(name, "sweep file"), os.path.dirname(os.path.abspath(name)))

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
        from ..version import __version__

        core = native()
        engine = self.engine_id()
        points = self.points()
        runs: List[Run] = []
        bad: List[str] = []
        first_error = None
        names = list(self.controllers)
        if names and self.simulator == "ns2":
            raise SweepError("controllers: ns-2 cannot run a Python controller; run the sweep "
                             "in tcpfriendly's engine (simulator = \"tcpf\")", field="controllers")
        from ..controller import fingerprint, identity
        prints = {n: fingerprint(c) for n, c in self.controllers.items()}
        unsourced: "builtins.set[str]" = builtins.set()
        for i, point in enumerate(points):
            label = ", ".join(f"{p}={_label(v)}" for p, v in point.items()) or "the base scenario"
            try:
                base = self.scenario_at(point)
                sc = Scenario(base)  # plain JSON types, naming the field otherwise
                if names:  # each class built with its group's params at this point
                    from ..results import _check_controllers
                    _check_controllers(sc, self.controllers)
                if base.get("trace") is not None:
                    # Every run of the grid would write the same trace file; the engine would
                    # record each trace and the sweep discard it.
                    raise SweepError("trace: a sweep writes no packet traces: remove [trace] "
                                     "(and any trace.* in set or the axes), or trace one point "
                                     "with `tcpf run` (`tcpf sweep --dry-run` lists the points)")
            except ScenarioError as exc:
                if isinstance(exc, SweepError):
                    raise
                if exc.field == "controllers":  # a name, not this point
                    raise SweepError(str(exc), field="controllers") from None
                raise SweepError(f"point {label}: {exc}") from None
            for seed in self.seeds:
                data = dict(base)
                data["seed"] = seed
                text = json.dumps(data, separators=(",", ":"), allow_nan=False)
                try:
                    normalized = json.loads(_call_engine(core.normalize, text, *([names] if names else [])))
                except ScenarioError as exc:
                    bad.append(label)
                    first_error = first_error or f"point {label}: {exc}"
                    break
                ident, no_source = identity(self.controllers, prints,
                                            [g.get("algorithm") for g in normalized.get("flows", [])])
                key, canonical = run_key(normalized, seed, __version__, self.per_flow, engine, ident)
                if no_source:
                    unsourced.add(key)
                runs.append(Run(i, seed, key, text, canonical, self.per_flow, self.simulator))
        if bad:
            more = f" ({len(bad)} of {len(points)} points are invalid)" if len(bad) > 1 else ""
            raise SweepError(first_error + more)
        self._unsourced = unsourced
        self._plan = (points, runs)
        return self._plan

    def spec(self) -> Dict[str, Any]:
        """The sweep as a plain dict (what ``OUT/sweep.json`` records; ``per_flow`` only when
        true, so that the record of a sweep without it is unchanged)."""
        spec = {"name": self.name, "scenario": self.scenario, "set": self.set, "axes": self.axes,
                "zip": self.zip, "seeds": self.seeds, "metrics": self.metrics}
        if self.per_flow:
            spec["per_flow"] = True
        if self.simulator != "tcpf":
            spec["simulator"] = self.simulator
        return spec

    # ----- running ------------------------------------------------------------------------
    def run(self, out: "Optional[os.PathLike[str] | str]" = None, *, workers: Optional[int] = None,
            dask: Any = None, progress: Optional[bool] = None, quiet: bool = False,
            on_run: Optional[Callable[["Run", bool], None]] = None,
            force: bool = False, executor: str = "auto") -> "SweepResult":
        """Run every missing run and return a :class:`SweepResult` (its ``table`` is the tidy
        result). See :func:`run_sweep` for the arguments."""
        from .runner import run_sweep

        return run_sweep(self, out, workers=workers, dask=dask, progress=progress, quiet=quiet,
                         on_run=on_run, force=force, executor=executor)

    def __repr__(self) -> str:
        n, k = self.size()
        return f"<Sweep: {n} points x {k} seeds, axes {self.axis_paths}>"

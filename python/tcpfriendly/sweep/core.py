"""The shared ground of the sweep modules: errors, a run and its content key, result columns."""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Mapping, Optional, Tuple

from .. import metrics as _metrics
from ..errors import ScenarioError
from ..outfiles import OutputError, identity_of

if TYPE_CHECKING:  # annotations only
    from .runner import SweepResult

# Per-group aggregates of the flow table (one row per run x flow group): the metrics of
# tcpfriendly.metrics, defined there once.
GROUP_METRICS = list(_metrics.GROUP_METRICS)
# Per-flow metrics (a sweep's per-flow table, with per_flow = true), defined there once.
FLOW_METRICS = list(_metrics.FLOW_METRICS)
# Per-link metrics, as columns link.<name>.<metric> on every row of the run.
LINK_METRICS = list(_metrics.LINK_METRICS)  # the metrics layer's, in its order
_INT_METRICS = _metrics.INT_METRICS
# The most runs (grid points x seeds) one sweep may have. The size is computed from the axis
# lengths before anything is expanded, so a larger spec is refused at once (exit 2, naming the
# largest factor); planning keeps about 2 kB per run in memory.
MAX_RUNS = 100_000
# The most simulations at once (threads, worker processes or LocalCluster workers): far above
# any machine's cores, and low enough that a typo cannot start 100000 processes.
MAX_WORKERS = 1024


def check_workers(workers: Any, field: str = "workers", cls: type = ScenarioError) -> Optional[int]:
    """``workers`` (None: the default) as a count in 1..:data:`MAX_WORKERS`, or ``cls`` naming
    ``field``: the one check of a worker count (sweep, evaluate, reproduce and their CLIs)."""
    if workers is None:
        return None
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise cls.at(field, f"must be a positive integer, got {workers!r}")
    if workers > MAX_WORKERS:
        raise cls.at(field, f"must be at most {MAX_WORKERS} (simulations at once), got {workers}")
    return workers


# Identity columns of a run file (before the metrics).
_RUN_ID_COLUMNS = ["run", "seed", "group", "algorithm", "recovery", "params", "direction"]


class SweepError(ScenarioError):
    """A sweep spec is invalid: a bad axis path, value, seed list or metric, or a grid point
    the engine rejects. Raised before any run starts; the message names the axis/key."""


class SweepOutputError(SweepError, OutputError):
    """The sweep's ``out`` directory may not be used (it is a file, or holds another output and
    ``force`` was not given): both a :class:`SweepError` and an
    :class:`~tcpfriendly.outfiles.OutputError`."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C during :meth:`Sweep.run`. Finished runs are kept (and stored with ``out``);
    :attr:`result` is the :class:`SweepResult` of what finished."""

    def __init__(self, result: "SweepResult"):
        super().__init__("sweep interrupted")
        self.result = result


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


def _label(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value, allow_nan=False)
        return True
    except (TypeError, ValueError):
        return False


#: What runs a sweep's simulations: ``"tcpf"``, tcpfriendly's engine (the default), or
#: ``"ns2"``, ns-2 2.35 on the script :mod:`tcpfriendly.ns2` exports for each run (the
#: simulator the papers used: a cross-check of a whole study, `tcpf sweep --simulator ns2`).
SIMULATORS = ("tcpf", "ns2")


def check_simulator(simulator: Any, dask: Any = None, processes: bool = False) -> str:
    """``simulator`` if it is one of :data:`SIMULATORS`, with what it allows: ns-2's runs are
    ``ns`` processes started from local threads, so with ``"ns2"`` neither ``dask`` nor
    ``processes`` may be given. A SweepError naming ``simulator``, ``dask`` or ``processes``
    otherwise (the CLI maps the field to its flag)."""
    if simulator not in SIMULATORS:
        raise SweepError(f"simulator: must be one of {', '.join(SIMULATORS)}, got "
                         f"{_label(simulator) if _jsonable(simulator) else repr(simulator)}",
                         field="simulator")
    if simulator == "ns2":
        for name, given in (("dask", dask is not None), ("processes", processes)):
            if given:
                raise SweepError(f"{name}: with simulator ns2 the runs go on local threads (each "
                                 "run is an `ns` process of its own)", field=name)
    return simulator


class Run:
    """One simulation of the sweep: grid point ``point`` with ``seed``; ``per_flow``: its rows
    include one per flow (tagged with the flow's id, see :func:`~.executors.run_rows`);
    ``simulator``: one of :data:`SIMULATORS`."""

    __slots__ = ("point", "seed", "key", "scenario_json", "canonical", "per_flow", "simulator")

    def __init__(self, point: int, seed: int, key: str, scenario_json: str, canonical: str,
                 per_flow: bool = False, simulator: str = "tcpf"):
        self.point, self.seed, self.key = point, seed, key
        self.scenario_json, self.canonical = scenario_json, canonical
        self.per_flow = per_flow
        self.simulator = simulator

    def __repr__(self) -> str:
        return f"Run(point={self.point}, seed={self.seed}, key={self.key[:12]}...)"


def run_key(normalized: Mapping[str, Any], seed: int, version: Optional[str] = None,
            per_flow: bool = False, engine: Optional[str] = None,
            controllers: Optional[Mapping[str, str]] = None) -> Tuple[str, str]:
    """(key, canonical text): the content hash of a run's file and the JSON it hashes.
    ``engine``: the engine build's identity (default :func:`tcpfriendly.version.engine_id`;
    the version stays the same when the engine changes, so a run of another build is never
    reused). ``per_flow``: the file also holds one row per flow, so it is another file (another
    key): a sweep that asks for per-flow rows reruns runs stored without them. ``controllers``:
    ``{name: fingerprint}`` of the Python controllers the run's flows use
    (:func:`tcpfriendly.controller.fingerprint`), so that an edited class is another run."""
    from ..version import engine_id
    if version is None:
        from ..version import __version__ as version
    record = {"scenario": normalized, "seed": int(seed), "version": version,
              "engine": engine_id() if engine is None else engine, "metrics": _metrics.VERSION}
    if per_flow:
        record["per_flow"] = True
    if controllers:
        record["controllers"] = dict(controllers)
    canonical = json.dumps(record, sort_keys=True, separators=(",", ":"), allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32], canonical


def spec_identity(spec: Mapping[str, Any]) -> str:
    """The identity of a sweep's study (a hash): its name, base scenario, ``set`` overrides and
    the paths of its axes and zipped axes. The axis *values*, the seeds and the metrics are not
    part of it: adding seeds or values to a sweep and rerunning it into the same ``--out`` grows
    the same study (stored runs are reused, the table is rebuilt, and a spec that would drop
    runs of the recorded table is refused); a different base scenario, other overrides or
    other axes are another study, refused there unless ``force``. The same study run by another
    simulator (``simulator``) is another study too (a spec without it is tcpfriendly's, and its
    identity is unchanged)."""
    zipped = spec.get("zip") or []
    record = {"name": spec.get("name"), "scenario": spec.get("scenario"),
              "set": spec.get("set") or {}, "axes": list(spec.get("axes") or {}),
              "zip": [list(g) for g in zipped if isinstance(g, Mapping)]}
    if spec.get("simulator", "tcpf") != "tcpf":
        record["simulator"] = spec["simulator"]
    return identity_of(record)

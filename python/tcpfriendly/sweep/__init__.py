"""Parameter sweeps: a base scenario x axes x seeds, run on every local core or on Dask.

    from tcpfriendly.sweep import Sweep
    sw = Sweep("examples/jin2001-red-32.toml",
               set={"flows[1].algorithm": "gaimd"},
               axes={"flows[1].params.beta": [0.0625, 0.125, 0.25],
                     "bottleneck.rate": ["1.5Mbps", "15Mbps"]},
               seeds=10)
    res = sw.run(out="out/beta")        # all local cores (threads or processes: executor=)
                                        # or dask="local" / "tcp://host:8786"
    res.table                           # one row per run x flow group: axes, seed, metrics
    # Sweep(..., per_flow=True): res.flows, one row per run x flow (the papers' scatter plots)
    # Sweep(..., simulator="ns2"): every run in ns-2 2.35 instead (tcpfriendly.ns2), same table

or from a TOML spec (``Sweep.from_toml``; ``tcpf sweep FILE.toml``)::

    scenario = "jin2001-red-32.toml"    # relative to the spec file, or an inline [scenario] table
    seeds = 10                          # seeds base_seed .. base_seed+9, or a list of seeds
    base_seed = 1                       # default: the scenario's `seed`, else 1
    metrics = ["goodput_bps_mean", "share", "link.utilization"]    # default: all
    per_flow = true                     # also flows.parquet/flows.csv, one row per run x flow
    simulator = "ns2"                   # run in ns-2 2.35 (default "tcpf": tcpfriendly's engine)

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
``tcpfriendly.__version__``, the engine build's id ``tcpfriendly.version.engine_id()`` (with
``simulator = "ns2"``: ``tcpfriendly.ns2.ns2_engine_id()``, the ``ns`` binary and the exporter),
``tcpfriendly.metrics.VERSION``). With ``out=DIR`` finished runs are stored
in batch files ``DIR/runs/batch-<digest>.parquet`` (:class:`~.store.RunStore`: written to a
temporary name, then renamed, about once a second and when the sweep stops), and a stored run
is never recomputed, so rerunning an interrupted sweep runs only what is missing.
``DIR/results.parquet`` and ``DIR/results.csv`` (the tidy table) are rebuilt from the run
files at the end (with ``per_flow``, also ``DIR/flows.parquet`` and ``DIR/flows.csv``: a run
of such a sweep stores its per-flow rows in its file, and its key differs from the same run's
without them, so asking for per-flow rows later reruns the runs stored without); ``DIR/sweep.json`` records the spec, the grid points and each run's key. A
run file that cannot be read back (empty, corrupt) is a missing run, redone. ``DIR`` follows
:mod:`tcpfriendly.outfiles` (atomic files, no symlinks followed, one study per directory
unless ``force``).

Limits and failures: a sweep has at most :data:`~.core.MAX_RUNS` runs, checked from the axis
lengths and the seed count before anything is expanded. A run that raises (any exception) fails
alone; the table has one row for it with ``status = "failed"`` and its ``error``.

Modules: :mod:`.spec` (the spec and its plan), :mod:`.core` (errors, runs, keys),
:mod:`.store` (run files and tables), :mod:`.executors` (the executor protocol, threads,
the process pool),
:mod:`.dask_executor` (Dask), :mod:`.runner` (:func:`run_sweep`), :mod:`.plot` (plots and
summaries).
"""

from __future__ import annotations

import copy
import os
from typing import Any, Mapping, Optional

from ..errors import path_arg
from .core import (FLOW_METRICS, GROUP_METRICS, LINK_METRICS, Run, SweepError, SweepInterrupted, run_key)
from .executors import Collector, Executor, ThreadExecutor, execute, run_rows
from .runner import Progress, SweepResult, run_sweep
from .spec import Sweep, parse_path, set_path
from .store import RunStore, load_flows, load_results, rows_table

__all__ = [
    "Sweep", "SweepError", "SweepInterrupted", "SweepResult", "GROUP_METRICS", "LINK_METRICS",
    "FLOW_METRICS", "load_flows", "load_results", "run_key", "run_sweep", "sweep", "parse_path", "set_path", "Run",
    "Executor", "ThreadExecutor", "Collector", "execute", "run_rows", "rows_table", "RunStore",
    "Progress",
]


def sweep(spec: Any, out: "Optional[os.PathLike[str] | str]" = None, *,
          controllers: Optional[Mapping[str, type]] = None, **kwargs) -> SweepResult:
    """Run a sweep given as a :class:`Sweep`, a spec dict or the path of a TOML spec.
    ``controllers``: Python controller classes by name that its flow groups use (as
    :class:`Sweep`'s argument; they replace a given Sweep's for this call); the other keyword
    arguments are :func:`run_sweep`'s."""
    if isinstance(spec, Sweep):
        sw = copy.copy(spec) if controllers is not None else spec  # the caller's stays as it is
    elif isinstance(spec, Mapping):
        sw = Sweep.from_dict(spec)
    else:
        sw = Sweep.from_toml(path_arg(spec, "spec", "a Sweep, a spec dict or the path of a TOML spec"))
    if controllers is not None:
        sw.controllers = controllers
    return run_sweep(sw, out, **kwargs)

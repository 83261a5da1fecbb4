"""Running the evaluation's simulations and reducing each run to the numbers it needs.

Execution goes through ONE adapter, :func:`execute`, on the sweep engine's executors
(:class:`tcpfriendly.sweep.ThreadExecutor`: local threads, the engine releases the GIL;
:class:`~tcpfriendly.sweep.dask_executor.DaskExecutor` with ``dask=``). Each run is reduced
where it ran (:func:`run_job`, :data:`REDUCERS`) to a small JSON-able dict, so no time
series or loss log travels back; with ``out`` the reductions are cached in
``out/runs/<key>.json`` (key = SHA-256 of the scenario, seed, reducer, the version, the engine
build's id and the reducer's code hash, :func:`cache_version`; written atomically as each run
finishes), so an interrupted evaluation redoes only the missing runs.
Identical jobs run once: TCP SACK alone under the same loss process and seed is the same run
for every scheme, so ``tcpf evaluate --all`` runs each TCP reference once. Runs of Python
controllers go on worker processes, which load the classes from where they came from (a
``--controller`` file or an importable module), else one at a time on the calling thread (a
class typed at a prompt or defined in the main script); the TCP references on threads.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numpy as np
import pandas as pd

from ..metrics import dynamics as dyn
from ..outfiles import atomic_write, make_dir

__all__ = ["Job", "execute", "run_job", "REDUCERS", "RunCache", "EvaluationFailed", "EvaluationInterrupted"]


class Job:
    """One simulation: a filled scenario, a seed, a time-series interval, a reducer and the
    simulator that runs it (one of :data:`tcpfriendly.sweep.core.SIMULATORS`)."""

    def __init__(self, scenario: Dict[str, Any], seed: int, reducer: str,
                 ctx: Optional[Dict[str, Any]] = None, timeseries: Optional[float] = None,
                 simulator: str = "tcpf"):
        self.scenario = scenario
        self.seed = int(seed)
        self.reducer = reducer
        self.ctx = ctx or {}
        self.timeseries = timeseries
        self.simulator = simulator

    def key(self, version: str) -> str:
        # the simulator is in ``version`` (cache_version: the engine's or ns-2's identity)
        blob = json.dumps([self.scenario, self.seed, self.reducer, self.ctx, self.timeseries, version],
                          sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:24]


# ----- reducers: Result -> small dict --------------------------------------------------------------
def _group_goodput(res, group: int) -> float:
    f = res.flows
    return float(f[f["group"] == group]["goodput_bps"].mean())


def reduce_single_flow(res, ctx) -> Dict[str, Any]:
    f = res.flows.iloc[0]
    return {"goodput_bps": float(f["goodput_bps"]), "loss_events": int(f["loss_events"]),
            "mean_rtt_s": float(f["mean_rtt_s"]), "packets_sent": int(f["packets_sent"])}


def reduce_s2(res, ctx) -> Dict[str, Any]:
    f = res.flows
    xg = int(ctx.get("x_group", 0))
    out = {"x_goodput_bps": _group_goodput(res, xg), "tcp_goodput_bps": _group_goodput(res, 1 - xg)}
    for g, name in ((xg, "x"), (1 - xg, "tcp")):
        row = dyn.shortest_rtt_flow(f, g)
        out[f"{name}_short_goodput_bps"] = float(row["goodput_bps"])
        out[f"{name}_short_loss_event_rate"] = float(row["loss_event_rate"])
    out["utilization"] = float(res.links.iloc[0]["utilization"])
    return out


def _rate_1s(ts, flow: int, bin_s: float = 1.0):
    d = dyn.flow_series(ts, flow)
    ends, means = dyn.binned(d["time"].to_numpy(), d["rate_bps"].to_numpy(), bin_s, 0.0, None)
    return ends, means


def reduce_series(res, ctx) -> Dict[str, Any]:
    """Flow 0's delivered rate binned to ``bin_s`` and its loss events (the loss log: window
    reductions, or a rate-based flow's receiver loss events, kind ``rate_loss_event``):
    tsao2007 S3/S4 measure the throughput of the one flow under test against time (Figs. 3-4);
    the convergence times are computed from this in the aggregation, against targets from the
    reference runs (:func:`reduce_steady_level`). A run without a loss log (ns-2's) has
    ``loss_times`` None: its loss events while converging are not measured."""
    ts = res.timeseries("flows")
    t, x = _rate_1s(ts, 0, float(ctx["bin_s"]))
    log = dyn.loss_log(res.raw)
    lt = log[log["flow"] == 0]["time"].to_numpy(dtype=float)
    return {"time": t.round(6).tolist(), "rate_bps": x.round(1).tolist(),
            "loss_times": lt.round(6).tolist() if "loss_events" in res.raw else None,
            "goodput_bps": float(res.flows.iloc[0]["goodput_bps"]),
            "mean_rtt_s": float(res.flows.iloc[0]["mean_rtt_s"])}


def reduce_steady_level(res, ctx) -> Dict[str, Any]:
    """The steady throughput of flow 0 in a stationary reference run (one regime held for the
    whole run): its mean delivered rate over the last ``reference_tail`` seconds."""
    ts = res.timeseries("flows")
    t, x = _rate_1s(ts, 0, float(ctx["bin_s"]))
    end = float(ctx["duration"])
    sel = t > end - float(ctx["reference_tail"]) + 1e-9
    return {"level_bps": float(np.mean(x[sel])) if sel.any() else float("nan"),
            "mean_rtt_s": float(res.flows.iloc[0]["mean_rtt_s"])}


def _code_objects(code):
    """``code`` and the code objects nested in it (comprehensions, inner functions)."""
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_names"):
            yield from _code_objects(c)


def _source_closure(fn: Callable) -> str:
    """The source of ``fn`` and of every function or class of this module and of the metrics
    layer (``tcpfriendly.metrics.*``) it can reach by name.

    A name the code uses (``co_names``: globals, attributes such as ``dyn.binned``, names
    imported inside a function) is followed when one of those modules defines a function or
    class of that name; a same-named definition in another of them is followed too, which
    only makes the hash more cautious. Module-level constants the code reads by
    name are hashed by ``repr``. Not followed: methods of the result object (``res.flows``;
    the package version in every key covers them) and names built at run time.
    """
    import importlib
    import inspect
    import pkgutil

    from .. import metrics

    # A fixed set of modules (not whatever happens to be imported), so the hash is the same in
    # every process: this module and the metrics layer, where every reducer's numbers come from.
    modules = [sys.modules[__name__]] + [importlib.import_module(f"{metrics.__name__}.{m.name}")
                                         for m in sorted(pkgutil.iter_modules(metrics.__path__), key=lambda m: m.name)]
    homes = {m.__name__ for m in modules}
    parts: Dict[str, str] = {}
    stack = [fn]
    while stack:
        obj = stack.pop()
        ident = f"{obj.__module__}.{obj.__qualname__}"
        if ident in parts:
            continue
        parts[ident] = inspect.getsource(obj)
        codes = (list(_code_objects(obj.__code__)) if inspect.isfunction(obj)
                 else [c for v in vars(obj).values() if inspect.isfunction(v) for c in _code_objects(v.__code__)])
        glb = obj.__globals__ if inspect.isfunction(obj) else vars(sys.modules[obj.__module__])
        for name in sorted({n for c in codes for n in c.co_names}):
            val = glb.get(name)
            if isinstance(val, (int, float, str, bytes, tuple, frozenset)) and not isinstance(val, bool):
                parts[f"{obj.__module__}.{name}=const"] = repr(val)
            for m in modules:
                cand = getattr(m, name, None)
                if (inspect.isfunction(cand) or inspect.isclass(cand)) and getattr(cand, "__module__", "") in homes:
                    stack.append(cand)
    return "".join(f"{k}\n{v}" for k, v in sorted(parts.items()))


def cache_version(reducer: str, simulator: str = "tcpf") -> str:
    """What, besides the job itself, a cached reduction of ``reducer`` depends on (the
    ``version`` of :meth:`Job.key`): the package version, the simulator's identity (the engine
    build's id, :func:`tcpfriendly.version.engine_id`, as the version stays the same when the
    engine changes; for ns-2 :func:`tcpfriendly.ns2.ns2_engine_id`, the ``ns`` binary and the
    exporter) and the reducer's code hash (:func:`reducer_code_hash`)."""
    from ..version import __version__, engine_id
    if simulator == "ns2":
        from ..ns2 import ns2_engine_id
        ident = ns2_engine_id()
    else:
        ident = engine_id()
    return f"{__version__}:{ident}:{reducer_code_hash(reducer)}"


def reducer_code_hash(reducer: str) -> str:
    """A hash of the code that turns a run into the cached reduction of ``reducer``: the
    reducer's own source and that of every tcpfriendly function it calls
    (:func:`_source_closure`). Part of every cache key, so a changed reducer never reuses a
    reduction computed by the old code, while an edit to one reducer (or to a metric only it
    uses) leaves the other reducers' cached runs valid."""
    h = _CODE_HASH.get(reducer)
    if h is None:
        h = hashlib.sha256(_source_closure(REDUCERS[reducer]).encode("utf-8")).hexdigest()[:12]
        _CODE_HASH[reducer] = h
    return h


_CODE_HASH: Dict[str, str] = {}


def reduce_impulse(res, ctx) -> Dict[str, Any]:
    ts = res.timeseries("flows")
    d = dyn.flow_series(ts, 0)
    t = d["time"].to_numpy(dtype=float)
    w = pd.to_numeric(d["cwnd"], errors="coerce").to_numpy(dtype=float)
    rtt = float(res.flows.iloc[0]["mean_rtt_s"])
    window_based = bool(np.isfinite(w).any())
    if not window_based:
        # a rate-based flow has no window: use its delivered rate times its mean RTT, in
        # packets, as the equivalent window (binned to 1 RTT-ish by the 0.1 s sampling)
        pkt_bits = 8.0 * float(res.scenario.get("packet_size", 1000))
        w = d["rate_bps"].to_numpy(dtype=float) * rtt / pkt_bits
    on, off, dur = ctx["t_on"], ctx["t_off"], ctx["duration"]
    period = on + off
    # CBR is on during [k P, k P + on), off during [k P + on, (k+1) P); skip the first cycle
    rises = [k * period + on for k in range(1, int(dur // period)) if k * period + period <= dur]
    falls = [k * period for k in range(1, int(dur // period)) if k * period + on <= dur]
    log = dyn.loss_log(res.raw)
    lt = log[log["flow"] == 0]["time"].to_numpy()
    rounds = rtt
    if ctx.get("rtt_count") == "queue":
        # round trips counted from the flow's RTT at every sample (its propagation round
        # trip plus the bottleneck queue then): assumption rtt_count of the experiment
        sc, lts = res.scenario, res.timeseries("links")
        bn = sc["bottleneck"]
        # flow 0's own delays as the engine resolved them (a group's delays may be a range or
        # a list in the normalised scenario)
        from ..scenario import expand
        f0 = expand(sc, controllers=res.controllers)["flows"][0]
        q = lts[lts["link"] == "bottleneck"].sort_values("time")
        rounds = dyn.rtt_from_queue(
            np.interp(t, q["time"].to_numpy(dtype=float), q["queue_pkts"].to_numpy(dtype=float)),
            2 * (bn["delay"] + f0["access_delay_s"] + f0["receiver_delay_s"]), bn["rate"],
            sc["packet_size"] + sc["tcp"]["header_size"])
    agg = dyn.aggressiveness(t, w, rises, rounds, eps=ctx["eps"], period_s=off)
    rsp = dyn.responsiveness(t, w, falls, lt, eps=ctx["eps"], period_s=on)
    # 1/responsiveness in loss events counts window reductions; a rate-based flow has none
    # (its log holds its receiver's loss events), so the count is not measured for it (its
    # seconds are)
    resp_losses = rsp["samples"] if window_based else []
    # smoothness after reaching steady state (jin2001 Fig. 19): the window's CoV over the same
    # tail of each phase that gives the targets above, the high (CBR off) and low (on) levels
    steady = dyn.steady_cov(t, w, rises, off) + dyn.steady_cov(t, w, falls, on)
    sel = (t >= 80) & (t <= 200)
    return {
        "rtt_s": rtt,
        "aggr_samples": agg["samples"], "w_high": agg["targets"],
        "resp_samples": resp_losses, "resp_seconds": rsp["seconds"], "w_low": rsp["targets"],
        "steady_cov": steady,
        "series": {"time": t[sel][::5].round(3).tolist(), "cwnd": w[sel][::5].round(3).tolist()},
    }


def reduce_trough(res, ctx) -> Dict[str, Any]:
    lts = res.timeseries("links")
    b = lts[lts["link"] == res.links.iloc[0]["name"]].sort_values("time")
    sc = res.scenario
    wire = float(sc.get("packet_size", 1000)) + float(sc.get("tcp", {}).get("header_size", 40))
    m = dyn.trough_metrics(b["time"].to_numpy(), b["utilization"].to_numpy(), b["drops"].to_numpy(),
                           float(sc["bottleneck"]["rate"]), ctx["sample_s"], wire,
                           t1=ctx["t1"], t2=ctx["t2"], bin_s=ctx["bin_s"],
                           steady=(ctx["steady_from"], ctx["steady_to"]),
                           util_recover=ctx["util_recover"], drop_recover=ctx["drop_recover"],
                           drop_window=ctx["drop_window"], peak_bin_s=ctx["peak_bin_s"])
    ends, u = dyn.binned(b["time"].to_numpy(), b["utilization"].to_numpy(), ctx["bin_s"])
    m["series"] = {"time": ends.round(3).tolist(), "utilization": u.round(4).tolist()}
    return m


REDUCERS: Dict[str, Callable] = {
    "single_flow": reduce_single_flow,
    "s2": reduce_s2,
    "series": reduce_series,
    "steady_level": reduce_steady_level,
    "impulse": reduce_impulse,
    "trough": reduce_trough,
}


#: What a reducer reads that ns-2's runs do not record (the reader of :mod:`tcpfriendly.ns2`
#: gives per-flow and per-link totals and time series, no loss log): an experiment reduced by
#: one of these is not run in ns-2.
NS2_LACKS = {
    "impulse": "the ns-2 runs record no loss log (the time of each window reduction), which "
               "jin2001's 1/responsiveness counts",
}


def run_job(job: Job, controllers: Optional[Dict[str, type]] = None) -> Dict[str, Any]:
    """Simulate one job and return its reduction (the executors' task; module-level, so
    Dask workers can import it). With ``job.simulator == "ns2"`` the scenario, expanded for
    the seed, runs in ns-2 (:func:`tcpfriendly.ns2.run_ns2`, as a sweep's ns-2 runs do) and
    its results, read back into the engine's schema, are reduced the same way."""
    if job.simulator == "ns2":
        from ..ns2 import run_ns2
        from ..results import Result
        from ..scenario import Scenario
        expanded = Scenario(job.scenario).expand(job.seed)
        if job.timeseries:  # the engine takes it as an argument; the ns-2 reader from the scenario
            expanded.setdefault("scenario", {})["timeseries"] = job.timeseries
        raw = run_ns2(expanded, series_interval_s=(expanded.get("scenario") or {}).get("timeseries"))
        return REDUCERS[job.reducer](Result("", raw=raw), job.ctx)
    from ..results import run
    res = run(job.scenario, seed=job.seed, timeseries=job.timeseries, controllers=controllers)
    return REDUCERS[job.reducer](res, job.ctx)


class _Task:
    """``task(run)`` for the sweep executors: the run is a :class:`_Run` wrapping a job."""

    def __init__(self, controllers: Optional[Dict[str, type]] = None):
        self.controllers = controllers

    def __call__(self, r: "_Run") -> Dict[str, Any]:
        return run_job(r.job, self.controllers)


def _run_task(r: "_Run") -> Dict[str, Any]:  # Dask: a module-level function
    return run_job(r.job)


class _ShippedTask:
    """``task(run)`` on a worker process for jobs with Python controllers: the classes loaded
    there from where they came from (:func:`tcpfriendly.controller.worker_controllers`,
    checked against the parent's fingerprints). Pickles as its two dicts of strings."""

    def __init__(self, specs: Dict[str, str], prints: Dict[str, str]):
        self.specs, self.prints = specs, prints

    def __call__(self, r: "_Run") -> Dict[str, Any]:
        from ..controller import worker_controllers
        return run_job(r.job, worker_controllers(self.specs, self.prints))


def _controller_executors(runs: List["_Run"], controllers: Dict[str, type], workers: int,
                          log: Callable[[str], None]) -> List[Tuple[Any, List["_Run"]]]:
    """[(executor, its runs)] for an evaluation with Python controllers: the runs without them
    (TCP references) on ``workers`` threads; those with them on ``workers`` processes when
    every class can be loaded again there (:func:`tcpfriendly.controller.shippable`: a
    ``--controller`` file or an importable module), else one at a time on this thread (the
    engine calls the class on every ACK with the GIL held), as also when the main script
    cannot be imported by a worker (no ``if __name__ == "__main__":`` guard)."""
    from ..controller import fingerprint, shippable
    from ..sweep.executors import TaskProcessExecutor, ThreadExecutor, main_is_importable

    names = set(controllers)
    mine = [r for r in runs if _algorithms(r.job) & names]
    plain = [r for r in runs if r not in mine]
    # (workers import the main module: a script without a __main__ guard would run again)
    specs = shippable(controllers) if workers > 1 and mine and main_is_importable() else None
    if specs is not None:
        prints = {n: fingerprint(c) for n, c in controllers.items()}
        ctl = TaskProcessExecutor(workers, log, _ShippedTask(specs, prints))
    else:
        ctl = ThreadExecutor(1, log, _Task(controllers))
    return [(ThreadExecutor(workers, log, _Task()), plain), (ctl, mine)]


class _Run:
    """What the sweep executors schedule: a key (their task and progress unit) and the job."""

    __slots__ = ("key", "job", "seed", "point")

    def __init__(self, key: str, job: Job):
        self.key, self.job, self.seed, self.point = key, job, job.seed, 0


def _cost(job: Job) -> float:
    """A rough cost (simulated seconds) to start the longest runs first, so that the last
    runs of a batch are short ones and no core idles at the end (order changes nothing else)."""
    try:
        return float(job.scenario.get("duration", 0))
    except (TypeError, ValueError):
        return 0.0


class RunCache:
    """``out/runs/<key>.json``: one reduction per finished run, written atomically."""

    def __init__(self, out: str):
        self.dir = os.path.join(out, "runs")
        # made now, before any run: a directory that cannot hold the cache (a file named
        # runs, no permission) is refused up front, not after every simulation has run
        make_dir(self.dir, "out", what="the run cache ")

    def path(self, key: str) -> str:
        return os.path.join(self.dir, key + ".json")

    def load(self, key: str) -> Optional[Dict[str, Any]]:
        try:
            with open(self.path(key), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None
        except (OSError, ValueError):  # a damaged file is a missing run: run it again
            return None

    def save(self, key: str, value: Dict[str, Any]) -> None:
        """Cache one run's reduction, whole or not at all (a damaged or missing file is a run
        to redo, so no fsync); a failure (a full disk) is an ``OutputError`` naming the file."""
        data = json.dumps(value).encode("utf-8")
        atomic_write(self.path(key), lambda f: f.write(data), field="out", sync=False)


class EvaluationFailed(RuntimeError):
    """A simulation of the evaluation failed (a bug or a scheme the engine cannot run)."""


class EvaluationInterrupted(KeyboardInterrupt):
    """Ctrl-C: the finished runs are kept (and cached with ``out``); ``done``/``total``."""

    def __init__(self, done: int, total: int, out: Optional[str]):
        super().__init__(f"interrupted after {done} of {total} runs"
                         + (f"; they are cached in {out}, rerun the same command to resume" if out else ""))
        self.done, self.total, self.out = done, total, out


def _job_keys(jobs: List[Job], controllers: Optional[Dict[str, type]]) -> Tuple[List[str], Set[str]]:
    """Each job's cache key, and the keys not to cache on disk. A job whose flows run Python
    controllers is keyed also by those classes (:func:`tcpfriendly.controller.fingerprint`),
    so an edited class does not reuse the old one's runs; a class whose source cannot be read
    is keyed by its identity in this process and its runs are not written to (or read from)
    the disk cache."""
    from ..controller import fingerprint, identity
    prints = {n: fingerprint(c) for n, c in (controllers or {}).items()}
    keys: List[str] = []
    unsourced: Set[str] = set()
    for j in jobs:
        version = cache_version(j.reducer, j.simulator)
        ident, no_source = identity(controllers, prints, _algorithms(j))
        if ident:
            version += "|" + ",".join(f"{n}={v}" for n, v in ident.items())
        k = j.key(version)
        keys.append(k)
        if no_source:
            unsourced.add(k)
    return keys, unsourced


def _algorithms(job: Job) -> Set[str]:
    """The algorithms of a job's flow groups."""
    return {f.get("algorithm") for f in job.scenario.get("flows", [])}


def execute(jobs: List[Job], workers: Optional[int] = None, out: Optional[str] = None,
            controllers: Optional[Dict[str, type]] = None, label: str = "evaluate",
            progress: Optional[bool] = None, memo: Optional[Dict[str, Any]] = None,
            dask: Any = None, log: Optional[Callable[[str], None]] = None,
            stats: Optional[Dict[str, int]] = None) -> List[Dict[str, Any]]:
    """Run ``jobs`` and return their reductions in order (the single execution adapter).

    Args:
        workers: local threads (default: every core), or LocalCluster workers with ``dask="local"``.
        out: cache directory (``out/runs/<key>.json``); cached runs are not run again.
        controllers: Python controllers (on worker processes when they can be loaded there, else
            one at a time on this thread; not with ``dask``).
        progress: a progress bar on stderr (default: when stderr is a terminal).
        memo: an in-memory cache shared between calls (key -> reduction).
        dask: ``"local"``, a scheduler address or a ``distributed.Client`` (see :mod:`tcpfriendly.sweep`).
        stats: if given, filled with ``listed`` (jobs), ``distinct`` (runs after merging
            identical jobs), ``cached`` (found in ``memo`` or ``out``) and ``ran``.
    """
    from ..errors import ScenarioError
    from ..sweep.core import check_workers
    from ..sweep.executors import Collector, ThreadExecutor, default_workers
    from ..sweep.runner import Progress, dask_session

    check_workers(workers)
    if controllers and dask is not None:
        raise ScenarioError("dask: Python controllers run on this machine (worker processes load them from their file); evaluate them without --dask")
    if log is None:
        def log(message: str) -> None:
            sys.stderr.write(message + "\n")
            sys.stderr.flush()
    with dask_session(dask, workers) as reached:  # an address is reached here, before the
        # cache is made (a bad one: a SweepError naming dask)
        keys, unsourced = _job_keys(jobs, controllers)
        cache = RunCache(out) if out else None
        found: Dict[str, Dict[str, Any]] = {}
        todo: Dict[str, _Run] = {}
        for j, k in zip(jobs, keys):
            if k in found or k in todo:
                continue  # identical jobs (the TCP reference of the same point) run once
            if memo is not None and k in memo:
                found[k] = memo[k]
                continue
            value = cache.load(k) if cache and k not in unsourced else None
            if value is not None:
                found[k] = value
                continue
            todo[k] = _Run(k, j)
        order = sorted(todo.values(), key=lambda r: -_cost(r.job))  # stable: ties keep plan order
        if stats is not None:
            stats.update(listed=len(jobs), distinct=len(found) + len(todo), cached=len(found), ran=0)
        if progress is None:
            progress = hasattr(sys.stderr, "isatty") and sys.stderr.isatty()
        bar = Progress(len(order), enabled=bool(progress), label=label)

        class _Store(Collector):
            def ok(self, run, value) -> None:  # on the calling thread, as each run finishes
                found[run.key] = value
                if memo is not None:
                    memo[run.key] = value
                if cache is not None and run.key not in unsourced:
                    cache.save(run.key, value)
                super().ok(run, value)

        collector = _Store(None, bar, None)
        interrupted = False
        if order:
            if controllers:
                plan = _controller_executors(order, controllers, workers or default_workers(), log)
            elif dask is not None:
                from ..sweep.dask_executor import DaskExecutor
                plan = [(DaskExecutor(reached, workers, task=_run_task), order)]
            else:
                plan = [(ThreadExecutor(workers or default_workers(), log, _Task()), order)]
            try:
                for executor, runs in plan:
                    if runs and not interrupted:
                        interrupted = executor.run(runs, collector)
            finally:
                bar.close()
    if stats is not None:
        stats["ran"] = len(collector.tables)
    if interrupted:
        raise EvaluationInterrupted(sum(1 for k in keys if k in found), len(set(keys)), out)
    if collector.failures:
        run, message = collector.failures[0]
        more = len(collector.failures) - 1
        raise EvaluationFailed(f"a simulation failed ({run.job.scenario.get('flows', [{}])[0].get('algorithm')}, "
                               f"seed {run.seed}): {message}" + (f" (and {more} more)" if more else ""))
    return [found[k] for k in keys]

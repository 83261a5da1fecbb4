"""``evaluate(alg, ...)``: run the evaluation's experiments for one algorithm, grade it."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ..metrics import dynamics as dyn
from ..metrics.transients import censored_mean
from ..errors import ScenarioError, ScenarioTypeError, path_arg
from ..outfiles import claim_shared
from . import grades as G
from ..sweep.core import MAX_RUNS, check_simulator
from .runner import Job, execute
from .scenarios import EVALUATION, Experiment, algorithm_fields, derived, fill, load_experiment

__all__ = ["Evaluation", "evaluate", "evaluate_many", "check_algorithm"]

#: Time-series interval and reducer of each experiment.
_RUN = {
    "tsao2007/s1-nonperiodic": (None, "single_flow"),
    "tsao2007/s2-low-multiplexing": (None, "s2"),
    "tsao2007/s3-two-state": (0.5, "series"),
    "tsao2007/s4-bursty": (0.5, "series"),
    "jin2001/impulse-response": (0.1, "impulse"),
    "sastry2005/trough": (None, "trough"),  # the scenario sets its own interval
}


@dataclass
class Evaluation:
    """The outcome of :func:`evaluate`: grades with the numbers behind them."""
    algorithm: str
    params: Dict[str, Any]
    quick: bool
    grades: Dict[str, str]
    numbers: Dict[str, Any]
    metrics: Dict[str, Any]
    thresholds: Dict[str, Any]
    assumptions: Dict[str, Any]
    seeds: Dict[str, int]
    wall_s: float = 0.0
    raw: Dict[str, Any] = field(default_factory=dict)
    #: the batch this evaluation ran in (``evaluate_many``): ``schemes``, and the runs
    #: ``listed``, ``distinct``, ``cached`` (found in the cache) and ``ran``; ``wall_s`` is the batch's
    runs: Dict[str, int] = field(default_factory=dict)
    #: what ran the simulations (:data:`tcpfriendly.sweep.core.SIMULATORS`)
    simulator: str = "tcpf"
    #: the experiments the simulator could not run, each with the reason (ns-2: the
    #: exporter's, naming what it cannot express); they have no grades, numbers or metrics
    not_run: Dict[str, str] = field(default_factory=dict)
    #: for a Python controller, ``NAME=WHERE:CLASS`` as ``--controller`` takes it
    #: (:func:`tcpfriendly.controller.origin`; None if it has no file or module to load)
    controller: Optional[str] = None

    def to_json(self) -> Dict[str, Any]:
        """The evaluation as strict JSON: a number that was not measured (NaN, e.g. the loss
        events of a rate-based flow, or an interval of one sample) is ``null``."""
        return _finite({
            "algorithm": self.algorithm, "params": self.params, "quick": self.quick,
            "grades": self.grades, "numbers": self.numbers, "metrics": self.metrics,
            "thresholds": self.thresholds, "assumptions": self.assumptions,
            "seeds": self.seeds, "wall_s": round(self.wall_s, 2), "runs": self.runs,
            **({"simulator": self.simulator, "not_run": self.not_run} if self.simulator != "tcpf" else {}),
            **({"controller": self.controller} if self.controller else {}),
        })

    def row(self) -> List[str]:
        """The Table-4 row: grades in tsao2007's column order."""
        return [self.grades.get(c, "-") for c in G.COLUMNS]

    def _repr_html_(self) -> str:
        """Jupyter display: the verdict row with the numbers behind the grades, tsao2007's row
        beside it, and the first figure (as ``tcpf report`` shows an evaluation)."""
        from ..report.evaluate import evaluation_html

        return evaluation_html(self)


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None (JSON has no NaN or Infinity)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, (str, bytes)):  # numpy scalars
        try:
            return _finite(value.item())
        except (TypeError, ValueError):
            return value
    return value


def _registry() -> Dict[str, Dict[str, Any]]:
    from ..scenario import algorithms
    return {a["name"]: a for a in algorithms()}


def check_algorithm(alg: str, params: Optional[Mapping[str, Any]] = None,
                    controllers: Optional[Mapping[str, type]] = None) -> Tuple[Dict[str, Any], Optional[str]]:
    """Validate the algorithm and its parameters with the engine; return the canonical params
    (β as the fraction removed, every default filled) and the family. Raises ScenarioError
    naming the bad field."""
    if not isinstance(alg, str) or not alg:
        raise ScenarioError(f"algorithm: must be a non-empty name, got {alg!r}")
    if params is not None and not isinstance(params, Mapping):
        raise ScenarioTypeError(f"params: must be a dict {{name: value}}, got {type(params).__name__}",
                                field="params")
    reg = _registry()
    controllers = dict(controllers or {})
    if alg not in reg and alg not in controllers:
        raise ScenarioError(f"algorithm: unknown algorithm {alg!r} (see `tcpf algorithms`"
                            + (f"; controllers given: {', '.join(controllers)}" if controllers else "") + ")")
    if alg in ("cbr", "pareto"):
        raise ScenarioError(f"algorithm: {alg!r} is a UDP source, not a congestion control")
    family = reg.get(alg, {}).get("family")
    sc = {"duration": 1, "bottleneck": {"rate": "10Mbps", "delay": "10ms"},
          "flows": [dict(algorithm=alg, **({"params": dict(params)} if params else {}))]}
    from ..scenario import Scenario
    if controllers:
        from ..results import _check_controllers
        _check_controllers(Scenario(sc), controllers)
    normalized = Scenario(sc).normalized(controllers)
    canon = normalized["flows"][0].get("params") or {}
    return canon, family


def _mean(xs) -> float:
    a = [x for x in xs if isinstance(x, (int, float)) and math.isfinite(x)]
    return float(np.mean(a)) if a else float("nan")


def _experiment_jobs(exp: Experiment, alg_fields: Dict[str, Any], quick: bool, seeds: int,
                     base_seed: int, overrides: Mapping[str, Any],
                     simulator: str = "tcpf") -> List[Tuple[Dict[str, Any], str, Job]]:
    """(point, role, job) for every run of ``exp``: role "x" (the algorithm under test) and,
    for paired experiments, "tcp" (the same scenario with TCP SACK, the same seed)."""
    values = exp.values(quick, overrides)
    interval, reducer = _RUN[exp.key]
    runs = exp.meta.get("runs", "single")
    tcp_fields = algorithm_fields("tcp", None, "aimd", "sack")
    refs = exp.references
    out = []
    for point in exp.grid(quick):
        for s in range(seeds):
            seed = base_seed + s
            roles = [("x", alg_fields)] + ([("tcp", tcp_fields)] if runs == "paired" else [])
            if exp.meta.get("order") == "both":
                roles.append(("x_swapped", alg_fields))
            # stationary reference runs (one regime held for the whole run): the new steady
            # level each transient is measured against
            for name in refs:
                roles.append((f"x@{name}", alg_fields))
                if runs == "paired":
                    roles.append((f"tcp@{name}", tcp_fields))
            for role, af in roles:
                base = dict(values, **point)
                reducer_of_role = reducer
                if "@" in role:
                    ref = refs[role.split("@", 1)[1]]
                    base.update({k: values[src] for k, src in ref["set"].items()})
                    reducer_of_role = "steady_level"
                v = derived(exp, base, seed)
                v.update(af)
                if (role == "tcp" or role.startswith("tcp@")) and "recovery" in values:
                    v["recovery"] = "sack" if exp.paper == "tsao2007" else values["recovery"]
                scen = fill(exp.template, v)
                ctx = {k: v[k] for k in values if isinstance(v[k], (int, float, str)) and not isinstance(v[k], bool)}
                ctx = {k: (float(x) if isinstance(x, (int, float)) else x) for k, x in ctx.items()}
                ctx["x_group"] = 0
                if role == "x_swapped":
                    # the same run with the two flow groups listed in the other order: the
                    # engine breaks ties by flow order, and DropTail phase effects amplify it
                    scen["flows"][0], scen["flows"][1] = scen["flows"][1], scen["flows"][0]
                    ctx["x_group"] = 1
                out.append((point, role, Job(scen, seed, reducer_of_role, ctx, interval, simulator)))
    return out


class _Plan:
    """One algorithm's evaluation before it runs: its jobs and how to grade their results;
    ``not_run``: the experiments the simulator cannot run, with the reason (no jobs)."""

    def __init__(self, alg, canon, quick, seeds, th, per_exp, jobs, simulator="tcpf", not_run=None):
        self.alg, self.canon, self.quick, self.seeds, self.th = alg, canon, quick, seeds, th
        self.per_exp, self.jobs = per_exp, jobs
        self.simulator, self.not_run = simulator, dict(not_run or {})


def _ns2_refusal(jobs: List[Tuple[Dict[str, Any], str, Job]]) -> Optional[str]:
    """Why ns-2 cannot run these jobs (the exporter's :class:`tcpfriendly.ns2.Ns2Unsupported`,
    naming the element: a scheme without an ns-2 agent, a loss model ns-2 lacks), or None. Each
    distinct scenario is exported once, as its run would be (nothing runs)."""
    import json

    from ..ns2 import Ns2Unsupported, export_tcl
    from ..scenario import Scenario

    from .runner import NS2_LACKS

    seen = set()
    for _, _, job in jobs:
        if job.reducer in NS2_LACKS:
            return NS2_LACKS[job.reducer]
        blob = json.dumps([job.scenario, job.timeseries], sort_keys=True)
        if blob in seen:
            continue
        seen.add(blob)
        try:
            export_tcl(Scenario(job.scenario).expand(job.seed), series_interval_s=job.timeseries)
        except Ns2Unsupported as exc:
            return str(exc)
    return None


def _chosen(o: str, paper: str, eid: str) -> bool:
    """``--only``'s match: the experiment's key, a prefix of its id (s1, ...) or its paper."""
    return o == f"{paper}/{eid}" or eid.startswith(o) or o == paper


def _plan(alg: str, params: Optional[Mapping[str, Any]], controllers: Optional[Mapping[str, type]],
          quick: bool, seeds: Optional[int], thresholds: Optional[str],
          assumptions: Optional[Mapping[str, Mapping[str, Any]]], only: Optional[Sequence[str]],
          base_seed: int, simulator: str = "tcpf") -> _Plan:
    """Validate everything and list the jobs (nothing runs; bad input raises ScenarioError)."""
    th = G.load_thresholds(thresholds)
    canon, family = check_algorithm(alg, params, controllers)
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise ScenarioError(f"seeds: must be a positive integer, got {seeds!r}")
    af = algorithm_fields(alg, params, family, None)
    overrides = dict(assumptions or {})
    for o in only or ():
        if not isinstance(o, str) or not o or not any(_chosen(o, p, e) for p, e in EVALUATION):
            known = ", ".join(["s1", "s2", "s3", "s4", "jin2001", "sastry2005"]
                              + [f"{p}/{e}" for p, e in EVALUATION])
            raise ScenarioError(f"only: no experiment {o!r} (known: {known})", field="only")
    selected = []
    for paper, eid in EVALUATION:
        if only and not any(_chosen(o, paper, eid) for o in only):
            continue
        selected.append(load_experiment(paper, eid))
    for k in overrides:
        if k not in {e.key for e in selected}:
            raise ScenarioError(f"assumptions: unknown experiment {k!r}")
    all_jobs: List[Job] = []
    per_exp = {}
    not_run: Dict[str, str] = {}
    planned = 0
    for exp in selected:
        # points x seeds, counted before any job is built: a huge --seeds is refused, not listed
        planned += len(exp.grid(quick)) * exp.seeds(quick, seeds)
        if planned > MAX_RUNS:
            raise ScenarioError(f"seeds: the evaluation would have more than {MAX_RUNS} runs of "
                                f"the algorithm (points x seeds, with {exp.seeds(quick, seeds)} "
                                f"seeds), over the limit of {MAX_RUNS}: use fewer seeds",
                                field="seeds")
        vals = exp.values(quick, overrides.get(exp.key))
        f = dict(af, recovery=None if family == "rate-based" else vals.get("recovery"))
        jobs = _experiment_jobs(exp, f, quick, exp.seeds(quick, seeds), base_seed, overrides.get(exp.key, {}),
                                simulator)
        why = _ns2_refusal(jobs) if simulator == "ns2" else None
        if why is not None:  # the experiment is not run; its grades are missing, with the reason
            not_run[exp.key] = why
            jobs = []
        per_exp[exp.key] = (exp, vals, len(all_jobs), len(jobs), jobs)
        all_jobs.extend(j for _, _, j in jobs)
    return _Plan(alg, canon, quick, seeds, th, per_exp, all_jobs, simulator, not_run)


def _finish(plan: _Plan, results: List[Dict[str, Any]], wall_s: float) -> Evaluation:
    """Aggregate and grade the reductions of ``plan``'s jobs (in plan order)."""
    grades: Dict[str, str] = {}
    numbers: Dict[str, Any] = {}
    metrics: Dict[str, Any] = {}
    raw: Dict[str, Any] = {}
    used_assumptions: Dict[str, Any] = {}
    seeds_used: Dict[str, int] = {}
    for key, (exp, vals, start, n, jobs) in plan.per_exp.items():
        reds = results[start:start + n]
        rows = [(p, role, j, r) for (p, role, j), r in zip(jobs, reds)]
        used_assumptions[key] = {name: {"value": vals[name], "doc": a["doc"], "source": a.get("source", "")}
                                 for name, a in exp.assumptions.items()}
        if key in plan.not_run:
            continue
        seeds_used[key] = exp.seeds(plan.quick, plan.seeds)
        fn = _AGGREGATE[key]
        m, g, num, rw = fn(exp, vals, rows, plan.th)
        metrics[key] = m
        grades.update(g)
        numbers.update(num)
        raw[key] = rw
    return Evaluation(algorithm=plan.alg, params=plan.canon, quick=plan.quick, grades=grades,
                      numbers=numbers, metrics=metrics, thresholds=plan.th,
                      assumptions=used_assumptions, seeds=seeds_used, wall_s=wall_s, raw=raw,
                      simulator=plan.simulator, not_run=dict(plan.not_run))


def evaluate(alg: str, params: Optional[Mapping[str, Any]] = None, *,
             controllers: Optional[Mapping[str, type]] = None, quick: bool = False,
             seeds: Optional[int] = None, out: Optional[str] = None, workers: Optional[int] = None,
             thresholds: Optional[str] = None, assumptions: Optional[Mapping[str, Mapping[str, Any]]] = None,
             only: Optional[Sequence[str]] = None, base_seed: int = 1,
             progress: Optional[bool] = None, memo: Optional[Dict[str, Any]] = None,
             dask: Any = None, simulator: str = "tcpf") -> Evaluation:
    """Run tsao2007 S1-S4, jin2001's impulse response and sastry2005's trough test for
    ``alg`` (with ``params``) against TCP SACK and grade it.

    Args:
        alg: an algorithm of ``tcpf algorithms``, ``"formula"`` (with ``params`` holding
            ``increase``/``decrease`` or ``f``/``g``), or the name of a Python controller in
            ``controllers``.
        params: the algorithm's parameters (β = the fraction removed; ``keep=`` for the kept).
        controllers: ``{name: Controller subclass}`` for Python controllers.
        quick: fewer seeds, shorter runs and fewer axis points (each experiment's ``quick``
            values); under 2 minutes on one core for built-in algorithms.
        seeds: runs per point (default: each experiment's ``seeds`` / ``quick_seeds``).
        out: a directory for the run cache (``out/runs``) and the reports; a rerun after an
            interruption runs only what is missing.
        workers: local threads running simulations (default: all cores; Python controllers
            run on one), or the LocalCluster's workers with ``dask="local"``.
        thresholds: a thresholds TOML (default ``experiments/tsao2007/thresholds.toml``).
        assumptions: ``{"paper/experiment": {name: value}}`` overrides of named assumptions.
        only: run only these experiments (``"s1"``, ``"tsao2007/s2-low-multiplexing"``, ...).
        progress: a progress bar on stderr (default: when stderr is a terminal).
        memo: an in-memory run cache shared between calls (key -> reduction).
        dask: run on Dask: ``"local"``, a scheduler address or a ``distributed.Client``.
        simulator: ``"tcpf"`` (tcpfriendly's engine, the default) or ``"ns2"``: the same
            runs in ns-2 2.35 (the papers' simulator; each run an ``ns`` process started from
            a local thread, so not with ``dask`` nor Python ``controllers``). An experiment
            ns-2 cannot express (no agent for the scheme, no model of its loss process) is not
            run: ``Evaluation.not_run`` gives the exporter's reason and its grades are missing.
    """
    return evaluate_many([(alg, params)], controllers=controllers, quick=quick, seeds=seeds,
                         out=out, workers=workers, thresholds=thresholds, assumptions=assumptions,
                         only=only, base_seed=base_seed, progress=progress, memo=memo, dask=dask,
                         label=f"evaluate {alg}", simulator=simulator)[0]


def evaluate_many(schemes: Sequence[Tuple[str, Optional[Mapping[str, Any]]]], *,
                  controllers: Optional[Mapping[str, type]] = None, quick: bool = False,
                  seeds: Optional[int] = None, out: Optional[str] = None,
                  workers: Optional[int] = None, thresholds: Optional[str] = None,
                  assumptions: Optional[Mapping[str, Mapping[str, Any]]] = None,
                  only: Optional[Sequence[str]] = None, base_seed: int = 1,
                  progress: Optional[bool] = None, memo: Optional[Dict[str, Any]] = None,
                  dask: Any = None, label: str = "evaluate", simulator: str = "tcpf") -> List[Evaluation]:
    """:func:`evaluate` for several ``(algorithm, params)`` at once (``tcpf evaluate --all``):
    every scheme is validated first, then all runs go to the executor as one batch (no core
    idles between schemes; the TCP reference runs, identical for every scheme, run once).
    ``wall_s`` of each evaluation is the batch's wall time."""
    t0 = time.monotonic()
    check_simulator(simulator, dask)
    if simulator != "tcpf" and controllers:
        raise ScenarioError(f"controllers: Python controllers run in tcpfriendly's engine only, "
                            f"not with simulator {simulator}", field="controllers")
    if out is not None:
        out = path_arg(out, "out", "a directory path")
        # before anything runs: refuse a file, or another command's output (a `tcpf run` or
        # `tcpf sweep` directory); evaluations of any scheme share a directory (and its cache),
        # and one written before manifests existed is accepted. Nothing is written here.
        claim_shared(out, "evaluate", field="out")
    plans = [_plan(alg, prm, controllers, quick, seeds, thresholds, assumptions, only, base_seed, simulator)
             for alg, prm in schemes]
    jobs = [j for p in plans for j in p.jobs]
    stats: Dict[str, int] = {}
    results = execute(jobs, workers=workers, out=out, controllers=dict(controllers) if controllers else None,
                      label=label, progress=progress, memo=memo, dask=dask, stats=stats)
    wall = time.monotonic() - t0
    stats = dict(schemes=len(plans), **stats)
    evs, at = [], 0
    for p in plans:
        ev = _finish(p, results[at:at + len(p.jobs)], wall)
        ev.runs = stats
        if controllers and p.alg in controllers:
            from ..controller import origin
            where = origin(controllers[p.alg])
            ev.controller = f"{p.alg}={where}" if where else None
        evs.append(ev)
        at += len(p.jobs)
    return evs


# ----- aggregation and grading per experiment ---------------------------------------------------------
def _by_point(rows, axis: str):
    pts: Dict[Any, Dict[str, list]] = {}
    for p, role, j, r in rows:
        pts.setdefault(p.get(axis), {}).setdefault(role, []).append((j.seed, r))
    return pts


def _agg_s1(exp, vals, rows, th):
    pts = _by_point(rows, "cv")
    table = []
    for cv in sorted(pts):
        x = dict(pts[cv]["x"])
        tcp = dict(pts[cv]["tcp"])
        ratios = [dyn.normalised(x[s]["goodput_bps"], tcp[s]["goodput_bps"]) for s in x]
        table.append({"cv": cv, "norm_identical": _mean(ratios),
                      "x_goodput_bps": _mean([x[s]["goodput_bps"] for s in x]),
                      "tcp_goodput_bps": _mean([tcp[s]["goodput_bps"] for s in tcp]),
                      "cross_seed_cov": dyn.cov(ratios) if len(ratios) > 1 else float("nan")})
    worst = G.worst_ratio([r["norm_identical"] for r in table])
    most = max((r["norm_identical"] for r in table), default=float("nan"))
    eq, comp = G.grade_throughput(worst, th), G.grade_compatibility(most, th)
    return ({"points": table},
            {"S1": f"{eq}({comp})"},
            {"S1": {"equivalence": worst, "compatibility": most,
                    "rule": "X/TCP under the identical loss process; worst CV point (|ln r| max); compatibility: max r"}},
            {"points": table})


def _agg_s2(exp, vals, rows, th):
    pts = _by_point(rows, "cv_rtt")
    table = []
    for cv in sorted(pts):
        rs = [r for _, r in pts[cv]["x"]] + [r for _, r in pts[cv].get("x_swapped", [])]
        table.append({
            "cv_rtt": cv,
            "norm_same_run": _gmean([dyn.normalised(r["x_goodput_bps"], r["tcp_goodput_bps"]) for r in rs]),
            "short_rtt_loss_ratio": _gmean([dyn.normalised(r["x_short_loss_event_rate"], r["tcp_short_loss_event_rate"]) for r in rs]),
            "short_rtt_goodput_ratio": _gmean([dyn.normalised(r["x_short_goodput_bps"], r["tcp_short_goodput_bps"]) for r in rs]),
            "x_fair_share": _mean([dyn.fair_share_ratio(r["x_goodput_bps"], _rate(vals["rate"]), 2 * int(vals["n"])) for r in rs]),
            "utilization": _mean([r["utilization"] for r in rs]),
        })
    hom = next((r["norm_same_run"] for r in table if r["cv_rtt"] == 0), float("nan"))
    # tsao2007 Obs. 2 describes the heterogeneous case as an average over the CV[RTT] > 0
    # rounds ("1.5~4 times" for GAIMD and SIMD; RB schemes "meet TCP-equal share ... under
    # CV[RTT] > 0.05"): the geometric mean over the CV[RTT] > 0 points of the grid
    het = _gmean([r["norm_same_run"] for r in table if r["cv_rtt"] > 0])
    return ({"points": table},
            {"S2 hom": G.grade_throughput(hom, th), "S2 het": G.grade_throughput(het, th)},
            {"S2 hom": {"equal_share": hom, "rule": "X/TCP same run, CV[RTT] = 0"},
             "S2 het": {"equal_share": het, "rule": "X/TCP same run, geometric mean over the CV[RTT] > 0 points"}},
            {"points": table})


def _gmean(xs) -> float:
    """Geometric mean of positive finite ratios (a ratio and its inverse average to 1);
    NaN if any is not positive and finite."""
    a = [x for x in xs if isinstance(x, (int, float))]
    if not a or any(not (math.isfinite(x) and x > 0) for x in a):
        return float("nan")
    return float(math.exp(sum(math.log(x) for x in a) / len(a)))


def _rate(v) -> float:
    if isinstance(v, (int, float)):
        return float(v)
    s = str(v).strip().lower().replace(" ", "").replace("/s", "ps")
    for suf, mul in (("gbps", 1e9), ("mbps", 1e6), ("kbps", 1e3), ("bps", 1.0)):
        if s.endswith(suf):
            return float(s[: -len(suf)]) * mul
    return float(s)


def _by_seed(rows) -> Dict[str, Dict[int, Dict[str, Any]]]:
    out: Dict[str, Dict[int, Dict[str, Any]]] = {}
    for p, role, j, r in rows:
        out.setdefault(role, {})[j.seed] = r
    return out


def _transient(series: Mapping[str, Any], change: float, until: float, target: float,
               vals: Mapping[str, Any]) -> Dict[str, Any]:
    """Seconds after ``change`` until the throughput (moving average over ``average_s``) is
    within ``tol`` of ``target`` (the new steady level from the reference run), searched up to
    ``until``; the flow's loss events during that time (tsao2007 Fig. 4(c): the loss log's
    window reductions, or a rate-based flow's receiver loss events); and
    ``late_cov``, the coefficient of variation of the binned rate over the second half of the
    phase, (change + until)/2 to ``until`` (tsao2007 Fig. 4(b), Obs. 4: how much a scheme
    oscillates once it has had time to settle; defined whether or not it reached ``target``,
    since AIAD/H, "too short a history to allow a stable increase", may not; None with fewer
    than 3 bins)."""
    t = np.asarray(series["time"], dtype=float)
    x = np.asarray(series["rate_bps"], dtype=float)
    r = dyn.convergence_time(t, x, change, (change, until), float(vals["tol"]),
                             float(vals["average_s"]), target=target)
    secs = r["seconds"]
    lt = series["loss_times"]  # None: the run has no loss log (ns-2's)
    losses = (int(((np.asarray(lt, dtype=float) > change) & (np.asarray(lt, dtype=float) <= change + secs)).sum())
              if math.isfinite(secs) and lt is not None else None)
    late = x[(t > (change + until) / 2 + 1e-9) & (t <= until + 1e-9)]
    return {"seconds": secs, "losses": losses, "target_bps": target, "start_bps": r["start_level"],
            "late_cov": dyn.cov(late) if len(late) >= 3 else None}


def _agg_transients(exp, vals, rows, th, changes, up_col, down_col, rule_up, rule_down, compat):
    """Shared by S3 and S4: X and TCP (paired runs, same seed), each change measured against
    the level of the matching reference run. ``changes``: [(time, until, "up"|"down", ref)]."""
    by = _by_seed(rows)
    floor = float(vals["average_s"])
    m: Dict[str, Any] = {"per_seed": []}
    acc = {(who, d): [] for who in ("x", "tcp") for d in ("up", "down")}
    # each change's censoring bound (phase end − change): a time not reached in the phase
    bnd = {(who, d): [] for who in ("x", "tcp") for d in ("up", "down")}
    per_seed = {d: sum(1 for c in changes if c[2] == d) for d in ("up", "down")}
    loss = {(who, d): [] for who in ("x", "tcp") for d in ("up", "down")}
    late = {(who, d): [] for who in ("x", "tcp") for d in ("up", "down")}
    # the first seed's changes as measured, for the figure: each new level and the seconds
    # each flow took to come within tol of it (NaN: not within the phase)
    shown = [dict(time=c, until=u, dir=d, tol=float(vals["tol"]), average_s=float(vals["average_s"]))
             for c, u, d, _ in changes]
    first = min(by["x"])
    for seed in sorted(by.get("x", {})):
        row = {"seed": seed}
        for who in ("x", "tcp"):
            ser = by[who][seed]
            for i, (change, until, d, ref) in enumerate(changes):
                target = by[f"{who}@{ref}"][seed]["level_bps"]
                tr = _transient(ser, change, until, target, vals)
                if seed == first:
                    shown[i].update({f"{who}_target_bps": target, f"{who}_seconds": tr["seconds"]})
                acc[(who, d)].append(tr["seconds"])
                bnd[(who, d)].append(until - change)
                if tr["losses"] is not None:
                    loss[(who, d)].append(tr["losses"])
                if tr["late_cov"] is not None and math.isfinite(tr["late_cov"]):
                    late[(who, d)].append(tr["late_cov"])
                row.setdefault(f"{who}_{d}_targets_bps", []).append(round(target, 1))
        m["per_seed"].append(row)
    for d in ("up", "down"):
        xs, ts = acc[("x", d)], acc[("tcp", d)]
        m[f"{d}_seconds"] = _mean(xs) if xs and all(math.isfinite(v) for v in xs) else float("nan")
        m[f"{d}_unconverged"] = sum(1 for v in xs if not math.isfinite(v))
        m[f"tcp_{d}_seconds"] = _mean(ts) if ts and all(math.isfinite(v) for v in ts) else float("nan")
        # right-censored means (docs/evaluate.md, "Convergence time"): a change not reached
        # before its phase ended counts with its bound; a lower bound when any was
        for who, pre in (("x", ""), ("tcp", "tcp_")):
            b, k = censored_mean(acc[(who, d)], bnd[(who, d)])
            m[f"{pre}{d}_seconds_bound"], m[f"{pre}{d}_censored"] = b, k
        m[f"{d}_runs"] = len(xs)
        m[f"{d}_ratio"] = G.time_ratio(m[f"{d}_seconds"], m[f"tcp_{d}_seconds"], floor)
        m[f"{d}_loss_events"] = _mean(loss[("x", d)])
        m[f"tcp_{d}_loss_events"] = _mean(loss[("tcp", d)])
        m[f"{d}_loss_ratio"] = dyn.normalised(m[f"{d}_loss_events"], m[f"tcp_{d}_loss_events"])
        # the rate's CoV over the second half of each phase, mean over the changes and seeds
        m[f"{d}_late_cov"] = _mean(late[("x", d)])
        m[f"tcp_{d}_late_cov"] = _mean(late[("tcp", d)])
    m["x_goodput_bps"] = _mean([r["goodput_bps"] for r in by["x"].values()])
    m["tcp_goodput_bps"] = _mean([r["goodput_bps"] for r in by["tcp"].values()])
    up = G.grade_transient(m["up_ratio"], th)
    down = G.grade_transient(m["down_ratio"], th)
    grades = {up_col: f"{up}({G.O})" if compat else up,
              down_col: f"{down}({down})" if compat else down}
    def censoring(d: str) -> Dict[str, Any]:
        # x_s / tcp_s stay NaN when a change was not reached; the bound and the count make
        # them a lower bound (tcpfriendly.metrics.transients.censored_time)
        return {"x_s_bound": m[f"{d}_seconds_bound"], "x_censored": m[f"{d}_censored"],
                "tcp_s_bound": m[f"tcp_{d}_seconds_bound"], "tcp_censored": m[f"tcp_{d}_censored"],
                "runs": m[f"{d}_runs"], "runs_are": "seeds" if per_seed[d] == 1 else "steps (seeds × phases)"}

    nums = {up_col: {"time_ratio": m["up_ratio"], "x_s": m["up_seconds"], "tcp_s": m["tcp_up_seconds"],
                     **censoring("up"), "rule": rule_up},
            down_col: {"time_ratio": m["down_ratio"], "x_s": m["down_seconds"], "tcp_s": m["tcp_down_seconds"],
                       "loss_ratio": m["down_loss_ratio"], **censoring("down"), "rule": rule_down}}
    raw = {"x_series": {k: by["x"][first][k] for k in ("time", "rate_bps")},
           "tcp_series": {k: by["tcp"][first][k] for k in ("time", "rate_bps")},
           "changes": shown}
    return m, grades, nums, raw


def _agg_s3(exp, vals, rows, th):
    lo, hi, end = float(vals["low_from"]), float(vals["low_to"]), float(vals["duration"])
    changes = [(lo, hi, "up", "slow"), (hi, end, "down", "fast")]
    return _agg_transients(
        exp, vals, rows, th, changes, "S3 up", "S3 down",
        "X's time / TCP's (paired runs) to come within tol of the steady throughput of the "
        "low-loss regime (stationary reference run) after the loss rate falls; compatibility: "
        "don't care (tsao2007 Table 1) -> O",
        "the same after the loss rate rises; compatibility: as fast as TCP (same rule)", True)


def _agg_s4(exp, vals, rows, th):
    hp, dur = float(vals["half_period"]), float(vals["duration"])
    changes = []
    k = 1
    while (k + 1) * hp <= dur + 1e-9:
        # CBR steps [[0, high], [hp, low]] repeated every 2 hp: odd k, 14 -> 9 Mb/s (bandwidth
        # appears); even k, 9 -> 14 Mb/s (bandwidth disappears)
        up = k % 2 == 1
        changes.append((k * hp, (k + 1) * hp, "up" if up else "down", "free" if up else "congested"))
        k += 1
    return _agg_transients(
        exp, vals, rows, th, changes, "S4 up", "S4 down",
        "X's time / TCP's (paired runs, same CBR) to come within tol of the steady throughput "
        "of the free state (reference run, CBR held at 9 Mb/s) after the CBR drops 14 -> 9 Mb/s",
        "the same after the CBR rises 9 -> 14 Mb/s (target: reference run with the CBR held at "
        "14 Mb/s); loss_ratio: X's loss events during convergence / TCP's (Fig. 4(c))", False)


def _agg_impulse(exp, vals, rows, th):
    rs = [r for _, _, _, r in rows]
    aggr = dyn.mean_ci95([v for r in rs for v in r["aggr_samples"]])
    resp = dyn.mean_ci95([v for r in rs for v in r["resp_samples"]])
    resp_s = dyn.mean_ci95([v for r in rs for v in r["resp_seconds"]])
    m = {
        "inv_aggressiveness_rtt": aggr, "inv_responsiveness_losses": resp,
        "inv_responsiveness_s": resp_s,
        # the window's CoV after reaching steady state, every phase of every seed (Fig. 19)
        "cwnd_cov_steady": dyn.mean_ci95([v for r in rs for v in r["steady_cov"]]),
        "mean_rtt_s": _mean([r["rtt_s"] for r in rs]),
        "w_low": _mean([v for r in rs for v in r["w_low"]]),
        "w_high": _mean([v for r in rs for v in r["w_high"]]),
    }
    # jin2001 Table 5's analysis column from the tradeoff model (jin2001 Table 3), at the
    # paper's operating point (W 11 -> 22) and at ours, beside the simulated numbers
    op = exp.published.get("operating_point", {"w_before": 11, "w_after": 22})
    flow = rows[0][2].scenario["flows"][0] if rows else {}
    m["analysis_paper_point"] = _tradeoff(flow, op["w_before"], op["w_after"])
    m["analysis_our_point"] = _tradeoff(flow, m["w_low"], m["w_high"])
    m["paper_operating_point"] = {"w_before": op["w_before"], "w_after": op["w_after"]}
    return m, {}, {}, {"series": rs[0]["series"] if rs else {}}


#: scenario algorithm -> the name ``tcpf model tradeoff`` knows (jin2001 Table 3's families)
_TRADEOFF_ALG = {"tcp": "tcp", "gaimd": "aimd", "iiad": "iiad", "simd": "simd", "aiad_h": "aiad"}


def _tradeoff(flow: Mapping[str, Any], w_before: float, w_after: float) -> Optional[Dict[str, float]]:
    """``tcpf model tradeoff`` (jin2001 Table 3) for the flow's algorithm growing W -> m W
    (1/aggressiveness, RTTs) and shrinking m W -> W (1/responsiveness, loss events); None
    when the model has no such family or the point is not finite."""
    name = _TRADEOFF_ALG.get(flow.get("algorithm"))
    if name is None or not (math.isfinite(w_before) and math.isfinite(w_after) and 0 < w_before < w_after):
        return None
    beta = (flow.get("params") or {}).get("beta")
    from .. import models
    try:
        r = models.tradeoff(name, W=float(w_before), m=float(w_after) / float(w_before),
                            beta=None if name == "tcp" else beta, w_down=float(w_after))
    except Exception:  # the model rejects the point: report none rather than fail the run
        return None
    return {"inv_aggressiveness_rtt": float(r["inv_aggressiveness"]),
            "inv_responsiveness_losses": float(r["inv_responsiveness"]),
            "W": float(w_before), "m": float(w_after) / float(w_before), "model": name}


def _agg_trough(exp, vals, rows, th):
    rs = [r for _, _, _, r in rows]
    keys = ["utilization_metric", "drop_metric", "steady_utilization", "steady_drop_rate",
            "t_util_recover_s", "t_drop_recover_s", "drop_t2_ratio", "drop_peak_ratio"]
    m = {k: _mean([r[k] for r in rs]) for k in keys}
    m["ci"] = {k: dyn.mean_ci95([r[k] for r in rs]) for k in ("utilization_metric", "drop_metric")}
    return m, {}, {}, {"series": rs[0]["series"] if rs else {}}


_AGGREGATE = {
    "tsao2007/s1-nonperiodic": _agg_s1,
    "tsao2007/s2-low-multiplexing": _agg_s2,
    "tsao2007/s3-two-state": _agg_s3,
    "tsao2007/s4-bursty": _agg_s4,
    "jin2001/impulse-response": _agg_impulse,
    "sastry2005/trough": _agg_trough,
}

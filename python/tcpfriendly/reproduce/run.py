"""Computing an experiment: its inputs (model calls, sweep series, evaluations), the derived
values, and each claim's verdict."""

from __future__ import annotations

import copy
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from ..errors import ScenarioError
from .expr import NotRun, Series, Undecided, evaluate_expr, expr_names
from .rules import compare, difference, rule_text
from ..metrics.groups import mean
from ..metrics.transients import LowerBound
from .spec import INCONSISTENT, Claim, Experiment
from .tables import select_rows

__all__ = ["Options", "ClaimResult", "ExperimentResult", "Reproduction", "run_experiment",
           "INCONSISTENT"]


@dataclass
class Options:
    quick: bool = False
    seeds: Optional[int] = None
    out: Optional[str] = None
    workers: Optional[int] = None
    dask: Any = None
    progress: Optional[bool] = None
    quiet: bool = False
    memo: Optional[Dict[str, Any]] = None   # tcpf evaluate's in-memory run cache (no ``out``)
    simulator: str = "tcpf"   # "ns2": the sweeps run in ns-2 (tcpfriendly.sweep.SIMULATORS)


#: How reports name a simulator of :data:`tcpfriendly.sweep.core.SIMULATORS`.
SIMULATOR_NAMES = {"tcpf": "tcpfriendly", "ns2": "ns-2"}


@dataclass
class ClaimResult:
    claim: Claim
    ours: Any
    matched: bool
    why: str
    # why the claim is not judged: its inputs include runs the simulator could not run (ns-2
    # cannot express every scenario); None for a judged claim
    unavailable: Optional[str] = None
    simulator: str = "tcpf"   # what ran the claim's simulations (Options.simulator)

    @property
    def censored(self) -> bool:
        """Whether our value is a censored time or an order the censoring leaves undecided
        (docs/evaluate.md, "Convergence time"): the verdict then says so."""
        return isinstance(self.ours, (LowerBound, Undecided))

    @property
    def verdict(self) -> str:
        if self.unavailable is not None:
            return f"not run: {self.unavailable}"
        if self.matched:
            return f"matched ({self.why})" if self.censored else "matched"
        if self.claim.inconsistent:
            return f"{INCONSISTENT}: {self.claim.inconsistent}"
        if self.simulator != "tcpf":  # the recorded reasons are about tcpfriendly's runs
            return f"differs in {SIMULATOR_NAMES.get(self.simulator, self.simulator)}" + (
                f": {self.why}" if self.censored else "")
        return ("differs: " + (f"{self.why}; " if self.censored else "")
                + (self.claim.reason or 'no hypothesis recorded yet'))

    def to_json(self) -> Dict[str, Any]:
        c = self.claim
        return {"claim": c.claim, "where": c.where, "quote": c.quote, "paper_value": c.value,
                "our_value": _plain(self.ours), "rule": dict(c.rule), "rule_text": rule_text(c.rule),
                "difference": difference(c.value, self.ours), "matched": self.matched,
                "verdict": self.verdict, **({"unavailable": self.unavailable}
                                            if self.unavailable is not None else {})}


@dataclass
class ExperimentResult:
    experiment: Experiment
    claims: List[ClaimResult]
    names: Dict[str, Any]
    quick: bool
    seeds: Optional[int]
    wall_s: float
    runs: Dict[str, int] = field(default_factory=dict)
    extra: Dict[str, Any] = field(default_factory=dict)
    flows: Any = None   # the sweep's per-flow table (per_flow = true), for the figure; not in JSON
    simulator: str = "tcpf"   # what ran the sweeps (Options.simulator)

    @property
    def matched(self) -> int:
        return sum(1 for c in self.claims if c.matched)

    @property
    def judged(self) -> int:
        """Claims judged (all but those not run: in ns-2, runs or metrics it cannot give)."""
        return sum(1 for c in self.claims if c.unavailable is None)

    def tally(self) -> str:
        """"matched/judged", and how many were not run when some were."""
        off = len(self.claims) - self.judged
        return f"{self.matched}/{self.judged}" + (f" ({off} not run)" if off else "")

    def to_json(self) -> Dict[str, Any]:
        ex = self.experiment
        return {"paper": ex.paper, "experiment": ex.id, "title": ex.title, "source": ex.source,
                "kind": ex.kind, "quick": self.quick, "seeds": self.seeds,
                **({"simulator": self.simulator} if self.simulator != "tcpf" else {}),
                "wall_s": round(self.wall_s, 2), "runs": self.runs,
                "assumptions": {k: {"value": v.get("quick" if self.quick and "quick" in v else "value"),
                                    "source": v.get("source", ""), "doc": v.get("doc", "")}
                                for k, v in ex.assumptions.items()},
                "claims": [c.to_json() for c in self.claims], **self.extra}

    def _repr_html_(self) -> str:
        """Jupyter display: the paper-vs-ours table (✓ matched / ✗ differs and why) and the
        experiment's figure, as ``tcpf report`` shows a reproduction."""
        from ..report.reproduce import experiment_display

        return experiment_display(self)


class Reproduction(list):
    """What :func:`tcpfriendly.reproduce.reproduce` returns: a list of :class:`ExperimentResult`
    (in run order) that Jupyter displays as, per paper, claims matched / total and each
    experiment's paper-vs-ours table and figure."""

    def _repr_html_(self) -> str:
        from ..report.reproduce import reproduction_display

        return reproduction_display(self)


def _plain(v: Any) -> Any:
    if isinstance(v, LowerBound):   # the bound; the verdict says it is one
        return float(v)
    if isinstance(v, Undecided):
        return None
    if isinstance(v, Series):
        return {str(k): _plain(x) for k, x in sorted(v.items())}
    if isinstance(v, float) and not math.isfinite(v):
        return None
    if isinstance(v, (bool, int, float, str)) or v is None:
        return v
    if isinstance(v, Mapping):
        return {str(k): _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    return str(v)


def _get(result: Mapping[str, Any], path: str, where: str) -> Any:
    cur: Any = result
    for part in path.split("."):
        if isinstance(cur, Mapping) and part in cur:
            cur = cur[part]
        elif isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]  # one flow's array of a per-flow list ("series.windows.0")
        else:
            raise ScenarioError(f"{where}: the model result has no {path!r}", field=where)
    return cur


# ----- analytic inputs -------------------------------------------------------------------------
def _fill(v: Any, names: Mapping[str, Any], where: str) -> Any:
    """A string "${name}" takes the assumption's value."""
    if isinstance(v, str) and v.startswith("${") and v.endswith("}"):
        key = v[2:-1]
        if key not in names:
            raise ScenarioError(f"{where}: no assumption {key!r} for {v!r}", field=where)
        return names[key]
    return v


def _model_input(name: str, spec: Mapping[str, Any], quick: bool, where: str,
                 names: Mapping[str, Any]) -> Any:
    from .. import models

    model = spec["model"]
    args = dict(spec.get("args") or {})
    if quick:
        args.update(spec.get("quick_args") or {})
    args = {k: _fill(v, names, where) for k, v in args.items()}
    over = spec.get("over")
    call = lambda a: models.call(model, **a)  # noqa: E731
    if over:
        if not isinstance(over, Mapping) or len(over) != 1:
            raise ScenarioError(f"{where}.over: one parameter = [values]", field=where)
        (param, values), = over.items()
        fld = spec.get("field")
        if not fld:
            raise ScenarioError(f"{where}.field: needed with over", field=where)
        return Series({float(v): float(_get(call({**args, param: v}), fld, where)) for v in values})
    result = call(args)
    if "x" in spec and "y" in spec:  # a curve the model returns as two arrays
        xs, ys = _get(result, spec["x"], where), _get(result, spec["y"], where)
        return Series({float(x): float(y) for x, y in zip(xs, ys)})
    if "y" in spec:  # one array: a curve over its index 0, 1, ... (a round, a step)
        return Series({float(i): float(y) for i, y in enumerate(_get(result, spec["y"], where))})
    if "field" in spec:
        return _get(result, spec["field"], where)
    return result


def _algorithm_input(name: str, where: str) -> Dict[str, Any]:
    """A registered controller's description (`tcpf algorithms NAME`): name, family, source,
    params and taxonomy (tsao2007 Table 3's four aspects)."""
    from ..scenario import algorithms

    found = {a["name"]: a for a in algorithms()}
    if name not in found:
        raise ScenarioError(f"{where}.algorithm: no algorithm {name!r} (allowed: {', '.join(sorted(found))})",
                            field=where)
    return found[name]


# ----- sweep inputs ----------------------------------------------------------------------------
def _sweep_spec(ex: Experiment, opts: Options, path: str) -> Dict[str, Any]:
    from ..scenario import read_toml_file
    spec = read_toml_file(path, "sweep file")
    if opts.quick:
        q = ex.quick
        if "set" in q:
            spec["set"] = {**(spec.get("set") or {}), **q["set"]}
        if "axes" in q:
            spec["axes"] = {**(spec.get("axes") or {}), **q["axes"]}
        if "zip" in q:
            spec["zip"] = q["zip"]
        spec["seeds"] = ex.quick_seeds
    else:
        spec["seeds"] = ex.seeds
    if opts.seeds is not None:
        spec["seeds"] = opts.seeds
    return spec


# How ``per_run`` reduces the selected rows of one run (its flows, with ``table = "flows"``)
# to one number before the mean over runs. A spread needs two flows: NaN for fewer.
PER_RUN = ("mean", "cov", "jain")


def _per_run_fn(name: Any, where: str):
    from .. import metrics

    if name not in PER_RUN:
        raise ScenarioError(f"{where}.per_run: must be one of {', '.join(PER_RUN)}, got {name!r}",
                            field=where)
    fn = getattr(metrics, name)
    if name == "mean":
        return fn
    return lambda xs: fn(xs) if sum(1 for a in xs if a is not None and not math.isnan(float(a))) >= 2 \
        else float("nan")


def _sweep_input(table, spec: Mapping[str, Any], where: str, flows=None) -> Any:
    """A sweep input: the rows of the sweep table (``table = "groups"``, the default) or of
    its per-flow table (``table = "flows"``: one row per run x flow, the sweep's spec sets
    ``per_flow = true``) that match ``where`` and ``group``; ``metric`` reduced per value of
    ``x`` (a curve) or over all of them (one number): the mean over the rows, or with
    ``per_run`` (mean, cov, jain) that reduction over each run's rows (e.g. the CoV of
    throughput across a group's flows), then the mean over the runs (seeds)."""
    which = spec.get("table", "groups")
    if which not in ("groups", "flows"):
        raise ScenarioError(f"{where}.table: must be groups or flows, got {which!r}", field=where)
    if which == "flows":
        if flows is None:
            raise ScenarioError(f"{where}.table: the sweep has no per-flow table (set per_flow = "
                                "true in its sweep spec)", field=where)
        table = flows
    per_run = _per_run_fn(spec["per_run"], where) if "per_run" in spec else None
    rows = select_rows(table, spec.get("where") or {}, where, which)
    if "group" in spec:
        rows = rows[rows["group"] == int(spec["group"])]
    metric = spec["metric"]
    if metric not in rows.columns:
        raise ScenarioError(f"{where}.metric: no column {metric!r} in the sweep's {which} table",
                            field=where)
    x = spec.get("x")

    def point(part) -> float:   # the mean of the known values (metrics.mean: None, NaN left out)
        if per_run is None:
            return mean(part[metric])
        return mean([per_run([float(a) for a in run[metric] if a is not None])
                     for _, run in part.groupby("run", sort=True)])

    if not x:
        return point(rows)
    out = Series()
    for xv, part in rows.groupby(x, sort=True):
        out[float(xv)] = point(part)
    return out


def _failed_in(table, spec: Mapping[str, Any], where: str) -> Optional[str]:
    """Why a sweep input is incomplete: the runs among those it selects (``where``, any group)
    that failed, with the first message; None when none did. Only a sweep run in ns-2 keeps
    failed runs (a point ns-2 cannot express); tcpfriendly's stop the experiment."""
    if table is None or "status" not in table.columns:
        return None
    # the groups table's rows of the input's runs (a flows-table input may also select by a
    # column of its own, e.g. the flow)
    rows = select_rows(table, {k: v for k, v in (spec.get("where") or {}).items()
                               if k in table.columns}, where)
    bad = rows[rows["status"] != "ok"]
    if bad.empty:
        return None
    runs = rows[["point", "seed"]].drop_duplicates() if "point" in rows.columns else rows
    failed = bad[["point", "seed"]].drop_duplicates() if "point" in bad.columns else bad
    return (f"{len(failed)} of the {len(runs)} runs it needs failed: "
            + " ".join(str(bad["error"].iloc[0]).split()))


def _unreported(table, spec: Mapping[str, Any], where: str, simulator: str) -> Optional[str]:
    """With another simulator than tcpfriendly's: why a sweep input has no value at all, when
    none of the (successful) runs it selects reports its metric (ns-2's runs have no time
    series for rate-based flows, nor some of the engine's counters); None otherwise."""
    rows = select_rows(table, spec.get("where") or {}, where)
    if "status" in rows.columns:
        rows = rows[rows["status"] == "ok"]
    if "group" in spec:
        rows = rows[rows["group"] == int(spec["group"])]
    metric = spec.get("metric")
    if rows.empty or metric not in rows.columns:
        return None
    if any(v is not None and not (isinstance(v, float) and math.isnan(v)) for v in rows[metric]):
        return None
    return (f"{SIMULATOR_NAMES.get(simulator, simulator)} reports no {metric} (a metric from the "
            "engine's time series or counters)")


def _unavailable_in(text: str, unavailable: Mapping[str, str]) -> Optional[str]:
    return next((unavailable[n] for n in expr_names(text) if n in unavailable), None)


def _run_sweep(ex: Experiment, opts: Options):
    """Run the experiment's sweep (or sweeps: ``sweep = {label = "file"}``, their tables
    concatenated with a ``sweep`` column holding the label). Returns (table, flows, runs,
    seeds): flows the per-flow tables of the sweeps whose spec sets ``per_flow = true``
    (concatenated likewise), None when none does."""
    import pandas as pd

    from ..sweep import Sweep, run_sweep

    specs = ex.sweep if isinstance(ex.sweep, dict) else {"": ex.sweep}
    tables, flow_tables, runs, seeds = [], [], {"total": 0, "cached": 0, "ran": 0}, None
    for label, path in specs.items():
        spec = _sweep_spec(ex, opts, path)
        sw = Sweep.from_dict(spec, os.path.dirname(os.path.abspath(path)))
        sw.simulator = opts.simulator
        name = ex.id + (f"-{label}" if label else "") + ("-quick" if opts.quick else "") \
            + ("" if opts.simulator == "tcpf" else f"-{opts.simulator}")
        out = os.path.join(opts.out, "runs", ex.paper, name) if opts.out else None
        res = run_sweep(sw, out, workers=opts.workers, dask=opts.dask, progress=opts.progress,
                        quiet=opts.quiet)
        # in ns-2, a point it cannot express fails alone: the claims that need it are not run
        if res.failures and opts.simulator == "tcpf":
            raise RuntimeError(f"{ex.name}: {len(res.failures)} run(s) failed: {res.failure_label(0)}")
        t = res.table.copy()
        f = res.flows.copy() if res.flows is not None else None
        if label:
            t["sweep"] = label
            if f is not None:
                f["sweep"] = label
        tables.append(t)
        if f is not None:
            flow_tables.append(f)
        runs["total"] += res.total
        runs["cached"] += res.cached
        runs["ran"] += res.ran
        seeds = len(sw.seeds)
    table = tables[0] if len(tables) == 1 else pd.concat(tables, ignore_index=True)
    flows = (None if not flow_tables else flow_tables[0] if len(flow_tables) == 1
             else pd.concat(flow_tables, ignore_index=True))
    return table, flows, runs, seeds


# ----- one experiment --------------------------------------------------------------------------
def run_experiment(ex: Experiment, opts: Options) -> ExperimentResult:
    t0 = time.monotonic()
    names: Dict[str, Any] = {}
    for k, a in ex.assumptions.items():
        names[k] = a.get("quick", a.get("value")) if opts.quick else a.get("value")
    runs: Dict[str, int] = {}
    seeds: Optional[int] = None
    extra: Dict[str, Any] = {}
    flows = None
    unavailable: Dict[str, str] = {}   # inputs built from failed runs (ns-2), and why
    if ex.kind == "sweep":
        table, flows, runs, seeds = _run_sweep(ex, opts)
    elif ex.kind == "evaluate":
        from .evaluated import run_evaluations
        names_ev, extra, seeds = run_evaluations(ex, opts)
        names.update(names_ev)
        table = None
    else:
        table = None
    for name, spec in ex.inputs.items():
        where = f"{ex.name}: inputs.{name}"
        if not isinstance(spec, Mapping):
            raise ScenarioError(f"{where}: must be a table", field=where)
        if "model" in spec:
            names[name] = _model_input(name, spec, opts.quick, where, names)
        elif "expr" in spec:
            why = _unavailable_in(spec["expr"], unavailable)
            if why is None:
                names[name] = evaluate_expr(str(spec["expr"]), names, where)
            else:
                unavailable[name] = why
                names[name] = _partial(str(spec["expr"]), names, where)
        elif "algorithm" in spec:
            names[name] = _algorithm_input(str(spec["algorithm"]), where)
        elif "metric" in spec:
            if table is None:
                raise ScenarioError(f"{where}: a sweep metric in a {ex.kind} experiment", field=where)
            names[name] = _sweep_input(table, spec, where, flows)
            if opts.simulator != "tcpf":  # tcpfriendly's failed runs stop the experiment
                why = _failed_in(table, spec, where) or _unreported(
                    flows if spec.get("table") == "flows" else table, spec, where, opts.simulator)
                if why is not None:
                    unavailable[name] = why
        else:
            raise ScenarioError(f"{where}: needs model, metric, expr or algorithm", field=where)
    results = []
    for i, c in enumerate(ex.claims):
        if opts.quick and not c.quick:
            continue
        missing = _unavailable_in(c.ours, unavailable)
        if missing is not None:
            results.append(ClaimResult(c, _partial(c.ours, names, f"{ex.name}: values[{i}].ours"),
                                       False, "", missing, opts.simulator))
            continue
        ours = evaluate_expr(c.ours, names, f"{ex.name}: values[{i}].ours")
        if isinstance(ours, NotRun):  # a part of an evaluation the simulator could not run
            results.append(ClaimResult(c, None, False, "", ours.reason, opts.simulator))
            continue
        if isinstance(ours, (int, float)) and not isinstance(ours, (bool, LowerBound)):
            ours = float(ours)
        ok, why = compare(c.rule, c.value, ours)
        results.append(ClaimResult(c, ours, ok, why, simulator=opts.simulator))
    return ExperimentResult(ex, results, names, opts.quick, seeds, time.monotonic() - t0, runs, extra,
                            flows, opts.simulator)


def _partial(text: str, names: Mapping[str, Any], where: str) -> Any:
    """An expression over inputs that lack some runs: its value from the runs there are, for
    display only (never judged), or None when it cannot be computed from them."""
    try:
        v = evaluate_expr(text, names, where)
    except (ScenarioError, ArithmeticError, ValueError, TypeError, KeyError, IndexError):
        return None
    if isinstance(v, NotRun):
        return None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, (bool, LowerBound)) else v

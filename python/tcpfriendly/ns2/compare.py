"""Run a scenario in both tcpfriendly and ns-2 2.35 and compare them metric by metric.

`compare_scenario(path, ...)` runs the engine and ns-2 on the same scenario for several seeds
(each simulator with its own random streams: the seed fixes the scenario's per-flow values,
such as start times, identically for both, but the random draws inside the two simulators are
unrelated) and compares the means over seeds, per flow group and per bottleneck link:

    per group: mean per-flow goodput, fraction of the direction's goodput, loss event rate,
               timeouts (tcpfriendly.metrics defines each)
    per link:  utilisation, queue drops, ECN marks

against the tolerances stated once in the validation bank (`validation/ns2/bank.toml`).
A metric without a tolerance is reported (``info``) but never fails. A difference the bank
records as expected (with its physical reason) is ``xfail``; if it then agrees, ``xpass``.
A loss event rate from fewer than `min_events` events (in either simulator, summed over its
runs) is judged as Poisson counts instead (:func:`poisson_rates_p`): ``fail`` when the counts
differ beyond Poisson noise, else ``few`` (too few events to compare: neither pass nor fail).

`run_bank(...)` runs every bank scenario (or the CI subset) and `bank_markdown(...)` writes the
report (`validation/ns2/REPORT.md`). The command line is `tcpf ns2 compare` (cli/ns2.py).
"""

from __future__ import annotations

import datetime
import math
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from .. import metrics
from ..errors import ScenarioError
from .agents import ns2_mappings
from .export import export_tcl
from .run import ns2_available, run_ns2

__all__ = [
    "Tolerance", "ExpectedFailure", "BankEntry", "Bank", "DEFAULT_TOLERANCES",
    "default_bank_path", "load_bank", "compare_scenario", "run_bank", "format_comparison",
    "bank_markdown", "json_safe", "METRICS", "COUNT_METRICS", "FEW_EVENTS_ALPHA", "poisson_rates_p",
    "few_events_text",
]

# --------------------------------------------------------------------------------------------
# Metrics and tolerances
# --------------------------------------------------------------------------------------------

# metric key -> (label, scope, how to print a value)
METRICS: Dict[str, Tuple[str, str]] = {
    "goodput": ("mean per-flow goodput", "group"),
    "fraction": ("fraction of the direction's goodput", "group"),
    "loss_event_rate": ("loss event rate", "group"),
    "timeouts": ("timeouts per run", "group"),
    "utilization": ("utilisation", "link"),
    "drops": ("queue drops per run", "link"),
    "marks": ("ECN marks per run", "link"),
}


@dataclass(frozen=True)
class Tolerance:
    """Allowed difference between the engine's and ns-2's mean: relative to ns-2's value
    (`rel`, e.g. 0.10 = ±10 %) or absolute (`abs`, in the metric's unit).

    `min_events` (only for a rate of counted events, :data:`COUNT_METRICS`): when either
    simulator counted fewer events than this over its runs, `rel`/`abs` is not applied; the two
    counts are compared as Poisson counts instead (:func:`poisson_rates_p`), and the row
    is ``fail`` when they differ beyond that noise, else ``few`` (too few events to compare)."""
    rel: Optional[float] = None
    abs: Optional[float] = None
    min_events: Optional[int] = None

    def ok(self, engine: float, ref: float) -> bool:
        d = engine - ref
        if self.abs is not None:
            return abs(d) <= self.abs + 1e-12
        if self.rel is not None:
            if ref == 0:
                return engine == 0
            return abs(d) <= self.rel * abs(ref) + 1e-12
        return True

    def text(self, metric: str) -> str:
        if self.abs is not None:
            if metric == "utilization":
                return f"±{self.abs * 100:g} pt"
            return f"±{self.abs:g}"
        if self.rel is not None:
            return f"±{self.rel * 100:g}%"
        return "-"

    def to_json(self) -> Dict[str, float]:
        return {k: v for k, v in (("rel", self.rel), ("abs", self.abs), ("min_events", self.min_events))
                if v is not None}


# Metrics that are rates of counted events: metric -> the per-group count and its exposure
# (the rate is count / exposure, pooled over a group's flows).  A Tolerance's min_events applies
# to these only.
COUNT_METRICS: Dict[str, Tuple[str, str]] = {"loss_event_rate": ("loss_events", "packets_sent")}

# Two-sided significance level of the few-events test: the 95 % convention of every interval
# in the package (metrics.t975).
FEW_EVENTS_ALPHA = 0.05


def _binom_cdf(k: int, n: int, q: float) -> float:
    """P(X <= k) for X ~ Binomial(n, q), summed in log space (n may be thousands)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    if q <= 0.0:
        return 1.0
    if q >= 1.0:
        return 0.0
    lq, l1q = math.log(q), math.log1p(-q)
    lc = math.lgamma(n + 1)
    return min(1.0, math.fsum(math.exp(lc - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lq + (n - i) * l1q)
                              for i in range(k + 1)))


def poisson_rates_p(n1: int, s1: float, n2: int, s2: float) -> float:
    """Two-sided p-value of the exact conditional test that two Poisson counts have the same
    rate per unit of exposure: n1 events in exposure s1 (packets sent) against n2 in s2.  Given
    n = n1 + n2, n1 is Binomial(n, s1 / (s1 + s2)) under equal rates; the p-value is twice the
    smaller tail at n1, at most 1.  With s1 = s2 this is the exact form of
    |n1 - n2| <= z * sqrt(n1 + n2)."""
    n = n1 + n2
    if n == 0:
        return 1.0
    q = s1 / (s1 + s2)
    lower = _binom_cdf(n1, n, q)
    upper = 1.0 - _binom_cdf(n1 - 1, n, q)
    return min(1.0, 2.0 * min(lower, upper))


# The issue's defaults; the bank file states them again and is what the comparator uses.
DEFAULT_TOLERANCES: Dict[str, Tolerance] = {
    "goodput": Tolerance(rel=0.10),
    "fraction": Tolerance(abs=0.05),
    "loss_event_rate": Tolerance(rel=0.25, min_events=16),
    "utilization": Tolerance(abs=0.03),
}


@dataclass(frozen=True)
class ExpectedFailure:
    """A known, explained difference: `metric` of `group` (a flow group index) or `link`
    (a link name) in one scenario; None matches every group/link."""
    metric: str
    reason: str
    group: Optional[int] = None
    link: Optional[str] = None

    def matches(self, metric: str, group: Optional[int], link: Optional[str]) -> bool:
        if self.metric != metric:
            return False
        if self.group is not None and self.group != group:
            return False
        if self.link is not None and self.link != link:
            return False
        return True


@dataclass
class BankEntry:
    name: str
    path: str
    seeds: int
    ci: bool = False
    expected_failures: List[ExpectedFailure] = field(default_factory=list)
    summary: str = ""
    # an open issue to show next to the result (does not change pass/fail)
    note: str = ""


@dataclass
class Bank:
    path: str
    tolerances: Dict[str, Tolerance]
    scenarios: List[BankEntry]
    default_seeds: int = 3
    # runs per simulator in the CI subset (None: each scenario's own)
    ci_seeds: Optional[int] = None

    def entry_for(self, scenario_path: str) -> Optional[BankEntry]:
        target = os.path.realpath(scenario_path)
        for e in self.scenarios:
            if os.path.realpath(e.path) == target:
                return e
        return None


def default_bank_path() -> str:
    """validation/ns2/bank.toml of the source tree this package lives in, else of the
    current directory."""
    here = os.path.dirname(os.path.abspath(__file__))
    for root in (os.path.join(here, "..", "..", ".."), os.getcwd()):
        p = os.path.normpath(os.path.join(root, "validation", "ns2", "bank.toml"))
        if os.path.exists(p):
            return p
    return os.path.normpath(os.path.join(os.getcwd(), "validation", "ns2", "bank.toml"))


def _tolerance(key: str, v: Any, where: str) -> Tolerance:
    if not isinstance(v, dict) or set(v) - {"rel", "abs", "min_events"} or len(set(v) & {"rel", "abs"}) != 1:
        raise ScenarioError(f"{where}.{key}: must be a table with exactly one of rel, abs"
                            + (" (and min_events)" if key in COUNT_METRICS else ""))
    kw: Dict[str, Any] = {}
    for kind, x in v.items():
        if kind == "min_events":
            if key not in COUNT_METRICS:
                raise ScenarioError(f"{where}.{key}.min_events: only for a rate of counted events "
                                    f"({', '.join(COUNT_METRICS)})")
            if isinstance(x, bool) or not isinstance(x, int) or not 0 <= x <= 1_000_000:
                raise ScenarioError(f"{where}.{key}.min_events: must be an integer in 0..1000000; got {x!r}")
            kw[kind] = x
            continue
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not (x >= 0 and math.isfinite(x)):
            raise ScenarioError(f"{where}.{key}.{kind}: must be a non-negative number; got {x!r}")
        kw[kind] = float(x)
    return Tolerance(**kw)


# Runs per simulator and scenario: a few in the bank, at most this many from --seeds or the bank
# (a larger count was listed seed by seed until memory ran out).
MAX_SEEDS = 1000
_BANK_KEYS = ("tolerances", "seeds", "ci_seeds", "scenarios")
_ENTRY_KEYS = ("file", "name", "seeds", "ci", "expected_failures", "summary", "note")


def check_seeds(n: Any, where: str) -> int:
    """``n`` as a count of seeds in 1..:data:`MAX_SEEDS`, or a ScenarioError naming ``where``."""
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_SEEDS:
        raise ScenarioError.at(where, f"must be an integer in 1..{MAX_SEEDS}; got {n!r}")
    return n


def load_bank(path: Optional[str] = None) -> Bank:
    """Read the bank file: [tolerances], defaults and the [[scenarios]] list."""
    from ..scenario import read_toml_file
    path = path or default_bank_path()
    data = read_toml_file(path, "ns-2 validation bank")
    for key in data:
        if key not in _BANK_KEYS:
            raise ScenarioError.at(key, f"unknown key in the ns-2 validation bank {path} (allowed: "
                                        f"{', '.join(_BANK_KEYS)}; a scenario file is not a bank)")
    if not isinstance(data.get("tolerances", {}), dict) or not isinstance(data.get("scenarios", []), list):
        raise ScenarioError.at("tolerances", "the bank's [tolerances] must be a table and "
                                             "[[scenarios]] an array of tables")
    base = os.path.dirname(os.path.abspath(path))
    tol_v = data.get("tolerances", {})
    tolerances: Dict[str, Tolerance] = {}
    for key, v in tol_v.items():
        if key not in METRICS:
            raise ScenarioError(f"tolerances.{key}: unknown metric (known: {', '.join(METRICS)})")
        tolerances[key] = _tolerance(key, v, "tolerances")
    default_seeds = check_seeds(data.get("seeds", 3), "seeds")
    entries = []
    for i, sv in enumerate(data.get("scenarios", [])):
        where = f"scenarios[{i}]"
        if not isinstance(sv, dict):
            raise ScenarioError.at(where, "must be a table ([[scenarios]])")
        for key in sv:
            if key not in _ENTRY_KEYS:
                raise ScenarioError.at(f"{where}.{key}", f"unknown key (allowed: {', '.join(_ENTRY_KEYS)})")
        if "file" not in sv:
            raise ScenarioError(f"{where}.file: is required")
        if not isinstance(sv["file"], str):
            raise ScenarioError.at(f"{where}.file", f"must be a path; got {sv['file']!r}")
        xfs = []
        for j, xf in enumerate(sv.get("expected_failures", [])):
            w = f"{where}.expected_failures[{j}]"
            if xf.get("metric") not in METRICS:
                raise ScenarioError(f"{w}.metric: must be one of {', '.join(METRICS)}; got {xf.get('metric')!r}")
            if not str(xf.get("reason", "")).strip():
                raise ScenarioError(f"{w}.reason: an expected failure needs its physical explanation")
            xfs.append(ExpectedFailure(metric=xf["metric"], reason=" ".join(str(xf["reason"]).split()),
                                       group=xf.get("group"), link=xf.get("link")))
        file = os.path.join(base, sv["file"])
        name = sv.get("name") or os.path.splitext(os.path.basename(sv["file"]))[0]
        entries.append(BankEntry(name=name, path=file,
                                 seeds=check_seeds(sv.get("seeds", default_seeds), f"{where}.seeds"),
                                 ci=bool(sv.get("ci", False)), expected_failures=xfs,
                                 summary=str(sv.get("summary", "")),
                                 note=" ".join(str(sv.get("note", "")).split())))
    ci_seeds = data.get("ci_seeds")
    return Bank(path=path, tolerances=tolerances, scenarios=entries, default_seeds=default_seeds,
                ci_seeds=check_seeds(ci_seeds, "ci_seeds") if ci_seeds is not None else None)


# --------------------------------------------------------------------------------------------
# Per-run summaries (the same for both simulators' results)
# --------------------------------------------------------------------------------------------

# The registry's kind -> compare's group kind: tcp (window-based, with `recovery`), rate
# (rate-based: TFRC...), udp (CBR, Pareto: no congestion control, no loss events).
GROUP_KIND = {"window": "tcp", "rate": "rate", "udp": "udp"}


def _kind(algorithm: str) -> str:
    """compare's kind of a group running `algorithm`, from the registry; a name the registry
    does not have is a user-defined (Python) window controller."""
    entry = ns2_mappings().get(algorithm)
    return GROUP_KIND[entry["kind"]] if entry else "tcp"


def _group_meta(normalized: Dict[str, Any]) -> List[Dict[str, Any]]:
    out = []
    for gi, g in enumerate(normalized.get("flows", [])):
        alg = g.get("algorithm", "tcp")
        params = g.get("params") or {}
        label = alg
        shown = params
        if len(params) > 4:  # long presets: only what differs from the registry's defaults
            defaults = _defaults(alg)
            shown = {k: v for k, v in params.items() if k not in defaults or defaults[k] != v}
            if not shown:
                label += "(defaults)"
        if shown:
            label += "(" + ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                     for k, v in shown.items()) + ")"
        kind = _kind(alg)
        if g.get("recovery") and kind != "udp":
            label += f"/{g['recovery']}"
        out.append({"group": gi, "label": label, "count": int(g.get("count", 1)),
                    "direction": g.get("direction", "forward"), "kind": kind,
                    "recovery": g.get("recovery"), "algorithm": alg})
    return out


def _defaults(algorithm: str) -> Dict[str, Any]:
    try:
        from ..scenario import algorithms
        for a in algorithms():
            if a.get("name") == algorithm:
                return {p["name"]: p.get("default", p.get("default_text")) for p in a.get("params", [])}
    except (ImportError, ValueError, KeyError):
        pass
    return {}


# compare's row name -> the tcpfriendly.metrics group metric it reports
GROUP_METRIC_OF = {"goodput": "goodput_bps_mean", "fraction": "fraction",
                   "loss_event_rate": "loss_event_rate", "timeouts": "timeouts"}


def summarize_run(raw: Dict[str, Any], groups: List[Dict[str, Any]]) -> Dict[str, Any]:
    """Group and link values of one run (engine or ns-2 result schema). The group values are
    :func:`tcpfriendly.metrics.group_metrics` (every metric, plus compare's row names of
    :data:`GROUP_METRIC_OF`); window- and rate-based groups only get a loss event rate and
    timeouts."""
    flows = raw["flows"]
    values = metrics.group_metrics(flows)
    members = metrics.by_group(flows)
    gout: Dict[int, Dict[str, float]] = {}
    for meta in groups:
        vals = values.get(meta["group"])
        if vals is None:
            continue
        # the exposure of the loss event rate (its denominator), for the few-events test
        vals = dict(vals, packets_sent=metrics.total(f.get("packets_sent") for f in members[meta["group"]]))
        vals = {k: (float("nan") if v is None else float(v)) for k, v in vals.items()}
        for row, name in GROUP_METRIC_OF.items():
            if row in ("loss_event_rate", "timeouts") and meta["kind"] not in ("tcp", "rate"):
                continue
            vals[row] = vals[name]
        gout[meta["group"]] = vals
    lout: Dict[str, Dict[str, float]] = {}
    for lk in raw["links"]:
        drops = lk["drops"]
        if "random_drops" in lk:  # the engine counts loss-model drops in `drops`; ns-2 does not
            drops = drops - lk["random_drops"]
        lout[lk["name"]] = {"utilization": lk["utilization"], "drops": float(drops),
                            "marks": float(lk.get("marks") or 0)}
    return {"groups": gout, "links": lout}


def _mean(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.fmean(xs) if xs else float("nan")


def _sd(xs: Sequence[float]) -> float:
    xs = [x for x in xs if x is not None and not (isinstance(x, float) and math.isnan(x))]
    return statistics.stdev(xs) if len(xs) > 1 else 0.0


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

def _engine_task(scenario, seed: int) -> Callable[[], Dict[str, Any]]:
    def run() -> Dict[str, Any]:
        from ..results import run as run_engine
        t0 = time.perf_counter()
        raw = run_engine(scenario, seed=seed).raw
        raw["wall_s"] = time.perf_counter() - t0
        return raw
    return run


def _ns2_task(scenario, seed: int, ns_binary: str) -> Callable[[], Dict[str, Any]]:
    def run() -> Dict[str, Any]:
        expanded = scenario.expand(seed)
        return run_ns2(expanded, ns_binary=ns_binary, sample_interval_s=None, timeout_s=3600)
    return run


@dataclass
class _Job:
    entry: BankEntry
    scenario: Any
    seeds: List[int]
    tolerances: Dict[str, Tolerance]
    futures_engine: List[Any] = field(default_factory=list)
    futures_ns2: List[Any] = field(default_factory=list)


def _prepare(path: str, seeds: Optional[int], bank: Optional[Bank], entry: Optional[BankEntry]):
    from ..scenario import Scenario
    sc = Scenario.from_toml(path)
    expanded = sc.expand(None)
    export_tcl(expanded, sample_interval_s=None)  # Ns2Unsupported names the element
    base = int(sc.normalized().get("seed", 1))
    if entry is None:
        entry = BankEntry(name=os.path.splitext(os.path.basename(path))[0], path=path,
                          seeds=bank.default_seeds if bank else 3)
    n = seeds if seeds is not None else entry.seeds
    # the argument, or the bank's setting for this scenario
    check_seeds(n, "seeds" if seeds is not None else f"{entry.name}.seeds")
    return sc, entry, [base + k for k in range(n)]


#: A SACK group's timeouts this far above ns-2's get a hint: the engine's SACK recovery is RFC
#: 6675 unless the scenario asks for ns-2's Sack1 (docs/ns2-notes.md, "Sack1 loss recovery":
#: 1.3-2x ns-2's timeouts on the bank, as ns-2's with ns2_agent).
SACK_TIMEOUT_HINT_ABOVE = 0.25
SACK_TIMEOUT_HINT = ("the engine's SACK recovery is RFC 6675's, which times out more often than ns-2's "
                     "Sack1; [tcp] ns2_agent = true follows Sack1 (docs/ns2-notes.md, \"Sack1 loss recovery\")")


def _evaluate(job: _Job, engine_runs: List[Dict[str, Any]], ns2_runs: List[Dict[str, Any]],
              wall_s: float) -> Dict[str, Any]:
    normalized = job.scenario.normalized()
    groups = _group_meta(normalized)
    es = [summarize_run(r, groups) for r in engine_runs]
    ns = [summarize_run(r, groups) for r in ns2_runs]
    rows: List[Dict[str, Any]] = []

    def add(scope: str, group: Optional[int], link: Optional[str], metric: str,
            e_vals: List[float], n_vals: List[float],
            counts: Optional[Tuple[List[float], List[float], List[float], List[float]]] = None) -> None:
        e, n = _mean(e_vals), _mean(n_vals)
        tol = job.tolerances.get(metric)
        rel = (e - n) / n if n not in (0.0,) and not math.isnan(n) and not math.isnan(e) else None
        row = {"scope": scope, "group": group, "link": link, "metric": metric,
               "label": METRICS[metric][0], "engine": e, "ns2": n,
               "engine_sd": _sd(e_vals), "ns2_sd": _sd(n_vals),
               "rel_diff": rel, "abs_diff": e - n,
               "tolerance": tol.to_json() if tol else None}
        counted = _event_counts(counts)
        if counted is not None:
            row.update(counted)
        few = _few_events(tol, counted)
        if few is not None:
            row.update(few)
        if tol is None:
            status = "info"
        elif math.isnan(e) or math.isnan(n):
            status = "fail"
        elif few is not None:
            status = "fail" if few["p_value"] < FEW_EVENTS_ALPHA else "few"
        else:
            status = "pass" if tol.ok(e, n) else "fail"
        xf = next((x for x in job.entry.expected_failures if x.matches(metric, group, link)), None)
        if xf is not None and status in ("pass", "fail"):
            status = "xfail" if status == "fail" else "xpass"
            row["reason"] = xf.reason
        row["status"] = status
        rows.append(row)

    for meta in groups:
        g = meta["group"]
        if not all(g in s["groups"] for s in es + ns):
            continue
        scope = f"group {g}: {meta['label']} x{meta['count']}" + \
            (f" ({meta['direction']})" if meta["direction"] != "forward" else "")
        ev = lambda k: [s["groups"][g].get(k, float("nan")) for s in es]  # noqa: E731
        nv = lambda k: [s["groups"][g].get(k, float("nan")) for s in ns]  # noqa: E731
        add(scope, g, None, "goodput", ev("goodput"), nv("goodput"))
        same_dir = [m for m in groups if m["direction"] == meta["direction"]]
        if len(same_dir) > 1:
            add(scope, g, None, "fraction", ev("fraction"), nv("fraction"))
        if meta["kind"] in ("tcp", "rate"):
            count, exposure = COUNT_METRICS["loss_event_rate"]
            add(scope, g, None, "loss_event_rate", ev("loss_event_rate"), nv("loss_event_rate"),
                (ev(count), ev(exposure), nv(count), nv(exposure)))
            add(scope, g, None, "timeouts", ev("timeouts"), nv("timeouts"))
            # only where ns-2 runs Sack1: a Linux module runs TCP-Linux's own recovery there
            if meta["recovery"] == "sack" and not (normalized.get("tcp") or {}).get("ns2_agent") \
                    and (rows[-1]["rel_diff"] or 0.0) > SACK_TIMEOUT_HINT_ABOVE \
                    and "agent" in ns2_mappings().get(meta["algorithm"], {}):
                rows[-1]["hint"] = SACK_TIMEOUT_HINT
    link_names = [n for n in (ns[0]["links"] if ns else {})]
    for name in link_names:
        if not all(name in s["links"] for s in es + ns):
            continue
        ev = lambda k: [s["links"][name][k] for s in es]  # noqa: E731
        nv = lambda k: [s["links"][name][k] for s in ns]  # noqa: E731
        add(f"link {name}", None, name, "utilization", ev("utilization"), nv("utilization"))
        add(f"link {name}", None, name, "drops", ev("drops"), nv("drops"))
        if normalized.get("bottleneck", {}).get("ecn"):
            add(f"link {name}", None, name, "marks", ev("marks"), nv("marks"))

    counts = {s: sum(1 for r in rows if r["status"] == s)
              for s in ("pass", "fail", "xfail", "xpass", "few", "info")}
    return {
        "name": job.entry.name,
        "file": job.entry.path,
        "summary": job.entry.summary,
        "note": job.entry.note,
        "seeds": job.seeds,
        "passed": counts["fail"] == 0,
        "counts": counts,
        "rows": rows,
        "expected_failures": [{"metric": x.metric, "group": x.group, "link": x.link, "reason": x.reason}
                              for x in job.entry.expected_failures],
        "wall_s": wall_s,
        "engine_wall_s": sum(r.get("wall_s", 0.0) for r in engine_runs),
        "ns2_wall_s": sum(r.get("wall_s", 0.0) for r in ns2_runs),
    }


def _event_counts(counts) -> Optional[Dict[str, Any]]:
    """A count metric's events and exposures (packets sent) summed over each simulator's runs,
    ``{"events": [engine, ns-2], "exposure": [engine, ns-2]}``; None when a count is unknown."""
    if counts is None:
        return None
    sums = [math.fsum(xs) if xs and not any(math.isnan(x) for x in xs) else float("nan") for xs in counts]
    if any(math.isnan(x) for x in sums):
        return None
    n_e, s_e, n_n, s_n = sums
    return {"events": [int(round(n_e)), int(round(n_n))], "exposure": [s_e, s_n]}


def _few_events(tol: Optional[Tolerance], counted: Optional[Dict[str, Any]]) -> Optional[Dict[str, Any]]:
    """The few-events judgement of a count metric (:data:`COUNT_METRICS`, counts from
    :func:`_event_counts`): None when the tolerance has no `min_events`, a count is unknown, or
    both simulators counted at least `min_events` events over their runs (the tolerance applies
    as stated).  Otherwise the p-value of :func:`poisson_rates_p` and the rule's text."""
    if tol is None or tol.min_events is None or counted is None:
        return None
    (n_e, n_n), (s_e, s_n) = counted["events"], counted["exposure"]
    if min(n_e, n_n) >= tol.min_events or s_e <= 0 or s_n <= 0:
        return None
    return {"p_value": poisson_rates_p(n_e, s_e, n_n, s_n),
            "rule": f"fewer than {tol.min_events} in a simulator, so judged as Poisson counts: exact test of "
                    f"equal rates per packet sent, two-sided alpha = {FEW_EVENTS_ALPHA:g}"}


def few_events_text(row: Dict[str, Any]) -> str:
    """One line on a row judged by the few-events rule: the counts, the test and its outcome."""
    n_e, n_n = row["events"]
    if row["status"] == "few":
        what, cmp_ = "too few events to compare", ">="
    else:
        what, cmp_ = "the rates differ beyond Poisson noise", "<"
    return (f"{what}: n = {n_e} vs {n_n} loss events over the runs (tcpfriendly vs ns-2), {row['rule']}: "
            f"p = {row['p_value']:.2g} {cmp_} {FEW_EVENTS_ALPHA:g}")


def _run_jobs(jobs: List[_Job], workers: int, ns_binary: str,
              progress: Optional[Callable[[str], None]] = None) -> List[Dict[str, Any]]:
    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for job in jobs:
            # ns-2 first: it is usually the slower of the two
            job.futures_ns2 = [pool.submit(_ns2_task(job.scenario, s, ns_binary)) for s in job.seeds]
            job.futures_engine = [pool.submit(_engine_task(job.scenario, s)) for s in job.seeds]
        out = []
        for job in jobs:
            ns2_runs = [f.result() for f in job.futures_ns2]
            engine_runs = [f.result() for f in job.futures_engine]
            res = _evaluate(job, engine_runs, ns2_runs, time.perf_counter() - t0)
            out.append(res)
            if progress:
                progress(f"{res['name']}: {'PASS' if res['passed'] else 'FAIL'} "
                         f"({res['counts']['pass']} pass, {res['counts']['fail']} fail, "
                         f"{res['counts']['xfail']} xfail, {res['counts']['xpass']} xpass, "
                         f"{res['counts']['few']} too few events; "
                         f"engine {res['engine_wall_s']:.1f} s, ns-2 {res['ns2_wall_s']:.1f} s)")
    return out


def _check_ns(ns_binary: str) -> None:
    if not ns2_available(ns_binary):
        raise RuntimeError(f"ns-2 binary {ns_binary!r} not found (Debian/Ubuntu: apt-get install ns2, "
                           "or run scripts/setup.sh)")


def compare_scenario(path: str, seeds: Optional[int] = None, bank: Optional[Bank] = None,
                     workers: int = 2, ns_binary: str = "ns") -> Dict[str, Any]:
    """Compare one scenario file. Tolerances come from the bank; when the file is one of the
    bank's scenarios its seed count and expected failures apply too."""
    _check_ns(ns_binary)
    tolerances = bank.tolerances if bank else dict(DEFAULT_TOLERANCES)
    entry = bank.entry_for(path) if bank else None
    sc, entry, seed_list = _prepare(path, seeds, bank, entry)
    job = _Job(entry=entry, scenario=sc, seeds=seed_list, tolerances=tolerances)
    return _run_jobs([job], workers, ns_binary)[0]


def run_bank(bank: Bank, ci_only: bool = False, seeds: Optional[int] = None, workers: int = 2,
             ns_binary: str = "ns", only: Optional[Sequence[str]] = None,
             progress: Optional[Callable[[str], None]] = None) -> Dict[str, Any]:
    """Run the bank (or its CI subset, or the named scenarios) and return every comparison."""
    _check_ns(ns_binary)
    t0 = time.perf_counter()
    if ci_only and seeds is None:
        seeds = bank.ci_seeds
    jobs = []
    for e in bank.scenarios:
        if ci_only and not e.ci:
            continue
        if only and e.name not in only:
            continue
        sc, entry, seed_list = _prepare(e.path, seeds, bank, e)
        jobs.append(_Job(entry=entry, scenario=sc, seeds=seed_list, tolerances=bank.tolerances))
    results = _run_jobs(jobs, workers, ns_binary, progress)
    return {
        "bank": bank.path,
        "subset": "ci" if ci_only else ("selected" if only else "all"),
        "tolerances": {k: t.to_json() for k, t in bank.tolerances.items()},
        "scenarios": results,
        "passed": all(r["passed"] for r in results),
        "wall_s": time.perf_counter() - t0,
    }


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------

def _fmt_value(metric: str, v: float) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if metric == "goodput":
        return f"{v / 1e6:.4g} Mb/s"
    if metric == "fraction":
        return f"{v:.3f}"
    if metric == "loss_event_rate":
        return f"{v * 100:.3g}%"
    if metric == "utilization":
        return f"{v * 100:.1f}%"
    return f"{v:.1f}"


def _fmt_diff(row: Dict[str, Any]) -> str:
    m = row["metric"]
    tol = row.get("tolerance") or {}
    if m == "utilization" or "abs" in tol:
        d = row["abs_diff"]
        if d is None or math.isnan(d):
            return "-"
        return f"{d * 100:+.1f} pt" if m == "utilization" else f"{d:+.3f}"
    r = row["rel_diff"]
    if r is None:
        return "0" if row["engine"] == row["ns2"] else "-"
    return f"{r * 100:+.1f}%"


def _fmt_tol(row: Dict[str, Any]) -> str:
    t = row.get("tolerance")
    if not t:
        return "-"
    if "p_value" in row:  # judged by the few-events rule, not by rel/abs
        return f"Poisson, n < {t['min_events']}"
    return Tolerance(**t).text(row["metric"])


def _fmt_status(status: str) -> str:
    return {"fail": "FAIL", "xpass": "XPASS", "few": "too few"}.get(status, status)


def _few_prefix(row: Dict[str, Any]) -> str:
    """The status before a few-events line when it is not 'too few' (the line says that)."""
    return "" if row["status"] == "few" else f"{_fmt_status(row['status'])}: "


def comparison_rows(res: Dict[str, Any]) -> List[List[str]]:
    out = []
    for r in res["rows"]:
        out.append([r["scope"], r["label"], _fmt_value(r["metric"], r["engine"]),
                    _fmt_value(r["metric"], r["ns2"]), _fmt_diff(r), _fmt_tol(r), _fmt_status(r["status"])])
    return out


def _table(headers: List[str], rows: List[List[str]], left: int) -> List[str]:
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(headers)]

    def fmt(cells: List[str]) -> str:
        return "  ".join(c.ljust(w) if i < left else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths))).rstrip()

    return ["  " + fmt(headers)] + ["  " + fmt(r) for r in rows]


def hints(res: Dict[str, Any]) -> List[str]:
    """One line per distinct hint of a scenario's rows, naming the metric and the groups
    (``timeouts per run (group 0 +80%, group 1 +75%): ...``)."""
    hinted = [r for r in res["rows"] if r.get("hint")]
    out = []
    for hint in dict.fromkeys(r["hint"] for r in hinted):
        rows = [r for r in hinted if r["hint"] == hint]
        where = ", ".join(f"{r['scope'].split(':')[0]} {r['rel_diff']:+.0%}" for r in rows)
        out.append(f"{rows[0]['label']} ({where}): {hint}")
    return out


def format_comparison(res: Dict[str, Any]) -> str:
    """Plain-text side-by-side table for one scenario."""
    seeds = res["seeds"]
    head = (f"{res['name']} ({res['file']}): seeds {seeds[0]}..{seeds[-1]} "
            f"({len(seeds)} runs per simulator, each with its own random streams; means over runs)")
    lines = [head]
    lines += _table(["scope", "metric", "tcpfriendly", "ns-2", "diff", "tolerance", "result"],
                    comparison_rows(res), left=2)
    for r in res["rows"]:
        if r["status"] in ("xfail", "xpass"):
            lines.append(f"  {r['status']}: {r['scope']} {r['label']}: {r['reason']}")
            if r["status"] == "xpass":
                lines.append("         (recorded as an expected failure but within tolerance now)")
        if "p_value" in r:
            lines.append(f"  {_few_prefix(r)}{r['scope']} {r['label']}: {few_events_text(r)}")
    lines += [f"  hint: {h}" for h in hints(res)]
    if res.get("note"):
        lines.append(f"  note: {res['note']}")
    c = res["counts"]
    verdict = "PASS" if res["passed"] else "FAIL"
    lines.append(f"  => {verdict}: {c['pass']} pass, {c['fail']} fail, {c['xfail']} expected failures, "
                 f"{c['xpass']} unexpected passes, {c.get('few', 0)} too few events to compare, "
                 f"{c['info']} reported only "
                 f"(wall {res['wall_s']:.1f} s; engine {res['engine_wall_s']:.1f} s, "
                 f"ns-2 {res['ns2_wall_s']:.1f} s)")
    return "\n".join(lines)


def _anchor(title: str) -> str:
    """GitHub's anchor for a Markdown heading."""
    import re
    return re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")


def _md_escape(s: str) -> str:
    return s.replace("|", "\\|")


def bank_markdown(result: Dict[str, Any], command: str = "tcpf ns2 compare --bank") -> str:
    """The Markdown report of a bank run (validation/ns2/REPORT.md)."""
    L: List[str] = []
    a = L.append
    scen = result["scenarios"]
    a("# tcpfriendly vs ns-2 2.35: validation bank report")
    a("")
    a(f"Generated by `{command}` (see `validation/ns2/README.md`); do not edit by hand.")
    try:
        from ..version import __version__
    except ImportError:  # pragma: no cover
        __version__ = "?"
    a(f"tcpfriendly {__version__}, ns-2 `{_ns_version()}`, "
      f"{datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}, "
      f"wall time {result['wall_s']:.0f} s.")
    a("")
    a("Each scenario runs in both simulators for the listed seeds; a seed fixes the scenario's "
      "per-flow values (access delays, start times) identically for both, while each simulator draws "
      "its own random streams. Values are means over the runs. Tolerances (stated once in "
      "`bank.toml`): " + ", ".join(f"{METRICS[k][0]} {Tolerance(**v).text(k)}"
                                    for k, v in result["tolerances"].items()) +
      "; timeouts, queue drops and ECN marks are reported without a tolerance (`info`). "
      "Relative differences are (tcpfriendly − ns-2) / ns-2.")
    few_rules = [(k, v["min_events"]) for k, v in result["tolerances"].items() if "min_events" in v]
    if few_rules:
        a("")
        a("Few events: " + "; ".join(
            f"when either simulator counts fewer than {m} events over its runs, the {METRICS[k][0]} is "
            f"not judged by its tolerance" for k, m in few_rules) +
          " — the two counts are compared as Poisson counts (exact conditional test of two Poisson "
          f"rates given the packets sent, two-sided α = {FEW_EVENTS_ALPHA:g}): `FAIL` when they differ "
          "beyond that noise, otherwise `too few` (neither pass nor fail).")
    a("")
    n_pass = sum(1 for s in scen if s["passed"])
    n_xf = sum(s["counts"]["xfail"] for s in scen)
    a(f"**{n_pass} of {len(scen)} scenarios pass**" +
      (f" ({n_xf} metric(s) recorded as expected failures, explained below)." if n_xf else "."))
    a("")
    a("| scenario | seeds | result | pass | fail | xfail | too few | engine s | ns-2 s |")
    a("|---|---|---|---|---|---|---|---|---|")
    for s in scen:
        c = s["counts"]
        a(f"| [{s['name']}](#{_anchor(s['name'])}) | {len(s['seeds'])} | {'pass' if s['passed'] else '**FAIL**'} | "
          f"{c['pass']} | {c['fail']} | {c['xfail']} | {c.get('few', 0)} | {s['engine_wall_s']:.1f} | "
          f"{s['ns2_wall_s']:.1f} |")
    a("")
    few_rows = [(s, r) for s in scen for r in s["rows"] if "p_value" in r]
    if few_rows:
        a("## Few events (judged as Poisson counts)")
        a("")
        for s, r in few_rows:
            a(f"- {_few_prefix(r)}**{s['name']}**, {r['scope']}, {r['label']}: {few_events_text(r)}.")
        a("")
    open_issues = [s for s in scen if s.get("note")]
    if open_issues:
        a("## Open issues")
        a("")
        for s in open_issues:
            a(f"- **{s['name']}** ({'pass' if s['passed'] else 'FAIL'}): {s['note']}")
        a("")
    xf_rows = [(s, r) for s in scen for r in s["rows"] if r["status"] in ("xfail", "xpass")]
    if xf_rows or any(s["expected_failures"] for s in scen):
        a("## Expected failures")
        a("")
        for s in scen:
            for x in s["expected_failures"]:
                where = f"group {x['group']}" if x["group"] is not None else (
                    f"link {x['link']}" if x["link"] else "all groups")
                hit = [r for r in s["rows"] if r["status"] in ("xfail", "xpass") and r["metric"] == x["metric"]]
                state = ", ".join(f"{r['status']} ({_fmt_diff(r)})" for r in hit) or "not evaluated"
                a(f"- **{s['name']}**, {METRICS[x['metric']][0]} ({where}): {state}. {x['reason']}")
        a("")
    for s in scen:
        a(f"## {s['name']}")
        a("")
        rel = os.path.relpath(s["file"], os.path.dirname(os.path.abspath(result.get("bank", "."))))
        a(f"`{rel}`" + (f" — {s['summary']}" if s.get("summary") else "") +
          f". Seeds {s['seeds'][0]}..{s['seeds'][-1]}.")
        a("")
        if s.get("note"):
            a(f"**Note:** {s['note']}")
            a("")
        a("| scope | metric | tcpfriendly | ns-2 | diff | tolerance | result |")
        a("|---|---|---|---|---|---|---|")
        for row in comparison_rows(s):
            cells = [_md_escape(c) for c in row]
            if cells[-1] in ("FAIL", "XPASS"):
                cells[-1] = f"**{cells[-1]}**"
            a("| " + " | ".join(cells) + " |")
        a("")
        for h in hints(s):
            a(f"*Hint:* {_md_escape(h)}")
            a("")
    return "\n".join(L)


def json_safe(obj: Any) -> Any:
    """A copy of `obj` where NaN/inf floats become None (strict JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: json_safe(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [json_safe(v) for v in obj]
    return obj


def _ns_version() -> str:
    try:
        import subprocess
        p = subprocess.run(["dpkg-query", "-W", "-f=${Version}", "ns2"], capture_output=True, text=True,
                           timeout=10)
        if p.returncode == 0 and p.stdout.strip():
            return f"ns2 {p.stdout.strip()}"
    except (OSError, subprocess.SubprocessError):
        pass
    return "ns-2 2.35"

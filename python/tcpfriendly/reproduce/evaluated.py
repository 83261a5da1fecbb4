"""Experiments run through ``tcpf evaluate`` (:func:`tcpfriendly.evaluate.evaluate`, its public
API), two ways:

- ``[evaluate.schemes]`` (tsao2007 Table 4): each scheme is evaluated and its row of grades is
  set beside the paper's (transcribed once, in ``tcpfriendly.evaluate.grades.PAPER_TABLE4``),
  unless ``paper_grades = false``. Either way each scheme's evaluation is a name of the
  experiment's ``published.toml`` expressions (:func:`evaluation_names`: its grades, numbers and
  metrics, the ``points`` of a metric as curves), so claims on the numbers behind the grades
  (tsao2007 Obs. 1-4) are ordinary claims; the same schemes and parameters give the same runs,
  found in the evaluate cache (``OUT/runs/evaluate``) by the second experiment;
- ``[evaluate] values_from = "../impulse-response/published.toml"`` (jin2001 Table 5,
  sastry2005 Table I): the published values of an experiment ``tcpf evaluate`` runs, read
  from its own ``published.toml`` (one transcription), each compared with the metric
  ``tcpf evaluate`` measures for that algorithm. Every number ``tcpf evaluate`` measures for
  the algorithm of the i-th value is the name ``v<i>_<metric>`` (a mean with its CI: the
  mean) of the experiment's own claims."""

from __future__ import annotations

import math
from typing import Any, Dict, List, Mapping, NamedTuple, Optional, Tuple

from ..errors import ScenarioError
from .expr import NotRun, Series, expr_names
from .rules import Graded
from .spec import Claim, Experiment

__all__ = ["run_evaluations", "evaluation_names", "claims_made_when_run", "grade_texts"]


def run_evaluations(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    """Run the evaluations and add their claims to ``ex.claims``. Returns (names, extra, seeds)."""
    if ex.evaluate.get("values_from"):
        return _published_values(ex, opts)
    return _table4(ex, opts)


def claims_made_when_run(ex: Experiment) -> bool:
    """Whether the evaluate experiment ``ex`` adds claims only when it runs (Table 4's cells,
    a ``values_from`` file's values): the inventory then checks it whole. Otherwise its claims
    are its ``published.toml``'s, known before it runs, and an inventory row may name them."""
    return bool(ex.evaluate.get("values_from")) or ex.evaluate.get("paper_grades", True) is not False


def _cache(opts):
    import os
    return os.path.join(opts.out, "runs", "evaluate") if opts.out else None


def _nan(v: Any) -> Any:
    """``v`` with JSON's null (a number that was not measured) read back as NaN."""
    if v is None:
        return float("nan")
    if isinstance(v, Mapping):
        return {k: _nan(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_nan(x) for x in v]
    return v


def _with_curves(m: Any) -> Any:
    """A metric of the evaluation with its ``points`` (a list of rows, each starting with the
    axis value: ``{"cv": 1.0, "norm_identical": 0.8, ...}``) turned into a table of curves:
    ``points.norm_identical`` is the curve cv -> norm_identical."""
    if not (isinstance(m, Mapping) and isinstance(m.get("points"), list) and m["points"]
            and all(isinstance(p, Mapping) and p for p in m["points"])):
        return m
    axis = next(iter(m["points"][0]))
    curves: Dict[str, Series] = {}
    for p in m["points"]:
        for k, v in p.items():
            if k != axis and isinstance(v, (int, float)) and not isinstance(v, bool):
                curves.setdefault(k, Series())[float(p[axis])] = float(v)
    return dict(m, points=curves)


def _censored(numbers: Mapping[str, Any], alg: str = "") -> Dict[str, Any]:
    """The numbers behind the grades with each S3/S4 convergence time that some seed (or step)
    did not reach before its phase ended as a lower bound (``x_s`` / ``tcp_s`` a
    :class:`tcpfriendly.metrics.transients.LowerBound`: the mean with the bound ``phase end −
    change`` for those runs), so claims compare it by the censoring rule (docs/evaluate.md)."""
    from ..metrics.transients import censored_time

    out: Dict[str, Any] = {}
    for col, n in numbers.items():
        if isinstance(n, Mapping) and "x_s_bound" in n:
            n = dict(n)
            for who in ("x", "tcp"):
                k = n.get(f"{who}_censored") or 0
                if k:
                    label = f"{alg}{' ' if alg else ''}{col}" + (" (its TCP)" if who == "tcp" else "")
                    n[f"{who}_s"] = censored_time(float(n[f"{who}_s_bound"]), int(k), int(n.get("runs") or 0),
                                                  str(n.get("runs_are") or "seeds"), label)
        out[col] = n
    return out


def evaluation_names(ev: Any) -> Dict[str, Any]:
    """The name of one evaluated scheme in the expressions of an evaluate experiment's
    ``published.toml``, from an :class:`tcpfriendly.evaluate.Evaluation` or its JSON
    (``tcpf evaluate ALG --json``; null reads as NaN):

    - ``grades``: Table 4's cells (``gaimd.grades["S1"]`` is ``"Δ(O)"``);
    - ``numbers``: the numbers behind them (``gaimd.numbers["S3 up"].x_s``; a convergence
      time some run did not reach is a lower bound, :func:`_censored`);
    - ``metrics``: per experiment, as in the JSON, with each ``points`` list a table of curves
      over the axis (``gaimd.metrics["tsao2007/s1-nonperiodic"].points.norm_identical[1]``);
    - ``tally``: how many of the Table-4 columns graded have each symbol, the parenthesised
      compatibility left out (``tfrc.tally.X``).

    An experiment the simulator could not run (``not_run``, e.g. in ns-2) has a
    :class:`~tcpfriendly.reproduce.expr.NotRun` with the reason for its metrics, its columns'
    grades and numbers, and the tally: a claim on them is not run."""
    from ..evaluate.grades import COLUMN_EXPERIMENT, COLUMNS, D, O, X

    def get(k: str) -> Any:
        return ev.get(k) if isinstance(ev, Mapping) else getattr(ev, k, None)

    alg = str((ev.get("algorithm") if isinstance(ev, Mapping) else getattr(ev, "algorithm", "")) or "")
    grades: Dict[str, Any] = {str(k): str(v) for k, v in (get("grades") or {}).items()}
    metrics: Dict[str, Any] = {k: _with_curves(_nan(m)) for k, m in (get("metrics") or {}).items()}
    numbers: Dict[str, Any] = _censored(_nan(get("numbers") or {}), alg)
    tally: Any = {s: sum(1 for c in COLUMNS if grades.get(c, "").startswith(s)) for s in (O, D, X)}
    not_run = get("not_run") or {}
    where = str(get("simulator") or "")
    for key, why in not_run.items():
        gone = NotRun(f"{'ns-2' if where == 'ns2' else where or 'the simulator'} cannot run {key}: {why}")
        metrics[key] = gone
        for col, k in COLUMN_EXPERIMENT.items():
            if k == key:
                grades[col] = numbers[col] = tally = gone
    return {"grades": grades, "numbers": numbers, "metrics": metrics, "tally": tally}


def _table4(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    """Each scheme's evaluation as a name (:func:`evaluation_names`); with ``paper_grades``
    (the default), one claim per Table-4 cell (ours = our grade, rule: the same symbol; the
    grade carries the number behind it and the band of the paper's symbol, :func:`grade_texts`,
    shown as the claim's difference; a differing cell's reason says where the number lies)."""
    from ..evaluate import evaluate
    from ..evaluate.grades import COLUMNS, PAPER_TABLE4

    schemes = ex.evaluate.get("schemes") or {}
    only = ex.evaluate.get("only")
    if ex.evaluate.get("schemes_from"):
        # another evaluate experiment's schemes (one transcription of the parameters) and,
        # unless given here, its `only`: the same runs, found in the evaluate cache
        import os

        from .spec import _read
        src = os.path.normpath(os.path.join(ex.path, str(ex.evaluate["schemes_from"]), "experiment.toml"))
        if schemes or not os.path.exists(src):
            raise ScenarioError(f"{ex.name}: evaluate.schemes_from: an experiment directory "
                                f"(with experiment.toml), instead of evaluate.schemes", field="evaluate.schemes_from")
        theirs = _read(src).get("evaluate") or {}
        schemes = theirs.get("schemes") or {}
        only = only if only is not None else theirs.get("only")
    pick = ex.evaluate.get("pick")
    if pick is not None:  # some of the schemes (of schemes_from): the rest are not run
        unknown = [a for a in pick if a not in schemes] if isinstance(pick, list) else [pick]
        if unknown or not pick:
            raise ScenarioError(f"{ex.name}: evaluate.pick: a list of the schemes ({', '.join(schemes)}), "
                                f"got {pick!r}", field="evaluate.pick")
        schemes = {a: schemes[a] for a in pick}
    # named assumptions of the evaluated experiments changed for this one (tcpf evaluate's
    # `assumptions`, e.g. {"tsao2007/s2-low-multiplexing" = { n = 32 }}); the runs differ, so
    # they are cached apart from the unchanged ones
    assumptions = ex.evaluate.get("assumptions")
    if assumptions is not None and not isinstance(assumptions, dict):
        raise ScenarioError(f"{ex.name}: evaluate.assumptions: a table of experiment = {{ name = value }}",
                            field="evaluate.assumptions")
    if not schemes:
        raise ScenarioError(f"{ex.name}: evaluate.schemes: needs at least one scheme")
    paper_grades = ex.evaluate.get("paper_grades", True)
    if not isinstance(paper_grades, bool):
        raise ScenarioError(f"{ex.name}: evaluate.paper_grades: must be true or false, got {paper_grades!r}",
                            field="evaluate.paper_grades")
    names: Dict[str, Any] = {}
    rows: List[str] = ["| scheme | " + " | ".join(COLUMNS) + " |", "|---|" + "---|" * len(COLUMNS)]
    claims: List[Claim] = []
    seeds = None
    for alg, params in schemes.items():
        ev = evaluate(alg, dict(params or {}), quick=opts.quick, seeds=opts.seeds,
                      out=_cache(opts), memo=getattr(opts, "memo", None), assumptions=assumptions,
                      workers=opts.workers, only=only, progress=opts.progress,
                      simulator=getattr(opts, "simulator", "tcpf"))
        seeds = seeds or (max(ev.seeds.values()) if ev.seeds else None)
        names[alg] = evaluation_names(ev)
        if not paper_grades:
            continue
        paper = PAPER_TABLE4.get(alg, [])
        cells = []
        reason = ex.evaluate.get("reason", "see docs/evaluate.md: the thresholds are ours, the paper gives none")
        for i, col in enumerate(COLUMNS):
            ours = ev.grades.get(col, "-")
            cells.append(f"{ours} ({paper[i] if i < len(paper) else '?'})")
            if i < len(paper) and isinstance(names[alg]["grades"].get(col), NotRun):
                # its experiment is not run (ns-2 cannot express it): the claim says why
                claims.append(Claim(claim=f"{alg} {col}", where="Table 4 (004:195-214)", quote="",
                                    value=paper[i], ours=f"{alg}.grades[{col!r}]", rule={"same": True},
                                    reason=reason))
            elif i < len(paper) and col in ev.grades:
                # the grade with the number behind it (the difference column) and, when it is
                # not the paper's, where that number lies against the paper's band (the verdict)
                detail, why = grade_texts(ev, col, paper[i])
                names[alg]["grades"][col] = Graded(ours, detail)
                claims.append(Claim(
                    claim=f"{alg} {col}", where="Table 4 (004:195-214)", quote="", value=paper[i],
                    ours=f"{alg}.grades[{col!r}]", rule={"same": True},
                    reason=f"{why}; {reason}" if why else reason))
        rows.append(f"| {alg} | " + " | ".join(cells) + " |")
    ex.claims = claims + ex.claims
    md = "Table 4, ours (paper):\n\n" + "\n".join(rows)
    return names, ({"markdown": [md]} if paper_grades else {}), seeds


# ----- the number behind each Table-4 grade and the band the paper's grade needs -----------------
_RANK = {"O": 0, "Δ": 1, "X": 2}


class _Part(NamedTuple):
    """One part of a Table-4 grade (the grade, or its parenthesised TCP-compatibility)."""
    ours: str             # our symbol
    paper: str            # the paper's
    text: str             # the number behind ours, for the difference column ("q = 4.71 (X 80.0 s / TCP 17.0 s)")
    short: str            # the same for the verdict ("q = 4.71")
    value: Optional[float]  # the number (a bound when ``known`` is "above"/"below"); None if none
    known: str            # "exact", "above", "below", "unknown" or "fixed" (don't care)
    label: str            # the number's name in the band ("X/TCP", "max X/TCP", "q")
    band: str             # what the paper's symbol needs, under the evaluation's thresholds
    kind: str             # "throughput", "compatibility" or "transient"


def _symbols(grade: str) -> Tuple[str, Optional[str]]:
    """``"Δ(O)"`` -> ("Δ", "O"); ``"X"`` -> ("X", None)."""
    g = str(grade)
    if g.endswith(")") and "(" in g:
        head, _, rest = g.partition("(")
        return head, rest[:-1]
    return g, None


def _finite(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _time_ratio_bound(ev: Any, col: str, n: Mapping[str, Any]) -> Tuple[str, str, Optional[float], str]:
    """The convergence-time ratio q of an S3/S4 cell as known: (text, the two times, value, kind), kind
    ``"exact"``, ``"above"`` (X's time censored: q is at least ``value``), ``"below"`` (TCP's
    censored: q is at most ``value``) or ``"unknown"``. A censored time is its bound (phase
    end − change, :class:`tcpfriendly.metrics.transients.LowerBound`); the ratio is
    :func:`tcpfriendly.evaluate.grades.time_ratio` with the experiment's ``average_s`` floor."""
    from ..evaluate.grades import time_ratio
    from ..evaluate.report import num_text, number_secs

    times = f"X {number_secs(n, 'x')} s / TCP {number_secs(n, 'tcp')} s"
    xc, tc = bool(n.get("x_censored")), bool(n.get("tcp_censored"))
    if not (xc or tc):
        q = n.get("time_ratio")
        if _finite(q):
            return f"q = {num_text(q)}", times, float(q), "exact"
        return "q n/a", times, None, "unknown"
    key = "tsao2007/s3-two-state" if col.startswith("S3") else "tsao2007/s4-bursty"
    floor = ((getattr(ev, "assumptions", None) or {}).get(key) or {}).get("average_s", {}).get("value")
    x = n.get("x_s_bound") if xc else n.get("x_s")
    t = n.get("tcp_s_bound") if tc else n.get("tcp_s")
    if xc and tc or not (_finite(floor) and _finite(x) and _finite(t)):
        return "q unknown", times, None, "unknown"
    q = time_ratio(float(x), float(t), float(floor))
    # q = max(x, floor) / max(t, floor) grows with x: strictly beyond the bound once the
    # censored time is above the floor
    strict = (float(x) if xc else float(t)) >= float(floor)
    if xc:
        return f"q {'>' if strict else '≥'} {num_text(q)}", times, q, "above"
    return f"q {'<' if strict else '≤'} {num_text(q)}", times, q, "below"


def grade_texts(ev: Any, col: str, paper: str) -> Tuple[str, str]:
    """(detail, why) of our grade of Table-4 column ``col`` against the paper's ``paper``:
    ``detail`` the number behind each part of our grade (X/TCP, the largest X/TCP for the
    parenthesised TCP-compatibility, q = X's convergence time / TCP's) and, for a part that is
    not the paper's symbol, the band that symbol needs under the thresholds ``tcpf evaluate``
    used (``ev.thresholds``; its band texts); ``why`` where our number lies against that band
    ("" when the grades are the same)."""
    from ..evaluate import grades as G
    from ..evaluate.report import num_text, grade_band, share_band

    th = getattr(ev, "thresholds", None) or G.load_thresholds()
    ours = str(ev.grades.get(col, ""))
    n = (getattr(ev, "numbers", None) or {}).get(col) or {}
    (om, oc), (pm, pc) = _symbols(ours), _symbols(paper)
    parts: List[_Part] = []
    if col == "S1" or col.startswith("S2"):
        v = n.get("equivalence" if col == "S1" else "equal_share")
        band = share_band(pm, th) if pm in _RANK else "?"
        text = f"X/TCP {num_text(v) if _finite(v) else 'n/a'}"
        parts.append(_Part(om, pm, text, text, v if _finite(v) else None, "exact", "X/TCP",
                           ("in " if band.startswith("[") else "") + band, "throughput"))
        if col == "S1" and oc is not None and pc is not None:
            c = n.get("compatibility")
            text = f"max X/TCP {num_text(c) if _finite(c) else 'n/a'}"
            parts.append(_Part(oc, pc, text, text, c if _finite(c) else None, "exact", "max X/TCP",
                               grade_band(pc, th, "compatibility") if pc in _RANK else "?", "compatibility"))
    else:
        text, times, q, known = _time_ratio_bound(ev, col, n)
        parts.append(_Part(om, pm, f"{text} ({times})", text, q, known, "q",
                           grade_band(pm, th) if pm in _RANK else "?", "transient"))
        if oc is not None and pc is not None and oc != pc and oc != om:
            # S3 up: TCP-compatibility "don't care" (tsao2007 Table 1), graded O
            text = "compatibility don't care (Table 1)"
            parts.append(_Part(oc, pc, text, text, None, "fixed", "", "", "compatibility"))
    details, whys = [], []
    for pt in parts:
        if pt.ours == pt.paper:
            details.append(pt.text)
            continue
        paren = pt.kind == "compatibility"
        who, mine = (f"({pt.paper})", f"({pt.ours})") if paren else (pt.paper, pt.ours)
        details.append(f"{pt.text}; " + (f"{who} needs {pt.label} {pt.band}" if pt.label else f"the paper's {who}"))
        whys.append(f"ours {mine}: {_where(pt, who, th)}")
    why = "; ".join(whys) if ours != paper else ""
    return " | ".join(details), why


def _where(pt: "_Part", who: str, th: Mapping[str, Any]) -> str:
    """Where our number lies against the paper's band, from the order of the grades (the
    grading is evaluate's; a bound is graded as if it were the value to see what it excludes)."""
    from ..evaluate import grades as G

    text, v, o, p = pt.short, pt.value, pt.ours, pt.paper
    theirs = f"the paper's {who} ({pt.label} {pt.band})" if pt.label else f"the paper's {who}"
    if pt.known == "fixed" or o not in _RANK or p not in _RANK:
        return f"{text}, not {theirs}"
    if v is None:
        return f"{text}: no number to set against {theirs}"
    if pt.known in ("above", "below"):
        at = _RANK[G.grade_transient(v, th)]
        if pt.known == "above" and at > _RANK[p] or pt.known == "below" and at < _RANK[p]:
            return f"{text}: already {pt.known} {theirs}, whatever the censored time"
        return (f"{text}: a run did not reach its new level before the phase ended, so our X is "
                f"the grade of an unmeasured time; {theirs} is not excluded")
    worse = _RANK[o] > _RANK[p]
    if pt.kind == "throughput":
        side = ("below" if v < 1 else "above") if worse else "closer to 1 than"
    else:
        side = "above" if worse else "below"
    return f"{text} is {side} {theirs}"


def _label(alg: str, params: Dict[str, Any]) -> str:
    return alg + ("(" + ", ".join(f"{k}={v}" for k, v in params.items()) + ")" if params else "")


def _published_values(ex: Experiment, opts) -> Tuple[Dict[str, Any], Dict[str, Any], Any]:
    import json
    import math
    import os

    from ..evaluate import evaluate
    from .rules import check_rule
    from .spec import _read

    path = os.path.normpath(os.path.join(ex.path, ex.evaluate["values_from"]))
    pub = _read(path)
    key = ex.evaluate.get("key")
    only = ex.evaluate.get("only")
    if not key or not only:
        raise ScenarioError(f"{ex.name}: evaluate.key and evaluate.only are needed with values_from")
    tol = pub.get("tolerances") or {}
    runs: Dict[str, Any] = {}
    seeds = None

    def measured(alg: str, params: Dict[str, Any]) -> Dict[str, Any]:
        nonlocal seeds
        k = json.dumps([alg, params], sort_keys=True)
        if k not in runs:
            ev = evaluate(alg, dict(params), quick=opts.quick, seeds=opts.seeds, out=_cache(opts),
                          memo=getattr(opts, "memo", None), workers=opts.workers, only=only, progress=opts.progress,
                          simulator=getattr(opts, "simulator", "tcpf"))
            seeds = seeds or (max(ev.seeds.values()) if ev.seeds else None)
            gone = evaluation_names(ev)["metrics"].get(key) if key in ev.not_run else None
            runs[k] = gone or ev.metrics.get(key) or {}
        return runs[k]

    def number(v: Any) -> float:
        if isinstance(v, dict):
            v = v.get("mean")
        return float(v) if isinstance(v, (int, float)) else float("nan")

    names: Dict[str, Any] = {}
    claims: List[Claim] = []
    by_alg: Dict[str, Dict[str, float]] = {}
    not_run: Dict[int, NotRun] = {}
    for i, v in enumerate(pub.get("values") or []):
        alg = str(v["algorithm"])
        params = dict(v.get("params") or {})
        label = str(v.get("label") or _label(alg, params))
        got = measured(alg, params)
        if isinstance(got, NotRun):
            not_run[i] = got
        # every measured number of the algorithm is a name too (v<i>_<metric>), so a claim may
        # use a metric the published values do not list (Fig. 19's cwnd_cov_steady)
        for metric, x in ({} if isinstance(got, NotRun) else got).items():
            if isinstance(x, (int, float)) and not isinstance(x, bool) or isinstance(x, dict) and "mean" in x:
                names[f"v{i}_{metric}"] = number(x)
        items = [(v["metric"], v)] if "metric" in v else [(m, {"value": x}) for m, x in (v.get("metrics") or {}).items()]
        for metric, item in items:
            rule = dict(item.get("rule") or v.get("rule") or tol.get(metric) or {})
            shown = None
            if "interval" in item:
                lo, hi = item["interval"]
                value = (lo + hi) / 2
                shown = f"95 % CI ({lo:g}, {hi:g}), midpoint"
            else:
                value = item["value"]
            rule.pop("of", None)
            name = f"v{i}_{metric}"
            names[name] = got if isinstance(got, NotRun) else number(got.get(metric))
            by_alg.setdefault(metric, {})[alg] = names[name]
            claims.append(Claim(claim=f"{label}: {metric}" + (f" ({shown})" if shown else ""),
                                where=f"{v.get('where', '')} ({os.path.relpath(path, ex.path)})",
                                quote=str(v.get("quote", "")), value=value, ours=name,
                                rule=check_rule(rule, f"{path}: values[{i}].rule"),
                                reason=ex.evaluate.get("reason", "")))
    for j, o in enumerate(pub.get("orders") or []):
        metric = o["metric"]
        vals = by_alg.get(metric, {})
        groups = [[vals.get(a, float("nan")) for a in str(g).split("|")] for g in o["order"]]
        gone = next((x for g in groups for x in g if isinstance(x, NotRun)), None)
        ok = gone or all(not math.isnan(x) for g in groups for x in g) and all(
            max(a) < min(b) for a, b in zip(groups, groups[1:]))
        name = f"order{j}"
        names[name] = ok
        claims.append(Claim(claim=str(o["claim"]), where=str(o.get("where", "")), quote="",
                            value=True, ours=name, rule={"equals": True},
                            reason=ex.evaluate.get("reason", "")))
    ex.claims = claims + [c for c in ex.claims]
    # a claim of the experiment's own may name any measured number of a value (v<i>_<metric>):
    # when that value's evaluation did not run (in ns-2), neither did the claim
    for c in ex.claims:
        for n in expr_names(c.ours):
            i, _, metric = n[1:].partition("_")
            if n not in names and n[:1] == "v" and i.isdigit() and metric and int(i) in not_run:
                names[n] = not_run[int(i)]
    return names, {}, seeds

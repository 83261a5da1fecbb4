"""Tables (text, CSV, JSON) and figures (PNG + SVG) of an evaluation."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from typing import Any, Dict, List, Optional, Sequence

from . import grades as G

__all__ = ["text_report", "write_outputs", "table4_text", "table4_markdown"]


def num_text(v, d=2) -> str:
    try:
        v = float(v)
    except (TypeError, ValueError):
        return "-"
    return f"{v:.{d}f}" if math.isfinite(v) else "-"


def _secs(v, bound, censored) -> str:
    """A mean convergence time in seconds; ``> bound`` when some runs did not reach the new
    level before their phase ended (a lower bound, tcpfriendly.metrics.transients.LowerBound)."""
    if censored and isinstance(bound, (int, float)) and math.isfinite(bound):
        return f"> {num_text(bound, 1)}"
    return num_text(v, 1)


def number_secs(n: Dict[str, Any], who: str) -> str:
    """:func:`_secs` of a Table-4 number (``who``: ``x`` or ``tcp``)."""
    return _secs(n.get(f"{who}_s"), n.get(f"{who}_s_bound"), n.get(f"{who}_censored"))


def _m_secs(s: Dict[str, Any], d: str, who: str = "") -> str:
    """:func:`_secs` of an S3/S4 metric: direction ``d`` (``up``/``down``), X's or (``who`` =
    ``"tcp_"``) its TCP's."""
    return _secs(s.get(f"{who}{d}_seconds"), s.get(f"{who}{d}_seconds_bound"), s.get(f"{who}{d}_censored"))


def _params(p: Dict[str, Any]) -> str:
    return ", ".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in (p or {}).items()) or "-"


def thresholds_text(th) -> List[str]:
    t, c, r = th["throughput"], th["compatibility"], th["transient"]
    return [
        "thresholds (experiments/tsao2007/thresholds.toml; the same for every scheme):",
        f"  throughput X/TCP: O in [{t['o']:g}, {1 / t['o']:.3f}], Δ in [{t['delta']:g}, {1 / t['delta']:.3f}], else X",
        f"  TCP-compatibility X/TCP: O <= {c['o_max']:g}, Δ <= {c['delta_max']:g}, else X",
        f"  transients, time X/TCP: O <= {r['o_max']:g}, Δ <= {r['delta_max']:g}, else X",
    ]


def _cell_number(ev, col: str) -> str:
    n = ev.numbers.get(col, {})
    if col == "S1":
        return num_text(n.get("equivalence"))
    if col.startswith("S2"):
        return num_text(n.get("equal_share"))
    return num_text(n.get("time_ratio"))


def text_report(ev) -> str:
    sim = getattr(ev, "simulator", "tcpf")
    lines = [f"tcpf evaluate {ev.algorithm} ({_params(ev.params)})"
             + (f"  [simulated in {'ns-2 2.35' if sim == 'ns2' else sim}]" if sim != "tcpf" else "")
             + ("  [--quick: fewer seeds, shorter runs, fewer points; indicative only]" if ev.quick else "")]
    lines.append("")
    not_run = getattr(ev, "not_run", None) or {}
    if not_run:
        lines.append(f"not run in {'ns-2' if sim == 'ns2' else sim} (no grades, numbers or figures):")
        lines.extend(f"  {k}: {why}" for k, why in not_run.items())
        lines.append("")
    lines.append("tsao2007 Table 4 row (grade, and the number behind it: X/TCP throughput ratio for S1-S2, "
                 "X/TCP convergence-time ratio for S3-S4; parentheses: TCP-compatibility)")
    head = ["", *G.COLUMNS]
    row_g = [ev.algorithm, *[ev.grades.get(c, "-") for c in G.COLUMNS]]
    row_n = ["", *[_cell_number(ev, c) for c in G.COLUMNS]]
    w = [max(len(a), len(b), len(c)) for a, b, c in zip(head, row_g, row_n)]
    for r in (head, row_g, row_n):
        lines.append("  " + "  ".join(x.ljust(wi) for x, wi in zip(r, w)).rstrip())
    lines.append("")
    m = ev.metrics
    s1 = m.get("tsao2007/s1-nonperiodic")
    if s1:
        lines.append("S1 non-periodic losses: CV[T] -> X/TCP under the identical loss process")
        lines.append("  " + "  ".join(f"{p['cv']:g}:{num_text(p['norm_identical'])}" for p in s1["points"]))
    s2 = m.get("tsao2007/s2-low-multiplexing")
    if s2:
        lines.append("S2 low multiplexing: CV[RTT] -> X/TCP same run (shortest-RTT flows' loss-rate ratio)")
        lines.append("  " + "  ".join(f"{p['cv_rtt']:g}:{num_text(p['norm_same_run'])} ({num_text(p['short_rtt_loss_ratio'])})" for p in s2["points"]))
    for key, name in (("tsao2007/s3-two-state", "S3 two-state losses"), ("tsao2007/s4-bursty", "S4 bursty losses")):
        s = m.get(key)
        if s:
            lines.append(f"{name}: up {_m_secs(s, 'up')} s (TCP {_m_secs(s, 'up', 'tcp_')} s), "
                         f"down {_m_secs(s, 'down')} s (TCP {_m_secs(s, 'down', 'tcp_')} s) "
                         f"to within tol of the new steady level (stationary reference runs); "
                         f"loss events while converging down X/TCP {num_text(s['down_loss_ratio'])}")
    j = m.get("jin2001/impulse-response")
    if j:
        a, r = j["inv_aggressiveness_rtt"], j["inv_responsiveness_losses"]
        lines.append(f"jin2001 Table 5 (impulse response): 1/aggressiveness {num_text(a['mean'], 1)} RTT "
                     f"[{num_text(a['lo'], 1)}, {num_text(a['hi'], 1)}], 1/responsiveness {num_text(r['mean'])} loss events "
                     f"[{num_text(r['lo'])}, {num_text(r['hi'])}] (n = {a['n']}); operating point W {num_text(j['w_low'], 1)} -> "
                     f"{num_text(j['w_high'], 1)} (paper: 11 -> 22), mean RTT {num_text(j['mean_rtt_s'] * 1e3, 0)} ms")
        for key, where in (("analysis_paper_point", "the paper's point 11 -> 22"), ("analysis_our_point", "our point")):
            an = j.get(key)
            if an:
                lines.append(f"  analysis (tcpf model tradeoff --alg {an['model']} --W {num_text(an['W'], 1)} --m {num_text(an['m'])}) "
                             f"at {where}: 1/aggressiveness {num_text(an['inv_aggressiveness_rtt'], 1)} RTT, "
                             f"1/responsiveness {num_text(an['inv_responsiveness_losses'])} loss events")
    t = m.get("sastry2005/trough")
    if t:
        ci = t.get("ci") or {}

        def _ci(k):
            c = ci.get(k)
            return f" [{num_text(c['lo'])}, {num_text(c['hi'])}]" if c and c.get("n", 0) > 1 else ""
        n = (ci.get("utilization_metric") or {}).get("n")
        lines.append(f"sastry2005 Table I (trough test, %): utilisation metric {num_text(t['utilization_metric'])}"
                     f"{_ci('utilization_metric')}, drop metric {num_text(t['drop_metric'])}{_ci('drop_metric')}, "
                     f"steady utilisation {num_text(t['steady_utilization'])}, "
                     f"steady drop rate {num_text(t['steady_drop_rate'])}"
                     + (f" (mean of {n} runs, [95% CI of the mean])" if n and n > 1 else ""))
    lines.append("")
    lines.extend(thresholds_text(ev.thresholds))
    seeds = ", ".join(f"{k.split('/')[1]} {v}" for k, v in ev.seeds.items())
    lines.append(f"seeds per point: {seeds}; " + _wall(ev)
                 + (" (--quick: under 2 minutes per algorithm on one core)" if ev.quick else ""))
    lines.append("assumptions the papers leave out: see --json \"assumptions\" or experiments/*/*/experiment.toml")
    return "\n".join(lines)


def _wall(ev) -> str:
    """``wall time ... s`` with the batch's runs (``evaluate_many`` shares one batch)."""
    r = ev.runs or {}
    text = f"wall time {ev.wall_s:.1f} s"
    if r.get("schemes", 1) > 1:
        text += f" for the batch of {r['schemes']} schemes"
    if r:
        text += f" ({r.get('ran', 0)} runs, {r.get('cached', 0)} cached, of {r.get('distinct', 0)} distinct)"
    return text


def table4_text(evs: Sequence, paper: Dict[str, List[str]] = G.PAPER_TABLE4) -> str:
    """Our Table 4 beside tsao2007's: 'ours / paper', '*' marks a disagreement."""
    head = ["scheme", *G.COLUMNS]
    rows, match, total = [], 0, 0
    for ev in evs:
        ref = paper.get(ev.algorithm)
        cells = []
        for i, c in enumerate(G.COLUMNS):
            ours = ev.grades.get(c, "-")
            if ref and c in ev.grades:  # a column not run (--only) counts neither way
                total += 1
                ok = ours == ref[i]
                match += ok
                cells.append(f"{ours}/{ref[i]}{'' if ok else '*'} {_cell_number(ev, c)}")
            else:
                cells.append(f"{ours} {_cell_number(ev, c)}")
        rows.append([ev.algorithm, *cells])
    w = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    out = ["  ".join(x.ljust(wi) for x, wi in zip(r, w)).rstrip() for r in [head, *rows]]
    out.append(f"cells 'ours/paper number'; * = disagreement. Matching grades: {match} of {total}")
    if evs:
        out.append(_wall(evs[0]))
    return "\n".join(out)


def _cell_detail(ev, col: str) -> str:
    """The number behind a grade with its parts (markdown cells, disagreement lines)."""
    n = ev.numbers.get(col, {})
    if col == "S1":
        return f"{num_text(n.get('equivalence'))} (max {num_text(n.get('compatibility'))})"
    if col.startswith("S2"):
        return num_text(n.get("equal_share"))
    return f"{num_text(n.get('time_ratio'))} ({number_secs(n, 'x')} s / TCP {number_secs(n, 'tcp')} s)"


def grade_band(grade: str, th, section: str = "transient") -> str:
    """What a tsao2007 grade implies for our number under our thresholds: a time ratio
    (``section`` "transient") or, with "compatibility", the largest throughput ratio."""
    g = grade[:1]
    return {"O": "≤ {o:g}", "Δ": "in ({o:g}, {d:g}]", "X": "> {d:g}"}[g].format(
        o=th[section]["o_max"], d=th[section]["delta_max"])


def share_band(grade: str, th) -> str:
    """The throughput-ratio band a tsao2007 grade implies under our thresholds."""
    o, d = th["throughput"]["o"], th["throughput"]["delta"]
    return {"O": f"[{o:g}, {1 / o:.4g}]", "Δ": f"[{d:g}, {1 / d:.4g}] outside O",
            "X": f"< {d:g} or > {1 / d:.4g}"}[grade[:1]]


def _reason(ev, col: str, ours: str, paper: str) -> str:
    """A one-line, mechanical reading of a disagreement (what our number is against what the
    paper's grade implies); the patterns behind them are discussed by hand in the docs."""
    n = ev.numbers.get(col, {})
    th = ev.thresholds
    if col == "S1":
        return (f"X/TCP under the identical loss process is {num_text(n.get('equivalence'))} at the worst "
                f"CV point (largest {num_text(n.get('compatibility'))}); the paper's {paper} implies "
                f"{share_band(paper, th)}")
    if col.startswith("S2"):
        where = "at CV[RTT] = 0" if col == "S2 hom" else "over CV[RTT] > 0 (geometric mean)"
        return (f"X takes {num_text(n.get('equal_share'))}× TCP's share {where}; the paper's {paper} "
                f"implies {share_band(paper, th)}")
    x, t = n.get("x_s"), n.get("tcp_s")
    if not (isinstance(x, (int, float)) and math.isfinite(x)):
        return (f"X does not reach its new steady level in the phase ({number_secs(n, 'x')} s; "
                f"TCP: {number_secs(n, 'tcp')} s); paper {paper}")
    return (f"X needs {num_text(x, 1)} s vs TCP's {num_text(t, 1)} s (ratio {num_text(n.get('time_ratio'))}); tsao2007 gives "
            f"no TCP time, its grade implies a ratio {grade_band(paper, th)}")


def table4_markdown(evs: Sequence, paper: Dict[str, List[str]] = G.PAPER_TABLE4) -> str:
    """Our Table 4 beside tsao2007's as markdown (docs/evaluate-tsao2007.md): cells
    'ours / paper', **≠** for a disagreement, the number behind our grade; then the count
    of matching grades and one line per disagreement."""
    lines = ["| scheme | " + " | ".join(G.COLUMNS) + " |", "|---" * (len(G.COLUMNS) + 1) + "|"]
    match = total = 0
    diffs = []
    for ev in evs:
        ref = paper.get(ev.algorithm)
        cells = []
        for i, c in enumerate(G.COLUMNS):
            ours = ev.grades.get(c, "-")
            if c not in ev.grades:  # not run (--only)
                cells.append("-")
            elif ref:
                total += 1
                ok = ours == ref[i]
                match += ok
                cells.append(f"{ours} / {ref[i]}{'' if ok else ' **≠**'}<br>{_cell_detail(ev, c)}")
                if not ok:
                    diffs.append(f"- {ev.algorithm} {c}: ours {ours}, paper {ref[i]}, number "
                                 f"{_cell_detail(ev, c)} — {_reason(ev, c, ours, ref[i])}")
            else:
                cells.append(f"{ours}<br>{_cell_detail(ev, c)}")
        lines.append(f"| {ev.algorithm} | " + " | ".join(cells) + " |")
    mode = "quick" if evs and evs[0].quick else "full"
    lines += ["", f"Matching grades ({mode}): **{match} of {total}**.", ""] + diffs
    return "\n".join(lines)


def write_outputs(ev, out: str, field: Optional[str] = "out") -> List[str]:
    """Write evaluation.json, grades.csv, one CSV per experiment table and the figures, each
    file whole or not at all, never through a symbolic link (:mod:`tcpfriendly.outfiles`); a
    failure is an ``OutputError`` naming the file and ``field``."""
    from ..outfiles import atomic_text, make_dir

    make_dir(out, field)

    def put(name: str, text: str) -> str:
        return atomic_text(os.path.join(out, name), text, field=field)

    def csv_text(header: Sequence[str], rows: List[Sequence[Any]]) -> str:
        buf = io.StringIO(newline="")
        w = csv.writer(buf)
        w.writerow(header)
        w.writerows(rows)
        return buf.getvalue()

    written = [put(f"evaluation-{ev.algorithm}.json",
                   json.dumps(ev.to_json(), indent=1, default=str, allow_nan=False))]
    written.append(put(f"grades-{ev.algorithm}.csv", csv_text(
        ["algorithm", "column", "grade", "number"],
        [[ev.algorithm, c, ev.grades[c], _cell_number(ev, c)] for c in G.COLUMNS if c in ev.grades])))
    for key, m in ev.metrics.items():
        if "points" in m and m["points"]:
            names = list(m["points"][0])
            written.append(put(f"{key.replace('/', '-')}-{ev.algorithm}.csv", csv_text(
                names, [[p.get(n, "") for n in names] for p in m["points"]])))
    written.extend(_figures(ev, out, field))
    return written


def _figures(ev, out: str, field: Optional[str] = "out") -> List[str]:
    from ..outfiles import atomic_figure

    return [atomic_figure(fig, os.path.join(out, f"{name}-{ev.algorithm}.{ext}"), field=field, dpi=110)
            for name, fig in figures(ev) for ext in ("png", "svg")]


def _subplots(figsize):
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize)
    return fig, fig.add_subplot()


def figures(ev):
    """The evaluation's figures, ``(name, matplotlib Figure)`` one at a time, most telling first
    (S1, S2, S3, S4, jin2001's impulse response, sastry2005's trough); outside pyplot, so a
    notebook's backend is left alone. Nothing without matplotlib."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:  # pragma: no cover
        return
    m, raw = ev.metrics, ev.raw
    for key, axis, col, xl, yl in (
            ("tsao2007/s1-nonperiodic", "cv", "norm_identical", "CV[T]", "throughput / TCP's (identical losses)"),
            ("tsao2007/s2-low-multiplexing", "cv_rtt", "norm_same_run", "CV[RTT]", "throughput / TCP's (same run)")):
        if key in m:
            pts = m[key]["points"]
            fig, ax = _subplots(figsize=(5, 3.5))
            ax.plot([p[axis] for p in pts], [p[col] for p in pts], "o-", label=ev.algorithm)
            ax.axhline(1.0, color="gray", lw=0.8)
            ax.set_xlabel(xl)
            ax.set_ylabel(yl)
            ax.set_title(f"tsao2007 {key.split('/')[1]}")
            ax.legend()
            fig.tight_layout()
            yield key.replace("/", "-"), fig
    for key in ("tsao2007/s3-two-state", "tsao2007/s4-bursty"):
        r = raw.get(key) or {}
        if r.get("x_series"):
            fig, ax = _subplots(figsize=(6, 4.0))
            for who, label, colour in (("x", ev.algorithm, "tab:blue"), ("tcp", "TCP SACK", "tab:orange")):
                ax.plot(r[f"{who}_series"]["time"], [v / 1e6 for v in r[f"{who}_series"]["rate_bps"]],
                        label=label, lw=0.8, color=colour)
            _transient_marks(ax, r.get("changes") or [], r)
            ax.set_xlabel("time (s)")
            ax.set_ylabel("throughput (Mb/s)")
            ax.set_title(f"tsao2007 {key.split('/')[1]} (first seed)")
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3, frameon=False)
            fig.tight_layout()
            yield key.replace("/", "-"), fig
    r = raw.get("jin2001/impulse-response") or {}
    if r.get("series"):
        fig, ax = _subplots(figsize=(6, 3.5))
        ax.plot(r["series"]["time"], r["series"]["cwnd"], lw=0.8)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("cwnd (packets)")
        ax.set_title(f"jin2001 Fig. 19 style: {ev.algorithm}")
        fig.tight_layout()
        yield "jin2001-impulse-response", fig
    r = raw.get("sastry2005/trough") or {}
    if r.get("series"):
        fig, ax = _subplots(figsize=(6, 3.5))
        ax.plot(r["series"]["time"], r["series"]["utilization"], lw=0.8, label="utilisation (first run)")
        _trough_marks(ax, ev)
        ax.set_xlabel("time (s)")
        ax.set_ylabel("bottleneck utilisation")
        ax.set_title(f"sastry2005 trough test: {ev.algorithm}")
        ax.legend(fontsize=7, loc="lower left")
        fig.tight_layout()
        yield "sastry2005-trough", fig


def _transient_marks(ax, changes, series) -> None:
    """How S3 and S4 grade a change (tsao2007 §4.3-4.4): a line where the regime changes; for
    each flow the new steady level (its stationary reference run) with the tol band around it
    over the phase, the moving average the criterion tests (dashed), and a dot on it where it
    first comes within the band (the convergence time; none when it does not within the
    phase)."""
    import numpy as np

    from ..metrics.transients import moving_average

    avg = {}
    if changes and isinstance(changes[0].get("average_s"), (int, float)):
        w = float(changes[0]["average_s"])
        for who, colour in (("x", "tab:blue"), ("tcp", "tab:orange")):
            t, _, a = moving_average(series[f"{who}_series"]["time"], series[f"{who}_series"]["rate_bps"], w)
            avg[who] = (t, a)
            ax.plot(t, a / 1e6, color=colour, lw=1.2, ls="--",
                    label=f"{w:g}-s moving average" if who == "x" else None)
    for i, c in enumerate(changes):
        ax.axvline(c["time"], color="grey", lw=0.6, ls=":",
                   label="regime change" if i == 0 else None)
        for who, colour in (("x", "tab:blue"), ("tcp", "tab:orange")):
            target = c.get(f"{who}_target_bps")
            if not isinstance(target, (int, float)) or not math.isfinite(target):
                continue
            lo, hi = target * (1 - c["tol"]) / 1e6, target * (1 + c["tol"]) / 1e6
            ax.fill_between([c["time"], c["until"]], lo, hi, color=colour, alpha=0.12, lw=0,
                            label=f"new level ± {c['tol']:g}" if i == 0 and who == "x" else None)
            secs = c.get(f"{who}_seconds")
            if isinstance(secs, (int, float)) and math.isfinite(secs):
                at = c["time"] + secs
                t, a = avg.get(who) or (series[f"{who}_series"]["time"], series[f"{who}_series"]["rate_bps"])
                y = np.interp(at, t, a) / 1e6
                ax.plot([at], [y], "o", ms=4, color=colour,
                        label="within it (convergence time)" if i == 0 and who == "x" else None)


def _trough_marks(ax, ev) -> None:
    """What the trough metrics are measured against (sastry2005 §VI-B): the steady-state
    window, the CBR's stop at t1 and restart at t2, the steady utilisation U_ss (mean over the
    runs) and the util_recover x U_ss the utilisation metric's recovery time counts to."""
    a = {k: v.get("value") for k, v in (ev.assumptions.get("sastry2005/trough") or {}).items()
         if isinstance(v, dict)}
    m = ev.metrics.get("sastry2005/trough") or {}

    def num(x):
        return x if isinstance(x, (int, float)) and not isinstance(x, bool) else None

    lo, hi = num(a.get("steady_from")), num(a.get("steady_to"))
    if lo is not None and hi is not None:
        ax.axvspan(lo, hi, color="grey", alpha=0.15, lw=0, label="steady state")
    for key, what, style in (("t1", "t1: CBR stops", ":"), ("t2", "t2: CBR restarts", "--")):
        if num(a.get(key)) is not None:
            ax.axvline(a[key], color="black", lw=0.8, ls=style, label=f"{what} ({a[key]:g} s)")
    u_ss = num(m.get("steady_utilization"))
    if u_ss is not None:
        u_ss /= 100.0
        ax.axhline(u_ss, color="tab:green", lw=0.8, label=f"U_ss {u_ss:.3f}")
        rec = num(a.get("util_recover"))
        if rec is not None:
            ax.axhline(rec * u_ss, color="tab:red", lw=0.8, ls=":", label=f"{rec:g} U_ss (recovered)")

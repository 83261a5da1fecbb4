"""Analytic models from the papers (the Rust ``tcpf_core::models`` module).

    import tcpfriendly.models as m
    m.rate(alpha=0.31, keep=0.875, p=0.01, rtt=0.1)["rate"]        # yang2000 eq. 2, packets/s
    m.friendly_alpha(beta=1/16)["alpha"]                           # TD curve: 3β/(2−β) = 0.0968
    m.spectrum(k=-0.5, l=1, beta=1/16, wmax=50)["alpha"]           # jin2001 eq. 4 (SIMD)
    m.convergence("simd", W=110, W1=10.2, W2=33.2, eps=10)["t1"]   # jin2001 Table 2
    m.markov(n=4, congestion="light", runs=50)["ratio_mean"]       # liu2008 Figs. 2-7
    m.chiu_jain("simd", W=110, init=[10, 30])["rounds_to_jain"]    # any registered controller

Every function returns a dict: the top-level numbers are the model's named results (what
``tcpf model ... --json`` prints); ``"series"`` holds arrays for plots and ``"details"`` any
text. β is always the fraction of the window REMOVED on a loss event; ``keep`` (the kept
fraction, yang2000's β) is accepted instead, never both, and results show both.

Bad parameters raise :class:`ModelError` (a ``ValueError``) naming the parameter.
The ``plot_*`` functions draw a result with matplotlib and write PNG or SVG files.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, Iterable, List, Optional, Sequence

from .errors import InputError

__all__ = [
    "ModelError", "call", "call_defined", "DEFINED", "summary", "names",
    "rate", "friendly_alpha", "friendly_curve", "spectrum", "convergence", "convergence_map",
    "tradeoff", "cyrf", "fairness", "illinois", "vegas", "markov", "chiu_jain",
    "plot", "PLOTTERS",
]


class ModelError(InputError):
    """An invalid model parameter. ``field`` is the parameter's name (``"beta"``, ``"W1"``...),
    ``message`` what is wrong with it (the engine passes both as structured data)."""


def _core():
    from . import _core as core  # imported lazily so `import tcpfriendly.models` is cheap

    return core


def names() -> List[str]:
    """The models :func:`call` accepts."""
    return list(_core().model_names())


def _check_param(v: Any, where: str) -> None:
    """JSON has no NaN, infinity or bytes: name the parameter (``init[1]``, ``params.alpha``)
    instead of failing as "not valid JSON" in the engine or with json's TypeError."""
    if isinstance(v, float) and not math.isfinite(v):
        raise ModelError(f"{where}: must be a finite number, got {v}", field=where)
    if isinstance(v, (list, tuple)):
        for i, x in enumerate(v):
            _check_param(x, f"{where}[{i}]")
    elif isinstance(v, dict):
        for key, x in v.items():
            if not isinstance(key, str):
                raise ModelError(f"{where}: keys must be strings, got {key!r}", field=where)
            _check_param(x, f"{where}.{key}")
    elif v is not None and not isinstance(v, (bool, int, float, str)):
        raise ModelError(f"{where}: must be a number, string, list or table, got "
                         f"{type(v).__name__}", field=where)


def call(name: str, **params: Any) -> Dict[str, Any]:
    """Run model ``name`` with keyword parameters (``None`` values are left out)."""
    clean = {k: v for k, v in params.items() if v is not None}
    for k, v in clean.items():
        _check_param(v, k)
    try:
        text = _core().model(name, json.dumps(clean))
    except _core().FieldError as exc:
        raise ModelError(str(exc), field=exc.field) from None
    return json.loads(text)


#: The results each model defines for any valid options (tcpf_core::models::api): the engine
#: leaves a non-finite result out (NaN, or an overflow such as jin2001's alpha for k = 1e9), so
#: one of these missing means that the inputs are beyond the range where the model's numbers
#: exist. Results that depend on options (spectrum's Appendix B, illinois at ``da``, ...) are
#: not listed.
DEFINED: Dict[str, Sequence[str]] = {
    "rate": ("rate", "rate_eq2", "rate_eq55", "rate_td_only", "padhye", "mathis", "expected_rounds",
             "expected_window", "f_p", "q", "q_hat", "ratio_eq55_to_eq2", "ratio_to_padhye", "td_term",
             "to_term", "t0"),
    "friendly_alpha": ("alpha", "alpha_td", "alpha_to", "alpha_min", "error_integral"),
    "spectrum": ("alpha", "alpha_eq4", "alpha_eq6", "alpha_eq10", "c", "c_eq5", "c_eq7", "c_eq10",
                 "c_eq10_over_eq5", "gamma_u1", "u", "w0", "epoch_rtt", "friendliness_correction",
                 "region_exponent"),
    "convergence": ("t1", "t2", "t2_epochs", "total", "delta", "epoch_rtt", "shrink"),
    "convergence_map": ("fraction_iiad_slowest", "fraction_simd_faster", "points"),
    "tradeoff": ("cov", "inv_aggressiveness", "inv_responsiveness"),
    "cyrf": ("compatibility_high", "compatibility_low", "fg_over_x_high", "fg_over_x_low"),
    "fairness": ("jain_before", "jain_after", "lhs", "rhs", "margin"),
    "illinois": ("d1", "d2", "d3", "kappa1", "kappa2", "kappa3", "kappa4", "lossy_bound"),
    "vegas": ("d_a", "d_star", "fair_share", "threshold_sigma", "utilization", "w_first", "w_last",
              "w_star", "x_first", "x_last"),
    "markov": ("c1_dev_max", "c1_dev_mean", "cov_max", "cov_mean", "mu", "one_plus_mu", "one_plus_mu_max",
               "one_plus_mu_min", "ratio_max", "ratio_mean", "ratio_min", "slope"),
    "chiu_jain": ("delta_t1", "efficiency", "jain_final", "jain_initial", "t1", "t1_plus_t2", "t2",
                  "t2_epochs"),
}

#: Model calls :func:`call_defined` may make to find the range of the offending input: a fixed
#: count, not a time budget, so that the message (its bound) is the same on any machine.
_BLAME_CALLS = 28
#: Models whose every call is a simulation whose cost grows with the options (markov's --runs x
#: --events): the error names the input without searching for its bound.
_NO_SEARCH = frozenset({"markov"})


def _undefined(name: str, result: Dict[str, Any]) -> List[str]:
    return [k for k in DEFINED.get(name, ()) if k not in result]


def _numbers_in(params: Dict[str, Any]):
    """(path, value) of every non-zero number among the parameters (list items included)."""
    for key, v in params.items():
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)) and v != 0:
            yield (key, None), float(v)
        elif isinstance(v, (list, tuple)):
            for i, x in enumerate(v):
                if isinstance(x, (int, float)) and not isinstance(x, bool) and x != 0:
                    yield (key, i), float(x)


def _with(params: Dict[str, Any], path, value: float) -> Dict[str, Any]:
    key, i = path
    out = dict(params)
    if i is None:
        out[key] = int(value) if isinstance(params[key], int) else value
    else:
        items = list(params[key])
        items[i] = int(value) if isinstance(items[i], int) else value
        out[key] = items
    return out


def _round(v: float, down: bool) -> float:
    """``v`` to 3 significant digits, rounded toward the inside of the valid range."""
    if v == 0 or not math.isfinite(v):
        return v
    scale = 10 ** (math.floor(math.log10(abs(v))) - 2)
    return (math.floor if down else math.ceil)(v / scale) * scale


def call_defined(name: str, **params: Any) -> Dict[str, Any]:
    """:func:`call`, refusing inputs for which a result the model always defines (:data:`DEFINED`)
    is not finite (``tcpf model`` uses this): a :class:`ModelError` naming the input furthest
    from 1 in magnitude (the one that overflows), the result that is lost and, when the model
    is defined for a nearby value of that input with the other parameters as given, the
    bound of its range (found by bisection on its order of magnitude)."""
    result = call(name, **params)
    lost = _undefined(name, result)
    if not lost:
        return result
    clean = {k: v for k, v in params.items() if v is not None}
    numbers = list(_numbers_in(clean))
    what = f"{name.replace('_', '-')}'s {lost[0]} is not finite"
    if not numbers:
        raise ModelError(f"{what} for these parameters")
    path, bad = max(numbers, key=lambda pv: abs(math.log10(abs(pv[1]))))
    field = path[0]
    label = field if path[1] is None else f"{field}[{path[1]}]"

    calls = 0

    def ok(value: float) -> bool:
        nonlocal calls
        calls += 1
        try:
            return not _undefined(name, call(name, **_with(clean, path, value)))
        except (ModelError, ValueError, OverflowError):
            return False

    sign = 1.0 if bad > 0 else -1.0
    good = None
    candidates = () if name in _NO_SEARCH else (1.0, 0.5, 2.0, 0.1, 10.0, 100.0, 0.01, 1e3, 1e-3, 1e4, 1e6)
    for g in candidates:
        if ok(sign * g):
            good = sign * g
            break
    if good is None:
        raise ModelError(f"{field}: {what} with {label} = {bad:g} and the other parameters as given",
                         field=field)
    lo, hi = math.log10(abs(good)), math.log10(abs(bad))  # lo defined, hi not
    while abs(hi - lo) > 0.01 and calls < _BLAME_CALLS:
        mid = (lo + hi) / 2
        if ok(sign * 10 ** mid):
            lo = mid
        else:
            hi = mid
    bound = sign * 10 ** lo
    upper = bad > good  # the model is defined up to `bound`, not above
    bound = _round(bound, down=upper)
    side = f"<= {bound:.3g}" if upper else f">= {bound:.3g}"
    who = "" if path[1] is None else f"{label} "
    raise ModelError(f"{field}: {who}must be {side} with the other parameters as given "
                     f"({what} beyond); got {bad:g}", field=field)


def summary(result: Dict[str, Any]) -> Dict[str, float]:
    """The flat named numbers of a result (without ``series`` and ``details``)."""
    return {k: v for k, v in result.items() if isinstance(v, (int, float)) and not isinstance(v, bool)}


# ----- yang2000 -------------------------------------------------------------------------------
def rate(alpha: float, p: float, rtt: float, beta: Optional[float] = None,
         keep: Optional[float] = None, t0: Optional[float] = None, b: float = 1.0,
         full: bool = False) -> Dict[str, Any]:
    """GAIMD sending rate (packets/s): yang2000 eq. 2 and the full eq. 55, with Padhye and
    Mathis for comparison. ``t0`` defaults to 4·rtt. ``rate`` is eq. 2 (eq. 55 if ``full``)."""
    return call("rate", alpha=alpha, beta=beta, keep=keep, p=p, rtt=rtt, t0=t0, b=b, full=full)


def friendly_alpha(beta: Optional[float] = None, keep: Optional[float] = None, curve: str = "td",
                   threshold: float = 0.3, t0_rtt: float = 4.0, b: float = 1.0,
                   series: bool = False) -> Dict[str, Any]:
    """TCP-friendly α for a β on yang2000's TD (eq. 6), TO (eq. 7) or error-minimising (eq. 8,
    step weight below ``threshold``, T0 = ``t0_rtt``·RTT) curve; all three are in the result.
    ``series=True`` adds the whole curves over β (Fig. 10), the error integral (Fig. 9) and
    the rate ratios (Fig. 11)."""
    return call("friendly_alpha", beta=beta, keep=keep, curve=curve, threshold=threshold,
                t0_rtt=t0_rtt, b=b, series=series)


def friendly_curve(betas: Optional[Iterable[float]] = None, keeps: Optional[Iterable[float]] = None,
                   curve: str = "td", threshold: float = 0.3, t0_rtt: float = 4.0,
                   b: float = 1.0) -> List[float]:
    """α on a TCP-friendly curve for each β removed (``betas``) or kept (``keeps``)."""
    if (betas is None) == (keeps is None):
        raise ModelError("give exactly one of betas and keeps", field="beta")
    if betas is not None:
        return [friendly_alpha(beta=x, curve=curve, threshold=threshold, t0_rtt=t0_rtt, b=b)["alpha"]
                for x in betas]
    return [friendly_alpha(keep=x, curve=curve, threshold=threshold, t0_rtt=t0_rtt, b=b)["alpha"]
            for x in keeps]  # type: ignore[union-attr]


# ----- jin2001 --------------------------------------------------------------------------------
def spectrum(k: float, l: float, wmax: float, beta: Optional[float] = None,
             keep: Optional[float] = None, approx: bool = False,
             delta_i: Optional[float] = None, delta_d: Optional[float] = None) -> Dict[str, Any]:
    """jin2001's TCP-friendly α (eq. 4, or eq. 6 with ``approx``) and c (eq. 5 / 7) for
    (k, l, β, w_max), the convergence-region test and the window function over one epoch;
    Appendix A's periodic-loss c and α (eq. 10: ``c_eq10``, ``alpha_eq10``, ``c_eq10_over_eq5``
    = ``gamma_u1`` = Γ(u+1)); Appendix B's range (``app_b_covers``) and, with ``delta_i`` and
    ``delta_d``, eq. 14 (``eq14_lhs`` = Δ_I + 3Δ_D, ``eq14_holds``) and its extreme-case check
    (``app_b_crossing`` starting points cross the fairness line, ``app_b_fairer`` of them end
    fairer with both windows positive)."""
    return call("spectrum", k=k, l=l, beta=beta, keep=keep, wmax=wmax, approx=approx,
                delta_i=delta_i, delta_d=delta_d)


def convergence(alg: str, W: float, W1: float, W2: float, eps: float,
                beta: Optional[float] = None, keep: Optional[float] = None) -> Dict[str, Any]:
    """jin2001 Table 2: T1 (RTTs to the efficiency line), Δ, T2 (RTTs and epochs to
    |w1 − w2| < ε) for tcp, aimd, iiad or simd. Default β: 1/2, 1/16, 2/3, 1/16."""
    return call("convergence", alg=alg, W=W, W1=W1, W2=W2, eps=eps, beta=beta, keep=keep)


def convergence_map(W: float = 100.0, eps: float = 1.0, beta: float = 1 / 16,
                    iiad_beta: float = 2 / 3, step: float = 1.0) -> Dict[str, Any]:
    """jin2001 Fig. 4(c): where SIMD(β) converges faster (T1 + T2) than AIMD(β) over the
    starting points W1 ≤ W2, W1 + W2 < W."""
    return call("convergence_map", W=W, eps=eps, beta=beta, iiad_beta=iiad_beta, step=step)


def tradeoff(alg: str, W: float, m: float, beta: Optional[float] = None,
             keep: Optional[float] = None, w_down: Optional[float] = None) -> Dict[str, Any]:
    """jin2001 Table 3: smoothness (CoV), 1/aggressiveness (RTTs to grow W → mW) and
    1/responsiveness (loss events to shrink w_down → w_down/m; w_down defaults to W)."""
    return call("tradeoff", alg=alg, W=W, m=m, beta=beta, keep=keep, w_down=w_down)


# ----- sastry2005 -----------------------------------------------------------------------------
def cyrf(f: str, g: str, windows: Optional[Sequence[float]] = None, x: Optional[float] = None,
         consts: Optional[Dict[str, float]] = None, x_min: Optional[float] = None,
         x_max: Optional[float] = None, tolerance: Optional[float] = None) -> Dict[str, Any]:
    """Classify a CYRF pair (f, g) given as formulas in ``w`` (or ``x``) with named
    constants: CYRF / 1-CYRF / TCP-friendly / TCP-compatible (``class``: 2 CYRF, 1 1-CYRF,
    0 neither; the reasons are in ``details``), Corollary 15's TCP-compatible f for this g,
    and eq. 13 for one increase and one decrease step on ``windows``."""
    return call("cyrf", f=f, g=g, windows=list(windows) if windows is not None else None, x=x,
                consts=consts, x_min=x_min, x_max=x_max, tolerance=tolerance)


def fairness(windows: Sequence[float], steps: Sequence[float]) -> Dict[str, Any]:
    """sastry2005 eq. 13: does the step Δx on windows x keep or improve fairness?"""
    return call("fairness", windows=list(windows), steps=list(steps))


# ----- liu2008 --------------------------------------------------------------------------------
def illinois(dm: float = 0.04, da: Optional[float] = None, alpha_max: float = 10.0,
             alpha_min: float = 0.1, beta_max: float = 0.5, beta_min: float = 0.125,
             eta1: float = 0.01, eta2: float = 0.1, eta3: float = 0.8) -> Dict[str, Any]:
    """TCP-Illinois: κ1..κ4 (eq. 4), α(d_a), β(d_a) (eqs. 2–3, Fig. 1) and the lossy-link
    bound √(α_max/(2β_min)) (eq. 31). Delays in seconds."""
    return call("illinois", dm=dm, da=da, alpha_max=alpha_max, alpha_min=alpha_min,
                beta_max=beta_max, beta_min=beta_min, eta1=eta1, eta2=eta2, eta3=eta3)


def vegas(gamma: float = 2.0, capacity: float = 1250.0, tp: float = 0.06, sigma: float = 0.0,
          noisy: str = "both", n: int = 2) -> Dict[str, Any]:
    """TCP Vegas's equilibrium with RTT noise of mean ``sigma`` s (liu2008 eqs. 32–33) for n
    users on ``capacity`` packets/s with propagation RTT ``tp``; noise on ``both`` (all),
    ``one`` or ``none`` of the users."""
    return call("vegas", gamma=gamma, capacity=capacity, tp=tp, sigma=sigma, noisy=noisy, n=n)


def markov(n: int, congestion: str, runs: int = 50, events: int = 1000, warmup: int = 1000,
           beta: Optional[float] = None, keep: Optional[float] = None, rtt_min: float = 0.06,
           rtt_max: float = 0.12, seed: int = 1) -> Dict[str, Any]:
    """liu2008's stochastic matrix model (eqs. 16–18, Assumption 2) by Monte Carlo:
    x̄_i/x_i*, Std(x_i)/x̄_i and the log–log slope 1 + μ (Figs. 2–7); per user the time
    average of x_i·D_i (``series.xd``, the empirical E[x_i·q_i]) and T_i² times it
    (``series.c1``), which Thm 4.3 (eq. 20) says is equal across users (``c1_dev_max``: the
    largest |c1_i / the run's mean − 1|). Seeded."""
    return call("markov", n=n, congestion=congestion, runs=runs, events=events, warmup=warmup,
                beta=beta, keep=keep, rtt_min=rtt_min, rtt_max=rtt_max, seed=seed)


# ----- Chiu–Jain ------------------------------------------------------------------------------
def chiu_jain(alg: "str | Sequence[str]", W: float, n: Optional[int] = None,
              init: Optional[Sequence[float]] = None,
              params: "Optional[Dict[str, Any] | Sequence[Optional[Dict[str, Any]]]]" = None,
              rounds: int = 2000, eps: float = 1.0, rtt: float = 0.1,
              jain_target: float = 0.99) -> Dict[str, Any]:
    """Drive n flows of any registered controllers (``tcpf algorithms``; ``params`` as in a
    scenario file, formulas included) round by round on capacity W with synchronous binary
    feedback. Measures T1, Δ, T2, rounds to Jain > ``jain_target``; -1 means not reached.

    ``alg`` and ``params`` are one algorithm and one parameter dict for every flow, or lists
    with one entry per flow, to mix algorithms (``n`` then defaults to the lists' length, else
    to 2)::

        chiu_jain(["tcp", "gaimd"], W=200, params=[{}, {"alpha": 0.2, "beta": 0.125}])
    """
    as_list = lambda v: list(v) if isinstance(v, (list, tuple)) else v  # noqa: E731
    return call("chiu_jain", alg=as_list(alg), W=W, n=n, init=list(init) if init is not None else None,
                params=as_list(params), rounds=rounds, eps=eps, rtt=rtt, jain_target=jain_target)


# ----- plots ----------------------------------------------------------------------------------
def _figure(ncols: int = 1, nrows: int = 1, size=(6.4, 4.2)):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    return fig, [ax for row in axes for ax in row]


def _save(fig, path: str) -> str:
    """Write ``fig`` to ``path`` whole or not at all (an ``OutputError`` naming ``plot`` and
    the file otherwise) and return the path written."""
    import matplotlib.pyplot as plt

    from .outfiles import atomic_figure

    fig.tight_layout()
    try:
        return atomic_figure(fig, path, field="plot")
    finally:
        plt.close(fig)


def _beta_label(r: Dict[str, Any]) -> str:
    return f"beta={r['beta']:.4g} removed (keep {r['keep']:.4g})"


def plot_rate(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, (ax,) = _figure()
    ax.loglog(s["p"], s["gaimd_eq2"], label="GAIMD eq. 2")
    ax.loglog(s["p"], s["gaimd_eq55"], "--", label="GAIMD eq. 55 (full)")
    ax.loglog(s["p"], s["gaimd_td_only"], ":", label="GAIMD, no timeouts")
    ax.loglog(s["p"], s["padhye"], label="TCP (Padhye)")
    ax.loglog(s["p"], s["mathis"], ":", label="TCP (Mathis)")
    ax.axvline(r["p"], color="grey", lw=0.8)
    ax.set_xlabel("loss event rate p")
    ax.set_ylabel("sending rate (packets/s)")
    ax.set_title(f"GAIMD(alpha={r['alpha']:.4g}, {_beta_label(r)}), RTT={r['rtt']:g}s, T0={r['t0']:g}s")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_friendly_alpha(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, axes = _figure(3, 1, size=(5.0, 4.0))
    ax = axes[0]
    ax.plot(s["keep"], s["td"], label="TD (eq. 6)")
    ax.plot(s["keep"], s["to"], label="TO (eq. 7)")
    ax.plot(s["keep"], s["min"], label=f"error-min (eq. 8, threshold {r['threshold']:g})")
    ax.plot([r["keep"]], [r["alpha"]], "ko")
    ax.set_xlabel("kept fraction (yang2000's beta) = 1 - beta")
    ax.set_ylabel("alpha")
    ax.set_title("TCP-friendly curves (yang2000 Fig. 10)")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.plot(s["alpha_grid"], s["error"])
    ax.axvline(r["alpha_min"], color="grey", lw=0.8)
    ax.set_xlabel("alpha")
    ax.set_ylabel("error integral E(alpha)")
    ax.set_title(f"eq. 8, keep {r['keep']:g}, T0 = {r['t0_rtt']:g} RTT (Fig. 9)")
    ax = axes[2]
    for key, lab in (("ratio_td", "TD"), ("ratio_to", "TO"), ("ratio_min", "error-min")):
        ax.semilogx(s["p"], s[key], label=lab)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_xlabel("loss rate p")
    ax.set_ylabel("GAIMD rate / TCP rate")
    ax.set_title("rate ratio (Fig. 11)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_spectrum(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, (ax,) = _figure()
    ax.plot(s["t"], s["w"])
    ax.set_xlabel("RTTs since the last decrease")
    ax.set_ylabel("window (packets)")
    ax.set_title(f"w(t) = w0 + c t^u: k={r['k']:g}, l={r['l']:g}, beta={r['beta']:.4g}, "
                 f"w_max={r['wmax']:g}")
    return _save(fig, path)


def plot_convergence(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    algs = list(s)
    fig, (ax,) = _figure()
    t1 = [s[a]["t1"] for a in algs]
    t2 = [s[a]["t2"] for a in algs]
    ax.bar(algs, t1, label="T1 (to efficiency)")
    ax.bar(algs, t2, bottom=t1, label="T2 (to fairness)")
    ax.set_yscale("log")
    ax.set_ylabel("RTTs")
    ax.set_title(f"jin2001 Table 2: W={r['W']:g}, (W1, W2)=({r['W1']:g}, {r['W2']:g}), eps={r['eps']:g}")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_convergence_map(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, (ax,) = _figure(size=(5.5, 5.0))
    faster = [a < b for a, b in zip(s["simd"], s["aimd"])]
    xs = [x for x, f in zip(s["W1"], faster) if f]
    ys = [y for y, f in zip(s["W2"], faster) if f]
    xo = [x for x, f in zip(s["W1"], faster) if not f]
    yo = [y for y, f in zip(s["W2"], faster) if not f]
    ax.scatter(xs, ys, s=4, label="SIMD faster")
    ax.scatter(xo, yo, s=4, label="AIMD faster")
    w = r["W"]
    ax.plot([0, w], [w, 0], "k-", lw=0.8)
    ax.plot([0, w], [0, w], "k:", lw=0.8)
    ax.set_xlim(0, w)
    ax.set_ylim(0, w)
    ax.set_xlabel("W1")
    ax.set_ylabel("W2")
    ax.set_title(f"jin2001 Fig. 4(c): beta={r['beta']:.4g}, W={w:g}, eps={r['eps']:g}")
    ax.legend(fontsize=8, loc="upper right")
    return _save(fig, path)


def plot_tradeoff(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, axes = _figure(2, 1)
    for alg, c in s.items():
        axes[0].loglog(c["cov"], c["inv_aggressiveness"], label=alg)
        axes[1].semilogx(c["cov"], c["inv_responsiveness"], label=alg)
    axes[0].plot([r["cov"]], [r["inv_aggressiveness"]], "ko")
    axes[1].plot([r["cov"]], [r["inv_responsiveness"]], "ko")
    axes[0].set_ylabel("1/aggressiveness (RTTs)")
    axes[1].set_ylabel("1/responsiveness (loss events)")
    for ax in axes:
        ax.set_xlabel("smoothness: CoV of the window")
        ax.legend(fontsize=8)
    axes[0].set_title(f"jin2001 Table 3 / Fig. 5: W={r['W']:g}, m={r['m']:g}")
    return _save(fig, path)


def plot_cyrf(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    d = r.get("details", {})
    fig, axes = _figure(2, 1)
    axes[0].loglog(s["x"], s["f"], label="f")
    axes[0].loglog(s["x"], s["compatible_f"], "--", label="TCP-compatible f (Corollary 15)")
    axes[0].set_ylabel("f(x)")
    axes[1].semilogx(s["x"], s["g"], label="g")
    axes[1].set_ylabel("g(x)")
    for ax in axes:
        ax.set_xlabel("window x (packets)")
        ax.legend(fontsize=8)
    axes[0].set_title(f"f = {d.get('f', '')}, g = {d.get('g', '')}: {d.get('class', '')}")
    return _save(fig, path)


def plot_fairness(r: Dict[str, Any], path: str) -> str:
    fig, (ax,) = _figure()
    ax.bar(["before", "after"], [r["jain_before"], r["jain_after"]])
    ax.set_ylim(min(r["jain_before"], r["jain_after"]) * 0.98, 1.0)
    ax.set_ylabel("Jain's index")
    ax.set_title(f"sastry2005 eq. 13: {'holds' if r['holds'] else 'fails'}")
    return _save(fig, path)


def plot_illinois(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, axes = _figure(2, 1)
    axes[0].plot(s["da"], s["alpha"])
    axes[0].set_ylabel("alpha")
    axes[1].plot(s["da"], s["beta"])
    axes[1].set_ylabel("beta (removed)")
    for ax, d in zip(axes, ("d1", "d2")):
        ax.set_xlabel("average queueing delay d_a (s)")
        ax.axvline(r[d], color="grey", lw=0.8)
    axes[1].axvline(r["d3"], color="grey", lw=0.8)
    axes[0].set_title(f"TCP-Illinois (liu2008 Fig. 1), d_m = {r['dm']:g}s")
    return _save(fig, path)


def plot_vegas(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, (ax,) = _figure()
    ax.semilogx(s["sigma"], s["both"], label="both noisy (each)")
    ax.semilogx(s["sigma"], s["one_noisy"], label="one noisy: noisy user")
    ax.semilogx(s["sigma"], s["one_clean"], label="one noisy: clean user")
    ax.axvline(r["threshold_sigma"], color="grey", lw=0.8)
    ax.set_xlabel("noise level sigma (s)")
    ax.set_ylabel("throughput (packets/s)")
    ax.set_title(f"Vegas, gamma={r['gamma']:g} (liu2008 eqs. 32-33, Fig. 15)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def plot_markov(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    fig, axes = _figure(3, 1, size=(4.6, 4.0))
    idx = list(range(len(s["ratio"])))
    axes[0].plot(idx, s["ratio"], ".", ms=3)
    axes[0].axhline(1.0, color="grey", lw=0.8)
    axes[0].set_ylabel("mean x_i / x_i*")
    axes[1].plot(idx, s["cov"], ".", ms=3)
    axes[1].set_ylabel("Std(x_i) / mean x_i")
    for ax in axes[:2]:
        ax.set_xlabel("user (all runs)")
    runs: Dict[int, List[int]] = {}
    for i, run in enumerate(s["run"]):
        runs.setdefault(int(run), []).append(i)
    for run, ids in list(runs.items())[:20]:
        axes[2].plot([math.log(s["rtt"][i]) for i in ids], [math.log(s["mean"][i]) for i in ids], ".-", lw=0.5)
    axes[2].set_xlabel("log T_i")
    axes[2].set_ylabel("log mean x_i")
    axes[2].set_title(f"slope -(1+mu) = {r['slope']:.3f}")
    axes[0].set_title(f"liu2008 stochastic matrix model: N={r['n']}, M_max={r['m_max']:g}")
    return _save(fig, path)


def plot_chiu_jain(r: Dict[str, Any], path: str) -> str:
    s = r["series"]
    w = s["windows"]
    fig, axes = _figure(3, 1, size=(4.8, 4.2))
    ax = axes[0]
    if len(w) >= 2:
        ax.plot(w[0], w[1], lw=0.7)
        ax.plot([w[0][0]], [w[1][0]], "go")
        top = r["W"] * 1.05
        ax.plot([0, r["W"]], [r["W"], 0], "k-", lw=0.8, label="efficiency x1 + x2 = W")
        ax.plot([0, top], [0, top], "k:", lw=0.8, label="fairness x1 = x2")
        ax.set_xlim(0, top)
        ax.set_ylim(0, top)
        ax.set_xlabel("x1 (packets)" + (f", {r['alg_1']}" if "alg_1" in r else ""))
        ax.set_ylabel("x2 (packets)" + (f", {r['alg_2']}" if "alg_2" in r else ""))
        ax.legend(fontsize=7)
    ax.set_title("phase plot (Chiu-Jain)")
    ax = axes[1]
    for i, wi in enumerate(w[:10]):
        name = r.get(f"alg_{i + 1}")  # mixed algorithms
        ax.plot(wi, lw=0.7, label=f"flow {i + 1}" + (f" ({name})" if name else ""))
    ax.set_xlabel("round (RTT)")
    ax.set_ylabel("window (packets)")
    ax.legend(fontsize=7)
    ax = axes[2]
    ax.plot(s["jain"])
    ax.axhline(r["jain_target"], color="grey", lw=0.8)
    if r["rounds_to_jain"] >= 0:
        ax.axvline(r["rounds_to_jain"], color="grey", lw=0.8, ls=":")
    ax.set_xlabel("round (RTT)")
    ax.set_ylabel("Jain's index")
    ax.set_title(f"T1={r['t1']}, T2={r['t2']}, to F>{r['jain_target']:g}: {r['rounds_to_jain']}")
    return _save(fig, path)


PLOTTERS = {
    "rate": plot_rate,
    "friendly_alpha": plot_friendly_alpha,
    "spectrum": plot_spectrum,
    "convergence": plot_convergence,
    "convergence_map": plot_convergence_map,
    "tradeoff": plot_tradeoff,
    "cyrf": plot_cyrf,
    "fairness": plot_fairness,
    "illinois": plot_illinois,
    "vegas": plot_vegas,
    "markov": plot_markov,
    "chiu_jain": plot_chiu_jain,
}


def plot(name: str, result: Dict[str, Any], path: str) -> str:
    """Draw ``result`` of model ``name`` into ``path`` (.png or .svg)."""
    if not str(path).lower().endswith((".png", ".svg")):
        raise ModelError(f"plot: the file name must end in .png or .svg; got {path}", field="plot")
    return PLOTTERS[name](result, path)

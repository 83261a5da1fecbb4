"""`tcpf model ...`: the papers' analytic models on the command line.

``app`` is a Typer sub-app; ``tcpf`` attaches it as ``tcpf model``. Every command prints a
``name = value`` table, or with ``--json`` one flat JSON object of named numbers, and with
``--plot FILE.png|svg`` also draws the model's figure. Numbers may be written as fractions
(``--beta 1/16``). Bad parameters exit 2 with one line ``error: --option: why`` (the policy of
``tcpfriendly.cli.errors``; ``python -m tcpfriendly.cli.model`` applies it too).
"""

from __future__ import annotations

import json
import os
import re
import sys
from typing import Any, Callable, Dict, List, Optional

import typer

from ..errors import ScenarioError
from .errors import as_flags, run_app

app = typer.Typer(
    name="model",
    help=(
        "Analytic models from the papers: sending rates, TCP-friendly curves, jin2001's "
        "spectrum, CYRF, TCP-Illinois, the stochastic matrix model, the Chiu-Jain model.\n\n"
        "beta is always the fraction of the window REMOVED on a loss event; --keep gives the "
        "kept fraction instead (yang2000's beta). --json prints one flat object of named "
        "numbers; --plot FILE.png|svg draws the model's figure.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model rate --alpha 0.31 --keep 0.875 --p 0.01 --rtt 0.1 --full\n"
        "  tcpf model friendly-alpha --beta 1/16\n"
        "  tcpf model spectrum --k -0.5 --l 1 --beta 1/16 --wmax 50\n"
        "  tcpf model convergence --alg simd --W 110 --W1 10.2 --W2 33.2 --eps 10\n"
        "  tcpf model markov --n 4 --congestion light --runs 50 --json\n"
        "  tcpf model chiu-jain --alg simd --n 2 --W 110 --init 10,30 --plot cj.png"
    ),
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


# ----- option helpers -------------------------------------------------------------------------
def _number(text: Any) -> float:
    """A float, also written as a fraction `a/b` (e.g. 1/16)."""
    if isinstance(text, (int, float)):
        return float(text)
    s = str(text).strip()
    try:
        if "/" in s:
            num, _, den = s.partition("/")
            value = float(num) / float(den)
        else:
            value = float(s)
    except (ValueError, ZeroDivisionError):
        raise typer.BadParameter(f"not a number: {s!r}") from None
    return value


def _numbers(text: Any) -> List[float]:
    """A comma-separated list of numbers: 10,30 or 1/16,1/8."""
    if isinstance(text, list):
        return [_number(x) for x in text]
    parts = [p for p in str(text).replace(" ", "").split(",") if p]
    if not parts:
        raise typer.BadParameter("give a comma-separated list of numbers, e.g. 10,30")
    return [_number(p) for p in parts]


def _opt_name(field: str) -> str:
    return "--" + field.replace("_", "-") if field not in ("W", "W1", "W2") else "--" + field


JSON_HELP = "Print one flat JSON object of named numbers."
PLOT_HELP = "Also draw the model's figure into FILE (.png or .svg)."


def _plot_option():
    return typer.Option(None, "--plot", metavar="FILE.png|svg", help=PLOT_HELP)


def _json_option():
    return typer.Option(False, "--json", help=JSON_HELP)


def _fmt(v: Any) -> str:
    return f"{v:.6g}" if isinstance(v, float) else str(v)


def _run(name: str, params: Dict[str, Any], as_json: bool, plot: Optional[str],
         notes: Callable[[Dict[str, Any]], List[str]] = lambda r: [],
         names: Callable[[Dict[str, Any]], Dict[str, str]] = lambda r: {}) -> None:
    """Call model `name` and print its flat numbers (one JSON object with --json, else one
    `name = value` line each, then `notes`). `names(result)` gives the name of a key that holds
    a code (the option it came from, or the name the result carries): the table prints it
    beside the code; the JSON keeps numbers only."""
    from .. import models

    if plot is not None:
        from ..outfiles import figure_file
        figure_file(plot, "--plot", formats=("png", "svg"))
    if plot is not None and name == "friendly_alpha":
        params = dict(params, series=True)
    try:
        result = models.call_defined(name, **params)  # refuses inputs whose results are not finite
    except models.ModelError as exc:
        msg = str(exc)
        if exc.field:
            msg = f"{_opt_name(exc.field)}: {msg.partition(': ')[2]}"
        # the models name their parameters ("use alg = aimd"); here they are options
        msg = re.sub(r"\(use (\w+) = ([^)]+)\)", lambda m: f"(use {_opt_name(m[1])} {m[2]})", msg)
        raise ScenarioError(msg) from None
    flat = models.summary(result)
    if plot is not None:
        with as_flags({"plot": "--plot"}):
            models.plot(name, result, plot)
    if as_json:
        sys.stdout.write(json.dumps(flat) + "\n")
        return
    width = max(len(k) for k in flat) if flat else 0
    named = names(result)
    lines = [f"{k.ljust(width)} = {_fmt(v)}" + (f" ({named[k]})" if named.get(k) else "") for k, v in flat.items()]
    lines.extend(notes(result))
    if plot is not None:
        lines.append(f"wrote {plot}")
    typer.echo("\n".join(lines))


# ----- yang2000 -------------------------------------------------------------------------------
@app.command(
    "rate",
    short_help="GAIMD sending rate (yang2000 eq. 2 / eq. 55), Padhye, Mathis.",
    help=(
        "Sending rate of GAIMD(alpha, beta) in packets/s: yang2000's eq. 2 and the full eq. 55 "
        "(E[W] eq. 24, E[X] eq. 28, Q-hat eq. 45, f(p) eq. 56), with TCP's Padhye and Mathis "
        "formulas for the same p, RTT and T0. `rate` is eq. 2, or eq. 55 with --full. "
        "With --alpha 1 --keep 0.5 eq. 2 is Padhye's formula.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model rate --alpha 0.31 --keep 0.875 --p 0.01 --rtt 0.1\n"
        "  tcpf model rate --alpha 1 --beta 1/2 --p 0.05 --rtt 0.1 --t0 0.4 --full --json"
    ),
)
def rate_command(
    alpha: float = typer.Option(..., "--alpha", parser=_number, metavar="A", help="Increase per RTT (packets)."),
    beta: Optional[float] = typer.Option(None, "--beta", parser=_number, metavar="B", help="Fraction removed per loss event."),
    keep: Optional[float] = typer.Option(None, "--keep", parser=_number, metavar="K", help="Fraction kept (= 1 - beta)."),
    p: float = typer.Option(..., "--p", parser=_number, metavar="P", help="Loss event rate, in (0, 1)."),
    rtt: float = typer.Option(..., "--rtt", parser=_number, metavar="SECONDS", help="Round-trip time."),
    t0: Optional[float] = typer.Option(None, "--t0", parser=_number, metavar="SECONDS", help="Retransmission timeout (default 4 x RTT)."),
    b: float = typer.Option(1.0, "--b", parser=_number, metavar="N", help="Packets acknowledged per ACK."),
    full: bool = typer.Option(False, "--full", help="Report eq. 55 as `rate` (eq. 2 otherwise)."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("rate", dict(alpha=alpha, beta=beta, keep=keep, p=p, rtt=rtt, t0=t0, b=b, full=full), as_json, plot)


@app.command(
    "friendly-alpha",
    short_help="TCP-friendly alpha for a beta: TD, TO or error-minimising curve (yang2000).",
    help=(
        "The alpha that makes GAIMD(alpha, beta) TCP-friendly on yang2000's TD curve (eq. 6, "
        "3*beta/(2-beta)), TO curve (eq. 7, 4(1-keep^2)/3) or error-minimising curve (eq. 8: "
        "minimise the integral of |T(alpha,beta)/T_TCP - 1| over p below --threshold, with "
        "T0 = --t0-rtt RTTs). All three are printed; `alpha` is the --curve one "
        "(in --json its code: 0 td, 1 to, 2 min). --plot draws the whole curves over beta (Fig. 10), "
        "the error integral (Fig. 9) and the rate ratios (Fig. 11).\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model friendly-alpha --beta 1/16                    -> alpha 0.0968\n"
        "  tcpf model friendly-alpha --keep 0.875 --curve to        -> alpha 0.3125\n"
        "  tcpf model friendly-alpha --keep 0.875 --curve min --threshold 0.1 --plot f.png"
    ),
)
def friendly_command(
    beta: Optional[float] = typer.Option(None, "--beta", parser=_number, metavar="B", help="Fraction removed per loss event."),
    keep: Optional[float] = typer.Option(None, "--keep", parser=_number, metavar="K", help="Fraction kept (= 1 - beta)."),
    curve: str = typer.Option("td", "--curve", metavar="td|to|min", help="Which curve gives `alpha`."),
    threshold: float = typer.Option(0.3, "--threshold", parser=_number, metavar="P", help="Weight-1 loss rates for --curve min: p < P."),
    t0_rtt: float = typer.Option(4.0, "--t0-rtt", parser=_number, metavar="X", help="T0 / RTT for the error-minimising curve."),
    b: float = typer.Option(1.0, "--b", parser=_number, metavar="N", help="Packets acknowledged per ACK."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("friendly_alpha", dict(beta=beta, keep=keep, curve=curve, threshold=threshold, t0_rtt=t0_rtt, b=b), as_json, plot,
         names=lambda r: {"curve": curve})


# ----- jin2001 --------------------------------------------------------------------------------
@app.command(
    "spectrum",
    short_help="jin2001's TCP-friendly alpha and c for (k, l, beta, w_max) (eqs. 4-7, 10, 14).",
    help=(
        "jin2001's history spectrum: increase +alpha/(W - w0)^k per RTT (k > -1), decrease "
        "-beta*W^l (l <= 1). Prints the TCP-friendly alpha (eq. 4; eq. 6 with --approx), c of "
        "w(t) = w0 + c*t^u (eq. 5 / eq. 7), u = 1/(k+1), the epoch length and whether (k, l) "
        "is in the convergence region -1 <= l - 1/(k+1) <= 0. Appendix A: c and alpha for "
        "periodic losses (c_eq10, alpha_eq10; without the correction term with --approx) and "
        "their ratio to eq. 5, Gamma(u+1) (2 for SIMD: tsao2007's SIMD/period, algorithm "
        "simd_period). Appendix B: whether (k, l) is in the range eq. 14 is derived for "
        "(app_b_covers) and, with --delta-i and --delta-d (the bounded overshoot and "
        "undershoot, fractions of the capacity), eq. 14 Delta_I + 3*Delta_D < 2 and the check "
        "of its extreme case (l - 1/(k+1) = -1, l = 0) on a grid of starting points.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model spectrum --k -0.5 --l 1 --beta 1/16 --wmax 50     SIMD (eq. 8); c_eq10 = 2 c_eq5\n"
        "  tcpf model spectrum --k 0 --l 1 --beta 1/8 --wmax 50         AIMD: 3b/(2-b) = 0.2\n"
        "  tcpf model spectrum --k 0 --l 0 --beta 2/3 --wmax 30 --delta-i 0.9 --delta-d 0.3"
    ),
)
def spectrum_command(
    k: float = typer.Option(..., "--k", parser=_number, metavar="K", help="Increase exponent, > -1."),
    l: float = typer.Option(..., "--l", parser=_number, metavar="L", help="Decrease exponent, <= 1."),
    beta: Optional[float] = typer.Option(None, "--beta", parser=_number, metavar="B", help="Decrease factor: W <- W - B*W^l, in (0, 1)."),
    keep: Optional[float] = typer.Option(None, "--keep", parser=_number, metavar="K", help="1 - beta, instead of --beta."),
    wmax: float = typer.Option(..., "--wmax", parser=_number, metavar="W", help="Window before the last decrease (packets)."),
    approx: bool = typer.Option(False, "--approx", help="Use the small-beta forms (eqs. 6, 7)."),
    delta_i: Optional[float] = typer.Option(None, "--delta-i", parser=_number, metavar="D", help="Appendix B: maximum overshoot beyond the efficiency line, fraction of the capacity (>= 0; with --delta-d)."),
    delta_d: Optional[float] = typer.Option(None, "--delta-d", parser=_number, metavar="D", help="Appendix B: maximum undershoot below it, fraction of the capacity, in [0, 1) (with --delta-i)."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("spectrum", dict(k=k, l=l, beta=beta, keep=keep, wmax=wmax, approx=approx,
                          delta_i=delta_i, delta_d=delta_d), as_json, plot)


@app.command(
    "convergence",
    short_help="jin2001 Table 2: T1, delta, T2 under synchronised feedback.",
    help=(
        "jin2001 Table 2 (Appendix C): from windows (W1, W2) below the efficiency line "
        "W1 + W2 = W, the RTTs to reach it (T1), the window difference then (delta), and the "
        "RTTs and congestion epochs until |w1 - w2| < eps (T2; a lower bound for IIAD). "
        "Default beta: tcp 1/2 (fixed), aimd 1/16 (alpha = 3b/(2-b)), iiad 2/3, simd 1/16.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model convergence --alg aimd --W 110 --W1 7.9 --W2 99.2 --eps 10    T2 = 1217\n"
        "  tcpf model convergence --alg simd --W 110 --W1 10.2 --W2 33.2 --eps 10   T1 = 85.1"
    ),
)
def convergence_command(
    alg: str = typer.Option(..., "--alg", metavar="tcp|aimd|iiad|simd", help="Algorithm."),
    W: float = typer.Option(..., "--W", parser=_number, metavar="W", help="Capacity in packets (efficiency line)."),
    W1: float = typer.Option(..., "--W1", parser=_number, metavar="W1", help="Initial window of flow 1."),
    W2: float = typer.Option(..., "--W2", parser=_number, metavar="W2", help="Initial window of flow 2."),
    eps: float = typer.Option(..., "--eps", parser=_number, metavar="E", help="Fairness bound |w1 - w2| < E (packets)."),
    beta: Optional[float] = typer.Option(None, "--beta", parser=_number, metavar="B", help="Fraction removed (default per algorithm)."),
    keep: Optional[float] = typer.Option(None, "--keep", parser=_number, metavar="K", help="Fraction kept (= 1 - beta)."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("convergence", dict(alg=alg, W=W, W1=W1, W2=W2, eps=eps, beta=beta, keep=keep), as_json, plot)


@app.command(
    "convergence-map",
    short_help="jin2001 Fig. 4(c): where SIMD converges faster than AIMD.",
    help=(
        "jin2001 Fig. 4(c): over starting points W1 <= W2 with W1 + W2 < W (grid --step), "
        "compare T1 + T2 (Table 2) of SIMD(beta) and TCP-friendly AIMD(beta), and of "
        "IIAD(--iiad-beta). Prints the fractions; --plot draws the region map.\n\n"
        "\b\n"
        "Example:\n"
        "  tcpf model convergence-map --W 100 --eps 1 --beta 1/16 --plot fig4c.png"
    ),
)
def convergence_map_command(
    W: float = typer.Option(100.0, "--W", parser=_number, metavar="W", help="Capacity in packets."),
    eps: float = typer.Option(1.0, "--eps", parser=_number, metavar="E", help="Fairness bound (packets)."),
    beta: float = typer.Option(1 / 16, "--beta", parser=_number, metavar="B", help="beta of SIMD and AIMD (< 0.5)."),
    iiad_beta: float = typer.Option(2 / 3, "--iiad-beta", parser=_number, metavar="B", help="IIAD's beta."),
    step: float = typer.Option(1.0, "--step", parser=_number, metavar="S", help="Grid step (packets)."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("convergence_map", dict(W=W, eps=eps, beta=beta, iiad_beta=iiad_beta, step=step), as_json, plot)


@app.command(
    "tradeoff",
    short_help="jin2001 Table 3: smoothness, 1/aggressiveness, 1/responsiveness.",
    help=(
        "jin2001 Table 3 (Appendix D) for a factor m: the window's coefficient of variation in "
        "an epoch, the RTTs to grow from W to m*W (1/aggressiveness) and the loss events to "
        "shrink from --w-down (default W) to --w-down/m (1/responsiveness). tcp is AIMD with "
        "beta 1/2. jin2001 Table 5's analysis column is m = 2, W = 11, --w-down 22.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model tradeoff --alg simd --W 11 --m 2 --w-down 22          41.5 RTT, 10.7 losses\n"
        "  tcpf model tradeoff --alg iiad --W 20 --m 5 --plot fig6.png"
    ),
)
def tradeoff_command(
    alg: str = typer.Option(..., "--alg", metavar="tcp|aimd|iiad|simd|aiad", help="Algorithm."),
    W: float = typer.Option(..., "--W", parser=_number, metavar="W", help="Mean window before the step (packets)."),
    m: float = typer.Option(..., "--m", parser=_number, metavar="M", help="Factor of the bandwidth step, > 1."),
    beta: Optional[float] = typer.Option(None, "--beta", parser=_number, metavar="B", help="Fraction removed (default per algorithm)."),
    keep: Optional[float] = typer.Option(None, "--keep", parser=_number, metavar="K", help="Fraction kept (= 1 - beta)."),
    w_down: Optional[float] = typer.Option(None, "--w-down", parser=_number, metavar="W", help="Window before the step down (default W)."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("tradeoff", dict(alg=alg, W=W, m=m, beta=beta, keep=keep, w_down=w_down), as_json, plot)


# ----- sastry2005 -----------------------------------------------------------------------------
def _consts(items: Optional[List[str]], option: str) -> Optional[Dict[str, float]]:
    if not items:
        return None
    out: Dict[str, float] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name.strip():
            raise ScenarioError(f"{option}: expected NAME=VALUE, got {item!r}")
        try:
            out[name.strip()] = _number(value)
        except typer.BadParameter:
            raise ScenarioError(f"{option}: {name.strip()} must be a number, got {value!r}") from None
    return out


def _cyrf_notes(r: Dict[str, Any]) -> List[str]:
    d = r.get("details", {})
    lines = [f"class: {d.get('class', '?')}  (f = {d.get('f', '')}, g = {d.get('g', '')})"]
    lines.extend(f"  - {e}" for e in d.get("evidence", []))
    return lines


@app.command(
    "cyrf",
    short_help="Classify a CYRF pair (f, g); Corollary 15; eq. 13 on given windows.",
    help=(
        "sastry2005's CYRF: per RTT x <- x + x/f(x), per loss event x <- x - x*g(x), with f "
        "and g formulas in w (or x): + - * / ^, log (natural), exp, sqrt, abs, min, max, pow, "
        "and constants given with --const NAME=VALUE. Prints whether the pair is CYRF "
        "(class 2), 1-CYRF (class 1) or neither (0), TCP-friendly (f*g ~ x) and TCP-compatible "
        "(Corollary 15: f = x(2 - g)/(3g)), with the evidence; with --x, f, g and Corollary "
        "15's f at x; with --windows, eq. 13 for one increase and one decrease step.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model cyrf --f w --g 0.5                              TCP\n"
        "  tcpf model cyrf --f 'x^2/log(x)' --g '0.5*log(x)/x' --windows 8,10,20   LOG\n"
        "  tcpf model cyrf --f 'w/a' --g b --const a=0.31 --const b=1/8 --x 20"
    ),
)
def cyrf_command(
    f: str = typer.Option(..., "--f", metavar="EXPR", help="f(w): the increase is w/f(w) per RTT."),
    g: str = typer.Option(..., "--g", metavar="EXPR", help="g(w): the decrease removes w*g(w)."),
    const: Optional[List[str]] = typer.Option(None, "--const", metavar="NAME=VALUE", help="A named constant (repeatable)."),
    windows: Optional[List[float]] = typer.Option(None, "--windows", parser=_numbers, metavar="X1,X2,...", help="Windows for eq. 13."),
    x: Optional[float] = typer.Option(None, "--x", parser=_number, metavar="X", help="Evaluate f, g and Corollary 15's f at X."),
    x_min: Optional[float] = typer.Option(None, "--x-min", parser=_number, metavar="X", help="Classification range start (default 2)."),
    x_max: Optional[float] = typer.Option(None, "--x-max", parser=_number, metavar="X", help="Classification range end (default 1000)."),
    tolerance: Optional[float] = typer.Option(None, "--tolerance", parser=_number, metavar="T", help="Relative tolerance (default 0.02)."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("cyrf", dict(f=f, g=g, consts=_consts(const, "--const"), windows=_flatten(windows), x=x,
                      x_min=x_min, x_max=x_max, tolerance=tolerance), as_json, plot, _cyrf_notes,
         names=lambda r: {"class": (r.get("details") or {}).get("class")})


def _flatten(v: Optional[List[Any]]) -> Optional[List[float]]:
    """Typer hands a list-typed option with a parser a list of parsed values."""
    if v is None:
        return None
    out: List[float] = []
    for item in v:
        out.extend(item if isinstance(item, list) else [item])
    return out


@app.command(
    "fairness",
    short_help="sastry2005 eq. 13: does a step keep n flows converging to fairness?",
    help=(
        "sastry2005 Theorem 4, eq. 13: the step dx on windows x improves (or keeps) fairness "
        "iff sum(x^2)*sum(dx) >= sum(x)*sum(x*dx). Prints both sides, holds/strict (1/0) and "
        "Jain's index before and after.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model fairness --windows 8,10,20 --steps 1,1,1          additive increase\n"
        "  tcpf model fairness --windows 8,10,20 --steps -4,-5,-10      multiplicative decrease"
    ),
)
def fairness_command(
    windows: List[float] = typer.Option(..., "--windows", parser=_numbers, metavar="X1,X2,...", help="Windows (packets)."),
    steps: List[float] = typer.Option(..., "--steps", parser=_numbers, metavar="D1,D2,...", help="Signed steps, one per window."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("fairness", dict(windows=_flatten(windows), steps=_flatten(steps)), as_json, plot)


# ----- liu2008 --------------------------------------------------------------------------------
@app.command(
    "illinois",
    short_help="TCP-Illinois: kappa1..4, alpha(d_a), beta(d_a), lossy-link bound (liu2008).",
    help=(
        "TCP-Illinois (liu2008): kappa1..kappa4 of eq. 4 for d_m and the eta's, the alpha(d_a) "
        "and beta(d_a) curves (eqs. 2-3; --plot draws Fig. 1), their values at --da, and the "
        "lossy-link bound sqrt(alpha_max/(2 beta_min)) of eq. 31 (sqrt(40) = 6.32 by default). "
        "Defaults are the paper's (alpha 10/0.1, beta 1/2 / 1/8, eta 0.01, 0.1, 0.8); d_m "
        "defaults to 40 ms (liu2008 §6.4's link).\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model illinois --json\n"
        "  tcpf model illinois --dm 0.1 --da 0.05 --plot fig1.png"
    ),
)
def illinois_command(
    dm: float = typer.Option(0.04, "--dm", parser=_number, metavar="SECONDS", help="Maximum average queueing delay d_m."),
    da: Optional[float] = typer.Option(None, "--da", parser=_number, metavar="SECONDS", help="Evaluate alpha and beta at this d_a."),
    alpha_max: float = typer.Option(10.0, "--alpha-max", parser=_number, metavar="A", help="alpha_max (>= 1)."),
    alpha_min: float = typer.Option(0.1, "--alpha-min", parser=_number, metavar="A", help="alpha_min (<= 1)."),
    beta_max: float = typer.Option(0.5, "--beta-max", parser=_number, metavar="B", help="beta_max (<= 1/2)."),
    beta_min: float = typer.Option(0.125, "--beta-min", parser=_number, metavar="B", help="beta_min."),
    eta1: float = typer.Option(0.01, "--eta1", parser=_number, metavar="E", help="d1 = eta1 * d_m."),
    eta2: float = typer.Option(0.1, "--eta2", parser=_number, metavar="E", help="d2 = eta2 * d_m."),
    eta3: float = typer.Option(0.8, "--eta3", parser=_number, metavar="E", help="d3 = eta3 * d_m."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("illinois", dict(dm=dm, da=da, alpha_max=alpha_max, alpha_min=alpha_min, beta_max=beta_max,
                          beta_min=beta_min, eta1=eta1, eta2=eta2, eta3=eta3), as_json, plot)


@app.command(
    "vegas",
    short_help="TCP Vegas's equilibrium under RTT noise (liu2008 eqs. 32-33).",
    help=(
        "TCP Vegas's equilibrium (liu2008 eqs. 32-33) for n users with gamma (= Vegas's alpha = "
        "beta) on a link of --capacity packets/s, propagation RTT --tp, and RTT noise uniform on "
        "[0, 2 sigma] (an extra delay) for all users (--noisy both), the first (one) or none. "
        "Below the threshold sigma = d* = n*gamma/C the link stays full; above it the noisy "
        "users' throughput gamma/(d_a + sigma) falls. x_first/w_first are user 1's (the noisy one "
        "with --noisy one), x_last/w_last user n's. --plot draws Fig. 15's throughput vs sigma.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model vegas --gamma 2 --capacity 1250 --tp 0.06 --sigma 0.005\n"
        "  tcpf model vegas --gamma 10 --sigma 0.01 --noisy one --plot fig15.png"
    ),
)
def vegas_command(
    gamma: float = typer.Option(2.0, "--gamma", parser=_number, metavar="G", help="Vegas's gamma (packets)."),
    capacity: float = typer.Option(1250.0, "--capacity", parser=_number, metavar="PKTS/S", help="Link capacity (10 Mbps of 1000 B packets = 1250)."),
    tp: float = typer.Option(0.06, "--tp", parser=_number, metavar="SECONDS", help="Propagation RTT."),
    sigma: float = typer.Option(0.0, "--sigma", parser=_number, metavar="SECONDS", help="Mean RTT noise."),
    noisy: str = typer.Option("both", "--noisy", metavar="both|one|none", help="Which users see the noise."),
    n: int = typer.Option(2, "--n", metavar="N", help="Number of users."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("vegas", dict(gamma=gamma, capacity=capacity, tp=tp, sigma=sigma, noisy=noisy, n=n), as_json, plot)


@app.command(
    "markov",
    short_help="liu2008's stochastic matrix model by Monte Carlo (Figs. 2-7).",
    help=(
        "liu2008's stochastic matrix model of AIMD (eqs. 16-18) under Assumption 2: at each "
        "congestion event M packets are dropped, M uniform on [1, N/2] (light), [1, N] "
        "(medium) or [1, 2N] (heavy), each belonging to flow i with probability x_i/C. "
        "Runs --runs sample paths with random x[0] and RTTs (uniform on [--rtt-min, "
        "--rtt-max]), averages --events events after --warmup, and prints mean x_i/x_i* "
        "(x* = equal windows), Std(x_i)/mean x_i and the slope of log x_i against log T_i "
        "(-(1 + mu)); per user of the first run, the time average of x_i*D_i (D_i = 1 when "
        "user i backs off at an event: the empirical E[x_i q_i]) and T_i^2 times it, which "
        "Thm 4.3 (eq. 20) says is the same for every user (c1_dev_max: the largest relative "
        "deviation from the run's mean, over every run). Seeded: same --seed, same numbers.\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model markov --n 4 --congestion light --runs 50\n"
        "  tcpf model markov --n 10 --congestion heavy --runs 50 --json --plot fig7.png"
    ),
)
def markov_command(
    n: int = typer.Option(..., "--n", metavar="N", help="Number of flows (>= 2)."),
    congestion: str = typer.Option(..., "--congestion", metavar="light|medium|heavy", help="Distribution of M."),
    runs: int = typer.Option(50, "--runs", metavar="R", help="Sample paths."),
    events: int = typer.Option(1000, "--events", metavar="K", help="Congestion events averaged."),
    warmup: int = typer.Option(1000, "--warmup", metavar="K", help="Events discarded first."),
    beta: Optional[float] = typer.Option(None, "--beta", parser=_number, metavar="B", help="Fraction removed per backoff (default 1/2)."),
    keep: Optional[float] = typer.Option(None, "--keep", parser=_number, metavar="K", help="Fraction kept (= 1 - beta)."),
    rtt_min: float = typer.Option(0.06, "--rtt-min", parser=_number, metavar="SECONDS", help="Smallest RTT drawn."),
    rtt_max: float = typer.Option(0.12, "--rtt-max", parser=_number, metavar="SECONDS", help="Largest RTT drawn."),
    seed: int = typer.Option(1, "--seed", metavar="S", help="Random seed."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    _run("markov", dict(n=n, congestion=congestion, runs=runs, events=events, warmup=warmup, beta=beta,
                        keep=keep, rtt_min=rtt_min, rtt_max=rtt_max, seed=seed), as_json, plot, _markov_notes)


def _markov_notes(r: Dict[str, Any]) -> List[str]:
    """The first run's users: T_i, mean x_i, E[x_i*D_i] and T_i^2*E[x_i*D_i] (Thm 4.3's C1)."""
    s = r.get("series") or {}
    rows = [i for i, run in enumerate(s.get("run") or []) if run == 0]
    return [f"  - run 0, user {j}: T_i {_fmt(s['rtt'][i])} s, mean x_i {_fmt(s['mean'][i])}, "
            f"E[x_i*D_i] {_fmt(s['xd'][i])}, T_i^2*E[x_i*D_i] {_fmt(s['c1'][i])} (Thm 4.3: equal across users)"
            for j, i in enumerate(rows)]


# ----- Chiu–Jain ------------------------------------------------------------------------------
def _params(items: Optional[List[str]]) -> Optional[Dict[str, Any]]:
    if not items:
        return None
    out: Dict[str, Any] = {}
    for item in items:
        name, sep, value = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise ScenarioError(f"--param: expected NAME=VALUE, got {item!r}")
        try:
            out[name] = _number(value)
        except typer.BadParameter:
            out[name] = value.strip()  # a formula or a choice
    return out


def _flow_params(items: Optional[List[str]], n_algs: int) -> Any:
    """--param NAME=VALUE (every flow) and --param I:NAME=VALUE (flow I, from 1): one dict for
    all flows, or a list with one dict per flow when any is numbered."""
    shared, numbered = [], {}
    for item in items or []:
        head, sep, rest = item.partition(":")
        if sep and head.strip().isdigit() and "=" in rest and "=" not in head:
            numbered.setdefault(int(head), []).append(rest)
        else:
            shared.append(item)
    if not numbered:
        return _params(shared)
    n = max([n_algs] + list(numbered))
    bad = [i for i in numbered if i < 1]
    if bad or (n_algs > 1 and max(numbered) > n_algs):
        raise ScenarioError(f"--param: flow {(bad or [max(numbered)])[0]} does not exist: flows are numbered "
                            f"1..{n_algs if n_algs > 1 else 'N'}")
    return [_params(shared + numbered.get(i, [])) or {} for i in range(1, n + 1)]


@app.command(
    "chiu-jain",
    short_help="Chiu-Jain synchronous model driving any registered controller.",
    help=(
        "The Chiu-Jain model: n flows of registered controllers (see `tcpf algorithms`; "
        "parameters with --param NAME=VALUE, formulas included) on a capacity of W packets "
        "with synchronous binary feedback, round by round (one RTT each): all flows get a "
        "loss event when the windows sum to more than W, otherwise one ACK per packet. Each "
        "flow starts a congestion epoch at its --init window. Prints T1 (rounds to the first "
        "loss), delta_t1, T2 (rounds after T1 until max - min < eps for good) and its epochs, "
        "rounds until Jain's index stays above --jain-target, the final index and the "
        "efficiency; -1 means not reached. --plot draws the (x1, x2) phase plot with the "
        "fairness and efficiency lines, the windows and Jain's index over time.\n\n"
        "Mixed algorithms: give --alg once per flow (flow 1 first); --param I:NAME=VALUE "
        "then sets a parameter of flow I only (an unnumbered --param goes to every flow).\n\n"
        "\b\n"
        "Examples:\n"
        "  tcpf model chiu-jain --alg simd --n 2 --W 110 --init 10,30\n"
        "  tcpf model chiu-jain --alg tcp --alg gaimd --param 2:alpha=0.2 --param 2:beta=1/8 --W 200 --init 20,60\n"
        "  tcpf model chiu-jain --alg gaimd --param alpha=3/31 --param beta=1/16 --W 110 --init 10,30 --json\n"
        "  tcpf model chiu-jain --alg formula --param f=w --param g=0.5 --n 3 --W 60 --plot cj.png"
    ),
)
def chiu_jain_command(
    alg: List[str] = typer.Option(..., "--alg", metavar="NAME", help="A registered algorithm (tcpf algorithms); once per flow to mix algorithms."),
    param: Optional[List[str]] = typer.Option(None, "--param", metavar="[I:]NAME=VALUE", help="A controller parameter (repeatable); I: for flow I only."),
    n: Optional[int] = typer.Option(None, "--n", metavar="N", help="Number of flows (default: one per --alg when several, else 2)."),
    W: float = typer.Option(..., "--W", parser=_number, metavar="W", help="Capacity in packets."),
    init: Optional[List[float]] = typer.Option(None, "--init", parser=_numbers, metavar="W1,W2,...", help="Initial windows (default spread below W/2)."),
    rounds: int = typer.Option(2000, "--rounds", metavar="R", help="Rounds (RTTs) to run."),
    eps: float = typer.Option(1.0, "--eps", parser=_number, metavar="E", help="Fairness bound for T2 (packets)."),
    rtt: float = typer.Option(0.1, "--rtt", parser=_number, metavar="SECONDS", help="The constant RTT the controllers see."),
    jain_target: float = typer.Option(0.99, "--jain-target", parser=_number, metavar="F", help="Jain-index target."),
    as_json: bool = _json_option(),
    plot: Optional[str] = _plot_option(),
) -> None:
    params = _flow_params(param, len(alg))
    _run("chiu_jain", dict(alg=alg[0] if len(alg) == 1 else alg, params=params, n=n, W=W, init=_flatten(init),
                           rounds=rounds, eps=eps, rtt=rtt, jain_target=jain_target), as_json, plot,
         notes=lambda r: ["flows          : " + ", ".join(f"{i} {r[f'alg_{i}']}" for i in range(1, r["n"] + 1))]
         if "alg_1" in r else [])


# ----- standalone entry point ------------------------------------------------------------------
def main(argv: Optional[List[str]] = None) -> None:
    """Run the sub-app on its own: ``python -m tcpfriendly.cli.model rate --alpha 1 ...`` is
    ``tcpf model rate --alpha 1 ...``, with tcpf's error policy (one line, exit 2 on bad input)."""
    run_app(app, argv, "tcpf model")


if __name__ == "__main__":
    main()

"""Differential checks against ns-2 2.35, the simulator the papers used.

`export_tcl(expanded)` turns an *expanded* scenario (the output of
`tcpfriendly._core.expand(json, seed)`) into a self-contained ns-2 Tcl script;
`run_ns2(expanded)` runs it with the installed `ns` binary and returns the
result in the same schema as the tcpfriendly engine.  The facts behind every
knob set here (sizes, queue limits, RED details, TCP defaults) are collected in
docs/ns2-notes.md.

What ns-2 cannot express raises `Ns2Unsupported`, naming the scenario element.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

__all__ = ["Ns2Unsupported", "Ns2Agent", "ALGORITHMS", "UNSUPPORTED_ALGORITHMS", "export_tcl",
           "run_ns2", "ns2_available", "parse_output"]


class Ns2Unsupported(ValueError):
    """The scenario uses something ns-2 2.35 cannot express; the message names it."""


# ns-2's one-way TCP adds a 40-byte TCP/IP header to every data packet
# (Agent/TCP tcpip_base_hdr_size_); the SYN is a bare 40-byte header.
TCP_HEADER_BYTES = 40
# "No receiver-window limit": ns-2 has no infinite window_, so use a big one.
HUGE_WINDOW = 1_000_000
# Access-link queues must never drop.
ACCESS_QUEUE_LIMIT = 1_000_000
# Period of the Tcl sampler behind mean_cwnd and mean_rtt_s.  Sampling from
# Tcl is expensive in ns-2 (about 15 us per flow and sample), so keep it coarse;
# None switches it off (those two fields are then null).
DEFAULT_SAMPLE_INTERVAL_S = 0.5

Setting = Tuple[str, Any]


# --------------------------------------------------------------------------
# Congestion-control algorithms: one entry per algorithm.
# Each entry maps the canonical params (beta = fraction removed) to an
# `Ns2Agent`: the Agent/TCP variables that implement it and, where the
# algorithm needs one, its own sender/sink classes and Tcl commands run on the
# agent at time 0.  ns-2 caveats that apply to all windowOption_ 1/6 controls
# (the first decrease halves, reductions in slow start halve) are in
# docs/ns2-notes.md; the engine follows the same rules.
# --------------------------------------------------------------------------

@dataclass
class Ns2Agent:
    """How one flow's controller is expressed in ns-2."""
    settings: List[Setting] = field(default_factory=list)
    sender: Optional[str] = None        # None: the class for the flow's `recovery`
    sink: Optional[str] = None          # None: the sink for the flow's `recovery`
    delack_sink: Optional[str] = None
    at_start: List[str] = field(default_factory=list)  # "$tcp <cmd>" at t = 0
    # the counter of window reductions (fast retransmits + timeouts + ECN responses)
    loss_counter: str = "ncwndcuts1_"
    # recoveries the agent can express (None: all of RECOVERY)
    recoveries: Optional[Tuple[str, ...]] = None


def _param(params: Dict[str, Any], name: str, where: str) -> float:
    if name not in params or params[name] is None:
        raise Ns2Unsupported(f"{where}.params: missing '{name}' needed for the ns-2 mapping")
    return float(params[name])


def _alg_tcp(params: Dict[str, Any], where: str) -> Ns2Agent:
    return Ns2Agent()


def _alg_gaimd(params: Dict[str, Any], where: str) -> Ns2Agent:
    alpha = _param(params, "alpha", where)
    beta = _param(params, "beta", where)  # canonical: fraction removed
    return Ns2Agent([("windowOption_", 1), ("increase_num_", alpha),
                     ("decrease_num_", 1.0 - beta),  # ns-2 wants the kept fraction
                     ("precisionReduce_", "true")])


# Fixed exponents of the named binomial controls (Bansal & Balakrishnan; jin2001, tsao2007).
BINOMIAL_EXPONENTS = {"iiad": (1.0, 0.0), "sqrt": (0.5, 0.5)}


def _binomial_decrease_num(beta: float, l: float) -> float:
    """ns-2's decrease_num_ for a binomial control: 1 - beta, except that ns-2's
    slowdown() halves the whole window whenever decrease_num_ == 0.5 exactly
    (`... || decrease_num_ == 0.5) cwnd_ = halfwin`), which is not W - 0.5*W^l
    unless l == 1.  Nudge it off 0.5 by one part in 10^12 in that case."""
    keep = 1.0 - beta
    if keep == 0.5 and l != 1.0:
        keep = 0.5 + 1e-12
    return keep


def _alg_binomial(params: Dict[str, Any], where: str, name: str = "binomial") -> Ns2Agent:
    # ns-2 windowOption_ 6: per new ACK in congestion avoidance
    # cwnd += increase_num_/cwnd^(k+1); on a loss cwnd -= (1 - decrease_num_)*cwnd^l.
    fixed = BINOMIAL_EXPONENTS.get(name)
    alpha = _param(params, "alpha", where)
    beta = _param(params, "beta", where)
    if fixed is not None:
        k = float(params.get("k", fixed[0]) if params.get("k") is not None else fixed[0])
        l = float(params.get("l", fixed[1]) if params.get("l") is not None else fixed[1])
    else:
        k = _param(params, "k", where)
        l = _param(params, "l", where)
    return Ns2Agent([("windowOption_", 6), ("increase_num_", alpha),
                     ("decrease_num_", _binomial_decrease_num(beta, l)), ("k_parameter_", k),
                     ("l_parameter_", l), ("precisionReduce_", "true")])


# Parameters of Linux modules as compiled into ns-2 2.35 (tcp/linux/src/*.c, from Linux
# 2.6.22.6), by the engine's parameter names. `fixed` ones cannot be changed: a number (or
# (value, tolerance)) or a choice the engine's value must equal. `settable` ones are module
# parameters that `$tcp set_ca_param <module> <name> <int>` sets for that agent only:
# engine name -> (Linux name, Linux default, conversion of the engine's value to the int).
def _whole(scale: float = 1.0) -> Callable[[Any], Optional[int]]:
    def conv(v: Any) -> Optional[int]:
        x = float(v) * scale
        return int(round(x)) if abs(x - round(x)) < 1e-6 else None
    return conv


def _switch(v: Any) -> Optional[int]:
    return {"on": 1, "off": 0}.get(str(v))


def _keep1024(beta: Any) -> Optional[int]:
    """BIC's beta module parameter: the kept fraction times 1024 (engine beta = removed)."""
    return _whole(1024.0)(1.0 - float(beta))


LINUX_MODULES: Dict[str, Dict[str, Any]] = {
    "illinois": {
        # ALPHA_MAX 10, ALPHA_MIN (3*128/10)/128 = 0.297, BETA_MIN 1/8, BETA_MAX 1/2,
        # d1 = dm/100, d2 = dm/10, d3 = 8*dm/10, base/max RTT from single samples
        "fixed": {"alpha_max": 10.0, "alpha_min": 0.3, "beta_max": 0.5, "beta_min": 0.125,
                  "eta1": 0.01, "eta2": 0.1, "eta3": 0.8, "extremes": "instantaneous",
                  # Linux counts low-delay rounds in rtt_low without resetting it on high ones
                  "theta_count": "cumulative",
                  # 2.6.22's tcp_illinois_ssthresh keeps beta*W (later Linux removes it)
                  "decrease": "linux-2.6.22"},
        "settable": {"w_thresh": ("win_thresh", 15, _whole()), "theta": ("theta", 5, _whole())},
    },
    # RFC 3649 Appendix B's table (hstcp_aimd_vals), Low_Window 38; no module parameters
    "highspeed": {
        "fixed": {"low_window": 38.0, "high_window": 83000.0, "high_p": 1e-7, "high_decrease": 0.1,
                  "response": "table"},
        "settable": {},
    },
    # +1 packet per min(cwnd, 50) + 1 ACKs (TCP_SCALABLE_AI_CNT 50: a = 1/51 per ACK above 50
    # packets, Reno-like below), W - W/8 on a loss (TCP_SCALABLE_MD_SCALE 3)
    "scalable": {
        "fixed": {"a": (1.0 / 51.0, 2e-4), "b": 0.125, "low_window": 50.0},
        "settable": {},
    },
    # BICTCP_B 4 is compiled in; the rest are module parameters (beta = kept fraction * 1024)
    "bic": {
        "fixed": {"b": 4.0},
        "settable": {"fast_convergence": ("fast_convergence", 1, _switch),
                     "max_increment": ("max_increment", 16, _whole()),
                     "low_window": ("low_window", 14, _whole()),
                     "beta": ("beta", 819, _keep1024),
                     "smooth_part": ("smooth_part", 20, _whole())},
    },
    # CUBIC v2.1: beta 819/1024 kept and C = bic_scale*10/1024 = 0.4004 are folded into constants
    # when the module loads (beta_scale, cube_rtt_scale), so only the switches can be changed
    "cubic": {
        "fixed": {"beta": (1.0 - 819.0 / 1024.0, 5e-4), "c": (410.0 / 1024.0, 1e-3)},
        "settable": {"fast_convergence": ("fast_convergence", 1, _switch),
                     "reno_friendly": ("tcp_friendliness", 1, _switch)},
    },
    # Delta_L = 1 s (HZ), backoff kept in [BETA_MIN, BETA_MAX] = [64, 102]/128 (removed 0.5 to
    # 0.203), alpha scaled by RTT_min/100 ms, adaptive backoff always on
    "htcp": {
        "fixed": {"delta_l": 1.0, "beta_min": (0.2, 0.004), "beta_max": 0.5, "rtt_ref": 0.1,
                  "adaptive_backoff": "on"},
        "settable": {"rtt_scaling": ("use_rtt_scaling", 1, _switch),
                     "bandwidth_switch": ("use_bandwidth_switch", 1, _switch)},
    },
    # TCP_COMPOUND_ALPHA 3 (1/8 as a shift), BETA 1 (1/2), k 3/4, GAMMA 30, ZETA 1.
    # The module takes its RTT samples through the old `rtt_sample` hook, which TCP/Linux
    # (tcp/tcp-linux.cc) calls only from rtt_update(): once per ACK with timestamps_ true,
    # otherwise only for the one timed segment per RTT, and the module updates dwnd only
    # after a round with more than 2 samples, so without timestamps dwnd stays 0 (Reno).
    # Linux calls rtt_sample for every ACK of new data, as the engine samples; `rtt_sample`
    # makes the exporter switch timestamps on (option size 0: headers stay 40 bytes).
    "compound": {
        "fixed": {"alpha": 0.125, "beta": 0.5, "k": 0.75, "gamma": 30.0, "zeta": 1.0, "low_window": 0.0,
                  # the module's arithmetic and loss reaction (whole-packet dwnd growth,
                  # floor(floor(w^(3/4))/8) - 1; after a loss dwnd = 0)
                  "variant": "ns2-module"},
        "settable": {},
        "rtt_sample": True,
    },
    # alpha, beta, gamma in half packets (V_PARAM_SHIFT 1): defaults 2, 4, 1 packets; 2.6.22's
    # module has no tcp_vegas_ssthresh (the engine's lower_ssthresh = "off")
    "vegas": {
        "fixed": {"lower_ssthresh": "off"},
        "settable": {"alpha": ("alpha", 4, _whole(2.0)), "beta": ("beta", 8, _whole(2.0)),
                     "gamma": ("gamma", 2, _whole(2.0))},
    },
}

# engine algorithm -> ns-2 TCP/Linux module
LINUX_ALGORITHMS = {"illinois_linux": "illinois", "hstcp": "highspeed", "scalable": "scalable",
                    "bic": "bic", "cubic": "cubic", "htcp": "htcp", "compound": "compound",
                    "vegas": "vegas"}


def _fixed_ok(value: Any, fixed: Any) -> bool:
    if isinstance(fixed, str):
        return value == fixed
    if isinstance(fixed, tuple):
        target, tol = fixed
        return abs(float(value) - target) <= tol
    return abs(float(value) - fixed) < 1e-9


def _alg_linux(module: str) -> Callable[[Dict[str, Any], str], Ns2Agent]:
    """A Linux congestion-control module run by ns-2's TCP/Linux (Linux's own code; only its
    module parameters can be set, the rest must be the module's compiled-in values)."""
    spec = LINUX_MODULES.get(module, {"fixed": {}, "settable": {}})

    def build(params: Dict[str, Any], where: str) -> Ns2Agent:
        cmds = [f"select_ca {module}"]
        for name, value in params.items():
            if value is None:
                continue
            if name in spec["settable"]:
                linux_name, default, conv = spec["settable"][name]
                v = conv(value)
                if v is None:
                    raise Ns2Unsupported(f"{where}.params.{name}: {value!r} cannot be expressed as ns-2's "
                                         f"Linux module parameter {linux_name} (an int)")
                if v != default:
                    cmds.append(f"set_ca_param {module} {linux_name} {v}")
            elif name in spec["fixed"]:
                fixed = spec["fixed"][name]
                if not _fixed_ok(value, fixed):
                    shown = fixed[0] if isinstance(fixed, tuple) else fixed
                    shown = f"{shown:.6g}" if isinstance(shown, float) else shown
                    raise Ns2Unsupported(f"{where}.params.{name}: {value!r} cannot be set in ns-2 (its "
                                         f"tcp_{module} is Linux 2.6.22's, compiled with {name} = {shown})")
            else:
                raise Ns2Unsupported(f"{where}.params.{name}: ns-2's tcp_{module} has no such parameter")
        # per-ACK RTT samples for modules on the rtt_sample hook (see LINUX_MODULES)
        settings: List[Setting] = ([("timestamps_", "true"), ("ts_option_size_", 0)]
                                   if spec.get("rtt_sample") else [])
        return Ns2Agent(
            settings=settings,
            sender="Agent/TCP/Linux", sink="Agent/TCPSink/Sack1",
            delack_sink="Agent/TCPSink/Sack1/DelAck",
            at_start=cmds,
            # TCP/Linux with a module counts its reductions (recovery entries and
            # timeouts) in ncwndcuts_ only; ncwndcuts1_ stays 0
            loss_counter="ncwndcuts_",
            recoveries=("sack", "linux"))
    return build


ALGORITHMS: Dict[str, Callable[[Dict[str, Any], str], Ns2Agent]] = {
    "tcp": _alg_tcp,
    "gaimd": _alg_gaimd,
    "binomial": _alg_binomial,
    "iiad": lambda p, w: _alg_binomial(p, w, "iiad"),
    "sqrt": lambda p, w: _alg_binomial(p, w, "sqrt"),
    # Linux 2.6.22 modules through Agent/TCP/Linux (select_ca), see LINUX_MODULES
    **{alg: _alg_linux(module) for alg, module in LINUX_ALGORITHMS.items()},
}

# Controllers of the engine that ns-2 2.35 lacks, with the reason given in the error.
_HISTORY_WHY = ("is a member of jin2001's history spectrum: its increase depends on w0 and on "
                "alpha recomputed from w_max after every decrease, which no Agent/TCP "
                "windowOption_ law implements")
UNSUPPORTED_ALGORITHMS: Dict[str, str] = {
    "simd": f"ns-2 2.35 has no SIMD (SIMD {_HISTORY_WHY})",
    "aiad_h": f"ns-2 2.35 has no AIAD/H (AIAD/H {_HISTORY_WHY})",
    "pimd": f"ns-2 2.35 has no such controller (pimd {_HISTORY_WHY})",
    "aisd_h": f"ns-2 2.35 has no such controller (aisd_h {_HISTORY_WHY})",
    "pisd": f"ns-2 2.35 has no such controller (pisd {_HISTORY_WHY})",
    "history": f"ns-2 2.35 has no history-spectrum controller (it {_HISTORY_WHY})",
    "aiad": "ns-2 2.35 has no AIAD (no windowOption_ decreases by a constant)",
    "log": "ns-2 2.35 has no LOG controller (sastry2005's CYRF increase log(W) is not a power of W, "
           "so windowOption_ 6 cannot express it)",
    "sigmoid": "ns-2 2.35 has no SIGMOID controller (sastry2005's CYRF family is not in Agent/TCP)",
    "illinois": "ns-2 2.35 has only Linux's tcp_illinois (use algorithm = \"illinois_linux\"); "
                "the paper version's parameters cannot be set there",
    "formula": "ns-2 2.35 cannot run a user-defined window law (formula controllers exist only in "
               "tcpfriendly)",
    "cyrf": "ns-2 2.35 has no CYRF controller",
}

# recovery -> (sender, sink, delayed-ACK sink)
RECOVERY = {
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1", "Agent/TCPSink/Sack1/DelAck"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "reno": ("Agent/TCP/Reno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    # the engine's Linux 2.6.22-style recovery is TCP-Linux's own (Linux modules only)
    "linux": ("Agent/TCP/Linux", "Agent/TCPSink/Sack1", "Agent/TCPSink/Sack1/DelAck"),
}


# --------------------------------------------------------------------------
# Rate-based senders (flows of kind "rate"): TFRC is Agent/TFRC + Agent/TFRCSink.
# ns-2 2.35 has neither TFRCP nor TEAR.  The knobs and what they cannot change are in
# docs/ns2-notes.md (section "TFRC").
# --------------------------------------------------------------------------

@dataclass
class Ns2RateAgent:
    """How one rate-based flow is expressed in ns-2."""
    sender: str
    sink: str
    settings: List[Setting] = field(default_factory=list)       # on the sender
    sink_settings: List[Setting] = field(default_factory=list)  # on the receiver
    # t_RTO in the equation = t_rto_rtts x RTT in the engine; ns-2 uses a TCP-style RTO
    # estimate, floored by minrto_ (see _tfrc_min_rto)
    t_rto_rtts: float = 4.0


def rfc5348_weights(n: int) -> List[float]:
    """RFC 5348 section 5.4 weights w_0..w_{n-1} of the loss-interval average."""
    return [1.0 if i < n / 2 else 2.0 * (n - i) / (n + 2) for i in range(n)]


def ns2_tfrc_weights(n: int) -> List[float]:
    """The weights Agent/TFRCSink applies to the n most recent intervals with NumSamples_ n
    and smooth_ 1 (tcp/tfrc-sink.cc, init_WALI: n + 1 weights, the last 0; interval j gets
    weights[j + 1])."""
    m = n + 1
    mid = m // 2
    w = [1.0 if i < mid else 1.0 - (i - mid) / (mid + 1.0) for i in range(m + 1)]
    return w[1:n + 1]


def _rate_tfrc(params: Dict[str, Any], where: str) -> Ns2RateAgent:
    history = _param(params, "history", where)
    if history != int(history) or history < 2:
        raise Ns2Unsupported(f"{where}.params.history: {params['history']!r} must be a whole number "
                             ">= 2 for ns-2 (Agent/TFRCSink NumSamples_ is an int)")
    n = int(history)
    if any(abs(a - b) > 1e-12 for a, b in zip(rfc5348_weights(n), ns2_tfrc_weights(n))):
        raise Ns2Unsupported(f"{where}.params.history: {n} cannot be expressed in ns-2 (with an odd "
                             "history Agent/TFRCSink's weights differ from RFC 5348's)")
    t_rto = _param(params, "t_rto_rtts", where)
    if t_rto <= 0:
        raise Ns2Unsupported(f"{where}.params.t_rto_rtts: {t_rto!r} must be positive")
    t_mbi = _param(params, "t_mbi", where)
    if t_mbi != 64.0:
        raise Ns2Unsupported(f"{where}.params.t_mbi: {params['t_mbi']!r} cannot be set in ns-2 "
                             "(Agent/TFRC has no minimum rate s/t_mbi; only the default 64 s, "
                             "which matters only below one packet per 64 s, is accepted)")
    for k in params:
        if k not in ("history", "t_rto_rtts", "t_mbi") and params[k] is not None:
            raise Ns2Unsupported(f"{where}.params.{k}: ns-2's Agent/TFRC has no such parameter")
    return Ns2RateAgent(
        sender="Agent/TFRC", sink="Agent/TFRCSink",
        settings=[
            # RFC 5348's RTT filter q = 0.9 (ns-2's df_ default is 0.95)
            ("df_", 0.9),
            # no sqrt(RTT) inter-packet spacing (RFC 5348 section 4.5 is optional; the
            # engine paces at s/X)
            ("ca_", 0),
            ("SndrType_", 0),   # always has data (the engine's senders are never data-limited)
            ("useHeaders_", "true"),
        ],
        sink_settings=[
            ("NumSamples_", n),
            ("smooth_", 1),      # I_tot0 / I_tot1 as RFC 5348 section 5.4
            ("discount_", 0),    # no history discounting (RFC 5348 section 5.5; the engine has none)
            ("PreciseLoss_", 0),  # a new loss event is > 1 RTT after the last one, by time only
            ("numPkts_", 1),     # a gap is a loss as soon as one later packet arrives
            ("NumFeedback_", 1),  # one report per RTT
            ("algo_", 1),        # weighted average loss intervals
        ],
        t_rto_rtts=t_rto)


RATE_ALGORITHMS: Dict[str, Callable[[Dict[str, Any], str], Ns2RateAgent]] = {
    "tfrc": _rate_tfrc,
}

UNSUPPORTED_RATE_ALGORITHMS: Dict[str, str] = {
    "tfrcp": "ns-2 2.35 has no TFRCP agent (Padhye et al.'s interval-based sender is not in the "
             "release; only Agent/TFRC)",
    "tear": "ns-2 2.35 has no TEAR agent (receiver-emulated TCP windows are not in the release)",
}


# --------------------------------------------------------------------------
# Tcl generation
# --------------------------------------------------------------------------

def _num(x: Any) -> str:
    """A Tcl-safe decimal for a number (ints stay ints)."""
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    v = float(x)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v)) + ".0"
    return repr(v)


def _bool(x: Any) -> str:
    return "true" if x else "false"


# Characters a bare Tcl word may hold without any quoting: scenario strings (node, link and
# algorithm names) made only of these are written as they are.
_TCL_BARE = re.compile(r"[A-Za-z0-9_.:+/=@%,-]+")
# Inside double quotes Tcl substitutes after \\, [ and $ and ends the word at "; braces and ;
# are escaped too so that the word stays a word in any context (a braced body, a comment).
_TCL_ESCAPE = {"\\": "\\\\", "[": "\\[", "]": "\\]", "{": "\\{", "}": "\\}", "$": "\\$",
               ";": "\\;", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def tcl_quote(s: Any) -> str:
    """`s` as ONE Tcl word that evaluates to exactly `s`, with no command, variable or
    backslash substitution left for Tcl to perform (issue 17: a scenario name like
    ``x[exec touch p]`` must never run).

    Strings made only of letters, digits and ``_ . : + / = @ % , -`` stay bare; any other
    string is written in double quotes with ``\\ [ ] { } $ ; "`` backslash-escaped, tab, CR
    and newline as ``\\t \\r \\n``, every other character outside printable ASCII as
    ``\\uXXXX`` (exactly four digits, so a following hex digit is never absorbed) or, beyond
    the BMP, ``\\UXXXXXXXX`` (Tcl 8.6 reads those as U+FFFD).  The result holds no raw
    newline, so it is also safe inside a ``#`` comment, and its closing quote is never escaped."""
    s = str(s)
    if _TCL_BARE.fullmatch(s):
        return s
    out = []
    for ch in s:
        if ch in _TCL_ESCAPE:
            out.append(_TCL_ESCAPE[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _rng_seed(seed: int, salt: int) -> int:
    """Map the scenario seed to a valid, non-zero ns-2 RNG seed (0 would mean
    'seed from the clock' in ns-2)."""
    return ((int(seed) * 1_000_003 + salt * 7919) % 2_147_483_646) + 1


def _group_label(flow: Dict[str, Any], index: int) -> str:
    return f"flows[{flow.get('group', index)}]"


# Fields of the expanded scenario this exporter understands.  Anything else that is set
# (not null/false/zero/empty) is refused by name rather than silently dropped: a new engine
# feature must be mapped here before a cross-check can claim to simulate it.
_QUEUE_KEYS = {"rate_bps", "delay_s", "queue", "limit_pkts", "bdp_pkts", "ecn", "red", "loss"}
_KNOWN = {
    "": {"seed", "duration_s", "measure", "packet_size", "max_window", "tcp", "bottleneck",
         "flows", "scenario", "name", "description", "nodes", "links"},
    "measure": {"from_s", "to_s"},
    "tcp": {"initial_window", "tick_s", "min_rto_s", "initial_rto_s", "max_rto_s", "max_backoff",
            "delayed_ack", "delack_timeout_s", "ack_size", "header_size", "dupthresh",
            "limited_transmit"},
    "bottleneck": _QUEUE_KEYS,
    "link": _QUEUE_KEYS | {"name", "from", "to", "reverse"},
    "bottleneck.red": {"min_th_pkts", "max_th_pkts", "q_weight", "max_p", "gentle", "wait",
                       "mark_p", "mean_pkt_size"},
    "bottleneck.loss": {"model", "p", "packets", "interval", "groups", "include_acks"},
    "flow": {"id", "group", "kind", "algorithm", "params", "recovery", "cbr", "pareto",
             "direction", "path", "access_delay_s", "receiver_delay_s", "access_rate_bps",
             "start_s", "stop_s", "ecn", "rtt_noise_s"},
    "flow.cbr": {"rate_bps", "on_s", "off_s", "phase_s"},
    "flow.pareto": {"rate_bps", "mean_on_s", "mean_off_s", "shape"},
}

# Loss models of the engine that ns-2 cannot express here, with the reason.
UNSUPPORTED_LOSS_MODELS: Dict[str, str] = {
    "general_exponential": "ns-2 2.35 has no error model that drops one packet at instants with "
                           "general-exponential (shifted exponential / hyperexponential) gaps",
    "gilbert_elliott": "ns-2 2.35's two-state error models (ErrorModel/TwoStateMarkov, MultiState) "
                       "change state after drawn sojourn times, not with per-packet transition "
                       "probabilities as a Gilbert-Elliott chain does",
    "schedule": "ns-2 2.35 has no error model whose law changes at given times (a schedule of "
                "loss models)",
}


def _refuse_unknown(d: Any, known: str, where: str) -> None:
    if not isinstance(d, dict):
        return
    for k, v in d.items():
        if k in _KNOWN[known] or v is None or v is False or v == 0 or v == {} or v == []:
            continue
        path = f"{where}.{k}" if where else k
        raise Ns2Unsupported(f"{path}: {v!r} cannot be expressed by the ns-2 exporter "
                             "(tcpfriendly.ns2 has no mapping for it)")


def _check_queue(q: Dict[str, Any], where: str) -> None:
    _refuse_unknown(q.get("red"), "bottleneck.red", where + ".red")
    kind = q.get("queue")
    if kind not in ("droptail", "red"):
        raise Ns2Unsupported(f"{where}.queue: {kind!r} has no ns-2 equivalent here")
    if kind == "red" and not q.get("red"):
        raise Ns2Unsupported(f"{where}.red: missing RED parameters")
    loss = q.get("loss")
    if loss:
        model = loss.get("model")
        if model in UNSUPPORTED_LOSS_MODELS:
            raise Ns2Unsupported(f"{where}.loss.model: {model!r} has no ns-2 equivalent: "
                                 f"{UNSUPPORTED_LOSS_MODELS[model]}")
        if model not in ("bernoulli", "periodic"):
            raise Ns2Unsupported(f"{where}.loss.model: {model!r} has no ns-2 equivalent in this exporter "
                                 "(Bernoulli maps to ErrorModel, periodic to ErrorModel/Periodic)")
        _refuse_unknown(loss, "bottleneck.loss", where + ".loss")
        if model == "periodic" and (loss.get("packets") is None) == (loss.get("interval") is None):
            raise Ns2Unsupported(f"{where}.loss: periodic loss needs exactly one of packets or interval")


def _check(expanded: Dict[str, Any]) -> None:
    _refuse_unknown(expanded, "", "")
    _refuse_unknown(expanded.get("measure"), "measure", "measure")
    _refuse_unknown(expanded.get("tcp"), "tcp", "tcp")
    graph = bool(expanded.get("links"))
    if graph:
        if expanded.get("bottleneck"):
            raise Ns2Unsupported("bottleneck: a scenario has either [bottleneck] or [[links]], not both")
        for i, lk in enumerate(expanded["links"]):
            _refuse_unknown(lk, "link", f"links[{i}]")
            _check_queue(lk, f"links[{i}]")
            if lk.get("reverse"):
                _refuse_unknown(lk["reverse"], "bottleneck", f"links[{i}].reverse")
                _check_queue(lk["reverse"], f"links[{i}].reverse")
    else:
        bn = expanded.get("bottleneck")
        if not bn:
            raise Ns2Unsupported("bottleneck: missing (the exporter needs [bottleneck] or [[links]])")
        _refuse_unknown(bn, "bottleneck", "bottleneck")
        _check_queue(bn, "bottleneck")
    mb = (expanded.get("tcp") or {}).get("max_backoff")
    if mb is not None and int(mb) != 64:
        raise Ns2Unsupported(f"tcp.max_backoff: {mb} cannot be set in ns-2 (fixed at 64, "
                             "and with rfc2988_ only the max_rto cap applies)")
    for i, f in enumerate(expanded["flows"]):
        where = _group_label(f, i)
        kind = f.get("kind", "tcp")
        if kind not in ("tcp", "rate", "cbr", "pareto"):
            raise Ns2Unsupported(f"{where}.algorithm: {f.get('algorithm', kind)!r} sources are not mapped "
                                 "to ns-2 by this exporter")
        if f.get("rtt_noise_s"):
            raise Ns2Unsupported(f"{where}.rtt_noise: {f['rtt_noise_s']!r} has no ns-2 equivalent (ns-2's "
                                 "agents cannot add noise to the RTT samples their controller sees)")
        cbr = f.get("cbr") or {}
        if kind == "cbr" and (cbr.get("steps") is not None or cbr.get("repeat_s") is not None):
            raise Ns2Unsupported(f"{where}.steps: rate steps are not mapped to ns-2 by this exporter "
                                 "(Application/Traffic/CBR runs at one rate_; only constant rates and "
                                 "on/off square waves are exported)")
        _refuse_unknown(f, "flow", where)
        _refuse_unknown(f.get("cbr"), "flow.cbr", where + ".cbr")
        _refuse_unknown(f.get("pareto"), "flow.pareto", where + ".pareto")
        if kind == "tcp":
            _agent_for(f, where)  # raises Ns2Unsupported naming the element
        elif kind == "rate":
            _rate_agent_for(f, where)
        elif kind == "pareto":
            pa = f.get("pareto") or {}
            for k in ("rate_bps", "mean_on_s", "mean_off_s", "shape"):
                if pa.get(k) is None:
                    raise Ns2Unsupported(f"{where}.pareto.{k}: missing")
        if f.get("direction", "forward") not in ("forward", "reverse"):
            raise Ns2Unsupported(f"{where}.direction: {f.get('direction')!r} has no ns-2 equivalent")
        if graph and not f.get("path"):
            raise Ns2Unsupported(f"{where}.path: a flow in a general topology needs its resolved path")
        if not graph and f.get("path"):
            raise Ns2Unsupported(f"{where}.path: only with a general topology ([[links]])")


def _agent_for(flow: Dict[str, Any], where: str) -> Ns2Agent:
    """The ns-2 agent for one TCP flow, or Ns2Unsupported naming the element."""
    alg = flow.get("algorithm")
    if alg not in ALGORITHMS:
        why = UNSUPPORTED_ALGORITHMS.get(alg, "has no ns-2 equivalent")
        if alg in UNSUPPORTED_ALGORITHMS:
            why = f"has no ns-2 equivalent: {why}"
        raise Ns2Unsupported(f"{where}.algorithm: {alg!r} {why}")
    agent = ALGORITHMS[alg](flow.get("params") or {}, where)  # validates params
    rec = flow.get("recovery", "sack")
    if rec not in RECOVERY:
        raise Ns2Unsupported(f"{where}.recovery: {rec!r} has no ns-2 equivalent")
    if rec == "linux" and agent.sender != "Agent/TCP/Linux":
        raise Ns2Unsupported(f"{where}.recovery: 'linux' is ns-2's Agent/TCP/Linux, which runs the Linux "
                             f"modules only ({', '.join(sorted(LINUX_ALGORITHMS))}), not {alg!r}")
    if agent.recoveries is not None and rec not in agent.recoveries:
        raise Ns2Unsupported(f"{where}.recovery: {rec!r} cannot be combined with {alg!r} in ns-2 "
                             f"({agent.sender} recovers with {'/'.join(agent.recoveries)} only)")
    return agent


def _rate_agent_for(flow: Dict[str, Any], where: str) -> Ns2RateAgent:
    """The ns-2 agents for one rate-based flow, or Ns2Unsupported naming the element."""
    alg = flow.get("algorithm")
    if alg not in RATE_ALGORITHMS:
        why = UNSUPPORTED_RATE_ALGORITHMS.get(alg)
        raise Ns2Unsupported(f"{where}.algorithm: {alg!r} has no ns-2 equivalent" + (f": {why}" if why else ""))
    return RATE_ALGORITHMS[alg](flow.get("params") or {}, where)


# --------------------------------------------------------------------------
# The network: routers, directed router links with their queues, and each flow's route
# --------------------------------------------------------------------------

@dataclass
class _DLink:
    """One direction of a router link."""
    key: str          # Tcl array key
    name: str         # the engine's link name (results are matched by it)
    a: str            # Tcl node expressions
    b: str
    rate: float
    delay: float
    q: Dict[str, Any]  # queue, limit_pkts, red, ecn, loss
    where: str         # the scenario path, for messages


@dataclass
class _Route:
    first: str                 # Tcl node of the first router (the sender's side)
    last: str                  # the last router (the receiver's side)
    data: List[str]            # keys of the directed links the data cross
    acks: List[str]            # keys of those the ACKs/feedback cross (empty for UDP)


@dataclass
class _Net:
    node_lines: List[str]
    link_lines: List[str]      # links created (duplex or simplex)
    dlinks: List[_DLink]
    routes: Dict[int, _Route]  # by flow id
    monitored: List[str]       # keys of links reported in LINK lines


def _unique_shortest(adj: Dict[int, List[int]], a: int, b: int) -> Tuple[Optional[List[int]], int]:
    """The fewest-hop path a -> b and how many fewest-hop paths there are."""
    dist = {a: 0}
    count = {a: 1}
    prev: Dict[int, int] = {}
    frontier = [a]
    while frontier:
        nxt = []
        for u in frontier:
            for v in adj.get(u, []):
                if v not in dist:
                    dist[v] = dist[u] + 1
                    count[v] = count[u]
                    prev[v] = u
                    nxt.append(v)
                elif dist[v] == dist[u] + 1:
                    count[v] += count[u]
        frontier = nxt
    if b not in dist:
        return None, 0
    path = [b]
    while path[-1] != a:
        path.append(prev[path[-1]])
    return path[::-1], count[b]


def _network(expanded: Dict[str, Any]) -> _Net:
    flows = expanded["flows"]
    if not expanded.get("links"):
        bn = expanded["bottleneck"]
        qtype = "RED" if bn["queue"] == "red" else "DropTail"
        rev_q = dict(bn)
        rev_q["loss"] = None  # the engine's dumbbell has its loss model on the forward link only
        dl = [_DLink("fwd", "bottleneck", "$R1", "$R2", bn["rate_bps"], bn["delay_s"], bn, "bottleneck"),
              _DLink("rev", "bottleneck_reverse", "$R2", "$R1", bn["rate_bps"], bn["delay_s"], rev_q,
                     "bottleneck")]
        routes = {}
        for f in flows:
            fwd = f.get("direction", "forward") == "forward"
            udp = f.get("kind", "tcp") in ("cbr", "pareto")
            if fwd:
                routes[int(f["id"])] = _Route("$R1", "$R2", ["fwd"], [] if udp else ["rev"])
            else:
                routes[int(f["id"])] = _Route("$R2", "$R1", ["rev"], [] if udp else ["fwd"])
        monitored = ["fwd"]
        if any(f.get("direction", "forward") == "reverse" for f in flows):
            monitored.append("rev")
        return _Net(["set R1 [$ns node]", "set R2 [$ns node]"],
                    [f"$ns duplex-link $R1 $R2 {_num(bn['rate_bps'])} {_num(bn['delay_s'])} {qtype}"],
                    dl, routes, monitored)

    # a general topology: routers N(i), one or two directed links per [[links]] entry
    names = [n if isinstance(n, str) else n.get("name") for n in expanded.get("nodes") or []]
    for lk in expanded["links"]:
        for end in (lk["from"], lk["to"]):
            if end not in names:
                names.append(end)
    idx = {n: i for i, n in enumerate(names)}
    node_lines = [f"set N({i}) [$ns node] ;# {tcl_quote(n)}" for i, n in enumerate(names)]
    link_lines: List[str] = []
    dlinks: List[_DLink] = []
    edge: Dict[Tuple[int, int], str] = {}
    for i, lk in enumerate(expanded["links"]):
        a, b = idx[lk["from"]], idx[lk["to"]]
        rate, delay = lk["rate_bps"], lk["delay_s"]
        rv = lk.get("reverse")
        kind = "RED" if lk["queue"] == "red" else "DropTail"
        if rv and rv["queue"] == lk["queue"]:
            link_lines.append(f"$ns duplex-link $N({a}) $N({b}) {_num(rate)} {_num(delay)} {kind} ;# {tcl_quote(lk['name'])}")
        else:
            link_lines.append(f"$ns simplex-link $N({a}) $N({b}) {_num(rate)} {_num(delay)} {kind} ;# {tcl_quote(lk['name'])}")
            if rv:
                rkind = "RED" if rv["queue"] == "red" else "DropTail"
                link_lines.append(f"$ns simplex-link $N({b}) $N({a}) {_num(rate)} {_num(delay)} {rkind} "
                                  f";# {tcl_quote(lk['name'] + '_reverse')}")
        dlinks.append(_DLink(f"l{i}", lk["name"], f"$N({a})", f"$N({b})", rate, delay, lk, f"links[{i}]"))
        edge[(a, b)] = f"l{i}"
        if rv:
            dlinks.append(_DLink(f"l{i}r", f"{lk['name']}_reverse", f"$N({b})", f"$N({a})", rate, delay, rv,
                                 f"links[{i}].reverse"))
            edge[(b, a)] = f"l{i}r"
    adj: Dict[int, List[int]] = {}
    for (a, b) in edge:
        adj.setdefault(a, []).append(b)
    routes = {}
    for i, f in enumerate(flows):
        where = _group_label(f, i)
        path = [idx.get(n, -1) for n in f["path"]]
        if -1 in path:
            raise Ns2Unsupported(f"{where}.path: {f['path']!r} names an unknown router")
        udp = f.get("kind", "tcp") in ("cbr", "pareto")
        hops = []
        for label, p in (("data", path), ("ACK", path[::-1])):
            if label == "ACK" and udp:
                break
            keys = []
            for u, v in zip(p, p[1:]):
                if (u, v) not in edge:
                    raise Ns2Unsupported(f"{where}.path: no link from {names[u]!r} to {names[v]!r} for the "
                                         f"{label} packets")
                keys.append(edge[(u, v)])
            # ns-2's static routing sends packets along fewest-hop paths; the flow's path must be
            # the only one, or ns-2 might route it elsewhere
            best, n = _unique_shortest(adj, p[0], p[-1])
            if best != p or n != 1:
                raise Ns2Unsupported(
                    f"{where}.path: {' -> '.join(names[x] for x in p)} is not the only fewest-hop route "
                    f"for the {label} packets, so ns-2's static routing cannot be relied on to follow it")
            hops.append(keys)
        routes[int(f["id"])] = _Route(f"$N({path[0]})", f"$N({path[-1]})", hops[0], hops[1] if len(hops) > 1 else [])
    used = {k for r in routes.values() for k in r.data}
    monitored = [d.key for d in dlinks if d.key in used]
    return _Net(node_lines, link_lines, dlinks, routes, monitored)


def _queue_lines(d: _DLink, pkt: int) -> List[str]:
    q = d.q
    out = [f"$ns queue-limit {d.a} {d.b} {int(q['limit_pkts'])}"]
    if q["queue"] == "red":
        red = q["red"]
        max_p = float(red["max_p"])
        mean_pkt = int(red.get("mean_pkt_size") or pkt)
        out += [
            f"set q [[$ns link {d.a} {d.b}] queue] ;# {tcl_quote(d.name)}",
            "$q set bytes_ false",
            "$q set queue_in_bytes_ false",
            f"$q set mean_pktsize_ {mean_pkt}",
            f"$q set thresh_ {_num(red['min_th_pkts'])}",
            f"$q set maxthresh_ {_num(red['max_th_pkts'])}",
            f"$q set q_weight_ {_num(red['q_weight'])}",
            f"$q set linterm_ {_num(1.0 / max_p)}",
            f"$q set gentle_ {_bool(red.get('gentle', True))}",
            f"$q set wait_ {_bool(red.get('wait', True))}",
            f"$q set setbit_ {_bool(q.get('ecn', False))}",
            # ECN: mark an ECT packet only while RED's base probability is below mark_p_,
            # drop it otherwise (ns-2 default mark_p_ is 0.1)
            "$q set use_mark_p_ true",
        ]
        if red.get("mark_p") is not None:
            out.append(f"$q set mark_p_ {_num(red['mark_p'])}")
        out.append("$q set adaptive_ 0")
    return out


def _tfrc_min_rto(route_prop_rtt: float, agent: Ns2RateAgent) -> float:
    """Agent/TFRC puts a TCP-style RTO (srtt + 4 rttvar, at least minrto_) into the throughput
    equation where the engine (RFC 5348) puts t_rto_rtts x R. ns-2 cannot express a multiple of
    the RTT; a floor of t_rto_rtts x the flow's propagation RTT is the closest it gets (exact
    when queueing delay is negligible, and below the engine's value otherwise)."""
    return agent.t_rto_rtts * route_prop_rtt


_TCL_PROCS = r"""
# ---- measurement helpers -------------------------------------------------
# Byte counters in ns-2 are C ints (they wrap past 2^31); `accumulate` adds
# wrap-safe increments so long, fast runs stay exact.

proc tcp_snapshot {i} {
    global tcp sink SNAP ACC LOSSCTR
    set SNAP($i,sent)   $ACC($i,sentbytes)
    set SNAP($i,rexmit) $ACC($i,rexmitbytes)
    set SNAP($i,dlv)    $ACC($i,sinkbytes)
    set SNAP($i,cuts)   [$tcp($i) set ncwndcuts_]
    set SNAP($i,cuts1)  [$tcp($i) set ncwndcuts1_]
    set SNAP($i,lossev) [$tcp($i) set $LOSSCTR($i)]
    set SNAP($i,to)     [$tcp($i) set nrexmit_]
    set SNAP($i,ecn)    [$tcp($i) set necnresponses_]
}

proc tcp_accumulate {i} {
    global tcp sink ACC
    acc1 $i sentbytes [$tcp($i) set ndatabytes_]
    acc1 $i rexmitbytes [$tcp($i) set nrexmitbytes_]
    acc1 $i sinkbytes [$sink($i) set bytes_]
}

# rate-based (TFRC) flows: packets sent by the sender, bytes received by the sink
proc rate_snapshot {i} {
    global tfrc SNAP ACC
    set SNAP($i,sent) [$tfrc($i) set ndatapack_]
    set SNAP($i,dlv)  $ACC($i,sinkbytes)
}

proc rate_accumulate {i} {
    global sink ACC
    acc1 $i sinkbytes [$sink($i) set bytes_]
}

proc acc1 {i key cur} {
    global ACC
    set ACC($i,$key) [expr {$ACC($i,$key) + (($cur - $ACC($i,last$key)) & 0xFFFFFFFF)}]
    set ACC($i,last$key) $cur
}

proc cbr_snapshot {i} {
    global sink SNAP
    set e [$sink($i) set expected_]
    if {$e < 0} { set e 0 }
    set SNAP($i,sent) $e
    set SNAP($i,dlv) [$sink($i) set npkts_]
}

proc link_accumulate {l} {
    global qmon LACC
    set cur [$qmon($l) set bdepartures_]
    set LACC($l,bytes) [expr {$LACC($l,bytes) + (($cur - $LACC($l,lastbytes)) & 0xFFFFFFFF)}]
    set LACC($l,lastbytes) $cur
}

proc link_snapshot {l} {
    global qmon LSNAP LACC
    link_accumulate $l
    set qi [$qmon($l) get-pkts-integrator]
    $qi newpoint [[Simulator instance] now] [$qi set lasty_]
    set LSNAP($l,bytes) $LACC($l,bytes)
    set LSNAP($l,pdep)  [$qmon($l) set pdepartures_]
    set LSNAP($l,drops) [$qmon($l) set pdrops_]
    set LSNAP($l,marks) [$qmon($l) set pmarks_]
    set LSNAP($l,qint)  [$qi set sum_]
}

# cwnd/srtt sampler: runs only inside the measurement window
proc sample {} {
    global ns TCPFLOWS START STOP WND CWS CWN RTS RTN tcp SAMPLE_DT MEASURE_TO
    set now [$ns now]
    foreach i $TCPFLOWS {
        if {$now < $START($i) || ($STOP($i) >= 0 && $now >= $STOP($i))} { continue }
        set c [$tcp($i) set cwnd_]
        # ns-2 lets cwnd_ grow past window_; the usable window is the minimum
        if {$c > $WND($i)} { set c $WND($i) }
        set CWS($i) [expr {$CWS($i) + $c}]
        incr CWN($i)
        set s [$tcp($i) set srtt_]
        if {$s > 0} {
            # srtt_ is kept in ticks scaled by 8 (T_SRTT_BITS = 3); read the tick now:
            # TCP/Linux switches it to 1 ms (a jiffy) when a module is selected
            set RTS($i) [expr {$RTS($i) + $s / 8.0 * [$tcp($i) set tcpTick_]}]
            incr RTN($i)
        }
    }
    set nxt [expr {$now + $SAMPLE_DT}]
    if {$nxt < $MEASURE_TO} { $ns at $nxt "sample" }
}

# keeps the wrap-safe byte counters current (a C int cannot wrap twice in 5 s)
proc accumulate {} {
    global ns TCPFLOWS RATEFLOWS MEASURE_TO LINKS
    foreach i $TCPFLOWS { tcp_accumulate $i }
    foreach i $RATEFLOWS { rate_accumulate $i }
    foreach l $LINKS { link_accumulate $l }
    set nxt [expr {[$ns now] + 5.0}]
    if {$nxt < $MEASURE_TO} { $ns at $nxt "accumulate" }
}

proc measure_start {} {
    global FLOWS KIND SAMPLE_DT LINKS
    foreach i $FLOWS {
        if {$KIND($i) == "tcp"} {
            tcp_accumulate $i; tcp_snapshot $i
        } elseif {$KIND($i) == "rate"} {
            rate_accumulate $i; rate_snapshot $i
        } else { cbr_snapshot $i }
    }
    foreach l $LINKS { link_snapshot $l }
    if {$SAMPLE_DT > 0} { sample }
}

proc measure_end {} {
    global ns FLOWS KIND GROUP SNAP tcp sink CWS CWN RTS RTN PKT HDR SYNHDR LSNAP LINKS LINKRATE DROPTRACE
    set t [$ns now]
    set total 0
    foreach i $FLOWS {
        if {$KIND($i) == "tcp"} {
            tcp_accumulate $i
            set s0 $SNAP($i,sent); set r0 $SNAP($i,rexmit); set d0 $SNAP($i,dlv)
            set c0 $SNAP($i,cuts); set c10 $SNAP($i,cuts1); set t0 $SNAP($i,to); set e0 $SNAP($i,ecn)
            set l0 $SNAP($i,lossev)
            tcp_snapshot $i
            set sent   [expr {($SNAP($i,sent) - $s0) / $PKT}]
            set rexmit [expr {($SNAP($i,rexmit) - $r0) / $PKT}]
            # sink bytes_ counts in-order bytes as they were on the wire: the
            # SYN once (SYNHDR = 40 bytes with syn_ true, 0 without), then
            # PKT+HDR per data packet.
            set b0 [expr {$d0 >= $SYNHDR ? $d0 - $SYNHDR : 0}]
            set b1 [expr {$SNAP($i,dlv) >= $SYNHDR ? $SNAP($i,dlv) - $SYNHDR : 0}]
            set dlv [expr {$b1 / ($PKT + $HDR) - $b0 / ($PKT + $HDR)}]
            set cw [expr {$CWN($i) > 0 ? double($CWS($i)) / $CWN($i) : "null"}]
            set rt [expr {$RTN($i) > 0 ? double($RTS($i)) / $RTN($i) : "null"}]
            puts "FLOW id=$i group=$GROUP($i) kind=tcp sent=$sent rexmit=$rexmit delivered=$dlv ncwndcuts=[expr {$SNAP($i,cuts) - $c0}] ncwndcuts1=[expr {$SNAP($i,cuts1) - $c10}] lossev=[expr {$SNAP($i,lossev) - $l0}] ntimeouts=[expr {$SNAP($i,to) - $t0}] necn=[expr {$SNAP($i,ecn) - $e0}] mean_cwnd=$cw mean_srtt=$rt"
        } elseif {$KIND($i) == "rate"} {
            rate_accumulate $i
            set s0 $SNAP($i,sent); set d0 $SNAP($i,dlv)
            rate_snapshot $i
            set sent [expr {$SNAP($i,sent) - $s0}]
            # the TFRC sink counts data packets as they were on the wire (PKT + HDR)
            set dlv [expr {$SNAP($i,dlv) / ($PKT + $HDR) - $d0 / ($PKT + $HDR)}]
            puts "FLOW id=$i group=$GROUP($i) kind=rate sent=$sent delivered=$dlv"
        } else {
            set s0 $SNAP($i,sent); set d0 $SNAP($i,dlv)
            cbr_snapshot $i
            set sent [expr {$SNAP($i,sent) - $s0}]
            set dlv [expr {$SNAP($i,dlv) - $d0}]
            puts "FLOW id=$i group=$GROUP($i) kind=$KIND($i) sent=$sent delivered=$dlv"
        }
        incr total $dlv
    }
    foreach l $LINKS {
        set b0 $LSNAP($l,bytes); set p0 $LSNAP($l,pdep); set d0 $LSNAP($l,drops); set m0 $LSNAP($l,marks); set q0 $LSNAP($l,qint)
        link_snapshot $l
        puts "LINK key=$l rate=$LINKRATE($l) bytes=[expr {$LSNAP($l,bytes) - $b0}] pkts=[expr {$LSNAP($l,pdep) - $p0}] drops=[expr {$LSNAP($l,drops) - $d0}] marks=[expr {$LSNAP($l,marks) - $m0}] qint=[expr {$LSNAP($l,qint) - $q0}]"
    }
    puts "TOTAL delivered_pkts=$total t=$t"
    if {$DROPTRACE != ""} { flush $DROPTRACE }
    flush stdout
}
"""

# Drops of rate-based flows' data are written here (ns-2's TFRC receiver does not expose its
# loss-event count; the exporter counts loss events from these drops, see _rate_loss_events).
DROP_TRACE_FILE = "drops.tr"


def _on_intervals(start: float, end: float, on: float, off: float, phase: float) -> List[Tuple[float, float]]:
    """The on periods of a square wave (on `on` s, off `off` s, `phase` s into the cycle at
    `start`) inside [start, end)."""
    period = on + off
    pos = phase % period if period > 0 else 0.0
    c = start - pos
    out = []
    while c < end:
        a, b = max(c, start), min(c + on, end)
        if b > a:
            out.append((a, b))
        c += period
    return out


def _prop_rtt(f: Dict[str, Any], route: _Route, net: _Net, pkt: int, hdr: int, ack: int) -> float:
    """Round-trip propagation plus transmission time of a flow, without queueing."""
    by_key = {d.key: d for d in net.dlinks}
    rtt = 2.0 * (float(f.get("access_delay_s") or 0.0) + float(f.get("receiver_delay_s") or 0.0))
    for k in route.data:
        rtt += by_key[k].delay + (pkt + hdr) * 8.0 / by_key[k].rate
    for k in route.acks:
        rtt += by_key[k].delay + ack * 8.0 / by_key[k].rate
    return rtt


def export_tcl(expanded: Dict[str, Any],
               sample_interval_s: Optional[float] = DEFAULT_SAMPLE_INTERVAL_S) -> str:
    """Return a complete ns-2 Tcl script for an expanded scenario.

    The script prints, at the end of the measurement window, one
    ``FLOW key=value ...`` line per flow, one ``LINK ...`` line per router link
    that carries data and one ``TOTAL delivered_pkts=...`` line.  With rate-based
    (TFRC) flows it also writes their drops to ``drops.tr`` in the working
    directory (see `run_ns2`).
    """
    _check(expanded)
    seed = int(expanded.get("seed", 1))
    duration = float(expanded["duration_s"])
    meas = expanded.get("measure") or {}
    m_from = float(meas.get("from_s", 0.0))
    m_to = float(meas.get("to_s", duration))
    if not 0.0 <= m_from < m_to <= duration:
        raise Ns2Unsupported(f"measure: window [{m_from}, {m_to}] is not inside [0, {duration}]")
    pkt = int(expanded["packet_size"])
    max_window = expanded.get("max_window")
    wnd = int(max_window) if max_window is not None else HUGE_WINDOW
    tcpd = expanded.get("tcp") or {}
    flows = expanded["flows"]
    net = _network(expanded)
    by_key = {d.key: d for d in net.dlinks}
    hdr = int(tcpd.get("header_size", TCP_HEADER_BYTES))
    ack = int(tcpd.get("ack_size", TCP_HEADER_BYTES))
    has_rate = any(f.get("kind") == "rate" for f in flows)

    L: List[str] = []
    a = L.append
    a("# Generated by tcpfriendly.ns2.export_tcl for ns-2 2.35 -- do not edit.")
    a(f"# seed={seed} duration={duration} measure=[{m_from}, {m_to}]")
    a("set ns [new Simulator]")
    a("global defaultRNG")
    a(f"$defaultRNG seed {_rng_seed(seed, 0)}")
    a(f"set PKT {pkt}")
    a(f"set HDR {hdr}")
    # No SYN exchange: the engine starts sending data at the flow's start time with
    # cwnd = initial_window, which is ns-2's behaviour with syn_ false.
    a("set SYNHDR 0")
    a(f"set SAMPLE_DT {_num(sample_interval_s) if sample_interval_s else 0}")
    a(f"set MEASURE_TO {_num(m_to)}")
    a("set FLOWS {}")
    a("set TCPFLOWS {}")
    a("set RATEFLOWS {}")
    a(f'set DROPTRACE {"[open " + DROP_TRACE_FILE + " w]" if has_rate else chr(34) + chr(34)}')
    a("")
    # ---- routers and router links ----
    for line in net.node_lines + net.link_lines:
        a(line)
    for d in net.dlinks:
        for line in _queue_lines(d, pkt):
            a(line)
    # monitors before the loss models, so the loss models sit in front of them
    a("set LINKS {}")
    for key in net.monitored:
        d = by_key[key]
        a(f'set qmon({key}) [$ns monitor-queue {d.a} {d.b} ""]')
        a(f"set LINKRATE({key}) {_num(d.rate)}")
        a(f"set LACC({key},bytes) 0; set LACC({key},lastbytes) 0")
        a(f"lappend LINKS {key}")
    a("")
    # ---- flows ----
    subject: Dict[str, List[int]] = {d.key: [] for d in net.dlinks}  # fids under each loss model
    for i, f in enumerate(flows):
        fid = int(f["id"])
        where = _group_label(f, i)
        kind = f.get("kind", "tcp")
        fwd = f.get("direction", "forward") == "forward"
        route = net.routes[fid]
        near, far = route.first, route.last
        ref_rate = by_key[route.data[0]].rate
        acc_rate = _num(f.get("access_rate_bps") or 10 * float(ref_rate))
        start = float(f.get("start_s") or 0.0)
        stop = f.get("stop_s")
        for key, q in ((k, by_key[k].q) for k in by_key):
            loss = q.get("loss")
            if not loss:
                continue
            groups = loss.get("groups")
            if groups is not None and int(f.get("group", 0)) not in [int(g) for g in groups]:
                continue
            if key in route.data or (loss.get("include_acks") and key in route.acks):
                subject[key].append(fid + 1)
        a(f"# flow {fid} ({tcl_quote(where)}, {tcl_quote(f.get('algorithm', kind))}, "
          f"{'forward' if fwd else 'reverse'})")
        a(f"lappend FLOWS {fid}")
        a(f"set KIND({fid}) {kind}")
        a(f"set GROUP({fid}) {int(f.get('group', 0))}")
        a(f"set START({fid}) {_num(start)}")
        a(f"set STOP({fid}) {_num(stop) if stop is not None else -1}")
        a(f"set S({fid}) [$ns node]")
        a(f"set D({fid}) [$ns node]")
        a(f"$ns duplex-link $S({fid}) {near} {acc_rate} {_num(f.get('access_delay_s', 0.0))} DropTail")
        a(f"$ns duplex-link $D({fid}) {far} {acc_rate} {_num(f.get('receiver_delay_s', 0.0))} DropTail")
        for x, y in (("$S", near), ("$D", far)):
            a(f"$ns queue-limit {x}({fid}) {y} {ACCESS_QUEUE_LIMIT}")
            a(f"$ns queue-limit {y} {x}({fid}) {ACCESS_QUEUE_LIMIT}")
        if kind == "tcp":
            agent = _agent_for(f, where)
            sender, sink, delsink = RECOVERY[f.get("recovery", "sack")]
            sender = agent.sender or sender
            sink = agent.sink or sink
            delsink = agent.delack_sink or delsink
            a(f"set tcp({fid}) [new {sender}]")
            tv = f"$tcp({fid})"
            settings: List[Setting] = [
                ("fid_", fid + 1),
                ("packetSize_", pkt),
                ("window_", wnd),
                ("windowInit_", int(tcpd.get("initial_window", 2))),
                ("tcpTick_", tcpd.get("tick_s", 0.01)),
                ("minrto_", tcpd.get("min_rto_s", 0.2)),
                ("rtxcur_init_", tcpd.get("initial_rto_s", 3.0)),
                ("maxrto_", tcpd.get("max_rto_s", 60.0)),
                ("ecn_", 1 if f.get("ecn") else 0),
                ("numdupacks_", int(tcpd.get("dupthresh", 3))),
                ("tcpip_base_hdr_size_", hdr),
                ("singledup_", 1 if tcpd.get("limited_transmit", True) else 0),
                # the engine has no handshake: data from the start, cwnd = windowInit_
                ("syn_", "false"),
            ]
            if max_window is not None:
                # the engine never lets cwnd grow past the receiver window; ns-2 does
                # unless maxcwnd_ is set (it only uses min(cwnd_, window_) to send)
                settings.append(("maxcwnd_", wnd))
            if sender == "Agent/TCP/Newreno":
                # the engine restarts the retransmission timer on every partial ACK
                # (RFC 6582's "slow but steady" variant); ns-2's default
                # (newreno_changes1_ 1, "impatient") restarts it on the first only
                settings.append(("newreno_changes1_", 0))
            settings += agent.settings
            for var, val in settings:
                a(f"{tv} set {var} {val if isinstance(val, str) else _num(val)}")
            if tcpd.get("delayed_ack"):
                a(f"set sink({fid}) [new {delsink}]")
                a(f"$sink({fid}) set interval_ {_num(tcpd.get('delack_timeout_s', 0.1))}")
            else:
                a(f"set sink({fid}) [new {sink}]")
            a(f"$sink({fid}) set packetSize_ {ack}")
            a(f"$ns attach-agent $S({fid}) {tv}")
            a(f"$ns attach-agent $D({fid}) $sink({fid})")
            a(f"$ns connect {tv} $sink({fid})")
            for cmd in agent.at_start:
                a(f'$ns at 0 "{tv} {cmd}"')
            a(f"lappend TCPFLOWS {fid}")
            a(f"set LOSSCTR({fid}) {agent.loss_counter}")
            a(f"set WND({fid}) {wnd}")
            a(f"set CWS({fid}) 0.0; set CWN({fid}) 0; set RTS({fid}) 0.0; set RTN({fid}) 0")
            a(f"foreach k {{sentbytes rexmitbytes sinkbytes}} {{ set ACC({fid},$k) 0; set ACC({fid},last$k) 0 }}")
            a(f"set app({fid}) [new Application/FTP]")
            a(f"$app({fid}) attach-agent {tv}")
            a(f'$ns at {_num(start)} "$app({fid}) start"')
            if stop is not None:
                a(f'$ns at {_num(stop)} "$app({fid}) stop"')
        elif kind == "rate":
            agent = _rate_agent_for(f, where)
            tv = f"$tfrc({fid})"
            a(f"set tfrc({fid}) [new {agent.sender}]")
            prop = _prop_rtt(f, route, net, pkt, hdr, ack)
            settings = [
                ("fid_", fid + 1),
                ("packetSize_", pkt),
                # data packets are packetSize_ + headersize_ on the wire (useHeaders_)
                ("headersize_", hdr),
                # ticks of the TCP-style RTO estimate used as t_RTO in the equation
                ("tcp_tick_", tcpd.get("tick_s", 0.01)),
                ("minrto_", _tfrc_min_rto(prop, agent)),
                ("ecn_", 1 if f.get("ecn") else 0),
            ] + agent.settings
            for var, val in settings:
                a(f"{tv} set {var} {val if isinstance(val, str) else _num(val)}")
            a(f"set sink({fid}) [new {agent.sink}]")
            for var, val in [("packetSize_", ack)] + agent.sink_settings:
                a(f"$sink({fid}) set {var} {val if isinstance(val, str) else _num(val)}")
            a(f"$ns attach-agent $S({fid}) {tv}")
            a(f"$ns attach-agent $D({fid}) $sink({fid})")
            a(f"$ns connect {tv} $sink({fid})")
            a(f"lappend RATEFLOWS {fid}")
            a(f"set ACC({fid},sinkbytes) 0; set ACC({fid},lastsinkbytes) 0")
            a(f'$ns at {_num(start)} "{tv} start"')
            if stop is not None:
                a(f'$ns at {_num(stop)} "{tv} stop"')
        else:
            a(f"set udp({fid}) [new Agent/UDP]")
            a(f"$udp({fid}) set fid_ {fid + 1}")
            a(f"$udp({fid}) set packetSize_ {pkt}")
            a(f"set sink({fid}) [new Agent/LossMonitor]")
            a(f"$ns attach-agent $S({fid}) $udp({fid})")
            a(f"$ns attach-agent $D({fid}) $sink({fid})")
            a(f"$ns connect $udp({fid}) $sink({fid})")
            end = float(stop) if stop is not None else duration
            if kind == "pareto":
                pa = f["pareto"]
                # Application/Traffic/Pareto: bursts of int(Pareto(burst_time_/interval) + .5)
                # packets at rate_, idle times Pareto with mean idle_time_ (tools/pareto.cc);
                # its own random stream
                a(f"set app({fid}) [new Application/Traffic/Pareto]")
                a(f"$app({fid}) attach-agent $udp({fid})")
                a(f"$app({fid}) set packetSize_ {pkt}")
                a(f"$app({fid}) set rate_ {_num(pa['rate_bps'])}")
                a(f"$app({fid}) set burst_time_ {_num(pa['mean_on_s'])}")
                a(f"$app({fid}) set idle_time_ {_num(pa['mean_off_s'])}")
                a(f"$app({fid}) set shape_ {_num(pa['shape'])}")
                a(f"set prng({fid}) [new RNG]")
                a(f"$prng({fid}) seed {_rng_seed(seed, 1000 + fid)}")
                a(f"$app({fid}) use-rng $prng({fid})")
                a(f'$ns at {_num(start)} "$app({fid}) start"')
                if stop is not None:
                    a(f'$ns at {_num(end)} "$app({fid}) stop"')
            else:
                cbr = f.get("cbr") or {}
                a(f"set app({fid}) [new Application/Traffic/CBR]")
                a(f"$app({fid}) attach-agent $udp({fid})")
                a(f"$app({fid}) set packetSize_ {pkt}")
                a(f"$app({fid}) set rate_ {_num(cbr['rate_bps'])}")
                a(f"$app({fid}) set random_ 0")
                on, off = cbr.get("on_s"), cbr.get("off_s")
                if on is None or off is None:
                    a(f'$ns at {_num(start)} "$app({fid}) start"')
                    if stop is not None:
                        a(f'$ns at {_num(end)} "$app({fid}) stop"')
                else:
                    on, off = float(on), float(off)
                    if on <= 0 or off < 0 or on + off <= 0:
                        raise Ns2Unsupported(f"{where}.cbr: on/off periods must be positive")
                    for t0, t1 in _on_intervals(start, end, on, off, float(cbr.get("phase_s") or 0.0)):
                        a(f'$ns at {_num(t0)} "$app({fid}) start"')
                        a(f'$ns at {_num(t1)} "$app({fid}) stop"')
        a("")
    # ---- loss models in front of router queues ----
    first = True
    for n, d in enumerate(net.dlinks):
        loss = d.q.get("loss")
        if not loss or not subject[d.key]:
            continue
        model = loss.get("model")
        if model == "bernoulli" and float(loss.get("p", 0.0)) <= 0.0:
            continue
        sfx = "" if first else f"_{d.key}"
        em, emod, rv, rng = f"em{sfx}", f"emod{sfx}", f"lossrv{sfx}", f"lossrng{sfx}"
        if model == "bernoulli":
            a(f"# Bernoulli loss: an ErrorModel in front of the {tcl_quote(d.name)} queue, reached only by")
            a("# the packets of the flows it applies to (classified by flow id), so the other")
            a("# flows' packets that share this link (e.g. reverse flows' ACKs) pass.")
            a(f"set {rng} [new RNG]")
            a(f"${rng} seed {_rng_seed(seed, 1 + n)}")
            a(f"set {rv} [new RandomVariable/Uniform]")
            a(f"${rv} set min_ 0.0")
            a(f"${rv} set max_ 1.0")
            a(f"${rv} use-rng ${rng}")
            a(f"set {em} [new ErrorModel]")
            a(f"${em} unit pkt")
            a(f"${em} set rate_ {_num(loss['p'])}")
            a(f"${em} ranvar ${rv}")
        elif loss.get("packets") is not None:
            npk = int(loss["packets"])
            a(f"# periodic loss: every {npk}th packet of the flows it applies to, in front of the")
            a(f"# {tcl_quote(d.name)} queue (ErrorModel/Periodic, packet mode: drops at counts N, 2N, ...)")
            a(f"set {em} [new ErrorModel/Periodic]")
            a(f"${em} unit pkt")
            a(f"${em} set period_ {npk}")
            a(f"${em} set offset_ {npk}")
            a(f"${em} set burstlen_ 0")
        else:
            iv = float(loss["interval"])
            a(f"# periodic loss: one packet every {iv:g} s, in front of the {tcl_quote(d.name)} queue")
            a("# (ErrorModel/Periodic, time mode: the first packet at or after offset_, then the")
            a("# first one more than period_ after the previous drop)")
            a(f"set {em} [new ErrorModel/Periodic]")
            a(f"${em} unit time")
            a(f"${em} set period_ {_num(iv)}")
            a(f"${em} set offset_ {_num(iv)}")
            a(f"${em} set burstlen_ 0")
        a(f"set {emod} [new ErrorModule Fid]")
        a(f"${emod} insert ${em}")
        for fidv in subject[d.key]:
            a(f"${emod} bind ${em} {fidv}")
        a(f"${emod} default pass")
        a(f"$ns lossmodel ${emod} {d.a} {d.b}")
        a("# random losses go to their own sink, not the queue monitor's drop count")
        if has_rate:
            a(f"set lt [$ns create-trace Drop $DROPTRACE {d.a} {d.b}]")
            a("$lt target [new Agent/Null]")
            a(f"${emod} drop-target $lt")
        else:
            a(f"${emod} drop-target [new Agent/Null]")
        a("")
        first = False
    if has_rate:
        a("# queue drops on every router link rate-based flows cross, for their loss events")
        rate_links = sorted({k for f in flows if f.get("kind") == "rate" for k in net.routes[int(f["id"])].data},
                            key=lambda k: [d.key for d in net.dlinks].index(k))
        for k in rate_links:
            d = by_key[k]
            a(f"set dh [[$ns link {d.a} {d.b}] set drophead_]")
            a(f"set dt [$ns create-trace Drop $DROPTRACE {d.a} {d.b}]")
            a("$dt target [$dh target]")
            a("$dh target $dt")
        a("")
    a(_TCL_PROCS)
    a('$ns at 0.0 "accumulate"')
    a(f'$ns at {_num(m_from)} "measure_start"')
    a(f'$ns at {_num(m_to)} "measure_end"')
    a(f'$ns at {_num(duration)} "exit 0"')
    a("$ns run")
    return "\n".join(L) + "\n"


# --------------------------------------------------------------------------
# Running ns-2 and parsing its output
# --------------------------------------------------------------------------

def ns2_available(ns_binary: str = "ns") -> bool:
    """True when an ns-2 binary is on PATH (or at the given path)."""
    return shutil.which(ns_binary) is not None


_KV = re.compile(r"(\w+)=(\S+)")


def _parse_value(v: str) -> Any:
    if v == "null":
        return None
    try:
        return int(v)
    except ValueError:
        return float(v)


def parse_output(stdout: str) -> Dict[str, Any]:
    """Parse the FLOW/LINK/TOTAL lines printed by an exported script."""
    out: Dict[str, Any] = {"flows": [], "links": [], "total": {}}
    for line in stdout.splitlines():
        tag, _, rest = line.partition(" ")
        if tag not in ("FLOW", "LINK", "TOTAL"):
            continue
        kv = {k: (v if k in ("kind", "name", "key") else _parse_value(v)) for k, v in _KV.findall(rest)}
        if tag == "FLOW":
            out["flows"].append(kv)
        elif tag == "LINK":
            out["links"].append(kv)
        else:
            out["total"] = kv
    return out


def parse_drop_trace(text: str) -> Dict[int, List[Tuple[float, int]]]:
    """Drops per flow id from an ns-2 drop trace: fid - 1 -> [(time, size)]."""
    out: Dict[int, List[Tuple[float, int]]] = {}
    for line in text.splitlines():
        p = line.split()
        if len(p) < 8 or p[0] != "d":
            continue
        out.setdefault(int(p[7]) - 1, []).append((float(p[1]), int(p[5])))
    return out


def count_loss_events(times: List[float], rtt: float) -> int:
    """Loss events as RFC 5348 section 5.2 groups losses: a loss starts a new event when it is
    more than one RTT after the first loss of the current event."""
    n = 0
    first = None
    for t in sorted(times):
        if first is None or t - first > rtt:
            n += 1
            first = t
    return n


def _rate_loss_events(expanded: Dict[str, Any], parsed: Dict[str, Any],
                      drops: Dict[int, List[Tuple[float, int]]], window: float) -> Dict[int, Tuple[int, float]]:
    """ns-2's TFRC receiver does not expose its loss-event count, so count loss events from the
    drops of each rate-based flow's data packets inside the measurement window, grouped by the
    flow's mean RTT: propagation and transmission plus the mean queueing delay of the monitored
    links on its path (ns-2's own RTT estimate, rtt_, is not readable from Tcl either).
    Returns flow id -> (loss events, the RTT used)."""
    net = _network(expanded)
    by_key = {d.key: d for d in net.dlinks}
    meas = expanded.get("measure") or {}
    t0 = float(meas.get("from_s", 0.0))
    t1 = float(meas.get("to_s", expanded["duration_s"]))
    tcpd = expanded.get("tcp") or {}
    pkt = int(expanded["packet_size"])
    hdr = int(tcpd.get("header_size", TCP_HEADER_BYTES))
    ack = int(tcpd.get("ack_size", TCP_HEADER_BYTES))
    qdelay = {}
    for key in net.monitored:
        d = by_key[key]
        lk = next((x for x in parsed["links"] if x.get("name") == d.name), None)
        if lk is not None:
            qdelay[key] = lk["qint"] / window * (pkt + hdr) * 8.0 / d.rate
    out = {}
    for f in expanded["flows"]:
        if f.get("kind") != "rate":
            continue
        fid = int(f["id"])
        route = net.routes[fid]
        rtt = _prop_rtt(f, route, net, pkt, hdr, ack) + sum(qdelay.get(k, 0.0) for k in route.data + route.acks)
        times = [t for t, size in drops.get(fid, []) if size > ack and t0 <= t < t1]
        out[fid] = (count_loss_events(times, rtt), rtt)
    return out


def _name_links(expanded: Dict[str, Any], parsed: Dict[str, Any]) -> None:
    """Give each parsed LINK line the engine's link name. The script prints the link's Tcl
    key (``fwd``, ``l0``, ...), never the scenario's name, so that no name reaches Tcl as
    anything but a comment; outputs of older scripts carry ``name=`` and are kept."""
    names = {d.key: d.name for d in _network(expanded).dlinks}
    for lk in parsed["links"]:
        if "name" not in lk and lk.get("key") in names:
            lk["name"] = names[lk["key"]]


def _results(expanded: Dict[str, Any], parsed: Dict[str, Any], wall_s: float,
             drops: Optional[Dict[int, List[Tuple[float, int]]]] = None) -> Dict[str, Any]:
    pkt = int(expanded["packet_size"])
    duration = float(expanded["duration_s"])
    meas = expanded.get("measure") or {}
    window = float(meas.get("to_s", duration)) - float(meas.get("from_s", 0.0))
    by_id = {int(f["id"]): f for f in expanded["flows"]}
    _name_links(expanded, parsed)
    rate_events = _rate_loss_events(expanded, parsed, drops or {}, window) \
        if any(r.get("kind") == "rate" for r in parsed["flows"]) else {}
    flows = []
    for r in parsed["flows"]:
        spec = by_id[int(r["id"])]
        sent, dlv = r["sent"], r["delivered"]
        base = {
            "id": int(r["id"]), "group": int(r["group"]),
            "algorithm": spec.get("algorithm"), "params": spec.get("params") or {},
            "direction": spec.get("direction", "forward"),
            "throughput_bps": sent * pkt * 8.0 / window,
            "goodput_bps": dlv * pkt * 8.0 / window,
            "packets_sent": sent, "packets_delivered": dlv,
        }
        if r["kind"] == "tcp":
            # `lossev` is the agent's own reduction counter (ncwndcuts1_, or ncwndcuts_
            # for TCP/Linux); older outputs only have ncwndcuts1
            loss_events = r.get("lossev", r.get("ncwndcuts1"))
            base.update({
                "retransmissions": r["rexmit"],
                "loss_events": loss_events, "timeouts": r["ntimeouts"],
                "loss_event_rate": (loss_events / sent) if sent else None,
                "mean_rtt_s": r.get("mean_srtt"), "mean_cwnd": r.get("mean_cwnd"),
            })
        elif r["kind"] == "rate":
            events, rtt = rate_events.get(int(r["id"]), (None, None))
            base.update({
                "retransmissions": 0, "loss_events": events,
                # the no-feedback timer's expirations are not visible from Tcl
                "timeouts": None,
                "loss_event_rate": (events / sent) if (sent and events is not None) else None,
                "mean_rtt_s": None, "mean_cwnd": None,
                "loss_event_rtt_s": rtt,
            })
        else:
            base["algorithm"] = spec.get("algorithm", "cbr")
            base.update({"retransmissions": None, "loss_events": None, "timeouts": None,
                         "loss_event_rate": None, "mean_rtt_s": None, "mean_cwnd": None})
        flows.append(base)
    links = []
    default_rate = float((expanded.get("bottleneck") or {}).get("rate_bps") or 0.0)
    for lk in parsed["links"]:
        rate = float(lk.get("rate") or default_rate)
        links.append({
            "name": lk["name"],
            "utilization": lk["bytes"] * 8.0 / (rate * window),
            "drops": lk["drops"], "marks": lk["marks"],
            "mean_queue_pkts": lk["qint"] / window,
        })
    return {"flows": flows, "links": links, "wall_s": wall_s,
            "ns2": {"delivered_packets": parsed["total"].get("delivered_pkts")}}


def run_ns2(expanded: Dict[str, Any], ns_binary: str = "ns", workdir: Optional[str] = None,
            sample_interval_s: Optional[float] = DEFAULT_SAMPLE_INTERVAL_S,
            timeout_s: Optional[float] = None) -> Dict[str, Any]:
    """Export `expanded`, run it with ns-2 and return results in the engine's schema.

    `wall_s` is the wall time of the `ns` process alone.  Fields ns-2 cannot
    give are None.  The script (and, with rate-based flows, its drop trace) is kept
    in `workdir` when one is given.
    """
    script = export_tcl(expanded, sample_interval_s=sample_interval_s)
    tmp = None
    if workdir is None:
        tmp = tempfile.mkdtemp(prefix="tcpf-ns2-")
        workdir = tmp
    else:
        os.makedirs(workdir, exist_ok=True)
    try:
        path = os.path.join(workdir, "scenario.tcl")
        with open(path, "w") as fh:
            fh.write(script)
        t0 = time.perf_counter()
        proc = subprocess.run([ns_binary, path], cwd=workdir, capture_output=True, text=True,
                              timeout=timeout_s)
        wall = time.perf_counter() - t0
        parsed = parse_output(proc.stdout)
        if proc.returncode != 0 or not parsed["links"]:
            raise RuntimeError(f"ns-2 failed (exit {proc.returncode}) on {path}:\n"
                               f"{proc.stderr.strip()[-2000:]}")
        drops = None
        trace = os.path.join(workdir, DROP_TRACE_FILE)
        if os.path.exists(trace) and any(f.get("kind") == "rate" for f in expanded["flows"]):
            with open(trace) as fh:
                drops = parse_drop_trace(fh.read())
        return _results(expanded, parsed, wall, drops)
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)

"""How each engine algorithm is expressed in ns-2 2.35: the Agent/TCP variables, sender and
sink classes and Tcl commands of every window-based controller, the TFRC mapping of rate-based
senders. Which mapping an algorithm uses, and the reason for each one ns-2 lacks (raised as
`Ns2Unsupported`), is the registry's `ns2` field (crates/tcpf-core/src/registry.rs)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple


class Ns2Unsupported(ValueError):
    """The scenario uses something ns-2 2.35 cannot express; the message names it."""


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
    # module has no tcp_vegas_ssthresh (the engine's lower_ssthresh = "off") and takes a round's
    # smallest RTT sample (round_rtt = "min"; "mean" is ns-2's native Agent/TCP/Vegas's rule,
    # which differs from the engine's Vegas in its slow start, arithmetic and loss recovery too)
    "vegas": {
        "fixed": {"lower_ssthresh": "off", "round_rtt": "min"},
        "settable": {"alpha": ("alpha", 4, _whole(2.0)), "beta": ("beta", 8, _whole(2.0)),
                     "gamma": ("gamma", 2, _whole(2.0))},
    },
}

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


# The registry's `"ns2": {"agent": NAME}` of a window controller -> its mapping. Linux modules
# (`{"linux": MODULE}`) go through `_alg_linux(MODULE)`; `{"unsupported": WHY}` is the error.
ALGORITHMS: Dict[str, Callable[[Dict[str, Any], str], Ns2Agent]] = {
    "tcp": _alg_tcp,
    "gaimd": _alg_gaimd,
    "binomial": _alg_binomial,
    "iiad": lambda p, w: _alg_binomial(p, w, "iiad"),
    "sqrt": lambda p, w: _alg_binomial(p, w, "sqrt"),
}


@functools.lru_cache(maxsize=1)
def ns2_mappings() -> Dict[str, Dict[str, str]]:
    """Algorithm name -> how ns-2 expresses it, from the registry (``tcpf algorithms --json``'s
    ``ns2``: ``{"agent": NAME}``, ``{"linux": MODULE}`` or ``{"unsupported": WHY}``), with the
    registry's kind under ``"kind"``. Aliases are left out: scenarios are exported in canonical
    form."""
    from ..scenario import algorithms
    return {a["name"]: {**a["ns2"], "kind": a["kind"]} for a in algorithms() if "alias_of" not in a}


def _linux_algorithms() -> List[str]:
    """Window controllers that ns-2 runs as Linux modules through Agent/TCP/Linux."""
    return sorted(name for name, m in ns2_mappings().items() if "linux" in m)


# recovery -> (sender, sink, delayed-ACK sink)
RECOVERY = {
    "sack": ("Agent/TCP/Sack1", "Agent/TCPSink/Sack1", "Agent/TCPSink/Sack1/DelAck"),
    "newreno": ("Agent/TCP/Newreno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
    "newreno-impatient": ("Agent/TCP/Newreno", "Agent/TCPSink", "Agent/TCPSink/DelAck"),
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
        if k not in ("history", "t_rto_rtts", "t_mbi", "discount") and params[k] is not None:
            raise Ns2Unsupported(f"{where}.params.{k}: ns-2's Agent/TFRC has no such parameter")
    discount = 1 if params.get("discount") == "on" else 0
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
            # history discounting (RFC 5348 section 5.5) as the engine's `discount`;
            # minDiscountRatio_ is ns-2's default 0.5, the engine's floor
            ("discount_", discount),
            ("PreciseLoss_", 0),  # a new loss event is > 1 RTT after the last one, by time only
            ("numPkts_", 1),     # a gap is a loss as soon as one later packet arrives
            ("NumFeedback_", 1),  # one report per RTT
            ("algo_", 1),        # weighted average loss intervals
        ],
        t_rto_rtts=t_rto)


# The registry's `"ns2": {"agent": NAME}` of a rate-based sender -> its mapping.
RATE_ALGORITHMS: Dict[str, Callable[[Dict[str, Any], str], Ns2RateAgent]] = {
    "tfrc": _rate_tfrc,
}


def _agent_for(flow: Dict[str, Any], where: str) -> Ns2Agent:
    """The ns-2 agent for one TCP flow, or Ns2Unsupported naming the element."""
    alg = flow.get("algorithm")
    mapping = ns2_mappings().get(alg, {})
    if mapping.get("kind") == "window" and mapping.get("agent") in ALGORITHMS:
        build = ALGORITHMS[mapping["agent"]]
    elif mapping.get("kind") == "window" and "linux" in mapping:
        build = _alg_linux(mapping["linux"])
    elif mapping.get("kind") == "window" and "unsupported" in mapping:
        raise Ns2Unsupported(f"{where}.algorithm: {alg!r} has no ns-2 equivalent: {mapping['unsupported']}")
    else:
        raise Ns2Unsupported(f"{where}.algorithm: {alg!r} has no ns-2 equivalent")
    agent = build(flow.get("params") or {}, where)  # validates params
    rec = flow.get("recovery", "sack")
    if rec not in RECOVERY:
        raise Ns2Unsupported(f"{where}.recovery: {rec!r} has no ns-2 equivalent")
    if rec == "linux" and agent.sender != "Agent/TCP/Linux":
        raise Ns2Unsupported(f"{where}.recovery: 'linux' is ns-2's Agent/TCP/Linux, which runs the Linux "
                             f"modules only ({', '.join(_linux_algorithms())}), not {alg!r}")
    if agent.recoveries is not None and rec not in agent.recoveries:
        raise Ns2Unsupported(f"{where}.recovery: {rec!r} cannot be combined with {alg!r} in ns-2 "
                             f"({agent.sender} recovers with {'/'.join(agent.recoveries)} only)")
    return agent


def _rate_agent_for(flow: Dict[str, Any], where: str) -> Ns2RateAgent:
    """The ns-2 agents for one rate-based flow, or Ns2Unsupported naming the element."""
    alg = flow.get("algorithm")
    mapping = ns2_mappings().get(alg, {})
    if mapping.get("kind") != "rate" or mapping.get("agent") not in RATE_ALGORITHMS:
        why = mapping.get("unsupported") if mapping.get("kind") == "rate" else None
        raise Ns2Unsupported(f"{where}.algorithm: {alg!r} has no ns-2 equivalent" + (f": {why}" if why else ""))
    return RATE_ALGORITHMS[mapping["agent"]](flow.get("params") or {}, where)

"""tsao2007-style verdicts: O (satisfactory), Δ (acceptable), X (unacceptable).

The thresholds are data (``experiments/tsao2007/thresholds.toml``, or the user's file) and
the same for every scheme; :func:`grade_throughput`, :func:`grade_compatibility` and
:func:`grade_transient` apply them. tsao2007 Table 1 defines the criteria:

- TCP-equivalence (identical conditions): equal bandwidth, as fast as TCP;
- TCP-compatibility (comparable conditions): less bandwidth, responsiveness as fast as TCP,
  aggressiveness "don't care";
- TCP-equal share (same bottleneck): equal bandwidth.
"""

from __future__ import annotations

import math
import os
from typing import Any, Dict, Mapping, Optional

from ..errors import ScenarioError
from .scenarios import experiments_dir

__all__ = ["load_thresholds", "grade_throughput", "grade_compatibility", "grade_transient",
           "COLUMNS", "COLUMN_EXPERIMENT", "PAPER_TABLE4", "O", "D", "X"]

O, D, X = "O", "Δ", "X"

#: Table 4's columns (tsao2007), in order.
COLUMNS = ["S1", "S2 hom", "S2 het", "S3 up", "S4 up", "S3 down", "S4 down"]

#: The experiment (``paper/id``) whose runs grade each column.
COLUMN_EXPERIMENT = {"S1": "tsao2007/s1-nonperiodic", "S2 hom": "tsao2007/s2-low-multiplexing",
                     "S2 het": "tsao2007/s2-low-multiplexing", "S3 up": "tsao2007/s3-two-state",
                     "S3 down": "tsao2007/s3-two-state", "S4 up": "tsao2007/s4-bursty",
                     "S4 down": "tsao2007/s4-bursty"}

_SPEC = {
    "throughput": {"o": (0.0, 1.0), "delta": (0.0, 1.0)},
    "compatibility": {"o_max": (1.0, math.inf), "delta_max": (1.0, math.inf)},
    "transient": {"o_max": (1.0, math.inf), "delta_max": (1.0, math.inf)},
}


def default_thresholds_path() -> str:
    return os.path.join(experiments_dir(), "tsao2007", "thresholds.toml")


def load_thresholds(path: Optional[str] = None) -> Dict[str, Dict[str, float]]:
    """Read and check a thresholds file (default: the experiments home's)."""
    from ..scenario import read_toml_file
    data = read_toml_file(path or default_thresholds_path(), "thresholds file", field="thresholds")
    return check_thresholds(data)


def check_thresholds(data: Mapping[str, Any]) -> Dict[str, Dict[str, float]]:
    out: Dict[str, Dict[str, float]] = {}
    for section, keys in _SPEC.items():
        table = data.get(section)
        if not isinstance(table, Mapping):
            raise ScenarioError(f"thresholds.{section}: missing table")
        out[section] = {}
        for key, (lo, hi) in keys.items():
            v = table.get(key)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not (lo < v < hi or (section != "throughput" and v == lo)):
                raise ScenarioError(f"thresholds.{section}.{key}: must be a number in ({lo}, {hi}), got {v!r}")
            out[section][key] = float(v)
    t = out["throughput"]
    if not t["delta"] <= t["o"]:
        raise ScenarioError(f"thresholds.throughput.delta: must be <= o ({t['o']}), got {t['delta']}")
    for s in ("compatibility", "transient"):
        if not out[s]["o_max"] <= out[s]["delta_max"]:
            raise ScenarioError(f"thresholds.{s}.delta_max: must be >= o_max ({out[s]['o_max']}), got {out[s]['delta_max']}")
    return out


def grade_throughput(r: float, th: Mapping[str, Mapping[str, float]]) -> str:
    """TCP-equivalence / TCP-equal share of a throughput ratio r = X / TCP:
    O if o ≤ r ≤ 1/o, Δ if delta ≤ r ≤ 1/delta, else X (NaN → X)."""
    t = th["throughput"]
    if not (isinstance(r, (int, float)) and math.isfinite(r) and r > 0):
        return X
    if t["o"] <= r <= 1 / t["o"]:
        return O
    if t["delta"] <= r <= 1 / t["delta"]:
        return D
    return X


def grade_compatibility(r: float, th: Mapping[str, Mapping[str, float]]) -> str:
    """TCP-compatibility of a throughput ratio r = X / TCP ("less bandwidth"):
    O if r ≤ o_max, Δ if r ≤ delta_max, else X."""
    t = th["compatibility"]
    if not (isinstance(r, (int, float)) and math.isfinite(r) and r >= 0):
        return X
    return O if r <= t["o_max"] else D if r <= t["delta_max"] else X


def grade_transient(q: float, th: Mapping[str, Mapping[str, float]]) -> str:
    """Aggressiveness / responsiveness of a time ratio q = X's convergence time / TCP's
    ("as fast as TCP"): O if q ≤ o_max, Δ if q ≤ delta_max, else X (NaN: X never converged)."""
    t = th["transient"]
    if not (isinstance(q, (int, float)) and math.isfinite(q) and q >= 0):
        return X
    return O if q <= t["o_max"] else D if q <= t["delta_max"] else X


def worst_ratio(ratios) -> float:
    """The ratio farthest from 1 in log scale (|ln r| largest); NaN when none is finite."""
    best, worst = -1.0, float("nan")
    for r in ratios:
        if isinstance(r, (int, float)) and math.isfinite(r) and r > 0:
            d = abs(math.log(r))
            if d > best:
                best, worst = d, r
        elif r is not None:
            return float("nan")
    return worst


def time_ratio(x_s: float, tcp_s: float, floor_s: float) -> float:
    """X's convergence time / TCP's, each at least ``floor_s`` (the resolution of the
    measurement: the averaging window). NaN when X never converged."""
    if not (isinstance(x_s, (int, float)) and math.isfinite(x_s)):
        return float("nan")
    if not (isinstance(tcp_s, (int, float)) and math.isfinite(tcp_s)):
        return float("nan")
    return max(x_s, floor_s) / max(tcp_s, floor_s)


#: tsao2007 Table 4 as printed (004:195-214); the first "TFRC" row is TFRCP. Keys: the
#: project's algorithm names. Cells with a parenthesised TCP-compatibility grade are
#: "equivalence(compatibility)".
PAPER_TABLE4 = {
    "gaimd": ["Δ(O)", "X", "X", "Δ(O)", "Δ", "Δ(Δ)", "Δ"],
    "iiad": ["X(O)", "Δ", "X", "X(O)", "X", "X(X)", "X"],
    "sqrt": ["X(O)", "Δ", "X", "O(O)", "Δ", "O(O)", "O"],
    "simd": ["Δ(O)", "X", "X", "O(O)", "O", "Δ(Δ)", "X"],
    "aiad_h": ["X(O)", "Δ", "X", "X(O)", "X", "X(X)", "X"],
    "tfrcp": ["X(X)", "Δ", "O", "Δ(O)", "X", "O(O)", "O"],
    "tfrc": ["Δ(O)", "Δ", "O", "Δ(O)", "Δ", "O(O)", "O"],
    "tear": ["X(O)", "Δ", "O", "X(O)", "X", "O(O)", "O"],
}

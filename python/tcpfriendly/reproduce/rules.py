"""Comparison rules of ``published.toml`` (validation/ns2/bank.toml's tolerance style):

- ``{ rel = 0.1 }``: ours within ±10 % of the paper's value;
- ``{ abs = 0.05 }``: ours within ±0.05 of it;
- ``{ min = x }`` / ``{ max = x }``: ours ≥ x / ≤ x (a bound the paper states);
- ``{ interval = [lo, hi] }``: lo ≤ ours ≤ hi;
- ``{ equals = true }``: a claim that is a yes/no statement (an ordering, a trend), computed
  as a boolean by the ``ours`` expression;
- ``{ same = true }``: ours is the paper's value exactly (a grade such as tsao2007's "Δ(O)").

A rule is written before comparing and never widened to make a case pass.

A right-censored value (:class:`tcpfriendly.metrics.transients.LowerBound`: a convergence time
some run did not reach before its phase ended; docs/evaluate.md) is a lower bound: it meets
``min`` when the bound does, and never meets ``max``, ``rel``, ``abs`` or ``interval`` (the true
value is unknown above the bound); a yes/no claim the censoring leaves undecided
(:class:`tcpfriendly.reproduce.expr.Undecided`) does not hold."""

from __future__ import annotations

import math
from typing import Any, Mapping, Optional, Tuple

from ..errors import ScenarioError
from ..metrics.transients import LowerBound

__all__ = ["check_rule", "compare", "rule_text", "difference", "Graded"]


class Graded(str):
    """A grade (tsao2007's ``"Δ(O)"``) with ``detail``: the number behind it and, where it is
    not the paper's, the band the paper's grade would need (tcpf reproduce's Table 4). It is
    the grade for every comparison; ``detail`` is the claim table's difference column."""

    detail: str

    def __new__(cls, grade: str, detail: str = "") -> "Graded":
        self = str.__new__(cls, grade)
        self.detail = str(detail)
        return self

    def __reduce__(self):
        return (Graded, (str(self), self.detail))

_KINDS = ("rel", "abs", "min", "max", "interval", "equals", "same")


def check_rule(rule: Any, where: str) -> Mapping[str, Any]:
    """Validate a rule table; raises ScenarioError naming ``where``."""
    if not isinstance(rule, Mapping) or not rule:
        raise ScenarioError(f"{where}: must be a table such as {{ rel = 0.1 }}", field=where)
    keys = [k for k in rule if k in _KINDS]
    extra = [k for k in rule if k not in _KINDS]
    if extra:
        raise ScenarioError(f"{where}: unknown rule key {extra[0]!r} (allowed: {', '.join(_KINDS)})",
                            field=where)
    if len(keys) != 1:
        raise ScenarioError(f"{where}: exactly one of {', '.join(_KINDS)}", field=where)
    k = keys[0]
    v = rule[k]
    if k in ("equals", "same"):
        if not isinstance(v, bool):
            raise ScenarioError(f"{where}.{k}: must be true or false", field=where)
    elif k == "interval":
        if not (isinstance(v, list) and len(v) == 2 and all(isinstance(x, (int, float)) for x in v)
                and v[0] <= v[1]):
            raise ScenarioError(f"{where}.interval: must be [lo, hi] with lo <= hi", field=where)
    elif not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or \
            (k in ("rel", "abs") and v < 0):
        raise ScenarioError(f"{where}.{k}: must be a finite number{' >= 0' if k in ('rel', 'abs') else ''}",
                            field=where)
    return rule


def rule_text(rule: Mapping[str, Any]) -> str:
    if "rel" in rule:
        return f"±{rule['rel'] * 100:g} %"
    if "abs" in rule:
        return f"±{rule['abs']:g}"
    if "min" in rule:
        return f"≥ {rule['min']:g}"
    if "max" in rule:
        return f"≤ {rule['max']:g}"
    if "interval" in rule:
        lo, hi = rule["interval"]
        return f"in [{lo:g}, {hi:g}]"
    if "same" in rule:
        return "same"
    return "holds" if rule["equals"] else "does not hold"


def difference(paper: Any, ours: Any) -> Optional[str]:
    """Ours − paper and the relative difference, as text; a grade's detail (:class:`Graded`);
    None when not numeric."""
    if isinstance(ours, Graded):
        return ours.detail or None
    if isinstance(paper, bool) or isinstance(ours, bool) or not isinstance(paper, (int, float)) \
            or not isinstance(ours, (int, float)):
        return None
    if math.isnan(ours):
        return "n/a"
    d = ours - paper
    if isinstance(ours, LowerBound):
        return _bound_difference(d, paper)
    if abs(d) <= 1e-12 * max(1.0, abs(paper)):
        return "0"
    if paper != 0:
        return f"{d:+.4g} ({d / abs(paper) * 100:+.1f} %)"
    return f"{d:+.4g}"


def _bound_difference(d: float, paper: float) -> str:
    """The difference when ours is a lower bound L (the true value is above it): ours − paper
    is only known to exceed d = L − paper. Positive when d ≥ 0 (ours > L ≥ paper); when the
    bound is below the paper's value the sign is unknown."""
    if abs(d) <= 1e-12 * max(1.0, abs(paper)):
        return "> 0 (ours above the paper's, by an unknown amount)"
    if d > 0:
        return f"> {d:+.4g}" + (f" (> {d / abs(paper) * 100:+.1f} %)" if paper != 0 else "")
    return f"> {d:+.4g} (sign unknown: the bound is below the paper's value)"


def compare(rule: Mapping[str, Any], paper: Any, ours: Any) -> Tuple[bool, str]:
    """(matched, why): whether ``ours`` satisfies ``rule`` against the ``paper`` value."""
    if "same" in rule:
        return ours == paper, "same" if ours == paper else "not the same"
    if "equals" in rule:
        from .expr import Undecided
        if isinstance(ours, Undecided):
            return False, f"undecided: {ours.reason}"
        ok = isinstance(ours, bool) and ours == rule["equals"]
        return ok, ("holds" if ours else "does not hold") if isinstance(ours, bool) else \
            f"not a yes/no value: {ours!r}"
    if isinstance(ours, bool) or not isinstance(ours, (int, float)):
        return False, f"not a number: {ours!r}"
    if math.isnan(ours):
        return False, "no value (NaN)"
    if isinstance(ours, LowerBound):
        if "min" in rule and float(ours) >= rule["min"]:
            return True, f"the lower bound {float(ours):.4g} meets {rule_text(rule)}: {ours.note}"
        return False, (f"undecided: the lower bound is below {rule['min']:g}" if "min" in rule else
                       "a lower bound cannot show " + rule_text(rule)) + f" (ours {ours.text()})"
    if "rel" in rule:
        ok = abs(ours - paper) <= rule["rel"] * abs(paper) + 1e-12
    elif "abs" in rule:
        ok = abs(ours - paper) <= rule["abs"] + 1e-12
    elif "min" in rule:
        ok = ours >= rule["min"]
    elif "max" in rule:
        ok = ours <= rule["max"]
    else:
        lo, hi = rule["interval"]
        ok = lo <= ours <= hi
    return ok, rule_text(rule)

"""The experiments home (``experiments/<paper>/<experiment>/``) as Python objects, and the
scenarios built from it for one algorithm.

An experiment directory holds ``experiment.toml`` (metadata, named assumptions, axes, metric),
``scenario.toml`` (a scenario template whose ``"${name}"`` strings are filled from the
assumptions, the axes and the algorithm under test) and ``published.toml`` (the paper's
values). The schema is documented in ``experiments/README.md``.
"""

from __future__ import annotations

import copy
import math
import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from ..errors import ScenarioError

__all__ = ["Experiment", "experiments_dir", "load_experiment", "fill", "EVALUATION",
           "algorithm_fields"]

#: The experiments ``tcpf evaluate`` runs, in Table-4 order, then jin2001 and sastry2005.
EVALUATION = [
    ("tsao2007", "s1-nonperiodic"),
    ("tsao2007", "s2-low-multiplexing"),
    ("tsao2007", "s3-two-state"),
    ("tsao2007", "s4-bursty"),
    ("jin2001", "impulse-response"),
    ("sastry2005", "trough"),
]

_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def experiments_dir() -> str:
    """The experiments home: ``$TCPF_EXPERIMENTS`` or ``experiments/`` at the repository root."""
    env = os.environ.get("TCPF_EXPERIMENTS")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    return os.path.normpath(os.path.join(here, "..", "..", "..", "experiments"))


def _read(path: str) -> Dict[str, Any]:
    """A TOML file of the experiments home (the one reader: scenario.read_toml_file)."""
    from ..scenario import read_toml_file
    return read_toml_file(path, "experiment file")


@dataclass
class Experiment:
    """One experiment of the home: metadata, assumptions, axes, template, published values."""
    paper: str
    id: str
    path: str
    meta: Dict[str, Any]
    assumptions: Dict[str, Dict[str, Any]]
    axes: Dict[str, List[Any]]
    quick_axes: Dict[str, List[Any]]
    template: Dict[str, Any]
    published: Dict[str, Any] = field(default_factory=dict)
    #: ``{name: {"doc", "set": {placeholder: assumption}}}``: stationary reference runs, each
    #: the template with some placeholders taking another assumption's value
    references: Dict[str, Dict[str, Any]] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.paper}/{self.id}"

    def seeds(self, quick: bool, override: Optional[int] = None) -> int:
        if override is not None:
            return override
        return int(self.meta.get("quick_seeds" if quick else "seeds", 1))

    def values(self, quick: bool, overrides: Optional[Mapping[str, Any]] = None) -> Dict[str, Any]:
        """The assumption values in force (``quick`` picks each one's ``quick`` value)."""
        out = {}
        for name, a in self.assumptions.items():
            out[name] = a.get("quick", a["value"]) if quick else a["value"]
        for name, v in (overrides or {}).items():
            if name not in self.assumptions:
                raise ScenarioError(f"{self.key}: unknown assumption {name!r} "
                                    f"(known: {', '.join(sorted(self.assumptions))})")
            out[name] = v
        return out

    def grid(self, quick: bool) -> List[Dict[str, Any]]:
        """The axis points (one dict per point; ``[{}]`` without axes)."""
        axes = self.quick_axes if quick and self.quick_axes else self.axes
        points: List[Dict[str, Any]] = [{}]
        for name, values in axes.items():
            points = [dict(p, **{name: v}) for p in points for v in values]
        return points


def load_experiment(paper: str, exp_id: str, root: Optional[str] = None) -> Experiment:
    root = root or experiments_dir()
    path = os.path.join(root, paper, exp_id)
    meta_all = _read(os.path.join(path, "experiment.toml"))
    meta = meta_all.get("experiment", {})
    template = _read(os.path.join(path, meta.get("scenario", "scenario.toml")))
    pub_path = os.path.join(path, "published.toml")
    published = _read(pub_path) if os.path.exists(pub_path) else {}
    assumptions = meta_all.get("assumptions", {})
    for name, a in assumptions.items():
        if not isinstance(a, dict) or "value" not in a or "doc" not in a:
            raise ScenarioError(f"{path}/experiment.toml: assumptions.{name}: needs 'value' and 'doc'")
    references = meta_all.get("references", {})
    for name, ref in references.items():
        if not isinstance(ref, dict) or "doc" not in ref or not isinstance(ref.get("set"), dict):
            raise ScenarioError(f"{path}/experiment.toml: references.{name}: needs 'doc' and a 'set' table")
        for k, src in ref["set"].items():
            if src not in assumptions:
                raise ScenarioError(f"{path}/experiment.toml: references.{name}.set.{k}: "
                                    f"unknown assumption {src!r}")
    return Experiment(paper=paper, id=exp_id, path=path, meta=meta, assumptions=assumptions,
                      axes=meta_all.get("axes", {}), quick_axes=meta_all.get("quick_axes", {}),
                      template=template, published=published, references=references)


def fill(template: Any, values: Mapping[str, Any], where: str = "") -> Any:
    """Replace ``"${name}"`` placeholders in a scenario template.

    A string that is exactly one placeholder becomes the value itself (any type; ``None``
    removes the key or list item); a placeholder inside a longer string is formatted into it.
    An unknown name raises :class:`ScenarioError` naming it and the field.
    """
    if isinstance(template, dict):
        out = {}
        for k, v in template.items():
            filled = fill(v, values, f"{where}.{k}" if where else k)
            if filled is not None:
                out[k] = filled
        return out
    if isinstance(template, list):
        items = [fill(v, values, f"{where}[{i}]") for i, v in enumerate(template)]
        return [v for v in items if v is not None]
    if isinstance(template, str):
        m = _PLACEHOLDER.fullmatch(template)
        if m:
            name = m.group(1)
            if name not in values:
                raise ScenarioError(f"{where}: unknown placeholder ${{{name}}}")
            return copy.deepcopy(values[name])

        def sub(mm):
            name = mm.group(1)
            if name not in values:
                raise ScenarioError(f"{where}: unknown placeholder ${{{name}}}")
            return str(values[name])
        return _PLACEHOLDER.sub(sub, template)
    return template


def algorithm_fields(algorithm: str, params: Optional[Mapping[str, Any]], family: Optional[str],
                     recovery: Optional[str]) -> Dict[str, Any]:
    """The placeholder values describing the flow under test: ``algorithm``, ``params``
    (``None`` when empty) and ``recovery`` (``None`` for rate-based schemes, which have no
    window loss recovery)."""
    return {
        "algorithm": algorithm,
        "params": dict(params) if params else None,
        "recovery": None if family == "rate-based" else recovery,
    }


def derived(exp: Experiment, values: Dict[str, Any], seed: int = 1) -> Dict[str, Any]:
    """Placeholder values computed from the assumptions (documented in each experiment).

    sastry2005's background ("a random number of Reno TCP flows") is drawn per seed from the
    ``background`` range ``[lo, hi]`` with ``random.Random(seed)`` (the same count for the
    algorithm under test and for the TCP row at the same seed)."""
    out = dict(values)
    if exp.key == "jin2001/impulse-response" and values.get("rtt_count") not in ("queue", "mean"):
        raise ScenarioError(f"rtt_count: must be 'queue' or 'mean', got {values.get('rtt_count')!r}")
    if exp.key == "sastry2005/trough":
        for name in ("drop_window", "peak_bin_s"):
            dw = values.get(name)
            if isinstance(dw, bool) or not isinstance(dw, (int, float)) or not (0 < dw < math.inf):
                raise ScenarioError(f"{name}: must be a positive number of seconds, got {dw!r}")
        bg = values["background"]
        if isinstance(bg, list):
            if len(bg) != 2 or not all(isinstance(b, int) and b >= 1 for b in bg) or bg[0] > bg[1]:
                raise ScenarioError(f"background: must be a count >= 1 or a range [lo, hi] of counts, got {bg!r}")
            import random
            out["background"] = random.Random(int(seed)).randint(bg[0], bg[1])
    if exp.key == "tsao2007/s2-low-multiplexing":
        n = int(values["n"])
        cv = float(values["cv_rtt"])
        mean_rtt = float(values["mean_rtt"])
        bd = float(values["bottleneck_delay"])
        out["access_delays"] = s2_access_delays(n, cv, mean_rtt, bd)
    if exp.key == "tsao2007/s4-bursty":
        hp = float(values["half_period"])
        out["period"] = 2 * hp
        out["cbr_steps"] = [[0, values["high_rate"]], [hp, values["low_rate"]]]
    return out


def s2_access_delays(n: int, cv: float, mean_rtt: float, bottleneck_delay: float) -> List[float]:
    """Per-flow access delays giving n round-trip propagation delays evenly spaced around
    ``mean_rtt`` with population CV ``cv``: ``RTT_i = mean_rtt (1 + cv z_i)``, z_i a linear
    grid on [-1, 1] scaled to unit standard deviation; ``access_i = RTT_i / 2 − bottleneck_delay``."""
    if n == 1 or cv == 0:
        z = [0.0] * n
    else:
        grid = [-1 + 2 * i / (n - 1) for i in range(n)]
        sd = math.sqrt(sum(g * g for g in grid) / n)
        z = [g / sd for g in grid]
    delays = [mean_rtt * (1 + cv * zi) / 2 - bottleneck_delay for zi in z]
    if min(delays) <= 0:
        raise ScenarioError(f"cv_rtt: {cv} gives a non-positive access delay "
                            f"({min(delays):.4f} s) with mean_rtt {mean_rtt} s")
    return [round(d, 9) for d in delays]

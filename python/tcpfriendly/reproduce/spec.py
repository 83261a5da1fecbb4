"""The experiments of a paper as ``tcpf reproduce`` reads them from the experiments home
(``experiments/<paper>/<experiment>/``; schema in ``experiments/README.md``).

An experiment directory has ``experiment.toml`` (what to run: ``kind = "analytic"`` — model
calls through :mod:`tcpfriendly.models` —, ``"sweep"`` — simulations on the sweep engine from
``sweep.toml`` — or ``"evaluate"`` — :func:`tcpfriendly.evaluate.evaluate`) with its named
``[inputs.*]``, and ``published.toml`` (the paper's values, where they are printed, the
expression that computes ours from the inputs, and the rule that compares them)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Mapping, Optional

from ..errors import ScenarioError
from .rules import check_rule

__all__ = ["PAPERS", "Experiment", "Claim", "experiments_dir", "load_paper", "load_experiment",
           "INCONSISTENT"]

#: How the verdict of a claim where the paper contradicts itself (``Claim.inconsistent``) starts.
INCONSISTENT = "differs: the paper is inconsistent"

#: The papers ``tcpf reproduce`` knows (shared/papers/README.md's short names).
PAPERS = ["jin2001", "yang2000", "sastry2005", "liu2008", "tsao2007"]
KINDS = ("analytic", "sweep", "evaluate")


def experiments_dir() -> str:
    """The experiments home (the same one ``tcpf evaluate`` reads)."""
    from ..evaluate.scenarios import experiments_dir as _dir
    return _dir()


def _read(path: str) -> Dict[str, Any]:
    """A TOML file of the experiments home (the reader ``tcpf evaluate`` uses: its errors are
    ScenarioErrors naming the file)."""
    from ..evaluate.scenarios import _read as read_experiment_file
    return read_experiment_file(path)


@dataclass
class Claim:
    """One published value (or yes/no claim) and how ours is computed and compared."""
    claim: str
    where: str
    quote: str
    value: Any
    ours: str
    rule: Mapping[str, Any]
    reason: str = ""          # the hypothesis printed when ours differs
    inconsistent: str = ""    # the paper contradicts itself here: the computation
    unit: str = ""
    quick: bool = True        # also checked with --quick


@dataclass
class Experiment:
    paper: str
    id: str
    path: str
    title: str
    source: str
    kind: str
    inputs: Dict[str, Dict[str, Any]]
    claims: List[Claim]
    assumptions: Dict[str, Dict[str, Any]] = field(default_factory=dict)
    figure: Dict[str, Any] = field(default_factory=dict)
    sweep: Any = None                 # a sweep spec path, or {label: path} (several sweeps)
    seeds: int = 1
    quick_seeds: int = 1
    quick: Dict[str, Any] = field(default_factory=dict)
    evaluate: Dict[str, Any] = field(default_factory=dict)
    metric: Dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return f"{self.paper}/{self.id}"


def _claims(data: Mapping[str, Any], where: str) -> List[Claim]:
    out = []
    for i, v in enumerate(data.get("values") or []):
        w = f"{where}.values[{i}]"
        if not isinstance(v, Mapping):
            raise ScenarioError(f"{w}: must be a table", field=w)
        missing = [k for k in ("claim", "where", "value", "ours", "rule") if k not in v]
        if missing:
            raise ScenarioError(f"{w}.{missing[0]}: missing (each value needs claim, where, "
                                f"quote, value, ours and rule)", field=f"{w}.{missing[0]}")
        out.append(Claim(claim=str(v["claim"]), where=str(v["where"]), quote=str(v.get("quote", "")),
                         value=v["value"], ours=str(v["ours"]),
                         rule=check_rule(v["rule"], f"{w}.rule"), reason=str(v.get("reason", "")),
                         inconsistent=str(v.get("inconsistent", "")), unit=str(v.get("unit", "")),
                         quick=bool(v.get("quick", True))))
    return out


def load_experiment(path: str) -> Optional[Experiment]:
    """The experiment in directory ``path``; None if it is not one ``tcpf reproduce`` runs
    (no ``kind`` and no ``[inputs]``: an experiment only ``tcpf evaluate`` reads)."""
    meta = _read(os.path.join(path, "experiment.toml"))
    e = meta.get("experiment") or {}
    if "kind" not in e:
        return None
    kind = e["kind"]
    where = f"{os.path.basename(path)}/experiment.toml"
    if kind not in KINDS:
        raise ScenarioError(f"{where}: experiment.kind must be one of {', '.join(KINDS)}, got {kind!r}")
    pub_path = os.path.join(path, "published.toml")
    claims = _claims(_read(pub_path), os.path.basename(path) + "/published.toml") \
        if os.path.exists(pub_path) else []
    sweep = e.get("sweep")
    if kind == "sweep" and not sweep:
        raise ScenarioError(f"{where}: experiment.sweep: a sweep experiment names its sweep spec")
    return Experiment(
        paper=str(e.get("paper", os.path.basename(os.path.dirname(path)))),
        id=str(e.get("id", os.path.basename(path))), path=path, title=str(e.get("title", "")),
        source=str(e.get("source", "")), kind=kind, inputs=dict(meta.get("inputs") or {}),
        claims=claims, assumptions=dict(meta.get("assumptions") or {}),
        figure=dict(meta.get("figure") or {}),
        sweep=({str(k): os.path.join(path, v) for k, v in sweep.items()} if isinstance(sweep, dict)
               else os.path.join(path, sweep) if sweep else None),
        seeds=int(e.get("seeds", 1)), quick_seeds=int(e.get("quick_seeds", e.get("seeds", 1))),
        quick=dict(meta.get("quick") or {}), evaluate=dict(meta.get("evaluate") or {}),
        metric=dict(meta.get("metric") or {}))


def _natural(name: str):
    """Sort key: digit runs as numbers (fig9 before fig10)."""
    import re
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", name)]


def load_paper(paper: str, only: Optional[List[str]] = None) -> List[Experiment]:
    """The reproducible experiments of ``paper`` (sorted by directory name), or those named
    in ``only``. Raises ScenarioError for an unknown paper or experiment."""
    if paper not in PAPERS:
        raise ScenarioError(f"paper: must be one of {', '.join(PAPERS)} or all, got {paper!r}",
                            field="paper")
    root = os.path.join(experiments_dir(), paper)
    exps = []
    if os.path.isdir(root):
        for d in sorted(os.listdir(root), key=_natural):
            p = os.path.join(root, d)
            if os.path.isfile(os.path.join(p, "experiment.toml")):
                ex = load_experiment(p)
                if ex is not None:
                    exps.append(ex)
    if only:
        known = {x.id for x in exps}
        for o in only:
            if o not in known:
                raise ScenarioError(f"--only: no experiment {o!r} in {paper} (known: "
                                    f"{', '.join(sorted(known)) or 'none'})", field="only")
        exps = [x for x in exps if x.id in only]
    return exps

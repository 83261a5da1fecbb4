"""``tcpf reproduce``: rerun the experiments of jin2001, yang2000, sastry2005, liu2008 and
tsao2007 from the experiments home and print our numbers beside the published ones.

    from tcpfriendly.reproduce import reproduce
    results = reproduce("jin2001", quick=True)            # list of ExperimentResult (a Reproduction)
    for r in results:
        for c in r.claims:
            print(c.claim.claim, c.claim.value, c.ours, c.verdict)

Each experiment is a directory ``experiments/<paper>/<experiment>/`` (schema in
``experiments/README.md``): analytic ones call :mod:`tcpfriendly.models`, simulation ones run
a sweep on the sweep engine (cached in ``out/runs/``, resumable, progress bar on a
terminal), tsao2007's go through :func:`tcpfriendly.evaluate.evaluate`.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ScenarioError
from .report import paper_markdown, table_text, write_figure
from .run import ClaimResult, ExperimentResult, Options, Reproduction, run_experiment
from .spec import PAPERS, Experiment, load_paper

__all__ = ["PAPERS", "reproduce", "plan", "write_outputs", "Options", "ExperimentResult",
           "ClaimResult", "Experiment", "Reproduction"]


def plan(paper: str, only: Optional[Sequence[str]] = None) -> Dict[str, List[Experiment]]:
    """{paper: [experiments]} for ``paper`` (or ``"all"``), restricted to ``only`` (experiment
    ids; with ``all`` an id must exist in at least one paper). Raises ScenarioError."""
    if paper == "all":
        out = {p: load_paper(p) for p in PAPERS}
        if only:
            known = {x.id for xs in out.values() for x in xs}
            for o in only:
                if o not in known:
                    raise ScenarioError(f"--only: no experiment {o!r} in any paper (known: "
                                        f"{', '.join(sorted(known))})", field="only")
            out = {p: [x for x in xs if x.id in only] for p, xs in out.items()}
        return {p: xs for p, xs in out.items() if xs}
    return {paper: load_paper(paper, list(only) if only else None)}


def reproduce(paper: str, only: Optional[Sequence[str]] = None, *, quick: bool = False,
              seeds: Optional[int] = None, out: Optional[str] = None,
              workers: Optional[int] = None, dask: Any = None, progress: Optional[bool] = None,
              quiet: bool = True, on_result=None) -> Reproduction:
    """Run the experiments of ``paper`` (``"all"``: every paper) and compare with the paper.

    Args:
        only: experiment ids (directory names) to run.
        quick: each experiment's ``[quick]`` setup (fewer seeds, shorter runs, fewer points).
        seeds: runs per point (overrides the experiment's ``seeds``/``quick_seeds``).
        out: directory for the sweep run cache (``out/runs/<paper>/<experiment>``).
        workers, dask: as :func:`tcpfriendly.sweep.run_sweep`.
        on_result: called with each :class:`ExperimentResult` as it finishes.

    Returns a :class:`Reproduction`: the list of :class:`ExperimentResult`, shown in a notebook
    as each paper's claims matched and each experiment's paper-vs-ours table and figure.
    """
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise ScenarioError(f"seeds: must be a positive integer, got {seeds!r}", field="seeds")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ScenarioError(f"workers: must be a positive integer, got {workers!r}", field="workers")
    todo = plan(paper, only)
    opts = Options(quick=quick, seeds=seeds, out=out, workers=workers, dask=dask,
                   progress=progress, quiet=quiet)
    results = Reproduction()
    for exps in todo.values():
        for ex in exps:
            r = run_experiment(ex, opts)
            results.append(r)
            if on_result is not None:
                on_result(r)
    return results


def write_outputs(results: List[ExperimentResult], out: str, command: str,
                  wall: Optional[Dict[str, float]] = None) -> List[str]:
    """Per paper: figures (PNG, SVG), ``REPRODUCTION.md`` and ``results.json`` in ``out/<paper>/``."""
    import json

    written: List[str] = []
    by_paper: Dict[str, List[ExperimentResult]] = {}
    for r in results:
        by_paper.setdefault(r.experiment.paper, []).append(r)
    for paper, rs in by_paper.items():
        d = os.path.join(out, paper)
        os.makedirs(d, exist_ok=True)
        figs = {r.experiment.id: write_figure(r, d) for r in rs}
        written += [p for ps in figs.values() for p in ps]
        total = (wall or {}).get(paper, sum(r.wall_s for r in rs))
        md = paper_markdown(paper, rs, total, rs[0].quick, command, figs)
        p = os.path.join(d, "REPRODUCTION.md")
        with open(p, "w", encoding="utf-8") as f:
            f.write(md)
        written.append(p)
        p = os.path.join(d, "results.json")
        with open(p, "w", encoding="utf-8") as f:
            json.dump([r.to_json() for r in rs], f, indent=1, ensure_ascii=False, allow_nan=False)
            f.write("\n")
        written.append(p)
    return written

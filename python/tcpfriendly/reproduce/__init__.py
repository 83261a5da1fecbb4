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

Every row of ``shared/papers/INVENTORY.md`` is accounted for in
``experiments/<paper>/inventory.toml`` (:mod:`tcpfriendly.reproduce.inventory`): the report
gives each row's status (matched / differs / not run / not expressible) beside the claims.
"""

from __future__ import annotations

import os
import time
from typing import Any, Dict, List, Optional, Sequence

from ..errors import ScenarioError
from ..sweep.core import check_simulator, check_workers
from .inventory import (RowStatus, counts_text, load_rows, row_counts, row_statuses, rows_json,
                        rows_text)
from .report import paper_markdown, table_text, write_figure
from .run import ClaimResult, ExperimentResult, Options, Reproduction, run_experiment
from .spec import PAPERS, Experiment, load_paper

__all__ = ["PAPERS", "reproduce", "plan", "ns2_skipped", "write_outputs", "results_json", "inventory_rows",
           "inventory_summary",
           "Options", "ExperimentResult", "ClaimResult", "Experiment", "RowStatus", "Reproduction"]


def plan(paper: str, only: Optional[Sequence[str]] = None) -> Dict[str, List[Experiment]]:
    """{paper: [experiments]} for ``paper`` (or ``"all"``), restricted to ``only`` (experiment
    ids; with ``all`` an id must exist in at least one paper). Raises ScenarioError, also for
    a malformed ``experiments/<paper>/inventory.toml`` (before anything runs)."""
    if paper == "all":
        out = {p: load_paper(p) for p in PAPERS}
        if only:
            known = {x.id for xs in out.values() for x in xs}
            for o in only:
                if o not in known:
                    raise ScenarioError(f"--only: no experiment {o!r} in any paper (known: "
                                        f"{', '.join(sorted(known))})", field="only")
            out = {p: [x for x in xs if x.id in only] for p, xs in out.items()}
        out = {p: xs for p, xs in out.items() if xs}
    else:
        out = {paper: load_paper(paper, list(only) if only else None)}
    for p in out:
        load_rows(p)
    return out


def reproduce(paper: str, only: Optional[Sequence[str]] = None, *, quick: bool = False,
              seeds: Optional[int] = None, out: Optional[str] = None,
              workers: Optional[int] = None, dask: Any = None, progress: Optional[bool] = None,
              quiet: bool = True, on_result=None, simulator: str = "tcpf") -> Reproduction:
    """Run the experiments of ``paper`` (``"all"``: every paper) and compare with the paper.

    Args:
        only: experiment ids (directory names) to run.
        quick: each experiment's ``[quick]`` setup (fewer seeds, shorter runs, fewer points).
        seeds: runs per point (overrides the experiment's ``seeds``/``quick_seeds``).
        out: directory for the sweep run cache (``out/runs/<paper>/<experiment>``).
        workers, dask: as :func:`tcpfriendly.sweep.run_sweep`.
        on_result: called with each :class:`ExperimentResult` as it finishes.
        simulator: ``"tcpf"`` (tcpfriendly's engine, the default) or ``"ns2"``: the sweeps and
            the evaluations (``tcpf evaluate --simulator ns2``) run in ns-2 2.35 on the scripts
            :mod:`tcpfriendly.ns2` exports (the paper's own simulator on the same setup: where
            ours differs from the paper, whether ns-2 does too). The analytic experiments
            simulate nothing and are left out (:func:`ns2_skipped`); a claim whose runs ns-2
            cannot express (a scheme without an ns-2 agent, a loss model ns-2 lacks) is not
            run, naming why.

    Returns a :class:`Reproduction`: the list of :class:`ExperimentResult`, shown in a notebook
    as each paper's claims matched and each experiment's paper-vs-ours table and figure.
    """
    if seeds is not None and (isinstance(seeds, bool) or not isinstance(seeds, int) or seeds < 1):
        raise ScenarioError(f"seeds: must be a positive integer, got {seeds!r}", field="seeds")
    check_workers(workers)
    check_simulator(simulator, dask)
    todo = plan(paper, only)
    todo = {p: [x for x in xs if _runs_in(x, simulator)] for p, xs in todo.items()}
    # without a run cache on disk, the evaluations of one call still share their runs in
    # memory (tsao2007 table4 and observations evaluate the same schemes)
    opts = Options(quick=quick, seeds=seeds, out=out, workers=workers, dask=dask,
                   progress=progress, quiet=quiet, memo=None if out else {}, simulator=simulator)
    results = Reproduction()
    for exps in todo.values():
        for ex in exps:
            r = run_experiment(ex, opts)
            results.append(r)
            if on_result is not None:
                on_result(r)
    return results


def ns2_skipped(paper: str, only: Optional[Sequence[str]] = None) -> Dict[str, List[Experiment]]:
    """{paper: the experiments ``reproduce(..., simulator="ns2")`` does not run}: the analytic
    ones (nothing to simulate)."""
    return {p: [x for x in xs if not _runs_in(x, "ns2")] for p, xs in plan(paper, only).items()}


def _runs_in(ex: Experiment, simulator: str) -> bool:
    """Whether ``reproduce(..., simulator=...)`` runs ``ex``: every experiment with tcpfriendly's
    engine; with another simulator the sweeps and the evaluations (``tcpf evaluate``'s runs
    in that simulator; the parts it cannot express are not run), not the analytic ones."""
    return simulator == "tcpf" or ex.kind in ("sweep", "evaluate")


def _by_paper(results: List[ExperimentResult]) -> Dict[str, List[ExperimentResult]]:
    by_paper: Dict[str, List[ExperimentResult]] = {}
    for r in results:
        by_paper.setdefault(r.experiment.paper, []).append(r)
    return by_paper


def inventory_rows(results: List[ExperimentResult]) -> Dict[str, List[RowStatus]]:
    """{paper: the status of every inventory row of that paper} for the papers in ``results``
    (``experiments/<paper>/inventory.toml``; rows whose experiments were not run are "not run")."""
    return {paper: row_statuses(paper, rs) for paper, rs in _by_paper(results).items()}


def inventory_summary(rows: Dict[str, List[RowStatus]], width: int = 70) -> str:
    """The terminal's per-row table of each paper, and with several papers the total."""
    parts = [rows_text(paper, st, width) for paper, st in rows.items()]
    if len(rows) > 1:
        every = [s for st in rows.values() for s in st]
        parts.append(f"inventory rows, all papers: {counts_text(row_counts(every))}")
    return "\n\n".join(parts)


def results_json(results: List[ExperimentResult],
                 rows: Optional[Dict[str, List[RowStatus]]] = None) -> List[Dict[str, Any]]:
    """What ``--json`` prints and ``results.json`` holds: one object per experiment, each with
    ``inventory_rows``, the inventory rows it checks and their status (the whole per-row table
    is ``inventory.json``)."""
    rows = inventory_rows(results) if rows is None else rows
    out = []
    for r in results:
        d = r.to_json()
        d["inventory_rows"] = [{"row": s.row.id, "status": s.status}
                               for s in rows.get(r.experiment.paper, [])
                               if any(c.experiment == r.experiment.id for c in s.row.checks)]
        out.append(d)
    return out


def write_outputs(results: List[ExperimentResult], out: str, command: str,
                  wall: Optional[Dict[str, float]] = None, field: Optional[str] = "out") -> List[str]:
    """Per paper: figures (PNG, SVG), ``REPRODUCTION.md``, ``results.json`` and
    ``inventory.json`` (every inventory row's status and the counts) in ``out/<paper>/``.
    Each file is written whole or not at all, never through a symbolic link
    (:mod:`tcpfriendly.outfiles`); a failure is an ``OutputError`` naming the file and
    ``field``."""
    import json

    from ..outfiles import atomic_text, make_dir

    written: List[str] = []
    rows = inventory_rows(results)
    for paper, rs in _by_paper(results).items():
        d = make_dir(os.path.join(out, paper), field)
        figs = {r.experiment.id: write_figure(r, d, field=field) for r in rs}
        written += [p for ps in figs.values() for p in ps]
        total = (wall or {}).get(paper, sum(r.wall_s for r in rs))
        md = paper_markdown(paper, rs, total, rs[0].quick, command, figs, rows.get(paper))
        files = [
            ("REPRODUCTION.md", md),
            ("results.json", json.dumps(results_json(rs, rows), indent=1, ensure_ascii=False,
                                        allow_nan=False) + "\n"),
            ("inventory.json", json.dumps(rows_json(paper, rows.get(paper, [])), indent=1,
                                          ensure_ascii=False, allow_nan=False) + "\n"),
        ]
        for name, text in files:
            written.append(atomic_text(os.path.join(d, name), text, field=field))
    return written

"""The inventory rows: every row of ``shared/papers/INVENTORY.md`` (one per figure, table or
claim of the five papers) accounted for by ``tcpf reproduce``.

The mapping lives in ``experiments/<paper>/inventory.toml`` (schema: ``experiments/README.md``,
"The inventory rows"): each row id of the paper once, with the experiment claims that check it
(``checks``), what of it is not reproduced yet (``todo``), or why there is nothing to check
(``not_expressible``). From a run's results each row gets one status:

- ``matched``: every claim of the row that was judged matched, and nothing of it is ``todo``
  (with ``--only``, a row some of whose experiments did not run says which);
- ``differs``: a claim of the row differs (the reasons are the claims' verdicts), or part or
  all of the row is not reproduced yet (``todo``: "not yet reproduced", never dropped);
- ``not run``: the row's experiments were not run in this mode (``--only``), or none of its
  claims is judged with ``--quick``;
- ``not expressible``: nothing ``tcpf reproduce`` can check (real kernels, a definition, a
  conceptual figure, a setup table), with the reason.

The *checkable* rows are all rows but the not-expressible ones. The headline is
matched / (matched + differs) over the checkable rows that were run; rows not run are listed,
never counted as matched.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from ..errors import ScenarioError
from .spec import INCONSISTENT

__all__ = ["STATUSES", "Check", "Row", "RowStatus", "inventory_file", "load_rows",
           "inventory_md_path", "parse_inventory_md", "mapping_problems", "row_statuses",
           "row_counts", "counts_text", "rows_json", "rows_markdown", "rows_text"]

#: The statuses of a row, in report order.
STATUSES = ("matched", "differs", "not run", "not expressible")

_ROW_KEYS = {"id", "checks", "todo", "not_expressible", "note"}
_CHECK_KEYS = {"experiment", "claims"}


@dataclass
class Check:
    """Claims of one experiment that check a row: ``claims`` None means all of them."""
    experiment: str
    claims: Optional[List[str]] = None


@dataclass
class Row:
    paper: str
    id: str
    checks: List[Check] = field(default_factory=list)
    todo: str = ""
    not_expressible: str = ""
    note: str = ""


def inventory_file(paper: str) -> str:
    """``experiments/<paper>/inventory.toml``."""
    from .spec import experiments_dir
    return os.path.join(experiments_dir(), paper, "inventory.toml")


def _text(v: Any, where: str) -> str:
    if not isinstance(v, str) or not v.strip():
        raise ScenarioError(f"{where}: must be a non-empty string, got {v!r}", field=where)
    return v


def load_rows(paper: str) -> List[Row]:
    """The rows of ``experiments/<paper>/inventory.toml`` (schema checked: ScenarioError naming
    the file and the field). A paper without the file has no rows."""
    from .spec import PAPERS, _read

    if paper not in PAPERS:
        raise ScenarioError(f"paper: must be one of {', '.join(PAPERS)}, got {paper!r}", field="paper")
    path = inventory_file(paper)
    if not os.path.exists(path):
        return []
    data = _read(path)
    name = f"{paper}/inventory.toml"
    extra = set(data) - {"rows"}
    if extra:
        raise ScenarioError(f"{name}: unknown table {sorted(extra)[0]!r} (only [[rows]])")
    rows = []
    for i, r in enumerate(data.get("rows") or []):
        w = f"{name}: rows[{i}]"
        if not isinstance(r, Mapping):
            raise ScenarioError(f"{w}: must be a table", field=w)
        unknown = set(r) - _ROW_KEYS
        if unknown:
            raise ScenarioError(f"{w}.{sorted(unknown)[0]}: unknown key (allowed: "
                                f"{', '.join(sorted(_ROW_KEYS))})", field=w)
        rid = _text(r.get("id"), f"{w}.id")
        if not rid.startswith(paper + " "):
            raise ScenarioError(f"{w}.id: a {paper} row id starts with '{paper} ', got {rid!r}", field=w)
        checks = []
        raw = r.get("checks") or []
        if not isinstance(raw, list):
            raise ScenarioError(f"{w}.checks: must be a list of {{experiment, claims}}", field=w)
        for j, c in enumerate(raw):
            wc = f"{w}.checks[{j}]"
            if not isinstance(c, Mapping) or set(c) - _CHECK_KEYS or "experiment" not in c:
                raise ScenarioError(f"{wc}: must be {{ experiment = \"dir\", claims = [\"text\", ...] }} "
                                    f"(claims optional), got {dict(c) if isinstance(c, Mapping) else c!r}",
                                    field=wc)
            claims = c.get("claims")
            if claims is not None and (not isinstance(claims, list) or not claims
                                       or not all(isinstance(x, str) and x for x in claims)):
                raise ScenarioError(f"{wc}.claims: a non-empty list of claim texts", field=wc)
            checks.append(Check(_text(c["experiment"], f"{wc}.experiment"),
                                list(claims) if claims is not None else None))
        todo = _text(r["todo"], f"{w}.todo") if "todo" in r else ""
        nx = _text(r["not_expressible"], f"{w}.not_expressible") if "not_expressible" in r else ""
        if nx and (checks or todo):
            raise ScenarioError(f"{w}: not_expressible excludes checks and todo", field=w)
        if not (nx or checks or todo):
            raise ScenarioError(f"{w}: needs checks, todo or not_expressible", field=w)
        note = _text(r["note"], f"{w}.note") if "note" in r else ""
        rows.append(Row(paper, rid, checks, todo, nx, note))
    return rows


# ----- INVENTORY.md ----------------------------------------------------------------------------
def inventory_md_path() -> Optional[str]:
    """``$TCPF_INVENTORY``, or ``shared/papers/INVENTORY.md`` next to the repository (or its
    worktree directory); None when there is none."""
    env = os.environ.get("TCPF_INVENTORY")
    if env:
        return env
    from .spec import experiments_dir
    root = os.path.dirname(os.path.abspath(experiments_dir()))
    for up in (1, 2):
        p = os.path.normpath(os.path.join(root, *[".."] * up, "shared", "papers", "INVENTORY.md"))
        if os.path.isfile(p):
            return p
    return None


def parse_inventory_md(text: str) -> Dict[str, List[str]]:
    """``{paper: [row ids]}`` from INVENTORY.md: the first cell of each body row of the tables
    whose header starts with ``| id |`` (the per-paper tables). Cells may hold ``|`` inside
    backticks (escaped ``\\|``); the id cell never does."""
    out: Dict[str, List[str]] = {}
    in_table = False
    for line in text.splitlines():
        if line.startswith("| id |"):
            in_table = True
            continue
        if not in_table:
            continue
        if not line.startswith("|"):
            in_table = False
            continue
        if re.match(r"^\|\s*-", line):
            continue
        cell = re.split(r"(?<!\\)\|", line)[1].strip()
        out.setdefault(cell.split(" ", 1)[0], []).append(cell)
    return out


# ----- the mapping against the experiments --------------------------------------------------------
def mapping_problems(paper: str, inventory_ids: Optional[Sequence[str]] = None,
                     rows: Optional[List[Row]] = None, experiments=None) -> List[str]:
    """What is wrong with ``paper``'s mapping, as sentences: a row of the inventory missing, a
    row listed twice or not in the inventory, a check naming an experiment or a claim that does
    not exist, an experiment or a claim that belongs to no row. Claims of ``kind = "evaluate"``
    experiments exist only once run: such an experiment is checked as a whole (no ``claims``),
    unless all its claims are its ``published.toml``'s (``evaluated.claims_made_when_run``)."""
    from .evaluated import claims_made_when_run
    from .spec import load_paper

    rows = load_rows(paper) if rows is None else rows
    exps = {x.id: x for x in (load_paper(paper) if experiments is None else experiments)}
    out = []
    seen: Dict[str, int] = {}
    for r in rows:
        seen[r.id] = seen.get(r.id, 0) + 1
    out += [f"{rid}: listed {n} times" for rid, n in seen.items() if n > 1]
    if inventory_ids is not None:
        ids = list(inventory_ids)
        out += [f"{rid}: in INVENTORY.md, missing from {paper}/inventory.toml"
                for rid in ids if rid not in seen]
        out += [f"{rid}: in {paper}/inventory.toml, not a row of INVENTORY.md"
                for rid in seen if rid not in ids]
    covered: Dict[str, set] = {}
    for r in rows:
        for c in r.checks:
            ex = exps.get(c.experiment)
            if ex is None:
                out.append(f"{r.id}: no experiment {c.experiment!r} in experiments/{paper}/")
                continue
            texts = {k.claim for k in ex.claims}
            if c.claims is None:
                covered.setdefault(ex.id, set()).update(texts)
                if not texts and ex.kind != "evaluate":
                    out.append(f"{r.id}: {paper}/{ex.id} has no claims")
                continue
            if ex.kind == "evaluate" and claims_made_when_run(ex):
                out.append(f"{r.id}: {paper}/{ex.id} is an evaluate experiment (claims made when "
                           f"run): check it whole, without claims")
                continue
            for t in c.claims:
                if t not in texts:
                    out.append(f"{r.id}: no claim {t!r} in {paper}/{ex.id}")
            covered.setdefault(ex.id, set()).update(t for t in c.claims if t in texts)
    checked = {c.experiment for r in rows for c in r.checks}
    for ex in exps.values():
        if ex.id not in checked:
            out.append(f"{paper}/{ex.id}: checked by no inventory row")
            continue
        for k in ex.claims:
            if k.claim not in covered.get(ex.id, set()):
                out.append(f"{paper}/{ex.id}: claim {k.claim!r} belongs to no inventory row")
    return out


# ----- row status from results --------------------------------------------------------------------
@dataclass
class RowStatus:
    row: Row
    status: str                               # one of STATUSES
    reasons: List[str] = field(default_factory=list)
    judged: int = 0                           # claims of the row judged in this run
    matched: int = 0
    total: Optional[int] = None               # claims of the row in the experiments run
    not_yet: bool = False                     # differs because (part of) it is `todo`
    inconsistent: bool = False                # differs only where the paper contradicts itself

    def to_json(self) -> Dict[str, Any]:
        r = self.row
        return {"row": r.id, "status": self.status, "reasons": list(self.reasons),
                "claims_judged": self.judged, "claims_matched": self.matched,
                "not_yet_reproduced": self.not_yet, "paper_inconsistent": self.inconsistent,
                "checks": [{"experiment": c.experiment, **({"claims": c.claims} if c.claims else {})}
                           for c in r.checks],
                **({"todo": r.todo} if r.todo else {}),
                **({"not_expressible": r.not_expressible} if r.not_expressible else {}),
                **({"note": r.note} if r.note else {})}


def _outcomes(results: Iterable[Any]) -> Dict[str, Dict[str, Tuple[bool, str]]]:
    """{experiment id: {claim text: (matched, verdict)}} from ExperimentResults or their JSON;
    claims that were not run (``unavailable``: in ns-2, a scenario it cannot express) are left
    out, as not judged."""
    out: Dict[str, Dict[str, Tuple[bool, str]]] = {}
    for r in results:
        if isinstance(r, Mapping):
            out[str(r["experiment"])] = {str(c["claim"]): (bool(c["matched"]), str(c.get("verdict", "")))
                                         for c in r.get("claims") or [] if c.get("unavailable") is None}
        else:
            out[r.experiment.id] = {c.claim.claim: (bool(c.matched), c.verdict) for c in r.claims
                                    if c.unavailable is None}
    return out


def _grouped(bad: List[Tuple[str, str, bool, str]], shown: int = 3) -> List[str]:
    """"exp: claim: verdict" per differing claim; claims of one experiment with the same
    verdict share one line ("exp: a; b; c (+2 more): verdict")."""
    groups: Dict[Tuple[str, str], List[str]] = {}
    for e, t, _, v in bad:
        groups.setdefault((e, v), []).append(t)
    out = []
    for (e, v), ts in groups.items():
        more = f" (+{len(ts) - shown} more)" if len(ts) > shown else ""
        out.append(f"{e}: {'; '.join(ts[:shown])}{more}: {v}")
    return out


def row_statuses(paper: str, results: Iterable[Any], rows: Optional[List[Row]] = None) -> List[RowStatus]:
    """The status of each of ``paper``'s rows from the results of a run (ExperimentResults, or
    the dicts of ``results.json``) of that paper's experiments."""
    rows = load_rows(paper) if rows is None else rows
    got = _outcomes(results)
    out = []
    for r in rows:
        if r.not_expressible:
            out.append(RowStatus(r, "not expressible", [r.not_expressible]))
            continue
        judged: List[Tuple[str, str, bool, str]] = []
        total = 0
        for c in r.checks:
            claims = got.get(c.experiment)
            if claims is None:
                continue
            texts = list(claims) if c.claims is None else c.claims
            total += len(texts)
            for t in texts:
                if t in claims:
                    judged.append((c.experiment, t, *claims[t]))
        ok = [j for j in judged if j[2]]
        bad = [j for j in judged if not j[2]]
        reasons = _grouped(bad)
        if r.todo:
            reasons.append(("partly reproduced; not yet: " if ok else "not yet reproduced: ") + r.todo)
        if bad or r.todo:
            status = "differs"
        elif not judged:
            status = "not run"
            reasons = [NOT_RUN if total == 0 else
                       "none of its claims is judged in this mode (--quick, or claims not run "
                       "in ns-2)"]
        else:
            status = "matched"
            reasons = []
            if len(judged) < total:
                reasons.append(f"{len(judged)} of {total} claims judged in this mode")
            unrun = sorted({c.experiment for c in r.checks if c.experiment not in got})
            if unrun:  # matched on part of its evidence (--only): say which part is missing
                reasons.append(f"matched on part of its experiments: {', '.join(unrun)} not run "
                               "in this mode")
        out.append(RowStatus(r, status, reasons, len(judged), len(ok), total,
                             not_yet=bool(r.todo) and not bad,
                             inconsistent=bool(bad) and not r.todo and all(
                                 v.startswith(INCONSISTENT) for _, _, _, v in bad)))
    return out


def row_counts(statuses: Sequence[RowStatus]) -> Dict[str, Any]:
    """Counts of a list of row statuses: each status, ``not_yet`` (the differing rows whose
    only gap is ``todo``), ``inconsistent`` (the differing rows whose only differing claims are
    where the paper contradicts itself), ``checkable`` (all but not expressible), ``judged``
    (checkable and run) and ``fraction`` = matched / judged (None without judged rows)."""
    n = {s: sum(1 for x in statuses if x.status == s) for s in STATUSES}
    judged = n["matched"] + n["differs"]
    return {"rows": len(statuses), "matched": n["matched"], "differs": n["differs"],
            "not_yet": sum(1 for x in statuses if x.not_yet),
            "inconsistent": sum(1 for x in statuses if x.inconsistent), "not_run": n["not run"],
            "not_expressible": n["not expressible"], "checkable": len(statuses) - n["not expressible"],
            "judged": judged, "fraction": (n["matched"] / judged) if judged else None}


def counts_text(c: Mapping[str, Any]) -> str:
    """"30 of the 70 checkable rows matched (43 %); 40 differ (25 not yet reproduced); 0 not
    run in this mode; 6 not expressible" ("of the 60 checkable rows run" when some were not)."""
    pct = f" ({100 * c['fraction']:.0f} %)" if c["fraction"] is not None else ""
    run = " run" if c["not_run"] else ""
    inc = f", {c['inconsistent']} where the paper is inconsistent" if c.get("inconsistent") else ""
    return (f"{c['matched']} of the {c['judged']} checkable rows{run} matched{pct}; {c['differs']} differ "
            f"({c['not_yet']} not yet reproduced{inc}); {c['not_run']} not run in this mode; "
            f"{c['not_expressible']} not expressible")


def rows_json(paper: str, statuses: Sequence[RowStatus]) -> Dict[str, Any]:
    return {"paper": paper, "mapping": f"experiments/{paper}/inventory.toml",
            "counts": row_counts(statuses), "rows": [s.to_json() for s in statuses]}


def _clip(s: str, n: int) -> str:
    return s if len(s) <= n else s[: n - 1] + "…"


NOT_RUN = "its experiments were not run in this mode"


def rows_text(paper: str, statuses: Sequence[RowStatus], width: int = 70) -> str:
    """The per-row table for a terminal: status, row, the first reason (clipped). Rows none of
    whose experiments ran (``--only``) are one line at the end that counts them; the JSON and
    ``REPRODUCTION.md`` list each."""
    c = row_counts(statuses)
    unrun = [s for s in statuses if s.status == "not run" and s.reasons == [NOT_RUN]]
    shown = [s for s in statuses if s not in unrun]
    idw = min(48, max((len(s.row.id) for s in shown), default=2))
    lines = [f"{paper} inventory rows: {counts_text(c)}"]
    for s in shown:
        why = "; ".join(s.reasons)
        lines.append(f"  {s.status:<15} {_clip(s.row.id, idw):<{idw}}  {_clip(why, width)}".rstrip())
    if unrun:
        lines.append(f"  ({len(unrun)} other row{'s' if len(unrun) > 1 else ''} not run: none of "
                     f"{'their' if len(unrun) > 1 else 'its'} experiments is among those run; "
                     "--json and REPRODUCTION.md list them)")
    return "\n".join(lines)


def rows_markdown(paper: str, statuses: Sequence[RowStatus]) -> List[str]:
    """The ``REPRODUCTION.md`` section: the counts and one table line per row."""
    def cell(s: str) -> str:
        return s.replace("|", "\\|").replace("\n", " ")

    c = row_counts(statuses)
    lines = ["## Inventory rows", "",
             f"Every row of `shared/papers/INVENTORY.md` for {paper}, as mapped in "
             f"`experiments/{paper}/inventory.toml`: **{counts_text(c)}**. A row matches when "
             "every claim that checks it matches; it differs when one of them differs or when "
             "(part of) the row is not reproduced yet; not-expressible rows have nothing "
             "`tcpf reproduce` can check and say why.", "",
             "| row | status | claims matched | reason |", "|---|---|---|---|"]
    for s in statuses:
        claims = f"{s.matched}/{s.judged}" if s.judged else ""
        why = "; ".join(s.reasons)
        if s.row.note:
            why += ("; " if why else "") + f"note: {s.row.note}"
        lines.append(f"| {cell(s.row.id)} | {s.status} | {claims} | {cell(why)} |")
    return lines

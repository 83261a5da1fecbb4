"""tcpf reproduce's inventory rows: experiments/<paper>/inventory.toml accounts for every row of
shared/papers/INVENTORY.md once, each check names a claim that exists, every claim belongs to a
row, and a row's status follows from its claims' verdicts."""
import os
import re

import pytest

import tcpfriendly as tf
from tcpfriendly.reproduce import PAPERS
from tcpfriendly.reproduce import inventory as inv
from tcpfriendly.reproduce.inventory import Check, Row


def _inventory_ids():
    path = inv.inventory_md_path()
    if path is None or not os.path.isfile(path):
        pytest.skip("shared/papers/INVENTORY.md is not next to the repository (set TCPF_INVENTORY)")
    with open(path, encoding="utf-8") as f:
        return inv.parse_inventory_md(f.read())


def test_every_inventory_row_is_mapped_exactly_once_to_claims_that_exist():
    ids = _inventory_ids()
    assert set(ids) == set(PAPERS)
    assert sum(len(v) for v in ids.values()) >= 130
    for paper in PAPERS:
        assert len(set(ids[paper])) == len(ids[paper]), f"{paper}: a row id twice in INVENTORY.md"
        problems = inv.mapping_problems(paper, ids[paper])
        assert problems == [], "\n".join(problems)
        assert [r.id for r in inv.load_rows(paper)] == ids[paper], f"{paper}: rows out of the inventory's order"


def test_the_mapping_names_existing_experiments_and_claims_and_covers_every_claim():
    """The same without INVENTORY.md (it lives outside the repository): experiments, claims,
    duplicates, and no claim outside every row."""
    n = 0
    for paper in PAPERS:
        rows = inv.load_rows(paper)
        assert rows, paper
        n += len(rows)
        problems = inv.mapping_problems(paper)
        assert problems == [], "\n".join(problems)
        for r in rows:
            assert bool(r.not_expressible) != bool(r.checks or r.todo), r.id
    assert n >= 130


def test_mapping_problems_are_found():
    """A row missing, listed twice, not in the inventory; an experiment or claim that does not
    exist; a claim that belongs to no row; an evaluate experiment checked claim by claim."""
    from tcpfriendly.reproduce.spec import load_paper

    exps = load_paper("liu2008")
    bound = next(x for x in exps if x.id == "eq31-lossy-bound")
    first = bound.claims[0].claim
    rows = [
        Row("liu2008", "liu2008 A", [Check("eq31-lossy-bound", [first])]),
        Row("liu2008", "liu2008 A", todo="again"),
        Row("liu2008", "liu2008 B", [Check("no-such-experiment")]),
        Row("liu2008", "liu2008 C", [Check("markov-figs2-7", ["no such claim"])]),
        Row("liu2008", "liu2008 Z", not_expressible="not in the inventory"),
    ]
    problems = inv.mapping_problems("liu2008", ["liu2008 A", "liu2008 B", "liu2008 C", "liu2008 D"],
                                    rows=rows, experiments=[bound, *[x for x in exps if x.id in
                                                                     ("markov-figs2-7", "fig14-lossy")]])
    text = "\n".join(problems)
    assert "liu2008 A: listed 2 times" in text
    assert "liu2008 D: in INVENTORY.md, missing" in text
    assert "liu2008 Z: in liu2008/inventory.toml, not a row of INVENTORY.md" in text
    assert "no experiment 'no-such-experiment'" in text
    assert "no claim 'no such claim' in liu2008/markov-figs2-7" in text
    # eq31's other claims belong to no row; fig14-lossy is checked by no row at all
    for c in bound.claims[1:]:
        assert f"claim {c.claim!r} belongs to no inventory row" in text
    assert f"claim {first!r} belongs" not in text
    assert "liu2008/fig14-lossy: checked by no inventory row" in text
    ev = next(x for x in load_paper("tsao2007") if x.id == "table4")   # claims made when run
    p = inv.mapping_problems("tsao2007", rows=[Row("tsao2007", "tsao2007 T", [Check(ev.id, ["x"])])],
                             experiments=[ev])
    assert any("check it whole" in x for x in p)
    p = inv.mapping_problems("tsao2007", rows=[Row("tsao2007", "tsao2007 T", todo="t")], experiments=[ev])
    assert p == [f"tsao2007/{ev.id}: checked by no inventory row"]


def test_inventory_markdown_rows_are_parsed_from_the_id_tables_only():
    md = "\n".join([
        "# Inventory", "", "## 1. jin2001", "",
        "| id | shows | setup | express? | checked? | rule |", "|---|---|---|---|---|---|",
        "| jin2001 Fig. 3(a–d) (§4.1) | plots | x | **Y**: `--alg gaimd\\|simd` | ✘ | a \\| b |",
        "| jin2001 Table 2 (§4.2, App. C) | formulas | analytic | **Y** | ✔ | ±5 % |",
        "", "text between tables", "",
        "| id | shows | setup | express? | checked? | rule |", "|---|---|---|---|---|---|",
        "| yang2000 Fig. 8 | weight | — | **Y** | — | — |",
        "", "## 6. Everything", "", "| item | paper(s) | tcpfriendly | note |", "|---|---|---|---|",
        "| TCP Reno / NewReno | all | **yes** | `tcp` |",
    ])
    assert inv.parse_inventory_md(md) == {
        "jin2001": ["jin2001 Fig. 3(a–d) (§4.1)", "jin2001 Table 2 (§4.2, App. C)"],
        "yang2000": ["yang2000 Fig. 8"]}


def _result(exp, claims):
    """A fabricated experiment of results.json: {claim: matched}."""
    return {"experiment": exp, "claims": [
        {"claim": c, "matched": ok, "verdict": "matched" if ok else f"differs: because {c}"}
        for c, ok in claims.items()]}


def test_row_status_follows_from_the_claims():
    rows = [
        Row("p", "p all matched", [Check("e1", ["a", "b"])]),
        Row("p", "p one differs", [Check("e1", ["a"]), Check("e2", ["c"])]),
        Row("p", "p whole experiment", [Check("e2")]),
        Row("p", "p not yet", todo="no experiment yet"),
        Row("p", "p partly", [Check("e1", ["a"])], todo="the simulation columns"),
        Row("p", "p not run", [Check("e3")]),
        Row("p", "p quick-skipped", [Check("e1", ["q"])]),
        Row("p", "p partly judged", [Check("e1", ["a", "q"])]),
        Row("p", "p nothing to check", not_expressible="a definition"),
        Row("p", "p inconsistent", [Check("e4")]),
        Row("p", "p many", [Check("e5")]),
        Row("p", "p half run", [Check("e1", ["a"]), Check("e3")]),
    ]
    results = [_result("e1", {"a": True, "b": True}), _result("e2", {"c": False, "d": True}),
               {"experiment": "e4", "claims": [
                   {"claim": "x", "matched": False, "verdict": "differs: the paper is inconsistent: 1.89 ≠ 1.861"},
                   {"claim": "y", "matched": True, "verdict": "matched"}]},
               _result("e5", {f"m{i}": False for i in range(5)})]
    results[-1]["claims"][4]["verdict"] = "differs: another reason"
    for c in results[-1]["claims"][:4]:
        c["verdict"] = "differs: the same reason"
    st = {s.row.id: s for s in inv.row_statuses("p", results, rows)}
    assert st["p all matched"].status == "matched" and st["p all matched"].reasons == []
    s = st["p one differs"]
    assert s.status == "differs" and (s.judged, s.matched) == (2, 1) and not s.not_yet
    assert s.reasons == ["e2: c: differs: because c"]
    assert st["p whole experiment"].status == "differs" and st["p whole experiment"].judged == 2
    s = st["p not yet"]
    assert s.status == "differs" and s.not_yet and s.reasons == ["not yet reproduced: no experiment yet"]
    s = st["p partly"]
    assert s.status == "differs" and s.not_yet and s.matched == 1
    assert s.reasons == ["partly reproduced; not yet: the simulation columns"]
    assert st["p not run"].status == "not run"
    assert st["p not run"].reasons == ["its experiments were not run in this mode"]
    assert st["p quick-skipped"].status == "not run"
    assert "none of its claims is judged" in st["p quick-skipped"].reasons[0]
    s = st["p partly judged"]
    assert s.status == "matched" and s.reasons == ["1 of 2 claims judged in this mode"]
    s = st.pop("p half run")  # (--only e1): matched on its run part, which it says
    assert s.status == "matched" and s.reasons == ["matched on part of its experiments: e3 not run in this mode"]
    assert st["p nothing to check"].status == "not expressible"
    assert st["p nothing to check"].reasons == ["a definition"]
    assert st["p many"].reasons == ["e5: m0; m1; m2 (+1 more): differs: the same reason",
                                    "e5: m4: differs: another reason"]
    del st["p many"]
    s = st["p inconsistent"]
    assert s.status == "differs" and s.inconsistent and not st["p one differs"].inconsistent
    c = inv.row_counts(list(st.values()))
    assert c == {"rows": 10, "matched": 2, "differs": 5, "not_yet": 2, "inconsistent": 1,
                 "not_run": 2, "not_expressible": 1, "checkable": 9, "judged": 7, "fraction": 2 / 7}
    text = inv.counts_text(c)
    assert text.startswith("2 of the 7 checkable rows run matched (29 %); 5 differ (2 not yet "
                           "reproduced, 1 where the paper is inconsistent); 2 not run")
    md = "\n".join(inv.rows_markdown("p", list(st.values())))
    assert "| p one differs | differs | 1/2 | e2: c: differs: because c |" in md
    assert "| p nothing to check | not expressible |  | a definition |" in md
    assert "| p not run | not run |  | its experiments were not run in this mode |" in md
    # the terminal table counts the rows none of whose experiments ran instead of listing them
    term = inv.rows_text("p", list(st.values())).splitlines()
    assert not any("its experiments were not run" in line for line in term)
    assert term[-1] == ("  (1 other row not run: none of its experiments is among those run; "
                        "--json and REPRODUCTION.md list them)")
    assert any("p quick-skipped" in line for line in term)  # not run for another reason: listed


def test_row_status_from_experiment_results_matches_the_json_form():
    """The same statuses from ExperimentResults (a real analytic run) and from their JSON."""
    from tcpfriendly.reproduce import reproduce, results_json

    rs = reproduce("liu2008", ["eq31-lossy-bound"])
    a = inv.row_statuses("liu2008", rs)
    b = inv.row_statuses("liu2008", results_json(rs))
    assert [(s.row.id, s.status, s.reasons) for s in a] == [(s.row.id, s.status, s.reasons) for s in b]
    st = {s.row.id: s for s in a}
    assert st["liu2008 eq. 31 (§5)"].status == "matched" and st["liu2008 eq. 31 (§5)"].judged == 2
    assert st["liu2008 Fig. 14 (§6.3)"].status == "not run"
    # a row with only a todo (no experiment yet) differs as "not yet reproduced", never "not run"
    for row in inv.load_rows("liu2008"):
        if row.todo and not row.checks:
            assert st[row.id].status == "differs" and st[row.id].not_yet, row.id
    d = results_json(rs)[0]
    assert {"row": "liu2008 eq. 31 (§5)", "status": "matched"} in d["inventory_rows"]


@pytest.mark.parametrize("text, needle", [
    ('[[rows]]\nid = "liu2008 X"\n', "needs checks, todo or not_expressible"),
    ('[[rows]]\nid = "liu2008 X"\ntodo = "t"\nnot_expressible = "n"\n', "not_expressible excludes"),
    ('[[rows]]\nid = "jin2001 X"\ntodo = "t"\n', "rows[0].id"),
    ('[[rows]]\nid = "liu2008 X"\nchecks = [{ exp = "a" }]\n', "rows[0].checks[0]"),
    ('[[rows]]\nid = "liu2008 X"\nchecks = [{ experiment = "a", claims = [] }]\n', "checks[0].claims"),
    ('[[rows]]\nid = "liu2008 X"\ntodo = "t"\nstatus = "matched"\n', "rows[0].status: unknown key"),
    ('[[row]]\nid = "liu2008 X"\n', "unknown table 'row'"),
    ('[[rows]\n', "malformed TOML"),
])
def test_a_bad_mapping_is_refused_naming_the_field(tmp_path, monkeypatch, text, needle):
    (tmp_path / "liu2008").mkdir()
    (tmp_path / "liu2008" / "inventory.toml").write_text(text, encoding="utf-8")
    monkeypatch.setenv("TCPF_EXPERIMENTS", str(tmp_path))
    with pytest.raises(tf.ScenarioError, match=re.escape(needle)):
        inv.load_rows("liu2008")

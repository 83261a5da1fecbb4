"""`tcpf evaluate --simulator ns2` (`evaluate(..., simulator="ns2")`) and the evaluate experiments
of `tcpf reproduce --simulator ns2`: the same runs in ns-2 2.35, graded the same way; what ns-2
cannot express is not run, with the exporter's reason, never replaced by tcpfriendly's numbers.

The runs need the `ns` binary (skipped where it is absent, failed in CI: TCPF_REQUIRE_NS2)."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import pytest

from tcpfriendly.errors import ScenarioError
from tcpfriendly.evaluate import evaluate
from tcpfriendly.evaluate.core import _plan
from tcpfriendly.evaluate.runner import REDUCERS, cache_version
from tcpfriendly.ns2 import ns2_available, ns2_engine_id, run_ns2
from tcpfriendly.reproduce import reproduce
from tcpfriendly.reproduce.evaluated import evaluation_names
from tcpfriendly.reproduce.expr import NotRun, evaluate_expr
from tcpfriendly.results import Result
from tcpfriendly.scenario import Scenario

from conftest import REPO

NS_SKIP = not ns2_available() and os.environ.get("TCPF_REQUIRE_NS2") != "1"
needs_ns2 = pytest.mark.skipif(NS_SKIP, reason="ns-2 (`ns`) is not installed here")

GAIMD = {"alpha": 0.31, "beta": 0.125}


def test_bad_simulator_and_what_ns2_cannot_take_are_refused_naming_the_field():
    with pytest.raises(ScenarioError) as err:
        evaluate("tcp", quick=True, only=["s2"], simulator="ns3")
    assert err.value.field == "simulator" and "tcpf, ns2" in str(err.value)
    with pytest.raises(ScenarioError) as err:
        evaluate("tcp", quick=True, only=["s2"], simulator="ns2", dask="local")
    assert err.value.field == "dask"

    class Mine:  # never built: refused before anything is checked or run
        pass
    with pytest.raises(ScenarioError) as err:
        evaluate("mine", quick=True, only=["s2"], simulator="ns2", controllers={"mine": Mine})
    assert err.value.field == "controllers" and "engine only" in str(err.value)


def test_the_cli_refuses_dask_with_ns2_with_exit_2_naming_the_flag():
    p = subprocess.run([sys.executable, "-m", "tcpfriendly.cli", "evaluate", "tcp", "--quick",
                        "--simulator", "ns2", "--dask", "local"], capture_output=True, text=True,
                       cwd=REPO, timeout=60)
    assert p.returncode == 2, p.stderr
    assert "--dask" in p.stderr and "Traceback" not in p.stderr


def test_experiments_ns2_cannot_express_are_not_run_with_the_exporters_reason():
    # planned only (nothing runs): jin2001's impulse response reads a loss log ns-2's runs do
    # not record; a scheme without an agent is not run anywhere; the trough test runs
    plan = _plan("gaimd", GAIMD, None, True, None, None, None, ["jin2001", "sastry2005"], 1, "ns2")
    assert set(plan.not_run) == {"jin2001/impulse-response"}
    assert "loss log" in plan.not_run["jin2001/impulse-response"]
    assert plan.jobs and all(j.reducer == "trough" and j.simulator == "ns2" for j in plan.jobs)
    simd = _plan("simd", None, None, True, None, None, None, ["s2"], 1, "ns2")
    assert "simd" in simd.not_run["tsao2007/s2-low-multiplexing"] and simd.jobs == []
    # with tcpfriendly's engine the same plans run everything
    assert _plan("gaimd", GAIMD, None, True, None, None, None, ["s1"], 1, "tcpf").not_run == {}


@needs_ns2
def test_ns2_runs_have_their_own_cache_identity():
    assert ns2_engine_id() in cache_version("s2", "ns2")
    assert cache_version("s2", "ns2") != cache_version("s2")


@needs_ns2
def test_s2_grades_come_from_ns2s_own_runs(tmp_path):
    out = str(tmp_path / "ev")
    ev = evaluate("gaimd", GAIMD, quick=True, only=["s1", "s2"], simulator="ns2", out=out, workers=2)
    assert ev.simulator == "ns2" and list(ev.not_run) == ["tsao2007/s1-nonperiodic"]
    assert set(ev.grades) == {"S2 hom", "S2 het"} and "S1" not in ev.numbers
    # the CV[RTT] = 0 point (hom) recomputed by hand from ns-2: the same scenario, seed and
    # reducer run through run_ns2 give the same share
    plan = _plan("gaimd", GAIMD, None, True, None, None, None, ["s2"], 1, "ns2")
    shares = []
    for point, role, job in plan.per_exp["tsao2007/s2-low-multiplexing"][4]:
        if point["cv_rtt"] == 0:  # both group orders (roles x and x_swapped), one seed
            raw = run_ns2(Scenario(job.scenario).expand(job.seed))
            red = REDUCERS[job.reducer](Result("", raw=raw), job.ctx)
            shares.append(red["x_goodput_bps"] / red["tcp_goodput_bps"])
    assert len(shares) == 2
    assert math.isclose(ev.numbers["S2 hom"]["equal_share"], math.sqrt(shares[0] * shares[1]), rel_tol=1e-9)
    # not tcpfriendly's numbers
    ours = evaluate("gaimd", GAIMD, quick=True, only=["s2"], out=out, workers=2)
    assert ours.numbers["S2 hom"]["equal_share"] != ev.numbers["S2 hom"]["equal_share"]
    # a rerun finds every ns-2 run in the cache; the engine's runs above did not reuse them
    again = evaluate("gaimd", GAIMD, quick=True, only=["s1", "s2"], simulator="ns2", out=out, workers=2)
    assert again.runs["ran"] == 0 and again.runs["cached"] == again.runs["distinct"] > 0
    assert again.numbers == ev.numbers
    assert ours.runs["ran"] > 0
    doc = ev.to_json()
    assert doc["simulator"] == "ns2" and "general_exponential" in doc["not_run"]["tsao2007/s1-nonperiodic"]
    json.dumps(doc, allow_nan=False)
    # its report says where it ran, lists what ns-2 could not run, and regenerates it in ns-2
    # (the command asks for the experiments that ran and those ns-2 could not run)
    from tcpfriendly.report.evaluate import _command, build

    assert _command(doc, str(out)) == f"tcpf evaluate gaimd --params alpha=0.31,beta=0.125 --quick --simulator ns2 --only s2 --only s1 --out {out}"
    rep = tmp_path / "rep"
    rep.mkdir()
    (rep / "evaluation-gaimd.json").write_text(json.dumps(doc))
    html = build(str(rep)).sections[0].body
    assert "simulated in <b>ns-2 2.35</b>" in html and "not run in ns-2" in html and "general_exponential" in html


@needs_ns2
def test_reproduce_in_ns2_judges_the_cells_it_ran_and_says_why_for_the_rest(tmp_path):
    res = reproduce("tsao2007", ["table4"], quick=True, out=str(tmp_path / "r"), workers=2,
                    simulator="ns2")
    (r,) = res
    cells = {c.claim.claim: c for c in r.claims}
    assert len(cells) == 56  # 8 schemes x 7 columns, each a claim, run or not
    judged = {k for k, c in cells.items() if c.unavailable is None}
    # S2 and S4 for the four schemes with an ns-2 agent (S4's CBR steps exported; TFRC's rate
    # series recorded by ns-2's runs too)
    assert judged == {f"{a} {c}" for a in ("gaimd", "iiad", "sqrt", "tfrc")
                      for c in ("S2 hom", "S2 het", "S4 up", "S4 down")}
    assert "general_exponential" in cells["gaimd S1"].unavailable
    assert "schedule" in cells["tfrc S3 up"].unavailable
    assert "'tear' has no ns-2 equivalent" in cells["tear S2 hom"].unavailable
    for k in judged:
        c = cells[k]
        assert str(c.ours) in ("O", "Δ", "X") and c.verdict in ("matched", "differs in ns-2")
        assert c.matched == (str(c.ours) == c.claim.value)
    assert cells["tear S2 hom"].verdict.startswith("not run: ns-2 cannot run tsao2007/s2-low-multiplexing")
    assert r.judged == 16


def test_a_not_run_part_of_an_evaluation_propagates_through_expressions():
    ev = {"algorithm": "gaimd", "grades": {"S2 hom": "X"}, "numbers": {"S2 hom": {"equal_share": 4.7}},
          "metrics": {}, "simulator": "ns2", "not_run": {"tsao2007/s1-nonperiodic": "no such loss model"}}
    names = {"gaimd": evaluation_names(ev)}
    assert evaluate_expr("gaimd.numbers['S2 hom'].equal_share * 2", names) == 9.4
    for text in ("gaimd.grades['S1']", "gaimd.numbers['S1'].equivalence / 2 > 1",
                 "max(gaimd.metrics['tsao2007/s1-nonperiodic'].points.norm_identical)",
                 "gaimd.tally.X", "not gaimd.grades['S1'] == 'X' or True"):
        v = evaluate_expr(text, names)
        assert isinstance(v, NotRun) and "no such loss model" in v.reason, text


@needs_ns2
def test_reproduce_in_ns2_marks_a_claim_on_a_not_run_evaluation_not_run(tmp_path):
    """jin2001 Table 5 runs through tcpf evaluate's impulse response, which ns-2 cannot run; its
    Fig. 19 claims name a measured number no published value lists (v0_cwnd_cov_steady), which
    stopped `tcpf reproduce all --simulator ns2` with "unknown name" instead of being not run."""
    (r,) = reproduce("jin2001", ["table5-impulse"], quick=True, out=str(tmp_path / "r"), workers=1,
                     simulator="ns2")
    fig19 = [c for c in r.claims if c.claim.claim.startswith("Fig. 19")]
    assert len(fig19) == 4 and all("cwnd_cov_steady" in c.claim.ours for c in fig19)
    assert len(r.claims) == 23 and all(c.unavailable is not None for c in r.claims)
    assert all(c.verdict.startswith("not run: ns-2 cannot run jin2001/impulse") for c in fig19)

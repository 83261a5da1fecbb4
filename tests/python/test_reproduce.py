"""tcpf reproduce: the experiments home read as claims, the rules, the expression language,
and the CLI end to end on a quick subset."""
import json
import math
import time

import pytest

import tcpfriendly as tf
from tcpfriendly.reproduce import PAPERS, plan, reproduce
from tcpfriendly.reproduce.expr import Series, evaluate_expr
from tcpfriendly.reproduce.rules import check_rule, compare


# ----- the rules and expressions ---------------------------------------------------------------
def test_rules_compare_in_the_bank_style_and_can_fail():
    assert compare({"rel": 0.1}, 10.0, 10.9)[0] and not compare({"rel": 0.1}, 10.0, 11.2)[0]
    assert compare({"abs": 0.05}, 0.8, 0.84)[0] and not compare({"abs": 0.05}, 0.8, 0.9)[0]
    assert compare({"min": 0.75}, 0.75, 0.76)[0] and not compare({"min": 0.75}, 0.75, 0.74)[0]
    assert compare({"max": 6.32}, 6.32, 6.0)[0] and not compare({"max": 6.32}, 6.32, 7.1)[0]
    assert compare({"interval": [3, 5]}, 4, 3.5)[0] and not compare({"interval": [3, 5]}, 4, 5.5)[0]
    assert compare({"equals": True}, True, True)[0] and not compare({"equals": True}, True, False)[0]
    assert compare({"same": True}, "Δ(O)", "Δ(O)")[0] and not compare({"same": True}, "Δ(O)", "X")[0]
    assert not compare({"rel": 0.1}, 1.0, float("nan"))[0]       # no value never matches
    assert not compare({"equals": True}, True, 1.0)[0]           # a number is not a yes/no


@pytest.mark.parametrize("rule, field", [
    ({"rel": -1}, "rel"), ({"abs": 0.1, "rel": 0.1}, "exactly one"), ({"wide": 1}, "wide"),
    ({"interval": [5, 3]}, "interval"), ({"equals": 1}, "equals"), ({}, "table"),
])
def test_bad_rules_name_the_problem(rule, field):
    with pytest.raises(tf.ScenarioError, match=field):
        check_rule(rule, "values[0].rule")


def test_expressions_are_parsed_not_evaluated():
    s = Series({0.01: 1.0, 0.05: 0.9, 0.15: 0.8})
    names = {"r": s, "m": {"alpha": 0.5}}
    assert evaluate_expr("r[0.05] * 2", names) == pytest.approx(1.8)
    assert evaluate_expr("m.alpha / 0.25", names) == 2.0
    assert evaluate_expr("argmin(r)", names) == 0.15
    assert evaluate_expr("max(abs(below(r, 0.05) - 1))", names) == pytest.approx(0.1)
    assert evaluate_expr("crossing(r - 0.85)", names) == pytest.approx(0.1)
    assert evaluate_expr("ordered(1, 2, 3) and not ordered(3, 2)", names) is True
    d = evaluate_expr("diff(r)", names)
    assert sorted(d) == [0.05, 0.15] and d[0.05] == pytest.approx(-0.1) and d[0.15] == pytest.approx(-0.1)
    assert evaluate_expr("xs(r)", names) == {0.01: 0.01, 0.05: 0.05, 0.15: 0.15}
    for bad in ("__import__('os')", "r.__class__", "open('x')", "[x for x in r]", "lambda: 1"):
        with pytest.raises(tf.ScenarioError):
            evaluate_expr(bad, names)


def test_a_model_array_alone_is_a_curve_over_its_index():
    """`y` without `x`: the Chiu-Jain model's per-round Jain index as a curve over the round."""
    from tcpfriendly.reproduce.run import _model_input
    spec = {"model": "chiu_jain", "args": {"alg": "tcp", "W": 100.0, "init": [10.0, 40.0], "rounds": 50},
            "y": "series.jain"}
    s = _model_input("j", spec, False, "inputs.j", {})
    assert isinstance(s, Series) and s.xs() == [float(i) for i in range(51)]
    assert s[0.0] == pytest.approx(50 ** 2 / (2 * (10 ** 2 + 40 ** 2))) and s[50.0] > s[0.0]
    w1 = _model_input("w", {**spec, "y": "series.windows.1"}, False, "inputs.w", {})
    assert w1[0.0] == 40.0 and len(w1) == 51
    with pytest.raises(tf.ScenarioError, match="series.windows.2"):
        _model_input("w", {**spec, "y": "series.windows.2"}, False, "inputs.w", {})



def test_an_algorithm_input_is_the_registry_entry():
    from tcpfriendly.reproduce.run import _algorithm_input
    simd = _algorithm_input("simd", "inputs.simd")
    assert simd["taxonomy"]["curve"] == "superlinear" and simd["name"] == "simd"
    with pytest.raises(tf.ScenarioError, match="no algorithm 'nope'"):
        _algorithm_input("nope", "inputs.x")


# ----- the experiments home --------------------------------------------------------------------
def test_every_claim_has_a_source_a_rule_and_a_reason_where_it_can_differ():
    todo = plan("all")
    assert set(todo) <= set(PAPERS) and len(todo) >= 4
    n = 0
    for paper, exps in todo.items():
        for ex in exps:
            assert ex.paper == paper and ex.title and ex.source, ex.name
            for a, spec in ex.assumptions.items():
                assert spec.get("source") in ("paper", "inferred", "ours"), (ex.name, a)
                assert spec.get("doc"), (ex.name, a)
            for c in ex.claims:
                n += 1
                assert c.where and c.claim and c.ours, (ex.name, c.claim)
                assert c.quote or ex.kind == "evaluate", (ex.name, c.claim)
    assert n >= 60



def test_tsao2007_multi_bottleneck_runs_table4s_schemes_over_one_k_grid():
    """One transcription of Table 2's parameters (table4's [evaluate.schemes]): the multi-
    bottleneck sweeps' scheme zips repeat it exactly, and their k zips are the same."""
    import os
    import tomllib

    exps = {ex.id: ex for ex in plan("tsao2007")["tsao2007"]}
    schemes = exps["table4"].evaluate["schemes"]
    ex = exps["multi-bottleneck"]
    specs = {}
    for label, path in ex.sweep.items():
        with open(path if os.path.isabs(path) else os.path.join(ex.path, path), "rb") as f:
            specs[label] = tomllib.load(f)
    seen = {}
    for spec in specs.values():
        algs, params = spec["zip"][0]["flows[0].algorithm"], spec["zip"][0]["flows[0].params"]
        seen.update(zip(algs, params))
    assert seen == schemes
    assert specs["window"]["zip"][1] == specs["rate"]["zip"][1]
    assert set(specs["window"]["zip"][0]["flows[0].algorithm"]) == {"gaimd", "iiad", "sqrt", "simd", "aiad_h"}

def _fake_evaluation(alg, s1_at_1, up_s, grades):
    """An Evaluation as ``tcpf evaluate ALG --json`` prints it (null: not measured)."""
    return {"algorithm": alg, "params": {}, "quick": True, "grades": grades,
            "numbers": {"S3 up": {"time_ratio": None, "x_s": up_s, "tcp_s": 17.0}},
            "metrics": {"tsao2007/s1-nonperiodic": {"points": [
                {"cv": 0.0, "norm_identical": 1.0, "cross_seed_cov": None},
                {"cv": 1.0, "norm_identical": s1_at_1, "cross_seed_cov": None}]}},
            "thresholds": {}, "assumptions": {}, "seeds": {"tsao2007/s1-nonperiodic": 1}}


def test_evaluate_claims_read_the_numbers_behind_the_grades(monkeypatch, tmp_path):
    """kind = "evaluate" with paper_grades = false: published.toml's claims are expressions over
    each scheme's evaluation (grades, numbers, metrics with points as curves, tally), computed
    from a fabricated Evaluation (no simulation); NaN (JSON null) never matches."""
    import tcpfriendly.evaluate as evaluate_pkg
    from tcpfriendly.evaluate.core import Evaluation
    from tcpfriendly.reproduce.evaluated import claims_made_when_run, evaluation_names
    from tcpfriendly.reproduce.run import Options, run_experiment
    from tcpfriendly.reproduce.spec import load_experiment

    js = {"gaimd": _fake_evaluation("gaimd", 0.85, 80.0, {"S1": "Δ(O)", "S2 hom": "X", "S3 up": "X(O)"}),
          "iiad": _fake_evaluation("iiad", 0.55, None, {"S1": "X(O)", "S2 hom": "Δ"})}
    n = evaluation_names(js["gaimd"])
    assert n["metrics"]["tsao2007/s1-nonperiodic"]["points"]["norm_identical"] == {0.0: 1.0, 1.0: 0.85}
    assert math.isnan(n["numbers"]["S3 up"]["time_ratio"]) and n["tally"] == {"O": 0, "Δ": 1, "X": 2}
    assert evaluate_expr('gaimd.metrics["tsao2007/s1-nonperiodic"].points.norm_identical[1]',
                         {"gaimd": n}) == 0.85
    calls, assumed = [], []

    def fake(alg, params=None, **kw):
        calls.append((alg, params, kw["only"]))
        assumed.append(kw.get("assumptions"))
        return Evaluation(**{k: v for k, v in js[alg].items()})
    monkeypatch.setattr(evaluate_pkg, "evaluate", fake)
    d = tmp_path / "obs"
    d.mkdir()
    (tmp_path / "base").mkdir()
    (tmp_path / "base" / "experiment.toml").write_text(
        '[experiment]\nkind = "evaluate"\n[evaluate]\nonly = ["s1", "s3"]\n'
        '[evaluate.schemes]\ngaimd = { alpha = 0.2, beta = 0.125 }\niiad = {}\n')
    (d / "experiment.toml").write_text(
        '[experiment]\npaper = "tsao2007"\nkind = "evaluate"\ntitle = "t"\nsource = "s"\n'
        '[evaluate]\nschemes_from = "../base"\npaper_grades = false\n'
        '[inputs.s1_gaimd]\nexpr = \'gaimd.metrics["tsao2007/s1-nonperiodic"].points.norm_identical\'\n')
    (d / "published.toml").write_text(
        '[[values]]\nclaim = "a"\nwhere = "w"\nvalue = 0.8\nours = "s1_gaimd[1]"\nrule = { abs = 0.1 }\n'
        '[[values]]\nclaim = "b"\nwhere = "w"\nvalue = 0.8\n'
        'ours = \'iiad.metrics["tsao2007/s1-nonperiodic"].points.norm_identical[1]\'\nrule = { abs = 0.1 }\n'
        '[[values]]\nclaim = "c"\nwhere = "w"\nvalue = 400\nours = \'iiad.numbers["S3 up"].x_s\'\nrule = { min = 400 }\n'
        '[[values]]\nclaim = "d"\nwhere = "w"\nvalue = true\nours = "gaimd.tally.X > iiad.tally.X"\nrule = { equals = true }\n')
    ex = load_experiment(str(d))
    assert not claims_made_when_run(ex)
    r = run_experiment(ex, Options(quick=True))
    got = {c.claim.claim: (c.ours, c.matched) for c in r.claims}
    assert got["a"] == (0.85, True) and got["b"] == (0.55, False) and got["d"] == (True, True)
    assert math.isnan(got["c"][0]) and not got["c"][1]
    # the schemes, parameters and `only` are the base experiment's: the same evaluate runs
    assert calls == [("gaimd", {"alpha": 0.2, "beta": 0.125}, ["s1", "s3"]), ("iiad", {}, ["s1", "s3"])]
    # with the paper's grades (the default), the Table-4 cells are claims made when run
    (d / "experiment.toml").write_text((d / "experiment.toml").read_text().replace(
        "paper_grades = false", "paper_grades = true"))
    ex = load_experiment(str(d))
    assert claims_made_when_run(ex)
    cells = {c.claim.claim: c for c in run_experiment(ex, Options(quick=True)).claims}
    assert cells["gaimd S1"].ours == "Δ(O)" and cells["gaimd S1"].matched
    assert cells["iiad S2 hom"].ours == "Δ" and cells["iiad S2 hom"].matched is (cells["iiad S2 hom"].claim.value == "Δ")
    (d / "experiment.toml").write_text((d / "experiment.toml").read_text().replace(
        "paper_grades = true", "paper_grades = 1"))
    with pytest.raises(tf.ScenarioError, match="paper_grades"):
        run_experiment(load_experiment(str(d)), Options(quick=True))
    # `pick` runs some of the base's schemes, `assumptions` changes named assumptions of the runs
    (d / "experiment.toml").write_text((d / "experiment.toml").read_text().replace(
        "paper_grades = 1", 'paper_grades = false\npick = ["iiad"]\n'
        'assumptions = { "tsao2007/s2-low-multiplexing" = { n = 32 } }').replace("gaimd.metrics", "iiad.metrics"))
    calls.clear(), assumed.clear()
    (d / "published.toml").write_text(
        '[[values]]\nclaim = "b"\nwhere = "w"\nvalue = 0.8\n'
        'ours = \'iiad.metrics["tsao2007/s1-nonperiodic"].points.norm_identical[1]\'\nrule = { abs = 0.1 }\n')
    run_experiment(load_experiment(str(d)), Options(quick=True))
    assert calls == [("iiad", {}, ["s1", "s3"])]
    assert assumed == [{"tsao2007/s2-low-multiplexing": {"n": 32}}]
    (d / "experiment.toml").write_text((d / "experiment.toml").read_text().replace('pick = ["iiad"]', 'pick = ["cubic"]'))
    with pytest.raises(tf.ScenarioError, match="evaluate.pick"):
        run_experiment(load_experiment(str(d)), Options(quick=True))



def test_values_from_names_every_measured_number(monkeypatch, tmp_path):
    """kind = "evaluate" with values_from (jin2001 Table 5): each published value is compared
    with the metric tcpf evaluate measures, and every other number measured for the i-th
    value's algorithm is the name v<i>_<metric> (a mean with its CI: the mean), for the
    experiment's own claims (Fig. 19's cwnd_cov_steady); a fabricated Evaluation."""
    import tcpfriendly.evaluate as evaluate_pkg
    from tcpfriendly.evaluate.core import Evaluation
    from tcpfriendly.reproduce.run import Options, run_experiment
    from tcpfriendly.reproduce.spec import load_experiment

    cov = {"tcp": 0.2, "iiad": 0.01}

    def fake(alg, params=None, **kw):
        m = {"inv_aggressiveness_rtt": {"mean": 13.0 if alg == "tcp" else 170.0, "lo": 1, "hi": 2, "n": 3},
             "cwnd_cov_steady": {"mean": cov[alg], "lo": 0, "hi": 1, "n": 9}, "mean_rtt_s": 0.1,
             "analysis_paper_point": {"W": 11}}
        return Evaluation(algorithm=alg, params=params or {}, quick=True, grades={}, numbers={},
                          metrics={"jin2001/impulse-response": m}, thresholds={}, assumptions={}, seeds={})
    monkeypatch.setattr(evaluate_pkg, "evaluate", fake)
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "published.toml").write_text(
        '[[values]]\nalgorithm = "tcp"\nmetric = "inv_aggressiveness_rtt"\ninterval = [12.8, 14.1]\nrule = { rel = 0.25 }\n'
        '[[values]]\nalgorithm = "iiad"\nmetric = "inv_aggressiveness_rtt"\ninterval = [172.8, 176.0]\nrule = { rel = 0.25 }\n')
    d = tmp_path / "t5"
    d.mkdir()
    (d / "experiment.toml").write_text(
        '[experiment]\npaper = "jin2001"\nkind = "evaluate"\ntitle = "t"\nsource = "s"\n'
        '[evaluate]\nvalues_from = "../src/published.toml"\nkey = "jin2001/impulse-response"\nonly = ["impulse-response"]\n')
    (d / "published.toml").write_text(
        '[[values]]\nclaim = "TCP varies more"\nwhere = "w"\nvalue = "more"\n'
        'ours = "v0_cwnd_cov_steady / v1_cwnd_cov_steady"\nrule = { min = 2.0 }\n')
    r = run_experiment(load_experiment(str(d)), Options(quick=True))
    got = {c.claim.claim: c for c in r.claims}
    assert got["TCP varies more"].ours == pytest.approx(20.0) and got["TCP varies more"].matched
    assert r.names["v0_inv_aggressiveness_rtt"] == 13.0 and r.names["v1_mean_rtt_s"] == 0.1
    assert "v0_analysis_paper_point" not in r.names
    assert [c.matched for c in r.claims if c.claim.claim != "TCP varies more"] == [True, True]

def test_analytic_verdicts_are_computed():
    """jin2001 Table 1 and Table 6: the rounded constants and TCP's Δ differ, the rest match."""
    rs = {r.experiment.id: r for r in reproduce("jin2001", ["table1-spectrum", "table6-analysis"])}
    t1 = {c.claim.claim: c for c in rs["table1-spectrum"].claims}
    simd = t1["SIMD (−1/2,1): increase (3√β/√2)·√((w−w0)/w_max)"]
    assert simd.matched and simd.ours == pytest.approx(3 / math.sqrt(2), rel=1e-9)
    k13 = t1["(−1/3,1): increase 1.89·β^(2/3)·((w−w0)/w_max)^(1/3)"]
    assert not k13.matched and k13.ours == pytest.approx(1.861, abs=5e-4)
    assert k13.verdict.startswith("differs: the paper is inconsistent")
    t6 = {c.claim.claim: c for c in rs["table6-analysis"].claims}
    d = t6["TCP Exp. 2: Δ (packets), analysis"]
    assert d.ours == pytest.approx(5.0) and not d.matched
    assert t6["SIMD Exp. 1: T2 (RTT), analysis"].matched


def test_a_simulation_verdict_is_computed_from_the_sweep(tmp_path):
    """jin2001 Fig. 7 in quick mode: SIMD(1/16) is TCP-friendly below 5 % loss."""
    r, = reproduce("jin2001", ["fig7-bernoulli"], quick=True, out=str(tmp_path), workers=2)
    assert r.quick and r.seeds == 2 and r.runs["total"] == 40
    below5 = [c for c in r.claims if c.claim.where.startswith("§6.1.1") and "below 5 %" in c.claim.claim][0]
    assert 0 <= below5.ours <= 0.15 and below5.matched
    # the run cache makes the second pass free of simulations
    again, = reproduce("jin2001", ["fig7-bernoulli"], quick=True, out=str(tmp_path), workers=2)
    assert again.runs["cached"] == 40 and again.runs["ran"] == 0
    assert [c.ours for c in again.claims] == [c.ours for c in r.claims]


def test_time_series_verdicts_come_from_the_sweep_table(tmp_path):
    """yang2000 Fig. 21 (quick): the CoV ratio is GAIMD's rate_cov over TCP's, read from the
    sweep table's groups, graded by the rule [0.35, 0.7]; GAIMD(0.31, 7/8) is the smoother.
    sastry2005 Fig. 3 (quick): footnote 5's ratio is the 20-ms mean Jain index over the 1-ms one."""
    r, = reproduce("yang2000", ["fig21-smoothness"], quick=True, out=str(tmp_path), workers=2)
    assert r.quick and r.seeds == 2 and r.runs["total"] == 4
    n = r.names
    assert 0 < n["gaimd"] < n["tcp"] < 1
    claims = {c.claim.claim.split(" (")[0]: c for c in r.claims}
    half = claims["GAIMD(0.31, 7/8) has about half of TCP's sending-rate CoV at low loss rate"]
    assert half.ours == pytest.approx(n["gaimd"] / n["tcp"], rel=1e-12)
    assert half.matched == (0.35 <= half.ours <= 0.7)
    assert claims["GAIMD's sending rate is smoother than TCP's"].matched
    s, = reproduce("sastry2005", ["fig3-log-fairness"], quick=True, out=str(tmp_path), workers=2)
    n = s.names
    assert 0.5 < n["f_p10"] <= n["f_mean"] <= 1 and 0.5 < n["f_p10_20"] <= n["f_mean20"] <= 1
    fn5 = [c for c in s.claims if c.claim.ours == "f_mean20 / f_mean"][0]
    assert fn5.ours == pytest.approx(n["f_mean20"] / n["f_mean"], rel=1e-12)
    assert fn5.matched == (0.9 <= fn5.ours <= 1.1)



def test_a_sweep_input_matching_no_row_is_empty_not_an_error():
    """An input whose `where` leaves no row (seed 3 of a quick run with one seed, after a
    rate the quick grid lacks) is an empty series whose mean is NaN, not an internal error."""
    import pandas as pd

    from tcpfriendly.reproduce.run import _sweep_input
    t = pd.DataFrame({"rate": ["15Mbps"] * 4, "seed": [1, 1, 2, 2], "group": [0, 1, 0, 1],
                      "n": [2, 2, 2, 2], "x": [1.0, 2.0, 3.0, 4.0]})
    assert _sweep_input(t, {"metric": "x", "where": {"seed": 2}, "group": 1, "x": "n"}, "w") == {2.0: 4.0}
    for where in ({"rate": "60Mbps", "seed": 1}, {"seed": 3, "rate": "15Mbps"}):
        s = _sweep_input(t, {"metric": "x", "where": where, "group": 0, "x": "n"}, "w")
        assert isinstance(s, Series) and s == {}
        assert math.isnan(evaluate_expr("mean(s)", {"s": s}))
        assert math.isnan(_sweep_input(t, {"metric": "x", "where": where, "group": 0}, "w"))

def test_a_per_flow_input_reduces_each_run_then_averages_the_runs():
    """`table = "flows"` reads the per-flow table; `per_run = "cov"` is the CoV (population)
    over each run's selected flows, then the mean over the runs at each x; a run of one flow
    has no spread (NaN, left out of the mean); `per_run = "mean"` the mean over each run's flows."""
    import pandas as pd

    from tcpfriendly.errors import ScenarioError
    from tcpfriendly.reproduce.run import _sweep_input
    rows = []  # (run, seed, n, group, throughput): runs a, b at n = 2; c, d at n = 3; e at n = 1
    for run, seed, n, xs in (("a", 1, 2, [1.0, 3.0]), ("b", 2, 2, [2.0, 2.0]),
                             ("c", 1, 3, [1.0, 2.0, 3.0]), ("d", 2, 3, [4.0, 4.0, 1.0]),
                             ("e", 1, 1, [5.0])):
        rows += [(run, seed, n, 0, x) for x in xs] + [(run, seed, n, 1, 100.0 * x) for x in xs[:1]]
    flows = pd.DataFrame(rows, columns=["run", "seed", "n", "group", "thr"])
    groups = pd.DataFrame({"run": ["a"], "seed": [1], "n": [2], "group": [0], "thr": [7.0]})
    spec = {"table": "flows", "metric": "thr", "per_run": "cov", "group": 0, "x": "n"}
    s = _sweep_input(groups, spec, "w", flows)
    cov_c = math.sqrt(2 / 3) / 2
    cov_d = math.sqrt(2.0) / 3  # mean 3, deviations 1, 1, -2
    assert set(s) == {1.0, 2.0, 3.0} and math.isnan(s[1.0])
    assert s[2.0] == pytest.approx((0.5 + 0.0) / 2, rel=1e-12)
    assert s[3.0] == pytest.approx((cov_c + cov_d) / 2, rel=1e-12)
    assert evaluate_expr("mean(s)", {"s": s}) == pytest.approx((0.25 + (cov_c + cov_d) / 2) / 2, rel=1e-12)
    one = _sweep_input(groups, {**spec, "where": {"seed": 2}, "x": None}, "w", flows)
    assert one == pytest.approx((0.0 + cov_d) / 2, rel=1e-12)  # no x: every selected run
    means = _sweep_input(groups, {**spec, "per_run": "mean"}, "w", flows)
    assert means[3.0] == pytest.approx((2.0 + 3.0) / 2, rel=1e-12)
    # the group table stays the default
    assert _sweep_input(groups, {"metric": "thr", "group": 0, "x": "n"}, "w", flows) == {2.0: 7.0}
    with pytest.raises(ScenarioError, match="per_flow = true"):
        _sweep_input(groups, spec, "w", None)
    with pytest.raises(ScenarioError, match="per_run: must be one of mean, cov, jain"):
        _sweep_input(groups, {**spec, "per_run": "std"}, "w", flows)
    with pytest.raises(ScenarioError, match="table: must be groups or flows"):
        _sweep_input(groups, {**spec, "table": "flow"}, "w", flows)


def test_a_per_flow_sweep_experiment_reads_its_flows_and_others_keep_their_keys(tmp_path):
    """A tiny sweep experiment with `per_flow = true`: the per-flow CoV of goodput within the
    group, per run then over seeds, is the group table's `cov` (CoV of goodput within the
    group) averaged over seeds, and the result carries the flows for the figure. Experiments
    that do not ask for per-flow rows keep their run keys (no per_flow in what is hashed);
    jin2001 Figs. 8-13 asks for them."""
    from tcpfriendly.reproduce.run import Options, _sweep_spec, run_experiment
    from tcpfriendly.reproduce.spec import load_experiment, load_paper
    from tcpfriendly.sweep import Sweep

    from conftest import REPO
    d = tmp_path / "tiny"
    d.mkdir()
    (d / "sweep.toml").write_text(
        f'scenario = "{REPO / "examples" / "quickstart.toml"}"\nper_flow = true\n'
        '[set]\nduration = 4\nmeasure = { from = 1, to = 4 }\n[axes]\n"flows[0].count" = [2, 3]\n')
    where = '{ "flows[0].count" = 2 }'
    (d / "experiment.toml").write_text(
        '[experiment]\npaper = "jin2001"\nid = "tiny"\nkind = "sweep"\nsweep = "sweep.toml"\nseeds = 2\n'
        '[inputs.fcov]\ntable = "flows"\nmetric = "goodput_bps"\nper_run = "cov"\ngroup = 0\nx = "flows[0].count"\n'
        '[inputs.gcov]\nmetric = "cov"\ngroup = 0\nx = "flows[0].count"\n'
        f'[inputs.fmean]\ntable = "flows"\nmetric = "goodput_bps"\ngroup = 1\nwhere = {where}\n'
        f'[inputs.gmean]\nmetric = "goodput_bps_mean"\ngroup = 1\nwhere = {where}\n'
        '[figure]\nseries = { "cov" = "fcov" }\n[figure.flows]\nx = "flows[0].count"\ny = "share"\n'
        f'panels = [{{ title = "n = 2", where = {where} }}, {{ title = "none", where = {{ seed = 9 }} }}]\n')
    (d / "published.toml").write_text("")
    ex = load_experiment(str(d))
    r = run_experiment(ex, Options(out=str(tmp_path / "o"), workers=2, quiet=True, progress=False))
    fcov, gcov = r.names["fcov"], r.names["gcov"]
    assert set(fcov) == {2.0, 3.0} and all(v > 0 for v in fcov.values())
    for n in (2.0, 3.0):
        assert fcov[n] == pytest.approx(gcov[n], rel=1e-9)
    assert r.names["fmean"] == pytest.approx(r.names["gmean"], rel=1e-9)
    assert len(r.flows) == 2 * (6 + 7)  # 2 seeds x (2 + 4 and 3 + 4 flows)
    assert "flows" not in r.to_json()
    from tcpfriendly.reproduce.report import experiment_figure
    fig = experiment_figure(r)  # the curves, then one scatter panel per [figure.flows] panel
    curves, scatter, empty = fig.axes
    assert scatter.get_title() == "n = 2" and not empty.axison
    points = [c for c in scatter.collections if len(c.get_offsets())]
    assert sorted(len(c.get_offsets()) for c in points) == [2 * 2, 2 * 4]  # 2 seeds x flows per group
    assert [ln.get_linestyle() for ln in scatter.get_lines()] == ["--", "--"]
    # decorated as tcpf sweep plot's figures (sweep.plot.decorate): a small legend, a light grid
    from matplotlib.font_manager import FontProperties
    assert (scatter.get_xlabel(), scatter.get_ylabel()) == ("flows[0].count", "share")
    small_pt = FontProperties(size="small").get_size_in_points()
    assert all(t.get_fontsize() == small_pt for t in scatter.get_legend().get_texts())
    grid = scatter.yaxis.get_gridlines()
    assert grid and all(g.get_visible() and g.get_alpha() == 0.3 for g in grid)
    for paper, exp, per_flow in (("jin2001", "fig7-bernoulli", False),
                                 ("jin2001", "figs8-13-compatibility", True)):
        e, = load_paper(paper, [exp])
        spec = _sweep_spec(e, Options(), e.sweep)
        _, runs = Sweep.from_dict(spec, str(REPO / "experiments" / paper / exp)).plan()
        assert all(run.per_flow is per_flow for run in runs)
        assert all(('"per_flow":true' in run.canonical) is per_flow for run in runs)


# ----- the CLI ---------------------------------------------------------------------------------
def test_cli_quick_subset_end_to_end(tcpf, tmp_path):
    out = tmp_path / "rep"
    p = tcpf("reproduce", "liu2008", "--only", "eq31-lossy-bound", "--only", "markov-figs2-7",
             "--quick", "--out", out, "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    assert [d["experiment"] for d in data] == ["eq31-lossy-bound", "markov-figs2-7"]
    for d in data:
        assert d["paper"] == "liu2008" and d["quick"] is True
        for c in d["claims"]:
            assert set(c) >= {"claim", "paper_value", "our_value", "rule", "matched"}
    bound = [c for c in data[0]["claims"] if "√40" in c["claim"]][0]
    assert bound["matched"] and abs(bound["our_value"] - 6.3246) < 1e-3
    assert {"row": "liu2008 eq. 31 (§5)", "status": "matched"} in data[0]["inventory_rows"]
    md = (out / "liu2008" / "REPRODUCTION.md").read_text()
    assert "quick" in md and "| claim | paper | ours | difference | rule | verdict |" in md
    from tcpfriendly.version import engine_id
    assert f"engine build {engine_id()}" in md  # which build wrote it
    # every inventory row of the paper, the ones whose experiments did not run included
    rows = json.loads((out / "liu2008" / "inventory.json").read_text())
    assert rows["counts"]["rows"] == len(rows["rows"]) >= 26
    status = {r["row"]: r["status"] for r in rows["rows"]}
    assert status["liu2008 eq. 31 (§5)"] == "matched"
    assert status["liu2008 Fig. 14 (§6.3)"] == "not run"
    assert "## Inventory rows" in md and "| liu2008 Fig. 14 (§6.3) | not run |" in md
    for ext in ("png", "svg"):
        assert (out / "liu2008" / f"liu2008-markov-figs2-7.{ext}").stat().st_size > 1000
    text = tcpf("reproduce", "liu2008", "--only", "eq31-lossy-bound", "--out", out)
    assert text.returncode == 0 and "claim" in text.stdout and "matched" in text.stdout
    assert "liu2008 inventory rows: " in text.stdout and "checkable inventory rows matched" in text.stdout


@pytest.mark.parametrize("args, needle", [
    (["nosuch"], "PAPER"),
    (["jin2001", "--only", "nosuch"], "--only"),
    (["all", "--only", "nosuch"], "--only"),
    (["jin2001", "--seeds", "0"], "--seeds"),
    (["jin2001", "--workers", "x"], "--workers"),
])
def test_bad_input_exits_2_with_one_line(tcpf, tmp_path, args, needle):
    t0 = time.monotonic()
    p = tcpf("reproduce", *args, "--out", tmp_path / "o")
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and needle in lines[0], p.stderr
    assert "Traceback" not in p.stderr and p.stdout == ""
    assert time.monotonic() - t0 < 10


def test_analytic_claims_keep_their_verdicts():
    """Every analytic claim without a recorded reason or inconsistency matches; every claim
    marked inconsistent differs (CI fails when a claim that matched stops matching)."""
    todo = plan("all")
    ids = {p: [x.id for x in xs if x.kind == "analytic"] for p, xs in todo.items()}
    n = 0
    for paper, only in ids.items():
        if not only:
            continue
        for r in reproduce(paper, only):
            for c in r.claims:
                n += 1
                if c.claim.inconsistent:
                    assert not c.matched, (r.experiment.name, c.claim.claim, c.ours)
                elif not c.claim.reason:
                    assert c.matched, (r.experiment.name, c.claim.claim, c.ours)
    assert n >= 50


@pytest.mark.parametrize("paper", ["sastry2005", "yang2000"])
def test_a_quick_paper_explains_every_claim_it_does_not_match(paper, tmp_path):
    """The quick mode of a paper (its simulations too, not only the analytic claims): every
    claim matches, or carries its reason or inconsistency, so a quick report never says 'no
    hypothesis recorded yet' and a claim that matched and stops matching fails here. Two of
    the fastest papers (sastry2005 ~6 s, yang2000 ~10 s on 2 cores); `tcpf reproduce all
    --quick` had twelve such claims, all explained or mended on 5 Dec 2026."""
    unexplained = []
    for r in reproduce(paper, quick=True, out=str(tmp_path), workers=2):
        for c in r.claims:
            if not c.matched and not c.claim.reason and not c.claim.inconsistent:
                unexplained.append((r.experiment.name, c.claim.claim, c.ours))
    assert not unexplained, unexplained


# ----- right-censored convergence times (docs/evaluate.md, "Convergence time") ---------------------
def test_a_censored_time_is_a_lower_bound_in_rules_and_orders():
    from tcpfriendly.metrics.transients import LowerBound, censored_mean, censored_time
    from tcpfriendly.reproduce.expr import Undecided

    assert censored_mean([100.0, float("nan")], [700.0, 700.0]) == (400.0, 1)
    assert type(censored_time(400.0, 0, 5)) is float      # nothing censored: a plain number
    a = censored_time(652.0, 1, 5, label="iiad S3 up")     # > 652 s
    assert isinstance(a, LowerBound) and "1 of 5 seeds" in a.note and a.text().startswith("> 652")
    # a lower bound meets "≥ r" when the bound does, never "≤ r", "≈ r" or an interval
    assert compare({"min": 400}, 700, a)[0] and not compare({"min": 700}, 700, a)[0]
    assert not compare({"max": 800}, 700, a)[0] and not compare({"abs": 100}, 700, a)[0]
    assert not compare({"rel": 0.1}, 700, a)[0] and not compare({"interval": [600, 900]}, 700, a)[0]
    b = censored_time(300.0, 2, 15, "steps", label="tear S4 up")
    names = {"a": a, "b": b, "x": 100.0, "y": 800.0}
    # a censored time beats every exact time at or below its bound ...
    assert evaluate_expr("a > x", names) is True and evaluate_expr("x >= a", names) is False
    assert evaluate_expr("a <= x", names) is False
    # ... and two censored times, or a bound below the exact time, leave the order undecided
    for e in ("a > b", "b >= a", "a > y", "y > a", "not (a > b)", "a > x and a > b"):
        assert isinstance(evaluate_expr(e, names), Undecided), e
    assert evaluate_expr("a > x or a > b", names) is True
    ok, why = compare({"equals": True}, True, evaluate_expr("a >= max(series(x, b))", names))
    assert not ok and why.startswith("undecided") and "tear S4 up" in why
    # the largest of a set with a censored time and a mean over one are lower bounds; the
    # smallest is exact when an exact value is at or below every bound
    assert isinstance(evaluate_expr("max(series(x, b))", names), LowerBound)
    assert float(evaluate_expr("max(series(x, b))", names)) == 300.0
    assert isinstance(evaluate_expr("mean(series(x, a))", names), LowerBound)
    assert evaluate_expr("min(series(x, b))", names) == 100.0
    assert isinstance(evaluate_expr("a / x", names), LowerBound) and math.isnan(evaluate_expr("x / a", names))


def test_a_censored_claim_shows_its_bound_in_table_and_json(monkeypatch, tmp_path):
    """Read from an evaluation's numbers (x_s NaN with a bound and a count, as tcpf evaluate
    writes them): the claim table shows "> bound (...)", the JSON's our_value is the bound and
    the verdict says it is one; an order the censoring cannot decide differs, saying why."""
    from tcpfriendly.reproduce.evaluated import evaluation_names
    from tcpfriendly.reproduce.report import claim_rows
    from tcpfriendly.reproduce.run import ClaimResult, ExperimentResult
    from tcpfriendly.reproduce.spec import Claim

    def ev(alg, x_s, bound, k):
        return {"algorithm": alg, "grades": {}, "metrics": {}, "numbers": {"S3 up": {
            "x_s": x_s, "x_s_bound": bound, "x_censored": k, "tcp_s": 40.0, "tcp_s_bound": 40.0,
            "tcp_censored": 0, "runs": 5, "runs_are": "seeds"}}}
    names = {"iiad": evaluation_names(ev("iiad", None, 652.0, 1)),
             "aiad_h": evaluation_names(ev("aiad_h", None, 700.0, 5)),
             "gaimd": evaluation_names(ev("gaimd", 60.0, 60.0, 0))}
    assert names["gaimd"]["numbers"]["S3 up"]["x_s"] == 60.0
    out = []
    for text, rule, value in (('iiad.numbers["S3 up"].x_s', {"min": 400}, 700),
                              ('iiad.numbers["S3 up"].x_s', {"max": 800}, 700),
                              ('aiad_h.numbers["S3 up"].x_s > iiad.numbers["S3 up"].x_s', {"equals": True}, True),
                              ('iiad.numbers["S3 up"].x_s > gaimd.numbers["S3 up"].x_s', {"equals": True}, True)):
        c = Claim(claim=text, where="w", quote="", value=value, ours=text, rule=rule, reason="r")
        ours = evaluate_expr(text, names)
        out.append(ClaimResult(c, ours, *compare(rule, value, ours)))
    ge, le, order, beats = out
    assert ge.matched and ge.to_json()["our_value"] == 652.0 and "lower bound" in ge.verdict
    assert not le.matched and le.verdict.startswith("differs: a lower bound cannot show ≤ 800")
    assert not order.matched and "undecided" in order.verdict and order.to_json()["our_value"] is None
    assert beats.matched and beats.ours is True
    rows = claim_rows(ExperimentResult(None, out, names, True, 5, 0.0))
    assert rows[0][2].startswith("> 652 (iiad S3 up: 1 of 5 seeds") and rows[2][2] == "undecided"
    json.dumps([c.to_json() for c in out], allow_nan=False)


def test_a_lower_bound_difference_says_what_is_known():
    """ours is a lower bound L: ours − paper is only known to exceed L − paper, positive when
    L ≥ paper, of unknown sign when L is below it; never "> +0"."""
    from tcpfriendly.metrics.transients import LowerBound
    from tcpfriendly.reproduce.rules import difference

    assert difference(700, LowerBound(748.0, "n")) == "> +48 (> +6.9 %)"
    at = difference(700, LowerBound(700.0, "n"))
    assert at.startswith("> 0 (ours above") and "+0" not in at
    below = difference(700, LowerBound(688.0, "n"))
    assert below.startswith("> -12 (sign unknown") and "%" not in below
    assert difference(700, 712.0) == "+12 (+1.7 %)"      # an exact value keeps its sign


# ----- tsao2007 Table 4: the number behind each grade and the band the paper's grade needs -------
def _graded_evaluation(grades, numbers, thresholds=None):
    from tcpfriendly.evaluate.core import Evaluation
    from tcpfriendly.evaluate.grades import load_thresholds

    avg = {"average_s": {"value": 10.0, "doc": "", "source": ""}}
    return Evaluation(algorithm="gaimd", params={}, quick=True, grades=grades, numbers=numbers, metrics={},
                      thresholds=thresholds or load_thresholds(),
                      assumptions={"tsao2007/s3-two-state": avg, "tsao2007/s4-bursty": avg}, seeds={})


def test_a_grade_shows_its_number_and_the_band_the_papers_grade_needs():
    """Each part of our grade with the number behind it; a part that is not the paper's symbol
    with the band that symbol needs under the evaluation's thresholds, and where our number
    lies against it; a censored convergence time bounds q honestly."""
    from tcpfriendly.reproduce.evaluated import grade_texts

    def t(s, x=None, tb=None, xc=0, tc=0, runs=5):
        return {"time_ratio": None if xc or tc else s, "x_s": None if xc else x, "tcp_s": None if tc else tb,
                "x_s_bound": x, "x_censored": xc, "tcp_s_bound": tb, "tcp_censored": tc,
                "runs": runs, "runs_are": "seeds"}
    ev = _graded_evaluation(
        {"S1": "Δ(Δ)", "S2 het": "Δ", "S2 hom": "X", "S3 up": "X(O)", "S4 up": "X", "S4 down": "X", "S3 down": "Δ(Δ)"},
        {"S1": {"equivalence": 1.16, "compatibility": 1.2}, "S2 het": {"equal_share": 1.2},
         "S2 hom": {"equal_share": 0.6}, "S3 up": t(None, 700.0, 17.0, xc=1), "S4 up": t(None, 20.0, 10.0, xc=2),
         "S4 down": t(None, 40.0, 50.0, tc=1), "S3 down": t(2.92, 35.0, 12.0)})
    d, why = grade_texts(ev, "S2 het", "X")
    assert d == "X/TCP 1.20; X needs X/TCP < 0.75 or > 1.333"
    assert why == "ours Δ: X/TCP 1.20 is closer to 1 than the paper's X (X/TCP < 0.75 or > 1.333)"
    d, why = grade_texts(ev, "S2 hom", "Δ")
    assert "X/TCP 0.60 is below the paper's Δ (X/TCP in [0.75, 1.333] outside O)" in why
    d, why = grade_texts(ev, "S1", "X(O)")     # both parts differ: both shown
    assert d == "X/TCP 1.16; X needs X/TCP < 0.75 or > 1.333 | max X/TCP 1.20; (O) needs max X/TCP ≤ 1.111"
    assert why.endswith("; ours (Δ): max X/TCP 1.20 is above the paper's (O) (max X/TCP ≤ 1.111)")
    assert grade_texts(ev, "S1", "Δ(Δ)") == ("X/TCP 1.16 | max X/TCP 1.20", "")   # matched: the numbers
    d, why = grade_texts(ev, "S3 down", "O(O)")
    assert d == "q = 2.92 (X 35.0 s / TCP 12.0 s); O needs q ≤ 1.5" and "is above the paper's O" in why
    # X censored at 700 s: q > 700 / 17 already excludes Δ; at 20 s: q > 2, Δ still possible
    d, why = grade_texts(ev, "S3 up", "Δ(O)")
    assert d == "q > 41.18 (X > 700.0 s / TCP 17.0 s); Δ needs q in (1.5, 3]"
    assert why == "ours X: q > 41.18: already above the paper's Δ (q in (1.5, 3]), whatever the censored time"
    d, why = grade_texts(ev, "S4 up", "Δ")
    assert d.startswith("q > 2.00 (X > 20.0 s / TCP 10.0 s)") and "Δ (q in (1.5, 3]) is not excluded" in why
    # TCP censored at 50 s: q < 40 / 50, below O's band: the paper's X is excluded
    d, why = grade_texts(ev, "S4 down", "Δ")
    assert d.startswith("q < 0.80 (X 40.0 s / TCP > 50.0 s)") and "already below the paper's Δ" in why
    # the bands are the thresholds the evaluation used, not a copy of them
    th = {"throughput": {"o": 0.9, "delta": 0.5}, "compatibility": {"o_max": 1.111, "delta_max": 1.333},
          "transient": {"o_max": 1.5, "delta_max": 5.0}}
    ev2 = _graded_evaluation(ev.grades, ev.numbers, th)
    assert grade_texts(ev2, "S3 down", "Δ(Δ)")[0] == "q = 2.92 (X 35.0 s / TCP 12.0 s)"
    assert grade_texts(ev2, "S3 up", "Δ(O)")[0].endswith("Δ needs q in (1.5, 5]")
    assert grade_texts(ev2, "S2 het", "X")[0].endswith("X needs X/TCP < 0.5 or > 2")


def test_table4_claims_carry_the_number_in_the_difference_and_a_specific_verdict(monkeypatch, tmp_path):
    """Table 4 through reproduce (a fabricated evaluation, no simulation): the difference column
    of each cell is the number behind our grade (with the paper's band when they differ), the
    verdict of a differing cell says where that number lies and that the thresholds are ours;
    the grades, rules and verdicts' matched/differs are unchanged."""
    import tcpfriendly.evaluate as evaluate_pkg
    from tcpfriendly.reproduce.report import claim_rows
    from tcpfriendly.reproduce.run import Options, run_experiment
    from tcpfriendly.reproduce.spec import load_experiment

    ev = _graded_evaluation({"S2 hom": "X", "S2 het": "Δ"},
                            {"S2 hom": {"equal_share": 2.75}, "S2 het": {"equal_share": 1.2}})
    monkeypatch.setattr(evaluate_pkg, "evaluate", lambda alg, params=None, **kw: ev)
    d = tmp_path / "t4"
    d.mkdir()
    (d / "experiment.toml").write_text(
        '[experiment]\npaper = "tsao2007"\nkind = "evaluate"\ntitle = "t"\nsource = "s"\n'
        '[evaluate]\nonly = ["s2"]\nreason = "the thresholds are ours"\n'
        '[evaluate.schemes]\ngaimd = { alpha = 0.2, beta = 0.125 }\n')
    r = run_experiment(load_experiment(str(d)), Options(quick=True))
    rows = {row[0]: row for row in claim_rows(r)}
    assert [c.matched for c in r.claims] == [True, False] and r.claims[1].ours == "Δ"
    assert rows["gaimd S2 hom"][3] == "X/TCP 2.75" and rows["gaimd S2 hom"][5] == "matched"
    assert rows["gaimd S2 het"][3] == "X/TCP 1.20; X needs X/TCP < 0.75 or > 1.333"
    assert r.claims[1].verdict == ("differs: ours Δ: X/TCP 1.20 is closer to 1 than the "
                                   "paper's X (X/TCP < 0.75 or > 1.333); the thresholds are ours")
    js = r.claims[1].to_json()
    assert js["our_value"] == "Δ" and js["difference"] == rows["gaimd S2 het"][3]
    json.dumps(js, allow_nan=False)

"""tcpf evaluate: grading rules, the experiments home, and end-to-end evaluations."""
import json
import math

import pytest

import tcpfriendly as tf
from tcpfriendly.evaluate import evaluate, evaluate_command
from tcpfriendly.evaluate import grades as G
from tcpfriendly.evaluate.scenarios import EVALUATION, fill, load_experiment, s2_access_delays


TH = G.load_thresholds()


def test_thresholds_are_centred_on_one():
    assert G.grade_throughput(1.0, TH) == "O"
    for r in (0.5, 0.8, 0.95, 1.2, 3.0):   # r and 1/r grade alike
        assert G.grade_throughput(r, TH) == G.grade_throughput(1 / r, TH)
    assert G.grade_throughput(0.8, TH) == "Δ" and G.grade_throughput(0.6, TH) == "X"
    assert G.grade_throughput(float("nan"), TH) == "X"
    assert G.grade_compatibility(0.5, TH) == "O" and G.grade_compatibility(2.0, TH) == "X"
    assert G.grade_transient(1.0, TH) == "O" and G.grade_transient(2.0, TH) == "Δ"
    assert G.grade_transient(5.0, TH) == "X" and G.grade_transient(float("nan"), TH) == "X"
    assert G.time_ratio(2.0, 4.0, floor_s=10.0) == 1.0
    assert G.worst_ratio([1.0, 0.7, 1.2]) == 0.7


def test_bad_thresholds_name_the_field():
    with pytest.raises(tf.ScenarioError, match=r"thresholds.throughput.o"):
        G.check_thresholds({"throughput": {"o": 1.5, "delta": 0.75},
                            "compatibility": {"o_max": 1.1, "delta_max": 1.3},
                            "transient": {"o_max": 1.5, "delta_max": 3}})


def test_every_experiment_loads_with_documented_assumptions():
    for paper, eid in EVALUATION:
        exp = load_experiment(paper, eid)
        assert exp.meta["paper"] == paper and exp.meta["id"] == eid
        for name, a in exp.assumptions.items():
            assert a["doc"] and "value" in a, name
        if paper == "tsao2007":
            # S1-S4's published values (Observations 1-4, Figs. 1-4) have one home, the
            # reproduction's experiments/tsao2007/observations/published.toml, whose claims
            # read this experiment's numbers
            assert not exp.published, f"{paper}/{eid}: a second copy of tsao2007's values"
        else:
            assert exp.published, f"{paper}/{eid} has no published values"
    from tcpfriendly.reproduce import plan
    obs, = plan("tsao2007", ["observations"])["tsao2007"]
    assert len(obs.claims) >= 30


def test_fill_placeholders():
    t = {"a": "${x}", "b": "${y}ms", "c": ["${x}", "${none}"], "d": "${none}"}
    assert fill(t, {"x": 2, "y": 5, "none": None}) == {"a": 2, "b": "5ms", "c": [2]}
    with pytest.raises(tf.ScenarioError, match=r"b: unknown placeholder \$\{y\}"):
        fill({"b": "${y}"}, {})


def test_s2_access_delays_have_the_requested_cv():
    d = s2_access_delays(8, 0.3, 0.1, 0.005)
    rtts = [2 * (x + 0.005) for x in d]
    m = sum(rtts) / len(rtts)
    sd = math.sqrt(sum((r - m) ** 2 for r in rtts) / len(rtts))
    assert m == pytest.approx(0.1) and sd / m == pytest.approx(0.3)


@pytest.fixture(scope="module")
def tcp_eval():
    return evaluate("tcp", quick=True, workers=1)


def test_tcp_grades_o_everywhere_against_itself(tcp_eval):
    assert set(G.COLUMNS) <= set(tcp_eval.grades)
    for col, grade in tcp_eval.grades.items():
        assert grade.replace("(O)", "") == "O", (col, grade, tcp_eval.numbers.get(col))
    doc = tcp_eval.to_json()
    assert doc["algorithm"] == "tcp" and doc["grades"]["S1"] == "O(O)"
    assert "tsao2007/s2-low-multiplexing" in doc["assumptions"]
    json.dumps(doc, default=str)


def test_transient_figures_show_each_change_as_graded(tcp_eval):
    """S3 and S4 keep the first seed's changes as measured (new level and convergence time of
    each flow), consistent with the metrics, and their figures draw them: a line per change,
    a tol band per flow and phase, a dot per convergence."""
    from tcpfriendly.evaluate.report import figures
    figs = dict(figures(tcp_eval))
    for key, n_changes in (("tsao2007/s3-two-state", 2), ("tsao2007/s4-bursty", None)):
        raw, m = tcp_eval.raw[key], tcp_eval.metrics[key]
        ch = raw["changes"]
        assert n_changes is None or len(ch) == n_changes
        assert [c["dir"] for c in ch].count("up") == len(m["per_seed"][0]["x_up_targets_bps"])
        ups = [c for c in ch if c["dir"] == "up"]
        assert [round(c["x_target_bps"], 1) for c in ups] == m["per_seed"][0]["x_up_targets_bps"]
        assert all(c["time"] < c["until"] and 0 < c["tol"] < 1 for c in ch)
        ax = figs[key.replace("/", "-")].axes[0]
        assert sum(1 for l in ax.get_lines() if l.get_linestyle() == ":" and list(l.get_xdata())[0] in
                   [c["time"] for c in ch]) == len(ch)
        dots = [l for l in ax.get_lines() if l.get_marker() == "o"]
        converged = sum(1 for c in ch for w in ("x", "tcp") if math.isfinite(c[f"{w}_seconds"]))
        assert len(dots) == converged > 0
        assert len(ax.collections) == 2 * len(ch)  # a band per flow and change
        # each dot sits on the dashed moving average the criterion tests, inside its band
        dashed = [l for l in ax.get_lines() if l.get_linestyle() == "--"]
        assert len(dashed) == 2 and "moving average" in dashed[0].get_label()
        for c in ch:
            for w in ("x", "tcp"):
                if math.isfinite(c[f"{w}_seconds"]):
                    at = c["time"] + c[f"{w}_seconds"]
                    assert any(l.get_xdata()[0] == at and abs(l.get_ydata()[0] * 1e6 - c[f"{w}_target_bps"])
                               <= c["tol"] * c[f"{w}_target_bps"] * 1.0001 for l in dots), (key, c, w)


def test_gaimd_is_below_tcp_under_random_losses():
    ev = evaluate("gaimd", {"alpha": 0.2, "keep": 0.875}, quick=True, workers=1, only=["s1"])
    assert ev.params["beta"] == pytest.approx(0.125)      # canonical beta
    pts = {p["cv"]: p["norm_identical"] for p in ev.metrics["tsao2007/s1-nonperiodic"]["points"]}
    assert pts[0.0] == pytest.approx(1.0, abs=0.05)
    assert pts[1.0] < 0.95
    # tsao2007 Obs. 1 / Fig. 1: falls to ~80% of TCP's at CV[T] = 1 (published.toml: abs 0.1)
    assert pts[1.0] == pytest.approx(0.8, abs=0.1)
    assert pts[0.0] > pts[0.5] > pts[1.0]


#: jin2001 Table 5's schemes with jin2001's parameters (§6: SIMD and AIMD beta 1/16, AIMD
#: alpha ~ 1/10, IIAD 1 and 2/3, AIAD beta 2/3)
JIN2001 = {"tcp": None, "simd": {"beta": 0.0625}, "aiad_h": {"beta": 2 / 3},
           "gaimd": {"alpha": 0.1, "beta": 0.0625}, "iiad": {"alpha": 1.0, "beta": 2 / 3}}


def test_jin2001_table5_aggressiveness_order():
    """1/aggressiveness (RTTs) TCP < SIMD < AIAD ~ AIMD < IIAD (Table 5 simulation midpoints
    13.5 < 33.1 < 105.6 ~ 109.4 < 174.4), quick settings (3 runs of 10 cycles)."""
    inv, ana = {}, {}
    for alg, params in JIN2001.items():
        ev = evaluate(alg, params, quick=True, workers=1, only=["jin2001"], progress=False)
        m = ev.metrics["jin2001/impulse-response"]
        inv[alg] = m["inv_aggressiveness_rtt"]["mean"]
        ana[alg] = m["analysis_our_point"]["inv_aggressiveness_rtt"]
        assert m["inv_aggressiveness_rtt"]["n"] >= 20, alg
    assert inv["tcp"] < inv["simd"] < min(inv["aiad_h"], inv["gaimd"])
    assert max(inv["aiad_h"], inv["gaimd"]) < inv["iiad"]
    assert 0.8 < inv["aiad_h"] / inv["gaimd"] < 1.25          # AIAD ~ AIMD
    # the smooth schemes' rises are long enough for the quick run to land within 25% of
    # jin2001 Table 3's analysis at our own operating point (W before -> after the step;
    # under RED, the paper's queue for this experiment, that point is ~12 -> 21.5 packets, a
    # ratio of 1.8 rather than the analysis's 11 -> 22, so the paper's midpoints are not the
    # reference here; TCP's rise is
    # seed-dependent: see experiments/jin2001/impulse-response/experiment.toml)
    for alg in ("simd", "aiad_h", "gaimd", "iiad"):
        assert inv[alg] == pytest.approx(ana[alg], rel=0.25), (alg, inv[alg], ana[alg])


def test_sastry2005_table1_utilisation_metric_order():
    """Utilisation metric (quick mode, 10 runs): TCP lowest and IIAD highest, as Table I
    (TCP 20.9 < LOG 21.8 <= SQRT 22.5 < IIAD 25.0). Over 200 full runs only IIAD stands apart
    (SQRT 25.2, LOG 26.0, TCP 26.4, IIAD 29.7: scripts/trough_seeds.py), so this pins the quick
    mode's seeds 1-10, not the paper's order. Not asserted: LOG <= SQRT, and the drop-metric
    order, which our runs do not reproduce (docs/evaluate-tsao2007.md, sastry2005 Table I)."""
    um = {}
    for alg in ("tcp", "log", "sqrt", "iiad"):
        ev = evaluate(alg, None, quick=True, seeds=10, workers=1, only=["sastry2005"], progress=False)
        um[alg] = ev.metrics["sastry2005/trough"]["utilization_metric"]
    assert um["tcp"] < min(um["log"], um["sqrt"])
    assert max(um["log"], um["sqrt"]) < um["iiad"]


def test_trough_line_prints_the_95_ci_of_the_mean():
    # the trough metrics' run-to-run spread is large (an order needs ~200 runs), so the text
    # report gives the 95% CI of the mean beside the utilisation and drop metrics
    from tcpfriendly.evaluate.report import text_report
    ev = evaluate("tcp", None, quick=True, seeds=3, workers=1, only=["sastry2005"], progress=False)
    t = ev.metrics["sastry2005/trough"]
    line = next(l for l in text_report(ev).splitlines() if l.startswith("sastry2005 Table I"))
    for k in ("utilization_metric", "drop_metric"):
        c = t["ci"][k]
        assert c["n"] == 3 and c["lo"] < t[k] < c["hi"]
        assert f"{t[k]:.2f} [{c['lo']:.2f}, {c['hi']:.2f}]" in line
    assert "(mean of 3 runs, [95% CI of the mean])" in line


def test_trough_figure_marks_what_the_metrics_measure_against():
    """The trough figure draws the CBR's stop (t1) and restart (t2), the steady-state window,
    U_ss and 0.95 U_ss, from the experiment's assumptions and the metrics; the binned
    utilisation stays at or below the link's capacity but for one packet's start in a bin."""
    from tcpfriendly.evaluate.report import figures
    ev = evaluate("tcp", None, quick=True, seeds=2, workers=1, only=["sastry2005"], progress=False)
    fig = dict(figures(ev))["sastry2005-trough"]
    ax = fig.axes[0]
    labels = [l.get_label() for l in ax.get_lines()]
    a = {k: v["value"] for k, v in ev.assumptions["sastry2005/trough"].items()}
    for key in ("t1", "t2"):
        line = next(l for l in ax.get_lines() if l.get_label().startswith(f"{key}: "))
        assert list(line.get_xdata()) == [a[key], a[key]]
    u_ss = ev.metrics["sastry2005/trough"]["steady_utilization"] / 100
    assert f"U_ss {u_ss:.3f}" in labels and f"{a['util_recover']:g} U_ss (recovered)" in labels
    util = ev.raw["sastry2005/trough"]["series"]["utilization"]
    # 0.1-s bins of a 10 Mb/s link: 120 packets of 1040 bytes; one more started is +0.9 %
    assert 0.5 < max(util) <= 1 + 1 / 120 + 1e-9, max(util)


def test_formula_controller_evaluates_end_to_end():
    params = {"increase": "0.2", "decrease": "0.125*w"}
    ev = evaluate("formula", params, quick=True, workers=1, only=["s1", "s3"])
    assert ev.grades["S1"][0] in "OΔX" and "S3 up" in ev.grades
    pts = ev.metrics["tsao2007/s1-nonperiodic"]["points"]
    assert all(p["x_goodput_bps"] > 0 for p in pts)


class Halving(tf.Controller):
    """AIMD(1, 1/2) in Python: TCP's law, so it should track TCP closely."""


def test_python_controller_evaluates_end_to_end():
    # jin2001's impulse response resolves the flow's delays from the run's scenario, which
    # names the Python controller: it failed with "unknown algorithm 'halving'" before the
    # run's controllers reached that expansion
    ev = evaluate("halving", controllers={"halving": Halving}, quick=True, workers=1,
                  only=["s1", "jin2001"])
    pts = ev.metrics["tsao2007/s1-nonperiodic"]["points"]
    assert all(0.8 < p["norm_identical"] < 1.25 for p in pts)
    tcp = evaluate("tcp", quick=True, workers=1, only=["jin2001"])
    ours, ref = (e.metrics["jin2001/impulse-response"] for e in (ev, tcp))
    # TCP's law in Python against the engine's TCP on the same runs (identical today)
    for k in ("w_high", "w_low", "mean_rtt_s"):
        assert ours[k] == pytest.approx(ref[k], rel=0.05), k
    assert ours["inv_aggressiveness_rtt"]["mean"] == pytest.approx(ref["inv_aggressiveness_rtt"]["mean"], rel=0.05)


def test_bad_input_is_one_line_exit_2(capsys):
    assert evaluate_command(["nosuch", "--quick"]) == 2
    err = capsys.readouterr().err.strip()
    assert "nosuch" in err and "\n" not in err
    assert evaluate_command(["gaimd", "--params", "alpha"]) == 2
    assert "--params" in capsys.readouterr().err
    assert evaluate_command(["gaimd", "--params", "beta=3", "--quick"]) == 2
    err = capsys.readouterr().err.strip()
    assert "params.beta" in err and "\n" not in err
    with pytest.raises(tf.ScenarioError, match="algorithm: unknown algorithm 'nosuch'"):
        evaluate("nosuch")
    with pytest.raises(tf.ScenarioError, match="rtt_count: must be 'queue' or 'mean'"):
        evaluate("tcp", quick=True, only=["jin2001"], assumptions={"jin2001/impulse-response": {"rtt_count": "srtt"}})
    with pytest.raises(tf.ScenarioError, match="drop_window: must be a positive number"):
        evaluate("tcp", quick=True, only=["sastry2005"], assumptions={"sastry2005/trough": {"drop_window": 0}})
    with pytest.raises(tf.ScenarioError, match="peak_bin_s: must be a positive number"):
        evaluate("tcp", quick=True, only=["sastry2005"], assumptions={"sastry2005/trough": {"peak_bin_s": -1.0}})


def test_all_runs_table2s_schemes_from_their_one_transcription(tmp_path, monkeypatch):
    """`tcpf evaluate --all` reads tsao2007 Table 2's schemes and parameters from table4's
    [evaluate.schemes] (the file tcpf reproduce grades), then the project's extras."""
    from tcpfriendly.evaluate.cli import EXTRA_SCHEMES, all_schemes
    from tcpfriendly.reproduce.spec import load_paper
    table4 = {e.name.split("/")[-1]: e for e in load_paper("tsao2007")}["table4"].evaluate["schemes"]
    got = all_schemes()
    assert [a for a, _ in got] == list(table4) + EXTRA_SCHEMES
    assert dict(got[:len(table4)]) == {k: dict(v) for k, v in table4.items()}
    assert ("gaimd", {"alpha": 0.2, "beta": 0.125}) in got          # tsao2007 Table 2
    # another experiments home: its table4 decides, and a home without one is a clear error
    (tmp_path / "tsao2007" / "table4").mkdir(parents=True)
    (tmp_path / "tsao2007" / "table4" / "experiment.toml").write_text(
        '[evaluate.schemes]\nsimd = { beta = 0.1 }\n')
    monkeypatch.setenv("TCPF_EXPERIMENTS", str(tmp_path))
    assert all_schemes()[0] == ("simd", {"beta": 0.1})
    (tmp_path / "tsao2007" / "table4" / "experiment.toml").write_text('[evaluate]\n')
    with pytest.raises(tf.ScenarioError, match=r"evaluate.schemes"):
        all_schemes()


def test_all_with_an_algorithm_adds_it_as_one_more_row(tmp_path, tcpf):
    """`tcpf evaluate LAW --all`: Table 4 with the researcher's law as one more row; a rerun
    into the same --out runs only the new row's simulations."""
    from tcpfriendly.evaluate.cli import all_schemes

    out = tmp_path / "t4"
    args = ["--all", "--quick", "--only", "s2", "--out", out, "--workers", "2"]
    p = tcpf("evaluate", *args, "--json")
    assert p.returncode == 0, p.stderr
    table = json.loads(p.stdout)
    p = tcpf("evaluate", "formula", "--params", "increase=0.2,decrease=0.125*w", *args, "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [e["algorithm"] for e in doc] == [a for a, _ in all_schemes()] + ["formula"]
    assert doc[:-1] == [dict(e, wall_s=d["wall_s"], runs=d["runs"]) for e, d in zip(table, doc)]
    assert doc[-1]["runs"]["ran"] == 6 and doc[-1]["runs"]["cached"] == len(table) * 6
    # GAIMD(0.2, 0.125) written as a formula grades as the table's gaimd row
    assert doc[-1]["grades"] == doc[0]["grades"] and doc[0]["algorithm"] == "gaimd"
    # the printed Table 4 has the row, without a paper grade to compare (all cached now)
    p = tcpf("evaluate", "formula", "--params", "increase=0.2,decrease=0.125*w", *args)
    assert p.returncode == 0, p.stderr
    row = [line for line in p.stdout.splitlines() if line.startswith("formula ")][-1].split()
    assert row[3:5] == [doc[-1]["grades"]["S2 hom"], f"{doc[-1]['numbers']['S2 hom']['equal_share']:.2f}"]
    for bad, said in ((["gaimd"], "gaimd is a row of Table 4 already"),
                      (["--params", "alpha=1"], "--params applies to an algorithm given beside them")):
        p = tcpf("evaluate", *bad, "--all", "--quick")
        assert p.returncode == 2 and said in p.stderr and "Traceback" not in p.stderr


def test_rate_based_responsiveness_is_not_measured_and_json_is_strict():
    # A rate-based flow logs no window reductions, so jin2001's 1/responsiveness in loss
    # events is not measured for it (null), not 0; the JSON has no NaN anywhere.
    ev = evaluate("tfrc", None, quick=True, workers=1, only=["jin2001"], progress=False)
    doc = json.loads(json.dumps(ev.to_json(), allow_nan=False))
    m = doc["metrics"]["jin2001/impulse-response"]
    assert m["inv_responsiveness_losses"]["n"] == 0 and m["inv_responsiveness_losses"]["mean"] is None
    assert m["inv_aggressiveness_rtt"]["n"] > 0 and m["inv_aggressiveness_rtt"]["mean"] > 1
    assert m["inv_responsiveness_s"]["n"] > 0


def test_a_time_not_reached_in_the_phase_is_censored_at_phase_end_minus_change():
    # S3 from fabricated series: seed 1 reaches the new level (1 Mb/s) 20 s after the change at
    # 100 s, seed 2 never does before the phase ends at 800 s: its time is censored at 700 s.
    # x_s stays NaN (the grade of a scheme that never converged is unchanged); the bound is
    # the mean with 700 s for seed 2, and the report prints it as a lower bound.
    from types import SimpleNamespace

    from tcpfriendly.evaluate.core import _agg_s3
    from tcpfriendly.evaluate.report import _cell_detail

    t = [float(i) for i in range(0, 1001)]
    def ser(reach):  # 0.2 Mb/s, then 1 Mb/s from `reach` (None: never) until 800 s, then 0.2
        return {"time": t, "rate_bps": [1e6 if reach is not None and reach <= x < 800 else 2e5 for x in t],
                "loss_times": [], "goodput_bps": 5e5}
    rows = []
    for seed, reach in ((1, 120.0), (2, None)):
        j = SimpleNamespace(seed=seed)
        rows += [(None, "x", j, ser(reach)), (None, "tcp", j, ser(110.0)),
                 (None, "x@slow", j, {"level_bps": 1e6}), (None, "x@fast", j, {"level_bps": 2e5}),
                 (None, "tcp@slow", j, {"level_bps": 1e6}), (None, "tcp@fast", j, {"level_bps": 2e5})]
    vals = {"low_from": 100, "low_to": 800, "duration": 1000, "tol": 0.1, "average_s": 10}
    m, grades, nums, _ = _agg_s3(None, vals, rows, TH)
    up = nums["S3 up"]
    assert math.isnan(up["x_s"]) and up["x_censored"] == 1 and up["runs"] == 2 and up["runs_are"] == "seeds"
    reached = 120.0 + 5.0 - 100.0  # the 10-s centred average is within 10 % of 1 Mb/s 5 s after the rise
    assert up["x_s_bound"] == pytest.approx((reached + 700.0) / 2, abs=1.0)
    assert up["tcp_censored"] == 0 and up["tcp_s_bound"] == pytest.approx(up["tcp_s"])
    assert grades["S3 up"].startswith(G.X)          # unchanged: never converged -> X
    assert m["up_censored"] == 1 and nums["S3 down"]["x_censored"] == 0
    assert _cell_detail(SimpleNamespace(numbers=nums), "S3 up").startswith(f"- (> {up['x_s_bound']:.1f} s / TCP")

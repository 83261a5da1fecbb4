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
        assert exp.published, f"{paper}/{eid} has no published values"


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


def test_gaimd_is_below_tcp_under_random_losses():
    ev = evaluate("gaimd", {"alpha": 0.2, "keep": 0.875}, quick=True, workers=1, only=["s1"])
    assert ev.params["beta"] == pytest.approx(0.125)      # canonical beta
    pts = {p["cv"]: p["norm_identical"] for p in ev.metrics["tsao2007/s1-nonperiodic"]["points"]}
    assert pts[0.0] == pytest.approx(1.0, abs=0.05)
    assert pts[1.0] < 0.95


def test_formula_controller_evaluates_end_to_end():
    params = {"increase": "0.2", "decrease": "0.125*w"}
    ev = evaluate("formula", params, quick=True, workers=1, only=["s1", "s3"])
    assert ev.grades["S1"][0] in "OΔX" and "S3 up" in ev.grades
    pts = ev.metrics["tsao2007/s1-nonperiodic"]["points"]
    assert all(p["x_goodput_bps"] > 0 for p in pts)


class Halving(tf.Controller):
    """AIMD(1, 1/2) in Python: TCP's law, so it should track TCP closely."""


def test_python_controller_evaluates_end_to_end():
    ev = evaluate("halving", controllers={"halving": Halving}, quick=True, workers=1, only=["s1"])
    pts = ev.metrics["tsao2007/s1-nonperiodic"]["points"]
    assert all(0.8 < p["norm_identical"] < 1.25 for p in pts)


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

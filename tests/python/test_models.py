"""`tcpfriendly.models` and `tcpf model ...`: values, --json keys, --help examples, plots, errors.

Most CLI checks run the sub-app in-process through `tcpfriendly.cli.model.main` (the same
one-line error policy as `tcpf`); a few run the real command (`tcpf model` once it is wired
into `tcpf`, `python -m tcpfriendly.cli.model` before).
"""

import json
import math
import re
import subprocess
import sys

import pytest

from conftest import REPO

from tcpfriendly import models
from tcpfriendly.cli import model as cli_model


# ----- helpers --------------------------------------------------------------------------------
def run_inprocess(capsys, *args):
    """Run `tcpf model ARGS` in-process; returns (exit code, stdout, stderr)."""
    try:
        cli_model.main([str(a) for a in args])
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out, err = capsys.readouterr()
    return code, out, err


def flat_json(text):
    obj = json.loads(text)
    assert isinstance(obj, dict) and obj
    for k, v in obj.items():
        assert isinstance(v, (int, float)) and not isinstance(v, bool), (k, v)
    return obj


def assert_one_line_error(code, out, err, *fragments):
    assert code == 2, (code, out, err)
    assert out == ""
    lines = err.splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: "), lines[0]
    for f in fragments:
        assert f in lines[0], (f, lines[0])
    assert "Traceback" not in err


@pytest.fixture(scope="module")
def model_cmd(tcpf):
    """The real command line: `tcpf model` if wired, else `python -m tcpfriendly.cli.model`."""
    probe = tcpf("model", "--help")
    if probe.returncode == 0 and "rate" in probe.stdout:
        return lambda *a, **kw: tcpf("model", *a, **kw)

    def call(*args, timeout=120):
        return subprocess.run([sys.executable, "-m", "tcpfriendly.cli.model"] + [str(a) for a in args],
                              capture_output=True, text=True, timeout=timeout, cwd=str(REPO))

    return call


# ----- every command: --help with an example, --json flat numbers ----------------------------
COMMANDS = {
    "rate": (["--alpha", "0.31", "--keep", "0.875", "--p", "0.01", "--rtt", "0.1"],
             ["rate", "rate_eq2", "rate_eq55", "padhye", "mathis", "beta", "keep", "expected_window", "q_hat", "f_p"]),
    "friendly-alpha": (["--beta", "1/16"], ["alpha", "alpha_td", "alpha_to", "alpha_min", "beta", "keep"]),
    "spectrum": (["--k", "-0.5", "--l", "1", "--beta", "1/16", "--wmax", "50"],
                 ["alpha", "c", "u", "alpha_eq4", "alpha_eq6", "c_eq5", "c_eq7", "in_convergence_region",
                  "c_eq10", "alpha_eq10", "gamma_u1", "c_eq10_over_eq5", "app_b_covers"]),
    "convergence": (["--alg", "simd", "--W", "110", "--W1", "10.2", "--W2", "33.2", "--eps", "10"],
                    ["t1", "delta", "t2", "t2_epochs", "beta"]),
    "convergence-map": (["--W", "60", "--step", "2"], ["fraction_simd_faster", "points"]),
    "tradeoff": (["--alg", "simd", "--W", "11", "--m", "2", "--w-down", "22"],
                 ["cov", "inv_aggressiveness", "inv_responsiveness", "beta"]),
    "cyrf": (["--f", "w", "--g", "0.5", "--windows", "8,10"],
             ["class", "cyrf", "one_cyrf", "tcp_friendly", "tcp_compatible", "increase_holds", "decrease_holds"]),
    "fairness": (["--windows", "8,10,20", "--steps", "1,1,1"], ["lhs", "rhs", "holds", "strict", "jain_before", "jain_after"]),
    "illinois": ([], ["kappa1", "kappa2", "kappa3", "kappa4", "lossy_bound", "d1", "d2", "d3"]),
    "vegas": (["--sigma", "0.005"], ["d_star", "d_a", "utilization", "x_first", "w_first"]),
    "markov": (["--n", "4", "--congestion", "light", "--runs", "3", "--events", "200", "--warmup", "200"],
               ["ratio_min", "ratio_max", "ratio_mean", "cov_max", "one_plus_mu", "mu", "slope", "c1_dev_max", "c1_dev_mean"]),
    "chiu-jain": (["--alg", "tcp", "--W", "60", "--init", "10,30", "--rounds", "300"],
                  ["t1", "delta_t1", "t2", "t2_epochs", "rounds_to_jain", "jain_final", "efficiency"]),
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_help_has_an_example(capsys, command):
    code, out, err = run_inprocess(capsys, command, "--help")
    assert code == 0, err
    assert "Example" in out and f"tcpf model {command}" in out, out


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_json_is_a_flat_object_of_named_numbers(capsys, command):
    args, keys = COMMANDS[command]
    code, out, err = run_inprocess(capsys, command, *args, "--json")
    assert code == 0, err
    obj = flat_json(out)
    for k in keys:
        assert k in obj, (k, sorted(obj))
    # without --json: one `name = value` line per number
    code, out, err = run_inprocess(capsys, command, *args)
    assert code == 0, err
    assert all(" = " in line for line in out.splitlines() if not line.startswith(("class:", "  -")))


def test_coded_outputs_are_named_in_the_table(capsys):
    """A code in the flat numbers (which curve gave alpha, a CYRF class) is printed with its
    name in the table; --json keeps the number."""
    for curve, code in (("td", 0), ("to", 1), ("min", 2)):
        code_, out, err = run_inprocess(capsys, "friendly-alpha", "--keep", "0.875", "--curve", curve)
        assert code_ == 0, err
        assert re.search(rf"^curve += {code} \({curve}\)$", out, re.M), out
        code_, out, err = run_inprocess(capsys, "friendly-alpha", "--keep", "0.875", "--curve", curve, "--json")
        assert flat_json(out)["curve"] == code
    code_, out, err = run_inprocess(capsys, "cyrf", "--f", "w", "--g", "0.5")
    assert code_ == 0, err
    assert re.search(r"^class += 2 \(CYRF\)$", out, re.M), out


def test_root_help_lists_the_commands(capsys):
    code, out, _ = run_inprocess(capsys, "--help")
    assert code == 0
    for command in COMMANDS:
        assert command in out


# ----- bad input: exit 2, one line naming the option ------------------------------------------
BAD = {
    "beta >= 1": (["rate", "--alpha", "1", "--beta", "1", "--p", "0.1", "--rtt", "0.1"], ["--beta"]),
    "keep >= 1": (["friendly-alpha", "--keep", "1.5"], ["--keep"]),
    "beta and keep": (["friendly-alpha", "--keep", "0.5", "--beta", "0.5"], ["--beta", "only one"]),
    "no beta": (["friendly-alpha"], ["--beta"]),
    "p = 0": (["rate", "--alpha", "1", "--beta", "0.5", "--p", "0", "--rtt", "0.1"], ["--p"]),
    "p > 1": (["rate", "--alpha", "1", "--beta", "0.5", "--p", "1.5", "--rtt", "0.1"], ["--p"]),
    "k <= -1": (["spectrum", "--k", "-1", "--l", "1", "--beta", "0.1", "--wmax", "10"], ["--k"]),
    "l > 1": (["spectrum", "--k", "0", "--l", "1.5", "--beta", "0.1", "--wmax", "10"], ["--l"]),
    "beta >= 1 spectrum": (["spectrum", "--k", "0", "--l", "1", "--beta", "1", "--wmax", "10"], ["--beta"]),
    "not a number": (["rate", "--alpha", "x", "--beta", "0.5", "--p", "0.1", "--rtt", "0.1"], ["--alpha"]),
    "unknown algorithm": (["convergence", "--alg", "bogus", "--W", "110", "--W1", "10", "--W2", "30", "--eps", "1"], ["--alg"]),
    "above the efficiency line": (["convergence", "--alg", "aimd", "--W", "30", "--W1", "10", "--W2", "30", "--eps", "1"], ["--W2"]),
    "tcp beta fixed": (["convergence", "--alg", "tcp", "--beta", "0.2", "--W", "110", "--W1", "10", "--W2", "30", "--eps", "1"], ["--beta", "(use --alg aimd)"]),
    "m <= 1": (["tradeoff", "--alg", "aimd", "--W", "10", "--m", "1"], ["--m"]),
    "bad formula": (["cyrf", "--f", "w +", "--g", "0.5"], ["--f", "column"]),
    "bad congestion": (["markov", "--n", "4", "--congestion", "mild"], ["--congestion"]),
    "unknown controller": (["chiu-jain", "--alg", "nope", "--W", "60"], ["--alg", "nope"]),
    "bad controller param": (["chiu-jain", "--alg", "gaimd", "--param", "beta=2", "--W", "60"], ["--param", "beta"]),
    "init count": (["chiu-jain", "--alg", "tcp", "--W", "60", "--n", "3", "--init", "10,20"], ["--init"]),
    "mixed: a flow that does not exist": (["chiu-jain", "--alg", "tcp", "--alg", "gaimd", "--param", "3:beta=0.1", "--W", "60"],
                                          ["--param", "flow 3"]),
    "mixed: --n against the --alg count": (["chiu-jain", "--alg", "tcp", "--alg", "gaimd", "--n", "3", "--W", "60"], ["--alg", "3 flows"]),
    "mixed: a parameter the flow's law lacks": (["chiu-jain", "--alg", "tcp", "--alg", "gaimd", "--param", "alpha=0.2", "--W", "60"],
                                                ["--param", "alpha", "tcp"]),
    "plot suffix": (["illinois", "--plot", "fig.pdf"], ["--plot"]),
    "missing option": (["rate", "--alpha", "1"], ["--p"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_bad_parameters_exit_2_with_one_line(capsys, case):
    args, fragments = BAD[case]
    for extra in ([], ["--json"]):
        code, out, err = run_inprocess(capsys, *args, *extra)
        assert_one_line_error(code, out, err, *fragments)


def test_real_command_line(model_cmd, tmp_path):
    """Through a real process: JSON, exit codes, one-line errors, a plot file."""
    p = model_cmd("friendly-alpha", "--keep", "0.875", "--curve", "to", "--json")
    assert p.returncode == 0, p.stderr
    assert flat_json(p.stdout)["alpha"] == pytest.approx(0.3125, abs=1e-12)
    p = model_cmd("rate", "--alpha", "1", "--beta", "1.5", "--p", "0.1", "--rtt", "0.1")
    assert_one_line_error(p.returncode, p.stdout, p.stderr, "--beta")
    p = model_cmd("spectrum", "--k", "-2", "--l", "1", "--beta", "0.1", "--wmax", "10", "--json")
    assert_one_line_error(p.returncode, p.stdout, p.stderr, "--k")
    out = tmp_path / "cj.svg"
    p = model_cmd("chiu-jain", "--alg", "simd", "--W", "110", "--init", "10,30", "--rounds", "400", "--plot", out, "--json")
    assert p.returncode == 0, p.stderr
    assert out.exists() and out.read_text().lstrip().startswith(("<?xml", "<svg"))


# ----- plots ----------------------------------------------------------------------------------
PLOTTED = {
    "rate": ["--alpha", "0.31", "--keep", "0.875", "--p", "0.01", "--rtt", "0.1"],
    "friendly-alpha": ["--keep", "0.875"],
    "convergence-map": ["--W", "40", "--step", "2"],
    "markov": ["--n", "4", "--congestion", "heavy", "--runs", "2", "--events", "100", "--warmup", "100"],
    "illinois": [],
    "cyrf": ["--f", "x^2/log(x)", "--g", "0.5*log(x)/x"],
}


@pytest.mark.parametrize("command", sorted(PLOTTED))
def test_plot_writes_a_file(capsys, tmp_path, command):
    path = tmp_path / f"{command}.png"
    code, out, err = run_inprocess(capsys, command, *PLOTTED[command], "--plot", path)
    assert code == 0, err
    assert path.exists() and path.stat().st_size > 1000
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {path}" in out


def test_every_model_has_a_plotter():
    assert set(models.PLOTTERS) == set(models.names())


# ----- the Python API: the papers' numbers ----------------------------------------------------
def test_api_td_to_curves_and_padhye():
    assert models.friendly_alpha(beta=1 / 16)["alpha"] == pytest.approx(0.0968, abs=5e-5)
    assert models.friendly_alpha(beta=1 / 8)["alpha"] == pytest.approx(0.2, abs=1e-12)
    assert models.friendly_alpha(keep=0.875, curve="to")["alpha"] == pytest.approx(0.3125, abs=1e-12)
    r = models.rate(alpha=1, keep=0.5, p=0.02, rtt=0.1, t0=0.4)
    assert r["rate"] == pytest.approx(r["padhye"], rel=1e-12)
    assert r["ratio_eq55_to_eq2"] == pytest.approx(1.0, abs=0.1)
    curve = models.friendly_curve(betas=[0.1, 0.5], curve="td")
    assert curve[1] == pytest.approx(1.0)


def test_api_errors_name_the_parameter():
    with pytest.raises(models.ModelError) as e:
        models.rate(alpha=1, beta=1.0, p=0.1, rtt=0.1)
    assert e.value.field == "beta"
    assert isinstance(e.value, ValueError)
    with pytest.raises(models.ModelError) as e:
        models.call("rate", alpha=1, beta=0.5, p=0.1, rtt=0.1, bogus=1)
    assert e.value.field == "bogus"


def test_api_jin2001_tables():
    # Table 6 experiment 2, SIMD (W = 110 inferred)
    c = models.convergence("simd", W=110, W1=10.2, W2=33.2, eps=10)
    assert c["t1"] == pytest.approx(85.1, rel=0.01) and c["delta"] == pytest.approx(12.3, rel=0.01)
    # Table 5, SIMD with m = 2, W = 11
    t = models.tradeoff("simd", W=11, m=2, w_down=22)
    assert t["inv_aggressiveness"] == pytest.approx(41.5, rel=0.01)
    assert t["inv_responsiveness"] == pytest.approx(10.7, rel=0.01)
    s = models.spectrum(k=-0.5, l=1, beta=1 / 16, wmax=50)
    assert s["alpha"] == pytest.approx(3 * math.sqrt(1 / 16) / ((1 - 2 / 48) * math.sqrt(100)), rel=1e-12)
    # App. A eq. 10 written out for SIMD: c = (3/(2(1 − 2β/3)))²·β/W, twice eq. 5's (Γ(3) = 2)
    assert s["c_eq10"] == pytest.approx((1.5 / (1 - 2 / 48)) ** 2 / 16 / 50, rel=1e-12)
    assert s["c_eq10"] / s["c_eq5"] == pytest.approx(2.0, rel=1e-12) and "eq14_holds" not in s


def test_spectrum_eq14_options(capsys):
    code, out, err = run_inprocess(capsys, "spectrum", "--k", "0", "--l", "0", "--beta", "2/3", "--wmax", "30",
                                   "--delta-i", "0.9", "--delta-d", "0.3", "--json")
    assert code == 0, err
    r = json.loads(out)
    assert r["eq14_lhs"] == pytest.approx(1.8) and r["eq14_holds"] == 1 and r["app_b_covers"] == 1
    assert r["app_b_crossing"] > 0 and r["app_b_fairer"] == r["app_b_crossing"]
    bad = models.spectrum(k=0, l=0, beta=2 / 3, wmax=30, delta_i=0.5, delta_d=0.6)
    assert bad["eq14_holds"] == 0 and bad["app_b_fairer"] < bad["app_b_crossing"]
    code, out, err = run_inprocess(capsys, "spectrum", "--k", "0", "--l", "0", "--beta", "2/3", "--wmax", "30",
                                   "--delta-i", "0.9")
    assert code == 2 and "--delta-d" in err, (code, out, err)


def test_api_markov_is_seeded_and_chiu_jain_runs_formulas():
    a = models.markov(n=4, congestion="medium", runs=2, events=200, warmup=100, seed=5)
    b = models.markov(n=4, congestion="medium", runs=2, events=200, warmup=100, seed=5)
    assert a == b
    r = models.chiu_jain("formula", W=60, n=2, init=[10, 30], params={"f": "w", "g": "0.5"}, rounds=300)
    t = models.chiu_jain("tcp", W=60, n=2, init=[10, 30], rounds=300)
    assert r["t1"] == t["t1"] and r["jain_final"] > 0.99
    assert len(r["series"]["windows"]) == 2 and len(r["series"]["jain"]) == 301


def test_api_markov_reports_thm_4_3_per_user():
    # liu2008 Thm 4.3 (eq. 20): T_i²·E[x_i·q_i] is the same for every user; per user the time
    # average of x_i·D_i (series.xd) and T_i² times it (series.c1), in the layout of series.mean
    r = models.markov(n=4, congestion="heavy", runs=2, events=20000, warmup=500, rtt_min=0.05, rtt_max=0.2)
    s = r["series"]
    assert len(s["xd"]) == len(s["c1"]) == len(s["mean"]) == 8
    for i in range(8):
        assert 0 < s["xd"][i] < s["mean"][i]
        assert s["c1"][i] == pytest.approx(s["rtt"][i] ** 2 * s["xd"][i], rel=1e-12)
    for run in (0, 1):
        c1 = [c for c, k in zip(s["c1"], s["run"]) if k == run]
        rates = [m for m, k in zip(s["mean"], s["run"]) if k == run]
        dev = max(abs(c / (sum(c1) / 4) - 1) for c in c1)
        assert dev <= r["c1_dev_max"] < 0.01
        assert max(rates) / min(rates) > 1.3   # the rates themselves differ with the RTTs
    assert 0 <= r["c1_dev_mean"] <= r["c1_dev_max"]


def test_cli_markov_prints_the_first_runs_users(capsys):
    code, out, err = run_inprocess(capsys, "markov", "--n", "3", "--congestion", "light", "--runs", "2",
                                   "--events", "500", "--warmup", "100")
    assert code == 0, err
    users = [line for line in out.splitlines() if line.startswith("  - run 0, user ")]
    assert len(users) == 3 and all("T_i^2*E[x_i*D_i]" in line for line in users)


def test_api_cyrf_classification():
    tcp = models.cyrf("w", "0.5")
    assert tcp["class"] == 2 and tcp["tcp_compatible"] == 1
    log = models.cyrf("x^2/log(x)", "0.5*log(x)/x", windows=[8, 10])
    assert log["class"] == 1 and log["decrease_holds"] == 0
    assert log["details"]["class"] == "1-CYRF"


def test_chiu_jain_mixes_algorithms_from_python_and_the_command_line(capsys):
    """Mixed algorithms (one per flow): under synchronous feedback GAIMD with yang2000's
    TCP-friendly α = 3β/(2−β) = 0.2 (β = 1/8) averages TCP's window; α = 0.31 takes ≈ 1.55×."""
    import numpy as np

    def ratio(alpha):
        r = models.chiu_jain(["tcp", "gaimd"], W=200, init=[20, 60], params=[{}, {"alpha": alpha, "beta": 0.125}],
                             rounds=20000)
        assert (r["n"], r["alg_1"], r["alg_2"], r["param_2_alpha"]) == (2, "tcp", "gaimd", alpha)
        w = np.array(r["series"]["windows"])
        return w[1][10000:].mean() / w[0][10000:].mean()

    assert ratio(0.2) == pytest.approx(1.0, abs=0.03)
    assert ratio(0.31) == pytest.approx(1.55, abs=0.05)
    code, out, err = run_inprocess(capsys, "chiu-jain", "--alg", "tcp", "--alg", "gaimd", "--param", "2:alpha=0.2",
                                   "--param", "2:beta=1/8", "--W", "200", "--init", "20,60", "--json")
    assert code == 0, err
    d = flat_json(out)
    assert d["n"] == 2 and d["param_2_beta"] == 0.125 and "param_beta" not in d
    code, out, err = run_inprocess(capsys, "chiu-jain", "--alg", "simd", "--alg", "iiad", "--param", "2:beta=2/3",
                                   "--W", "110", "--init", "10,30")
    assert code == 0, err
    assert "flows          : 1 simd, 2 iiad" in out and "param_2_beta" in out

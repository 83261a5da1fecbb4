"""Bad input to `tcpf bench`, `tcpf plot` and `tcpf model ...` (the error policy of
tcpfriendly.cli.errors): one line ``error: <field>: ...`` naming the field and the allowed
range, exit 2, at once, nothing built, run or written."""

import os
import subprocess
import sys

import pytest

from conftest import REPO


def _one_error_line(p, field):
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert p.stderr.startswith(f"error: {field}: "), p.stderr
    assert p.stderr.count("\n") == 1, p.stderr


# ----- tcpf bench (the `vs_ns2` fixture: conftest) ------------------------------------------------

BAD_BENCH = [
    ("--duration", v) for v in ("nan", "inf", "-inf", "0", "-1", "0.5", "1e308", "x")
] + [
    ("--scaled-duration", v) for v in ("nan", "inf", "0", "-5", "1e308")
] + [
    ("--reps", v) for v in ("0", "-1", "nan", "inf", "1.5", "1e9", "99999999999999999999")
] + [
    ("--timeout", v) for v in ("nan", "inf", "0", "-1", "1e308")
] + [
    ("--ns3-timeout", v) for v in ("nan", "inf", "0", "-1", "1e308", "x")
] + [
    ("--ns3-reps", v) for v in ("0", "-1", "nan", "1.5", "1e9")
] + [
    ("--flows", v) for v in ("0", "-3", "nan", "1e308", "10000000")
] + [
    ("--flows-scale", v) for v in ("x", "1,0", "320,-1", "nan", "1e308")
] + [
    ("--seed", v) for v in ("-1", "nan", "1e308", str(1 << 60))
]


@pytest.mark.parametrize("option,value", BAD_BENCH)
def test_bench_refuses_each_bad_number_before_building_anything(vs_ns2, monkeypatch, capsys, option, value):
    def no_child(*args, **kwargs):
        raise AssertionError(f"started a process for {option} {value}: {args}")

    monkeypatch.setattr(vs_ns2.subprocess, "run", no_child)
    monkeypatch.setattr(vs_ns2.subprocess, "Popen", no_child)
    monkeypatch.setattr(vs_ns2, "RUN_JSON", "/nonexistent/run_json")  # would have to be built
    with pytest.raises(SystemExit) as e:
        vs_ns2.main([f"{option}={value}", "--no-ns2"])
    err = capsys.readouterr().err
    assert e.value.code == 2
    assert err.startswith(f"error: {option}: must be ") and err.count("\n") == 1, err
    assert "[" in err or "(" in err  # the allowed range


def test_tcpf_bench_nan_duration_is_one_line_at_once(tcpf):
    """It used to start `cargo build` and then simulate forever (NaN passed `<= 0`)."""
    p = tcpf("bench", "--duration", "nan", "--no-ns2", timeout=20)
    _one_error_line(p, "--duration")
    assert "(1, 1e7]" in p.stderr and p.stdout == ""


@pytest.mark.parametrize("args,field", [
    (["--reps", "0"], "--reps"),             # was checked after `cargo build`
    (["--reps", "abc"], "--reps"),           # was argparse's multi-line usage block
    (["--bogus"], "unrecognized arguments"),
    (["--engine", "ns3"], "--engine"),
    (["--baseline", "/nonexistent/run_json"], "--baseline"),  # was checked after building
])
def test_tcpf_bench_usage_errors_are_one_line(tcpf, args, field):
    p = tcpf("bench", *args, "--no-ns2", timeout=20)
    _one_error_line(p, field)
    assert "usage:" not in p.stderr and p.stdout == ""


# ----- tcpf plot -o DIR: the output rules of tcpfriendly.outfiles --------------------------------
@pytest.fixture(scope="module")
def result_json(tmp_path_factory):
    import tcpfriendly
    from conftest import SMALL_TOML

    d = tmp_path_factory.mktemp("result")
    (d / "s.toml").write_text(SMALL_TOML)
    r = tcpfriendly.run(tcpfriendly.Scenario.from_toml(str(d / "s.toml")), timeseries=0.5)
    (d / "r.json").write_text(r.to_json())
    return d / "r.json"


def _listing(d):
    return sorted(os.listdir(d))


def test_plot_refuses_another_commands_output(tcpf, result_json, tmp_path):
    from tcpfriendly.outfiles import claim

    run_dir = tmp_path / "run"
    out = claim(str(run_dir), "run", "some-run")
    out.write_text("result.json", "{}")
    out.commit()
    before = _listing(run_dir)
    p = tcpf("plot", result_json, "--kind", "goodput", "-o", run_dir)
    _one_error_line(p, "--out")
    assert "holds the output of `tcpf run`" in p.stderr
    assert _listing(run_dir) == before and (run_dir / "result.json").read_text() == "{}"


def test_plot_refuses_a_directory_of_other_files(tcpf, result_json, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("mine")
    p = tcpf("plot", result_json, "--kind", "goodput", "-o", home)
    _one_error_line(p, "--out")
    assert _listing(home) == ["notes.txt"]


def test_plot_never_writes_through_a_symbolic_link(tcpf, result_json, tmp_path):
    from tcpfriendly.outfiles import MANIFEST

    figs = tmp_path / "figs"
    p = tcpf("plot", result_json, "--kind", "goodput", "-o", figs)
    assert p.returncode == 0, p.stderr
    assert _listing(figs) == sorted([MANIFEST, "goodput.png", "goodput.svg"])
    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    os.unlink(figs / "goodput.png")
    os.symlink(victim, figs / "goodput.png")
    p = tcpf("plot", result_json, "--kind", "goodput", "-o", figs)
    _one_error_line(p, "--out")
    assert "symbolic link" in p.stderr and "--force" not in p.stderr  # tcpf plot has no --force
    assert victim.read_text() == "keep" and os.path.islink(figs / "goodput.png")


def test_plot_redraws_its_own_directory_and_keeps_other_figures(tcpf, result_json, tmp_path):
    import json

    from tcpfriendly.outfiles import MANIFEST

    figs = tmp_path / "figs"
    assert tcpf("plot", result_json, "--kind", "goodput", "--format", "png", "-o", figs).returncode == 0
    p = tcpf("plot", result_json, "--kind", "cwnd", "--format", "svg", "-o", figs)
    assert p.returncode == 0, p.stderr
    assert _listing(figs) == sorted([MANIFEST, "cwnd.svg", "goodput.png"])  # no temporaries left
    manifest = json.loads((figs / MANIFEST).read_text())
    assert manifest["command"] == "plot" and sorted(manifest["files"]) == ["cwnd.svg", "goodput.png"]


def test_plot_accepts_figures_written_before_manifests(tcpf, result_json, tmp_path):
    from tcpfriendly.outfiles import MANIFEST

    old = tmp_path / "old"
    old.mkdir()
    (old / "cwnd.png").write_bytes(b"an earlier figure")
    p = tcpf("plot", result_json, "--kind", "goodput", "--format", "svg", "-o", old)
    assert p.returncode == 0, p.stderr
    assert _listing(old) == sorted([MANIFEST, "cwnd.png", "goodput.svg"])


def test_plot_refuses_a_file_as_directory(tcpf, result_json, tmp_path):
    f = tmp_path / "f"
    f.write_text("x")
    p = tcpf("plot", result_json, "--kind", "goodput", "-o", f)
    _one_error_line(p, "--out")
    assert f.read_text() == "x"


def test_run_plot_checks_its_directory_before_running(tcpf, small_path, tmp_path):
    from tcpfriendly.outfiles import claim

    run_dir = tmp_path / "run"
    claim(str(run_dir), "run", "some-run").commit()
    p = tcpf("run", small_path, "--plot", run_dir)
    _one_error_line(p, "--plot")
    assert p.stdout == ""  # refused before the run: no summary
    same = tmp_path / "same"
    p = tcpf("run", small_path, "--out", same, "--plot", same)
    _one_error_line(p, "--plot")
    assert p.stdout == "" and not same.exists()


# ----- tcpf model ...: inputs whose results are not finite -----------------------------------------
# Before: exit 0 with the overflowed results silently left out (e.g. spectrum --k 1e308 printed
# no alpha at all).
NOT_FINITE = [
    ("spectrum", ["--k", "1e308", "--l", "1", "--beta", "1/16", "--wmax", "50"], "--k", "<="),
    ("spectrum", ["--k", "1e9", "--l", "1", "--beta", "1/16", "--wmax", "50"], "--k", "<="),
    ("spectrum", ["--k", "-0.5", "--l", "-1e308", "--beta", "1/16", "--wmax", "50"], "--l", ">="),
    ("spectrum", ["--k", "-0.5", "--l", "1", "--beta", "1/16", "--wmax", "1e308"], "--wmax", "<="),
    ("rate", ["--alpha", "0.31", "--keep", "0.875", "--p", "1e-308", "--rtt", "0.1"], "--p", ">="),
    ("rate", ["--alpha", "0.31", "--keep", "0.875", "--p", "0.01", "--rtt", "1e-308"], "--rtt", ">="),
    ("friendly-alpha", ["--beta", "1/16", "--b", "1e308"], "--b", "<="),
    ("convergence", ["--alg", "simd", "--W", "1e308", "--W1", "10.2", "--W2", "33.2", "--eps", "10"], "--W", "<="),
    ("tradeoff", ["--alg", "iiad", "--W", "20", "--m", "1e308"], "--m", "<="),
    ("fairness", ["--windows", "1e308,30", "--steps", "1,-1"], "--windows", "<="),
    ("illinois", ["--alpha-max", "1e308"], "--alpha-max", "<="),
    ("vegas", ["--capacity", "1e-308"], "--capacity", ">="),
    ("markov", ["--n", "4", "--congestion", "light", "--runs", "5", "--rtt-max", "1e308"], "--rtt-max", None),
]


def _model_cli(capsys, args):
    from tcpfriendly.cli.main import main

    with pytest.raises(SystemExit) as e:
        main(["model", *args])
    out = capsys.readouterr()
    return e.value.code, out.out, out.err


@pytest.mark.parametrize("cmd,args,field,side", NOT_FINITE)
def test_model_refuses_inputs_whose_results_are_not_finite(capsys, cmd, args, field, side):
    import json
    import re

    from tcpfriendly import models

    code, out, err = _model_cli(capsys, [cmd, *args, "--json"])
    assert code == 2 and out == "", (code, out, err)
    assert err.startswith(f"error: {field}: ") and err.count("\n") == 1, err
    if side is None:  # a model whose calls are simulations (models._NO_SEARCH): no bound searched
        assert "not finite with " in err and "the other parameters as given" in err, err
        return
    assert f"must be {side} " in err and "not finite" in err, err
    # the stated bound is inside the range: there every result the model defines is finite
    # (the same bound on every machine: the search is a fixed number of calls, not a time budget)
    bound = re.search(r"must be [<>]= (\S+) ", err).group(1)
    at = list(args)
    i = at.index(field)
    at[i + 1] = bound if field != "--windows" else f"{bound},{at[i + 1].split(',', 1)[1]}"
    code, out, err = _model_cli(capsys, [cmd, *at, "--json"])
    assert code == 0, err
    result = json.loads(out)
    assert all(k in result for k in models.DEFINED[cmd.replace("-", "_")]), sorted(result)


def test_model_commands_survive_extreme_values(capsys):
    """Every numeric option of every `tcpf model` command at 1e308, -1e308, 1e-308, nan, inf, 0:
    exit 0 with every result the model defines, or exit 2 with one line naming the option."""
    import json

    from tcpfriendly import models

    base = {
        "rate": (["--alpha", "0.31", "--keep", "0.875", "--p", "0.01", "--rtt", "0.1"], ["--alpha", "--keep", "--p", "--rtt", "--t0", "--b"]),
        "friendly-alpha": (["--beta", "1/16"], ["--beta", "--threshold", "--t0-rtt", "--b"]),
        "spectrum": (["--k", "-0.5", "--l", "1", "--beta", "1/16", "--wmax", "50"], ["--k", "--l", "--beta", "--wmax"]),
        "convergence": (["--alg", "simd", "--W", "110", "--W1", "10.2", "--W2", "33.2", "--eps", "10"], ["--W", "--W1", "--W2", "--eps", "--beta"]),
        "convergence-map": (["--W", "20"], ["--W", "--eps", "--beta", "--iiad-beta", "--step"]),
        "tradeoff": (["--alg", "iiad", "--W", "20", "--m", "5"], ["--W", "--m", "--beta", "--w-down"]),
        "cyrf": (["--f", "w", "--g", "0.5"], ["--x", "--x-min", "--x-max", "--tolerance"]),
        "fairness": (["--windows", "10,30", "--steps", "1,-1"], ["--windows", "--steps"]),
        "illinois": (["--da", "0.05"], ["--dm", "--da", "--alpha-max", "--alpha-min", "--beta-max", "--beta-min", "--eta1", "--eta2", "--eta3"]),
        "vegas": ([], ["--gamma", "--capacity", "--tp", "--sigma"]),
        "markov": (["--n", "4", "--congestion", "light", "--runs", "3", "--events", "50", "--warmup", "50"], ["--beta", "--rtt-min", "--rtt-max"]),
        "chiu-jain": (["--alg", "simd", "--W", "110", "--init", "10,30", "--rounds", "200"], ["--W", "--init", "--eps", "--rtt", "--jain-target"]),
    }
    wrong = []
    for cmd, (args, options) in base.items():
        for option in options:
            for value in ("1e308", "-1e308", "1e-308", "nan", "inf", "0"):
                a = list(args)
                if option in a:
                    i = a.index(option)
                    a[i + 1] = f"{value},{a[i + 1].split(',', 1)[1]}" if "," in a[i + 1] else value
                else:
                    a += [option, value]
                code, out, err = _model_cli(capsys, [cmd, *a, "--json"])
                if code == 0:
                    lost = [k for k in models.DEFINED[cmd.replace("-", "_")] if k not in json.loads(out)]
                    if lost:
                        wrong.append((cmd, option, value, "lost", lost))
                elif not (code == 2 and err.startswith("error: --") and err.count("\n") == 1):
                    wrong.append((cmd, option, value, code, err))
    assert not wrong, wrong

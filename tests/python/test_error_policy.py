"""Adversarial bad input found by the QA pass over `tcpf` and the Python API (error policy of
the developers' guide): each is exit 2 with one line naming the field (CLI) or a ScenarioError
naming it (API), quickly, with nothing half-written."""

import os
import subprocess
import sys
import time

import pytest

import tcpfriendly as tf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TCPF = [sys.executable, "-m", "tcpfriendly.cli"]


def tcpf(*args, cwd=ROOT):
    t0 = time.monotonic()
    r = subprocess.run(TCPF + [str(a) for a in args], capture_output=True, text=True, timeout=60,
                       cwd=cwd)
    return r, time.monotonic() - t0


def one_error_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


# ----- tcpf evaluate --------------------------------------------------------------------------
@pytest.mark.parametrize("only", [["s9"], ["jin"], ["s1", "nope"]])
def test_evaluate_refuses_an_unknown_experiment(only):
    # used to be ignored: `tcpf evaluate gaimd --quick --only s9` graded nothing and exited 0
    from tcpfriendly.evaluate.core import evaluate
    with pytest.raises(tf.ScenarioError) as e:
        evaluate("gaimd", quick=True, only=only)
    assert e.value.field == "only" and "no experiment" in str(e.value)
    assert "s1, s2, s3, s4, jin2001, sastry2005" in str(e.value)


def test_evaluate_refuses_a_huge_seed_count_before_listing_runs():
    # `tcpf evaluate gaimd --quick --seeds 100000000` used to build the job list until killed
    r, took = tcpf("evaluate", "gaimd", "--quick", "--seeds", "100000000")
    line = one_error_line(r)
    assert line.startswith("error: --seeds: ") and "over the limit of 100000" in line, line
    assert took < 10


# ----- output files ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    tf.run({"duration": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms"},
            "flows": [{"count": 1, "algorithm": "tcp"}]}).write(d)
    return d


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs mkfifo")
def test_a_report_never_replaces_a_fifo_or_device(run_dir, tmp_path):
    # `tcpf report DIR -o /dev/full` (as root) renamed the page over /dev/full, leaving a
    # regular file where the device was; a FIFO was replaced the same way
    from tcpfriendly import report
    from tcpfriendly.outfiles import OutputError, atomic_write
    fifo = tmp_path / "page.html"
    os.mkfifo(fifo)
    with pytest.raises(OutputError) as e:
        report.write(run_dir, fifo)
    assert e.value.field == "-o" and "not a regular file" in str(e.value)
    with pytest.raises(OutputError):
        atomic_write(str(fifo), lambda f: f.write(b"x"), force=True)
    assert os.path.exists(fifo) and not os.path.isfile(fifo)
    assert os.listdir(tmp_path) == ["page.html"]  # no temporary left behind
    assert report.write(run_dir, tmp_path / "ok.html") == str(tmp_path / "ok.html")


# ----- input files ----------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_plot_and_report_refuse_an_endless_result_before_reading_it():
    # `tcpf plot /dev/zero` read until MemoryError ("error: internal error: MemoryError", exit 1)
    r, took = tcpf("plot", "/dev/zero", "-o", os.devnull)
    assert "/dev/zero: not a run result (not a JSON object)" in one_error_line(r)
    assert took < 10


def test_a_huge_result_file_is_refused_by_its_size(tmp_path):
    from tcpfriendly.report.run import load
    from tcpfriendly.results import MAX_RESULT_BYTES
    big = tmp_path / "result.json"
    with open(big, "wb") as f:
        f.write(b'{"flows": [')
        f.truncate(MAX_RESULT_BYTES + 1)  # sparse: nothing is written or read
    t0 = time.monotonic()
    with pytest.raises(tf.ScenarioError) as e:
        load(str(tmp_path))
    assert time.monotonic() - t0 < 2
    assert e.value.field == "PATH" and "larger than 1024 MiB, the limit for a run result" in str(e.value)


def test_evaluate_refuses_an_out_that_is_a_file_or_another_commands_output(run_dir, tmp_path):
    # `tcpf evaluate gaimd --quick --out FILE` ran every simulation, then died on saving
    # ("error: FILE/runs: Not a directory", exit 134: aborted); an --out holding a `tcpf run`
    # was filled with the evaluation's files
    from tcpfriendly.evaluate.core import evaluate
    from tcpfriendly.outfiles import OutputError
    afile = tmp_path / "a.toml"
    afile.write_text("duration = 1\n")
    before = sorted(os.listdir(run_dir))
    for out, says in ((afile, "exists and is not a directory"),
                      (run_dir, "holds the output of `tcpf run`, not of `tcpf evaluate`")):
        t0 = time.monotonic()
        with pytest.raises(OutputError) as e:
            evaluate("gaimd", quick=True, out=str(out))
        assert time.monotonic() - t0 < 2 and e.value.field == "out" and says in str(e.value)
        assert "--force" not in str(e.value)  # tcpf evaluate has no --force
    assert sorted(os.listdir(run_dir)) == before and afile.read_text() == "duration = 1\n"


def test_reproduce_refuses_a_bad_out_and_names_the_seed_range(run_dir):
    # `tcpf reproduce jin2001 --quick --out RUN_DIR` ran into a `tcpf run` directory;
    # `--seeds 0` said "argument --seeds: invalid conv value: '0'"
    before = sorted(os.listdir(run_dir))
    r, took = tcpf("reproduce", "jin2001", "--quick", "--out", run_dir)
    assert "--out: " in one_error_line(r) and "holds the output of `tcpf run`" in r.stderr
    assert took < 10 and sorted(os.listdir(run_dir)) == before
    r, _ = tcpf("reproduce", "jin2001", "--seeds", "0")
    assert one_error_line(r) == "error: argument --seeds: must be a positive integer, got 0"


# ----- figure file names ----------------------------------------------------------------------
def test_sweep_plot_checks_its_out_name_before_reading_the_sweep(tmp_path):
    # `tcpf sweep plot DIR ... --out EXISTING_DIR` wrote EXISTING_DIR.png and printed
    # "wrote EXISTING_DIR" (exit 0); `--out x.txt` failed after the work with matplotlib's
    # "Format 'txt' is not supported" (no --out in the message)
    (tmp_path / "adir").mkdir()
    for out in (tmp_path / "adir", tmp_path / "x.txt", tmp_path / "noext"):
        r, _ = tcpf("sweep", "plot", tmp_path, "--x", "a", "--y", "b", "--out", out)
        assert one_error_line(r) == f"error: --out: the file name must end in .png, .svg, .pdf; got {out}"
    assert sorted(os.listdir(tmp_path)) == ["adir"]


def test_model_plot_refuses_a_directory_named_like_a_figure(tmp_path):
    # `tcpf model rate ... --plot DIR.png` (a directory) failed in savefig: exit 1, "Is a directory"
    from tcpfriendly.cli.model import _run
    (tmp_path / "f.png").mkdir()
    with pytest.raises(tf.ScenarioError) as e:
        _run("rate", dict(alpha=0.31, beta=0.125, p=0.01, rtt=0.1), False, str(tmp_path / "f.png"))
    assert e.value.field == "--plot" and "is a directory" in str(e.value)


# ----- tcpf ns2 compare -----------------------------------------------------------------------
def test_ns2_compare_bounds_its_seed_count(tmp_path):
    # `tcpf ns2 compare FILE --seeds 1000000000` listed the seeds until
    # "error: internal error: MemoryError" (exit 1, 11 s)
    scen = os.path.join(ROOT, "validation", "ns2", "droptail-025bdp.toml")
    r, took = tcpf("ns2", "compare", scen, "--seeds", "1000000000")
    assert one_error_line(r) == "error: --seeds: must be an integer in 1..1000; got 1000000000"
    assert took < 10


def test_a_scenario_is_not_an_ns2_bank(tmp_path):
    # `tcpf ns2 compare --bank --bank-file SCENARIO.toml` printed "0 of 0 scenarios pass",
    # exited 0 and wrote REPORT.md beside the scenario
    from tcpfriendly.ns2 import compare as cmp
    scen = tmp_path / "s.toml"
    scen.write_text('duration = 1\n[bottleneck]\nrate = "1Mbps"\ndelay = "10ms"\n')
    r, _ = tcpf("ns2", "compare", "--bank", "--bank-file", scen)
    assert "duration: unknown key in the ns-2 validation bank" in one_error_line(r)
    bank = tmp_path / "bank.toml"
    bank.write_text("[tolerances]\ngoodput = { rel = 0.1 }\n")  # a bank for one file: valid
    assert cmp.load_bank(str(bank)).scenarios == []
    r, _ = tcpf("ns2", "compare", "--bank", "--bank-file", bank)
    assert one_error_line(r) == f"error: --bank-file: {bank} lists no [[scenarios]] to compare"
    for text, field in (('seeds = "3"\n', "seeds"), ("scenarios = [1]\n", "scenarios[0]"),
                        ('[[scenarios]]\nfile = "x.toml"\nseeds = 0\n', "scenarios[0].seeds"),
                        ('[[scenarios]]\nfile = "x.toml"\nfle = 1\n', "scenarios[0].fle")):
        bank.write_text(text)
        with pytest.raises(tf.ScenarioError) as e:
            cmp.load_bank(str(bank))
        assert e.value.field == field, (text, str(e.value))
    assert sorted(os.listdir(tmp_path)) == ["bank.toml", "s.toml"]


# ----- models ---------------------------------------------------------------------------------
def test_a_model_parameter_nested_or_of_a_wrong_type_is_named():
    # `tcpf model chiu-jain --alg simd --n 2 --W 110 --init 10,nan` said "error: parameters
    # are not valid JSON: expected value at line 1 column 52"; models.call(..., alpha=b"1")
    # raised json's TypeError (CLI: "internal error", exit 1)
    from tcpfriendly import models
    with pytest.raises(models.ModelError) as e:
        models.call("chiu_jain", alg="simd", n=2, W=110, init=[10, float("nan")])
    assert e.value.field == "init[1]" and "must be a finite number, got nan" in str(e.value)
    with pytest.raises(models.ModelError) as e:
        models.call("rate", alpha=b"1", beta=0.1, p=0.01, rtt=0.1)
    assert e.value.field == "alpha" and "got bytes" in str(e.value)
    r, _ = tcpf("model", "chiu-jain", "--alg", "simd", "--n", "2", "--W", "110", "--init", "10,nan")
    assert one_error_line(r) == "error: --init[1]: must be a finite number, got nan"


# ----- the Python API with wrong types --------------------------------------------------------
BASE = {"duration": 1, "bottleneck": {"rate": "1Mbps", "delay": "10ms"},
        "flows": [{"count": 1, "algorithm": "tcp"}]}


def test_one_base_class_names_the_field_of_a_scenario_or_a_model():
    # ScenarioError and ModelError share tf.InputError (one definition of a field's error),
    # and a positive time states the range it refuses: a negative duration or tick used to be
    # told "must be a time in [0, 1e7] s", a range that admits the zero it then refused
    from tcpfriendly import models
    with pytest.raises(tf.InputError) as e:
        models.friendly_alpha(beta=2)
    assert type(e.value) is models.ModelError and not isinstance(e.value, tf.ScenarioError)
    assert (e.value.field, e.value.message) == ("beta", "must be in (0, 1); got 2")
    for d in (0, -1):
        with pytest.raises(tf.InputError) as e:
            tf.run(dict(BASE, duration=d))
        assert type(e.value) is tf.ScenarioError and e.value.field == "duration"
        assert e.value.message == f"must be a positive time in (0, 1e7] s (the simulated time); got {d}"
    r, _ = tcpf("model", "friendly-alpha", "--beta", "2")
    assert one_error_line(r).startswith("error: --beta: must be in (0, 1)")



@pytest.mark.parametrize("call, field", [
    # each raised a bare TypeError or AttributeError ("'list' object has no attribute 'items'")
    (lambda: tf.run([1]), "scenario"),
    (lambda: tf.run(None), "scenario"),
    (lambda: tf.run(b"duration = 1"), "scenario"),
    (lambda: tf.run(BASE, controllers=[1]), "controllers"),
    (lambda: tf.sweep.sweep(None), "spec"),
    (lambda: tf.sweep.sweep([BASE]), "spec"),
    (lambda: tf.sweep.sweep({"scenario": BASE, "seeds": 1}, out=5), "out"),
    (lambda: tf.sweep.sweep({"scenario": BASE, "seeds": 1}, out=b"/tmp/x"), "out"),
    (lambda: tf.evaluate.evaluate("gaimd", [("alpha", 1)], quick=True), "params"),
    (lambda: tf.evaluate.evaluate("gaimd", quick=True, out=5), "out"),
    (lambda: tf.evaluate.evaluate("gaimd", quick=True, thresholds=5), "thresholds"),
])
def test_a_wrong_type_in_the_api_is_a_scenario_error_naming_the_field(call, field):
    from tcpfriendly.errors import ScenarioTypeError
    with pytest.raises(ScenarioTypeError) as e:  # a ScenarioError, and still a TypeError
        call()
    assert e.value.field == field and str(e.value).startswith(f"{field}: ")
    assert isinstance(e.value, TypeError) and isinstance(e.value, tf.ScenarioError)


# ----- tcpf plot ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_with_series():
    return tf.run(BASE, timeseries=0.1)


def test_plot_refuses_a_bad_format_list_or_bin_before_making_the_directory(run_with_series, tmp_path):
    # `tcpf plot R --format gif -o D` left an empty D behind; `--format ,` printed "wrote"
    # (nothing) and exited 0; `--bin 1e300` drew with numpy's "overflow encountered" on stderr
    from tcpfriendly import plot
    out = tmp_path / "figs"
    for formats, says in ((["gif"], "must be png, svg or pdf, got 'gif'"),
                          ([], "give at least one of png, svg, pdf")):
        with pytest.raises(tf.ScenarioError) as e:
            plot.write(run_with_series, out, kinds=["goodput"], formats=formats)
        assert e.value.field == "formats" and says in str(e.value)
    with pytest.raises(tf.ScenarioError) as e:
        plot.write(run_with_series, out, kinds=["rate"], bin_s=1e300)
    assert e.value.field == "bin_s" and "at most the run's duration (1 s)" in str(e.value)
    assert not out.exists()


def test_evaluate_refuses_an_out_that_cannot_hold_its_cache_before_running(tmp_path):
    # with a file named `runs` in --out, `tcpf evaluate gaimd --quick --only s1 --out D` ran the
    # simulations, then failed on the first save: "error: D/runs: File exists", exit 134
    # (the process aborted at exit with engine threads still running)
    from tcpfriendly.evaluate.core import evaluate
    from tcpfriendly.outfiles import OutputError
    (tmp_path / "runs").write_text("")
    t0 = time.monotonic()
    with pytest.raises(OutputError) as e:
        evaluate("gaimd", quick=True, only=["s1"], out=str(tmp_path))
    assert time.monotonic() - t0 < 2 and e.value.field == "out"
    assert "cannot create the run cache" in str(e.value)


# ----- worker counts --------------------------------------------------------------------------
@pytest.mark.parametrize("call", [
    lambda: tf.sweep.sweep({"scenario": BASE, "seeds": 1}, workers=100000, executor="threads"),
    lambda: tf.evaluate.evaluate("gaimd", quick=True, only=["s1"], workers=100000),
    lambda: tf.reproduce.reproduce("jin2001", ["fig7-bernoulli"], quick=True, workers=100000),
])
def test_a_worker_count_is_bounded(call):
    # unbounded before: `tcpf sweep SPEC --processes --workers 100000` asked the process pool
    # for 100000 warm workers (one Python process each) before the first run
    from tcpfriendly.sweep.core import MAX_WORKERS
    t0 = time.monotonic()
    with pytest.raises(tf.ScenarioError) as e:
        call()
    assert time.monotonic() - t0 < 2 and e.value.field == "workers"
    assert str(e.value) == f"workers: must be at most {MAX_WORKERS} (simulations at once), got 100000"


# ----- tcpf report ----------------------------------------------------------------------------
@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("content, says", [
    (b"[1, 2]\n", "not a tcpf evaluate result (not a JSON object)"),   # AttributeError, exit 1
    ("/dev/zero", "not a tcpf evaluate result (not a JSON object)"),  # MemoryError, exit 1
    (b'{"algorithm": \n', "not valid JSON (Expecting value, line 2)"),
])
def test_report_refuses_an_evaluation_json_that_is_not_an_object(tmp_path, content, says):
    from tcpfriendly import report
    p = tmp_path / "evaluation-x.json"
    if content == "/dev/zero":
        os.symlink("/dev/zero", p)
    else:
        p.write_bytes(content)
    t0 = time.monotonic()
    with pytest.raises(tf.ScenarioError) as e:
        report.write(tmp_path, tmp_path / "r.html")
    assert time.monotonic() - t0 < 2 and e.value.field == "PATH"
    assert str(e.value) == f"PATH: {p}: {says}"
    assert not (tmp_path / "r.html").exists()


def test_a_sweep_record_that_is_not_an_object_is_named(tmp_path):
    # sweep.json holding [1] beside a valid table: `tcpf report D` and `tcpf sweep plot D ...`
    # failed with "internal error: AttributeError: 'list' object has no attribute 'get'" (exit
    # 1); a truncated sweep.json gave sweep plot "Expecting value: line 2 column 1" (no file)
    import shutil
    from tcpfriendly import report
    from tcpfriendly.sweep.plot import plot
    good = tmp_path / "good"
    tf.sweep.sweep({"scenario": BASE, "seeds": 1, "axes": {"duration": [1, 2]}}, out=good, quiet=True)
    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    for text, says in (("[1]\n", "not a sweep record (not a JSON object)"),
                       ('{"axes": [\n', "not valid JSON (Expecting value, line 2)")):
        (bad / "sweep.json").write_text(text)
        with pytest.raises(tf.ScenarioError) as e:
            report.write(bad, tmp_path / "r.html")
        assert str(e.value) == f"PATH: {bad / 'sweep.json'}: {says}"
        with pytest.raises(tf.ScenarioError) as e:
            plot(str(bad), x="duration", y="share", out=str(tmp_path / "p.png"))
        assert str(e.value) == f"DIR: {bad / 'sweep.json'}: {says}"
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "p.png").exists()


def test_evaluate_all_refuses_what_it_would_ignore():
    # `tcpf evaluate --all --params alpha=1` (and `tcpf evaluate gaimd --all`) ignored the
    # parameters (the name) and ran all of tsao2007's Table 4. Another algorithm beside --all
    # is one more row of the table (test_evaluate.py); one the table holds is refused.
    for args, said in ((["--all", "--params", "alpha=1"],
                        "evaluates tsao2007's schemes with their own parameters; --params applies "
                        "to an algorithm given beside them"),
                       (["gaimd", "--all"], "gaimd is a row of Table 4 already, with tsao2007's "
                                            "parameters; grade other parameters of it without --all")):
        r, took = tcpf("evaluate", *args)
        assert one_error_line(r) == f"error: --all: {said}"
        assert took < 10

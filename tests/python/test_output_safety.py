"""Safe output files (issue 17 item 7): `tcpf run --out` and `tcpf sweep --out` write each
file to a temporary name and rename it, never follow a symbolic link, refuse a directory
holding another output unless --force, and on an I/O error exit 2 naming the file and leaving
no truncated file (tcpfriendly.outfiles)."""

import json
import os
import resource
import signal
import subprocess

import pytest

import tcpfriendly as tf

from conftest import REPO, _tcpf_command
from test_cli import assert_one_line_error
from test_sweep import SPEC, TINY

MANIFEST = ".tcpf-out.json"  # what an output directory holds (tcpfriendly.outfiles.MANIFEST)


def _temporaries(directory):
    return [n for n in os.listdir(directory) if n.endswith(".tmp")]


# ----- tcpf run --out -----------------------------------------------------------------------------
def test_symlink_named_result_json_is_not_followed(tcpf, small_path, tmp_path):
    out = tmp_path / "o"
    assert tcpf("run", small_path, "--out", out).returncode == 0
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    (out / "result.json").unlink()
    (out / "result.json").symlink_to(victim)
    p = tcpf("run", small_path, "--out", out)
    assert_one_line_error(p, 2, "--out:", str(out / "result.json"), "symbolic link")
    assert victim.read_text() == "keep me\n" and (out / "result.json").is_symlink()
    # --force replaces the link itself; its target is never written
    p = tcpf("run", small_path, "--out", out, "--force")
    assert p.returncode == 0, p.stderr
    assert victim.read_text() == "keep me\n"
    assert not (out / "result.json").is_symlink()
    assert json.loads((out / "result.json").read_text())["flows"]


def test_directory_with_other_files_is_refused_unless_force(tcpf, small_path, tmp_path):
    foreign = tmp_path / "thesis"
    foreign.mkdir()
    (foreign / "flows.csv").write_text("my own data\n")
    p = tcpf("run", small_path, "--out", foreign)
    assert_one_line_error(p, 2, "--out:", str(foreign), "--force")
    assert sorted(os.listdir(foreign)) == ["flows.csv"]
    assert (foreign / "flows.csv").read_text() == "my own data\n"
    assert_one_line_error(tcpf("run", small_path, "--out", "/"), 2, "--out: /", "--force")
    p = tcpf("run", small_path, "--out", foreign, "--force")
    assert p.returncode == 0, p.stderr
    assert (foreign / "flows.csv").read_text() != "my own data\n"
    assert (foreign / MANIFEST).exists()


def test_same_run_rewrites_its_directory_another_run_needs_force(tcpf, small_path, tmp_path):
    out = tmp_path / "o"
    assert tcpf("run", small_path, "--out", out, "--timeseries", "1").returncode == 0
    first = (out / "result.json").read_bytes()
    # the same scenario and seed again (without time series): allowed, and the stale
    # time-series files of the earlier run are removed
    p = tcpf("run", small_path, "--out", out)
    assert p.returncode == 0, p.stderr
    assert sorted(os.listdir(out)) == [MANIFEST, "flows.csv", "links.csv", "result.json"]
    assert (out / "result.json").read_bytes() != first  # (no time series in it now)
    # another seed is another run: refused, then replaced with --force
    p = tcpf("run", small_path, "--out", out, "--seed", "8")
    assert_one_line_error(p, 2, "--out:", str(out), "different `tcpf run`", "--force")
    before = (out / "result.json").read_bytes()
    assert json.loads(before)["scenario"]["seed"] == 7
    assert tcpf("run", small_path, "--out", out, "--seed", "8", "--force").returncode == 0
    assert json.loads((out / "result.json").read_text())["scenario"]["seed"] == 8


def test_library_write_follows_the_same_rules(small_path, tmp_path):
    from tcpfriendly.outfiles import OutputError

    result = tf.run(small_path)
    out = tmp_path / "lib"
    paths = result.write(out)
    assert [os.path.basename(p) for p in paths] == ["result.json", "flows.csv", "links.csv"]
    assert result.write(out) == paths  # the same run: rewritten
    other = tf.run(small_path, seed=99)
    with pytest.raises(OutputError, match=r"^directory: .* different `tcpf run`") as err:
        other.write(out)
    assert err.value.field == "directory"
    other.write(out, force=True)
    assert json.loads((out / "result.json").read_text())["scenario"]["seed"] == 99


def test_atomic_write_leaves_the_old_file_when_writing_fails(tmp_path):
    from tcpfriendly.outfiles import MANIFEST as manifest, OutputError, atomic_write

    assert manifest == MANIFEST
    path = tmp_path / "x.json"
    path.write_text("old\n")

    def boom(f):
        f.write(b"half")
        raise RuntimeError("writer failed")

    with pytest.raises(RuntimeError):
        atomic_write(str(path), boom)
    assert path.read_text() == "old\n" and _temporaries(tmp_path) == []

    def io_error(f):
        f.write(b"half")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError, match=r"^out: cannot write .*x.json: No space left on device$"):
        atomic_write(str(path), io_error)
    assert path.read_text() == "old\n" and _temporaries(tmp_path) == []


def _limited_fsize(limit):
    def setup():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return setup


def _run_limited(args, limit, cwd):
    env = dict(os.environ)
    env.pop("TCPF_TRACEBACK", None)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run(_tcpf_command() + [str(a) for a in args], capture_output=True, text=True,
                          timeout=120, env=env, cwd=str(cwd), preexec_fn=_limited_fsize(limit))


def test_full_disk_names_the_file_and_leaves_no_truncated_file(tcpf, small_path, tmp_path):
    # a fresh directory: result.json (a few kB) cannot be written under a 2000-byte limit
    out = tmp_path / "new"
    p = _run_limited(["run", small_path, "--out", out], 2000, REPO)
    assert_one_line_error(p, 2, "--out: cannot write", str(out / "result.json"), "File too large")
    assert os.listdir(out) == []  # no truncated result.json, no temporary
    # the same run again over a complete earlier output: the earlier files stay whole
    assert tcpf("run", small_path, "--out", out).returncode == 0
    before = {n: (out / n).read_bytes() for n in os.listdir(out)}
    p = _run_limited(["run", small_path, "--out", out], 2000, REPO)
    assert p.returncode == 2 and "result.json" in p.stderr
    assert {n: (out / n).read_bytes() for n in os.listdir(out)} == before


# ----- tcpf sweep --out ---------------------------------------------------------------------------
@pytest.fixture
def sweep_dir(tmp_path):
    (tmp_path / "tiny.toml").write_text(TINY)
    (tmp_path / "spec.toml").write_text(SPEC.replace("seeds = 3", "seeds = 1"))
    # another study on the same base scenario: a fixed override the first does not have
    (tmp_path / "other.toml").write_text(
        SPEC.replace("seeds = 3", "seeds = 1\n[set]\n\"flows[0].count\" = 1"))
    return tmp_path


def test_two_specs_on_one_out_do_not_replace_each_others_table(tcpf, sweep_dir):
    out = sweep_dir / "o"
    p = tcpf("sweep", sweep_dir / "spec.toml", "--out", out)
    assert p.returncode == 0, p.stderr
    table = (out / "results.csv").read_bytes()
    for extra in ([], ["--dry-run"]):
        p = tcpf("sweep", sweep_dir / "other.toml", "--out", out, *extra)
        assert_one_line_error(p, 2, "--out:", str(out), "--force")
        assert (out / "results.csv").read_bytes() == table
    # a spec that would drop runs of the recorded table (fewer seeds) is refused too
    (sweep_dir / "fewer.toml").write_text(SPEC.replace("seeds = 3", "seeds = [3]\nbase_seed = 3")
                                          .replace('"bottleneck.rate" = ["1.5Mbps", "5Mbps"]',
                                                   '"bottleneck.rate" = ["1.5Mbps"]'))
    p = tcpf("sweep", sweep_dir / "fewer.toml", "--out", out)
    assert_one_line_error(p, 2, "--out:", "would replace that table", "--force")
    # growing the same study (more seeds) reuses the stored runs
    (sweep_dir / "more.toml").write_text(SPEC.replace("seeds = 3", "seeds = 2"))
    p = tcpf("sweep", sweep_dir / "more.toml", "--out", out)
    assert p.returncode == 0 and "6 already done, 6 to run" in p.stderr, p.stderr
    # --force replaces the table with the other study's
    p = tcpf("sweep", sweep_dir / "other.toml", "--out", out, "--force")
    assert p.returncode == 0, p.stderr
    spec = json.loads((out / "sweep.json").read_text())["spec"]
    assert spec["set"] == {"flows[0].count": 1}


def test_sweep_refuses_a_foreign_directory(tcpf, sweep_dir):
    foreign = sweep_dir / "home"
    foreign.mkdir()
    (foreign / "results.csv").write_text("someone else's\n")
    p = tcpf("sweep", sweep_dir / "spec.toml", "--out", foreign)
    assert_one_line_error(p, 2, "--out:", str(foreign), "--force")
    assert os.listdir(foreign) == ["results.csv"]


def test_sweep_on_a_full_disk_names_the_file(sweep_dir):
    out = sweep_dir / "o"
    p = _run_limited(["sweep", sweep_dir / "spec.toml", "--out", out], 600, sweep_dir)
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert lines[-1].startswith("error: --out: cannot write ") and "File too large" in lines[-1]
    assert "Traceback" not in p.stderr
    for root, _dirs, files in os.walk(out):
        for name in files:  # no truncated file, no temporary left
            assert not name.endswith(".tmp"), name
            if name != MANIFEST:
                assert os.path.getsize(os.path.join(root, name)) <= 600


# ----- the other commands that write files ---------------------------------------------------------
# `tcpf ns2 export --out`, `tcpf model ... --plot`, `tcpf reproduce --out` and `tcpf evaluate
# --out` (and its run cache) write through tcpfriendly.outfiles too: on an I/O error exit 2
# naming the file, and no truncated file or temporary left.
OTHER_WRITERS = {
    "ns2 export": (["ns2", "export", "examples/jin2001-red-32.toml", "--out", "{d}/x.tcl"],
                   "--out", "x.tcl"),
    "model --plot": (["model", "spectrum", "--k", "0", "--l", "1", "--beta", "0.5", "--wmax", "20",
                      "--plot", "{d}/s.png"], "--plot", "s.png"),
    "reproduce": (["reproduce", "jin2001", "--only", "table1-spectrum", "--out", "{d}/r"],
                  "--out", "r/jin2001/jin2001-table1-spectrum.png"),
    "evaluate": (["evaluate", "gaimd", "--quick", "--only", "s1", "--out", "{d}/ev"],
                 "--out", "ev/evaluation-gaimd.json"),
}


@pytest.mark.parametrize("case", list(OTHER_WRITERS))
def test_other_commands_on_a_full_disk_name_the_file(tmp_path, case):
    args, field, name = OTHER_WRITERS[case]
    limit = 2000  # each named file is larger; an evaluation's run-cache files are smaller
    p = _run_limited([a.format(d=tmp_path) for a in args], limit, REPO)
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert "Traceback" not in p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last == f"error: {field}: cannot write {tmp_path / name}: File too large", last
    for root, _dirs, files in os.walk(tmp_path):
        for f in files:  # every file written is whole: none stopped at the limit, no temporary
            assert not f.endswith(".tmp"), f
            assert os.path.getsize(os.path.join(root, f)) < limit, f


def test_reproduce_does_not_write_through_a_symlink(tcpf, tmp_path):
    out = tmp_path / "r"
    args = ("reproduce", "jin2001", "--only", "table1-spectrum", "--out", out)
    assert tcpf(*args).returncode == 0
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    md = out / "jin2001" / "REPRODUCTION.md"
    md.unlink()
    md.symlink_to(victim)
    p = tcpf(*args)
    assert p.returncode == 2, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith(f"error: --out: {md} is a symbolic link"), last
    assert victim.read_text() == "keep me\n" and md.is_symlink()


def test_bank_report_path_is_checked_before_any_run(tcpf, tmp_path):
    # the report is written after the bank's simulations: a name that cannot be written is
    # refused first (ns-2 is not needed to get there)
    missing = tmp_path / "no-such-dir" / "REPORT.md"
    p = tcpf("ns2", "compare", "--bank", "--only", "bernoulli-1pct", "--report", missing)
    assert_one_line_error(p, 2, "--report: directory", str(missing.parent), "does not exist")
    p = tcpf("ns2", "compare", "--bank", "--only", "bernoulli-1pct", "--report", tmp_path)
    assert_one_line_error(p, 2, f"--report: {tmp_path} is a directory")

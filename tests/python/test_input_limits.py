"""Bad input that used to escape the error policy (issue 17 item 8): each is exit 2 with one
line naming what is wrong, quickly, with no traceback."""

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
    r = subprocess.run(TCPF + list(args), capture_output=True, text=True, timeout=60, cwd=cwd)
    return r, time.monotonic() - t0


def one_error_line(r):
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert "Traceback" not in r.stderr
    return lines[0]


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_an_endless_scenario_file_is_refused_before_it_is_read():
    r, took = tcpf("run", "/dev/zero")
    assert "larger than 16 MiB" in one_error_line(r) and "/dev/zero" in r.stderr
    assert took < 5


def test_deeply_nested_toml_is_a_scenario_error(tmp_path):
    p = tmp_path / "deep.toml"
    p.write_text("duration = 1\nx = " + "[" * 5000 + "]" * 5000 + "\n")
    r, _ = tcpf("run", str(p))
    assert "nested too deeply" in one_error_line(r)


def test_deeply_nested_dict_names_the_field():
    deep = {}
    node = deep
    for _ in range(100):
        node["a"] = {}
        node = node["a"]
    with pytest.raises(tf.ScenarioError) as e:
        tf.Scenario({"duration": 1, "x": deep})
    assert "nested more than 64 levels" in str(e.value) and e.value.field.startswith("x.a")


def test_a_nan_model_parameter_names_the_flag():
    r, _ = tcpf("model", "friendly-alpha", "--keep", "nan")
    assert one_error_line(r) == "error: --keep: must be a finite number, got nan"


def test_a_controller_module_that_exits_is_bad_input(tmp_path):
    mod = tmp_path / "exits.py"
    mod.write_text("import sys\nsys.exit(3)\n")
    r, _ = tcpf("run", "examples/quickstart.toml", "--controller", f"mine={mod}:Mine")
    assert "SystemExit: 3" in one_error_line(r)
    r, _ = tcpf("evaluate", "mine", "--quick", "--controller", f"mine={mod}:Mine")
    assert "SystemExit: 3" in one_error_line(r)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize("args, what", [
    (["sweep", "/dev/zero", "--out", "{tmp}/o"], "sweep file"),
    (["evaluate", "gaimd", "--quick", "--thresholds", "/dev/zero"], "thresholds file"),
    (["ns2", "compare", "--bank", "--bank-file", "/dev/zero"], "ns-2 validation bank"),
])
def test_every_toml_input_refuses_an_endless_file_before_reading_it(tmp_path, args, what):
    # one reader (scenario.read_toml_file) for scenarios, sweeps, thresholds, banks and the
    # experiments home: each used to read /dev/zero until memory ran out (sweep, thresholds)
    r, took = tcpf(*[a.replace("{tmp}", str(tmp_path)) for a in args])
    line = one_error_line(r)
    assert f"cannot read {what} /dev/zero: larger than 16 MiB" in line, line
    assert took < 10


def test_a_malformed_experiment_sweep_names_its_file(tmp_path):
    import shutil
    home = tmp_path / "home"
    shutil.copytree(os.path.join(ROOT, "experiments", "yang2000"), home / "yang2000")
    sweep = home / "yang2000" / "fig21-smoothness" / "sweep.toml"
    good = sweep.read_text()
    sweep.write_text(good + "\n[[[bad\n")
    env = dict(os.environ, TCPF_EXPERIMENTS=str(home))
    r = subprocess.run(TCPF + ["reproduce", "yang2000", "--only", "fig21-smoothness", "--quick",
                               "--out", str(tmp_path / "out")], capture_output=True, text=True,
                       timeout=60, cwd=ROOT, env=env)
    line = one_error_line(r)
    assert f"malformed TOML in {sweep}" in line, line
    sweep.write_text(good)
    for name in ("experiment.toml", "scenario.toml"):
        p = home / "yang2000" / "fig21-smoothness" / name
        keep = p.read_bytes()
        p.write_bytes(b"\xff\xfe not utf-8")
        r = subprocess.run(TCPF + ["reproduce", "yang2000", "--only", "fig21-smoothness", "--quick",
                                   "--out", str(tmp_path / "out")], capture_output=True, text=True,
                           timeout=60, cwd=ROOT, env=env)
        assert f"malformed TOML in {p}: not UTF-8" in one_error_line(r)
        p.write_bytes(keep)

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

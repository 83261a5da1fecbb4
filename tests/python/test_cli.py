"""The `tcpf` command: exit codes, one-line errors, JSON determinism, --out, algorithms."""

import csv
import json

import pytest

from conftest import FLOW_FIELDS, LINK_FIELDS, SMALL_TOML


def assert_one_line_error(proc, code, *fragments):
    """Exit `code`, nothing on stdout, exactly one `error: ...` line on stderr naming the field."""
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: "), lines[0]
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    assert "Traceback" not in proc.stderr and "panicked" not in proc.stderr
    return lines[0]


# ----- bad input: exit 2, one line ------------------------------------------------------------
BAD_SCENARIOS = {
    "unknown algorithm": (SMALL_TOML.replace('algorithm = "gaimd"', 'algorithm = "no-such-cc"'),
                          ["algorithm", "no-such-cc"]),
    "beta out of range": (SMALL_TOML.replace("keep = 0.875", "beta = 1.5"),
                          ["flows[1]", "beta"]),
    "keep out of range": (SMALL_TOML.replace("keep = 0.875", "keep = 1.5"),
                          ["flows[1]", "keep"]),
    "negative rate": (SMALL_TOML.replace('rate = "5Mbps"', 'rate = "-5Mbps"'),
                      ["bottleneck", "rate"]),
    "missing bottleneck rate": (SMALL_TOML.replace('rate = "5Mbps"\n', ""),
                                ["bottleneck", "rate"]),
    "UDP packet size out of range": (
        SMALL_TOML + '\n[[flows]]\nalgorithm = "pareto"\nrate = "500kbps"\npacket_size = 20\n',
        ["flows[2].packet_size", "[40, 65535]"]),
    "packet size on a window flow": (SMALL_TOML + "packet_size = 210\n",  # into flows[1], gaimd
                                     ["flows[1].packet_size", "UDP sources"]),
    "malformed TOML": (SMALL_TOML.replace("duration = 10", "duration = [", 1),
                       ["malformed TOML in", "s.toml", "line "]),
}


@pytest.mark.parametrize("case", sorted(BAD_SCENARIOS))
def test_bad_scenario_exits_2_with_one_line(tcpf, write_toml, case):
    text, fragments = BAD_SCENARIOS[case]
    path = write_toml(text)
    for extra in ([], ["--json"]):
        assert_one_line_error(tcpf("run", path, *extra), 2, *fragments)


def test_missing_file_exits_2(tcpf, tmp_path):
    missing = tmp_path / "nope.toml"
    assert_one_line_error(tcpf("run", missing), 2, "nope.toml", "No such file")


def test_usage_errors_are_one_line_too(tcpf, small_path):
    assert_one_line_error(tcpf("run", small_path, "--seed", "abc"), 2, "--seed")
    assert_one_line_error(tcpf("run"), 2, "FILE")
    assert_one_line_error(tcpf("run", small_path, "--seed", "-1"), 2, "--seed")
    assert_one_line_error(tcpf("run", small_path, "--timeseries", "0"), 2, "--timeseries")
    assert_one_line_error(tcpf("no-such-command"), 2, "no-such-command")


# ----- successful runs ------------------------------------------------------------------------
def test_summary_names_groups_and_links(tcpf, small_path):
    proc = tcpf("run", small_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""
    out = proc.stdout
    assert "tcp" in out and "gaimd" in out and "bottleneck" in out
    # the canonical beta is printed, not the kept fraction
    assert "beta=0.125" in out


def test_a_rate_based_flow_on_an_ecn_path_is_warned_of(tcpf, write_toml):
    # Only TCP flows are ECN-capable: a TFRC group on a RED + ECN bottleneck has its packets
    # dropped where TCP's are marked, and the run says so on stderr (and in the JSON)
    path = write_toml(SMALL_TOML.replace('queue = "red"', 'queue = "red"\necn = true')
                      .replace('algorithm = "gaimd"', 'algorithm = "tfrc"')
                      .replace("params = { alpha = 0.31, keep = 0.875 }\n", ""))
    proc = tcpf("run", path, "--json")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ("warning: flows[1]: 'tfrc' is not ECN-capable (only TCP flows are): the "
                           "ECN queue on its path drops its packets where it marks TCP's\n")
    assert json.loads(proc.stdout)["warnings"] == [proc.stderr[len("warning: "):-1]]
    assert tcpf("run", write_toml(SMALL_TOML, "plain.toml")).stderr == ""


def test_json_is_deterministic_and_seed_matters(tcpf, small_path):
    first = tcpf("run", small_path, "--json")
    second = tcpf("run", small_path, "--json")
    assert first.returncode == 0 and second.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    other = tcpf("run", small_path, "--json", "--seed", "8")
    assert other.returncode == 0, other.stderr
    assert other.stdout != first.stdout

    data = json.loads(first.stdout)
    assert data["version"]
    assert len(data["flows"]) == 4
    for flow in data["flows"]:
        assert [k for k in FLOW_FIELDS if k not in flow] == []
    assert [l["name"] for l in data["links"]].count("bottleneck") == 1
    for link in data["links"]:
        assert [k for k in LINK_FIELDS if k not in link] == []
    # the scenario comes back with every default filled in
    for key in ("duration", "seed", "packet_size", "max_window", "measure", "bottleneck", "tcp", "flows"):
        assert key in data["scenario"], key
    assert data["scenario"]["seed"] == 7
    gaimd = [f for f in data["flows"] if f["algorithm"] == "gaimd"]
    assert len(gaimd) == 2
    assert gaimd[0]["params"]["beta"] == pytest.approx(0.125)
    assert "keep" not in gaimd[0]["params"]


def test_out_dir_writes_files(tcpf, small_path, tmp_path):
    out = tmp_path / "results" / "run1"
    proc = tcpf("run", small_path, "--out", out, "--timeseries", "1")
    assert proc.returncode == 0, proc.stderr
    names = sorted(p.name for p in out.iterdir())
    assert names == [".tcpf-out.json", "flows.csv", "links.csv", "result.json",
                     "timeseries_flows.csv", "timeseries_links.csv"]
    result = json.loads((out / "result.json").read_text())
    with open(out / "flows.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(result["flows"]) == 4
    assert [k for k in FLOW_FIELDS if k not in rows[0]] == []
    assert json.loads(rows[-1]["params"])["beta"] == pytest.approx(0.125)
    with open(out / "links.csv", newline="") as f:
        links = list(csv.DictReader(f))
    assert "bottleneck" in [l["name"] for l in links]
    with open(out / "timeseries_flows.csv", newline="") as f:
        header = next(csv.reader(f))
    assert {"time", "flow", "cwnd", "rate_bps", "srtt_s"} <= set(header)


def test_out_json_matches_stdout(tcpf, small_path, tmp_path):
    out = tmp_path / "o"
    proc = tcpf("run", small_path, "--json", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert (out / "result.json").read_text() == proc.stdout
    assert sorted(p.name for p in out.iterdir()) == [".tcpf-out.json", "flows.csv", "links.csv",
                                                     "result.json"]


def test_out_dir_untouched_when_run_fails(tcpf, write_toml, tmp_path):
    bad = write_toml(SMALL_TOML.replace('algorithm = "gaimd"', 'algorithm = "no-such-cc"'))
    out = tmp_path / "should-not-exist"
    assert_one_line_error(tcpf("run", bad, "--out", out), 2, "algorithm")
    assert not out.exists()
    existing = tmp_path / "existing"
    existing.mkdir()
    assert_one_line_error(tcpf("run", bad, "--out", existing), 2)
    assert list(existing.iterdir()) == []


# ----- algorithms -----------------------------------------------------------------------------
def test_algorithms_lists_tcp_and_gaimd(tcpf):
    proc = tcpf("algorithms")
    assert proc.returncode == 0, proc.stderr
    names = [line.split()[0] for line in proc.stdout.splitlines() if line and not line[0].isspace()]
    assert "tcp" in names and "gaimd" in names


def test_algorithm_detail_and_unknown(tcpf):
    proc = tcpf("algorithms", "gaimd")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("gaimd")
    assert "alpha" in proc.stdout and "beta" in proc.stdout
    assert_one_line_error(tcpf("algorithms", "no-such-cc"), 2, "no-such-cc")
    registry = json.loads(tcpf("algorithms", "--json").stdout)
    assert {"tcp", "gaimd"} <= {a["name"] for a in registry}


def test_udp_sources_list_the_flow_group_keys_that_set_them(tcpf, write_toml):
    """A UDP source has no params table: `tcpf algorithms pareto` lists the group's keys with
    the defaults the parser fills, and a scenario that gives them as params is told where."""
    detail = tcpf("algorithms", "pareto").stdout
    for line in ("    on = 1 s", "    off = 2 s", "    shape = 1.5", "    rate = - b/s"):
        assert line in detail, detail
    assert "params: none; keys of the flow group: rate, on, off, phase, steps, repeat, packet_size" in tcpf("algorithms").stdout
    keys = next(a for a in json.loads(tcpf("algorithms", "--json").stdout) if a["name"] == "cbr")["keys"]
    assert [k["name"] for k in keys] == ["rate", "on", "off", "phase", "steps", "repeat", "packet_size"]
    bad = write_toml(SMALL_TOML + '\n[[flows]]\nalgorithm = "pareto"\nparams = { rate = "1Mbps" }\n')
    assert_one_line_error(tcpf("run", bad), 2, "flows[2].params", "give its rate, on, off, shape, packet_size as keys of the flow group")


# ----- help -----------------------------------------------------------------------------------
@pytest.mark.parametrize("args", [["--help"], ["run", "--help"], ["algorithms", "--help"], []])
def test_help_teaches_with_examples(tcpf, args):
    proc = tcpf(*args)
    assert proc.returncode == 0, proc.stderr
    assert "Usage:" in proc.stdout
    assert "Example" in proc.stdout and "tcpf " in proc.stdout


def test_root_help_does_not_limit_the_simulator_to_a_dumbbell(tcpf):
    text = " ".join(tcpf("--help").stdout.split())
    assert "dumbbell network" not in text and "any topology" in text and "[[links]]" in text
    for command in ("run", "evaluate", "reproduce", "report"):
        assert f"  {command} " in tcpf("--help").stdout  # listed among the commands


def test_ns2_export_is_wired(tcpf, small_path):
    assert tcpf("ns2", "--help").returncode == 0
    proc = tcpf("ns2", "export", small_path, "--seed", "3")
    assert proc.returncode == 0, proc.stderr
    assert "Agent/TCP/Sack1" in proc.stdout and "decrease_num_ 0.875" in proc.stdout


# ----- tcpf evaluate --------------------------------------------------------------------------
def test_evaluate_help_teaches_with_examples(tcpf):
    proc = tcpf("evaluate", "--help")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("usage: tcpf evaluate")
    for option in ("--params", "--controller", "--quick", "--seeds", "--json", "--out", "--all"):
        assert option in proc.stdout
    assert "examples:" in proc.stdout and "tcpf evaluate gaimd --params" in proc.stdout
    assert "evaluate" in tcpf("--help").stdout  # listed among the commands


@pytest.mark.parametrize("args, fragments", [
    (["nosuch"], ["algorithm", "unknown algorithm 'nosuch'"]),
    (["gaimd", "--params", "beta"], ["--params", "KEY=VALUE", "'beta'"]),
    (["gaimd", "--params", "beta=2", "--quick"], ["params.beta", "got 2"]),
    (["gaimd", "--seeds", "0"], ["--seeds"]),
    (["gaimd", "--bogus"], ["unrecognized arguments: --bogus"]),
    ([], ["algorithm", "--all"]),
])
def test_evaluate_bad_input_exits_2_with_one_line(tcpf, args, fragments):
    """Through the CLI error policy: exit 2, one `error: ...` line naming it, before any run."""
    assert_one_line_error(tcpf("evaluate", *args), 2, *fragments)


def test_python_m_evaluate_still_works():
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "tcpfriendly.evaluate", "nosuch"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "unknown algorithm 'nosuch'" in proc.stderr


# ----- start-up: heavy libraries load on first use ---------------------------------------------
HEAVY = ("pandas", "numpy", "pyarrow", "matplotlib", "dask", "distributed")


@pytest.mark.parametrize("argv", [["--version"], ["sweep", "--help"], ["run", "--help"]])
def test_start_up_imports_no_heavy_library(argv):
    """`tcpf --version`, `tcpf sweep --help` (and a sweep's planning) import neither pandas,
    numpy, pyarrow, matplotlib nor Dask: the CLI starts in well under a second (issue 15)."""
    import subprocess
    import sys

    code = ("import sys\n"
            f"sys.argv = ['tcpf'] + {argv!r}\n"
            "from tcpfriendly.cli import main\n"
            "try:\n    main()\nexcept SystemExit as e:\n    assert not e.code, e.code\n"
            "import tcpfriendly.sweep, tcpfriendly.metrics\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1] == "[]", proc.stdout

"""`tcpf report` (issue 16 item 2) and notebook display (item 4).

Each report is checked statically (one file, no URL, no script, unique ids) and in a real
headless browser: Debian's `chromium` renders it, a screenshot is taken (kept under the test's
temporary directory) and checked to be non-blank, and a probe copy of the page reports every
figure's bounding box and any script error. scripts/setup.sh installs chromium when it is
missing; without it these browser checks skip, except in CI (TCPF_REQUIRE_CHROMIUM=1), where
they fail.
"""

import html as htmllib
import json
import os
import re
import shutil
import subprocess
import time

import pandas as pd
import pytest

import tcpfriendly
from tcpfriendly import report

from conftest import REPO, SMALL_TOML


def _chromium():
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROME = _chromium()
REQUIRE_CHROME = os.environ.get("TCPF_REQUIRE_CHROMIUM") == "1"
SKIP_REASON = ("chromium is not installed and could not be (scripts/setup.sh installs Debian's chromium "
               "when apt-get is usable as root); the browser checks of tcpf report are skipped")

PROBE_HEAD = ("<script>window.__errors=[];window.addEventListener('error',"
              "function(e){window.__errors.push(String(e.message))});</script>")
PROBE_TAIL = """<script>
(function(){var out={figures:[],errors:window.__errors,
  verdicts:!!document.querySelector('table.verdicts'),claims:document.querySelectorAll('table.claims').length,
  tables:document.querySelectorAll('table').length};
 document.querySelectorAll('figure.fig svg').forEach(function(s){var r=s.getBoundingClientRect();
   out.figures.push([r.width,r.height]);});
 var p=document.createElement('pre');p.id='tcpf-probe';p.textContent=JSON.stringify(out);
 document.body.appendChild(p);})();
</script>"""


def _browser(cmd_args, timeout=120):
    return subprocess.run([CHROME, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                           "--no-first-run", "--disable-extensions", "--enable-logging=stderr", "--v=0",
                           *cmd_args], capture_output=True, text=True, timeout=timeout)


def check_static(text):
    """Self-contained: no URL anywhere, nothing fetched, no script, unique ids."""
    assert text.startswith("<!DOCTYPE html>")
    assert not re.search(r"https?:|ftp:|file:|//[a-z]", text, re.I), re.search(r".{40}(https?:|file:).{40}", text)
    assert not re.search(r"<(script|link|iframe|img|object|embed)\b", text, re.I)
    assert not re.search(r"\b(src|srcset|xlink:href|href)\s*=\s*[\"'](?!#)", text, re.I)
    assert not re.search(r"url\((?!#)", text)
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids)), "duplicate ids"


def check_in_browser(page, tmp_path, n_figures, verdicts=False, claims=0):
    if CHROME is None:
        if REQUIRE_CHROME:
            pytest.fail("TCPF_REQUIRE_CHROMIUM=1 but chromium is not installed")
        pytest.skip(SKIP_REASON)
    shot = tmp_path / (os.path.basename(page) + ".png")
    r = _browser([f"--screenshot={shot}", "--window-size=1280,2400", f"file://{os.path.abspath(page)}"])
    assert shot.exists(), r.stderr[-2000:]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE(" in line]
    assert not console, console
    import matplotlib.image as mpimg

    img = mpimg.imread(shot)[..., :3]
    gray = img.mean(axis=2)
    assert (gray < 0.85).mean() > 0.02, "the screenshot is (almost) blank"
    assert len({tuple(px) for px in (img[::7, ::7] * 255).astype(int).reshape(-1, 3)}) > 20

    text = open(page, encoding="utf-8").read()
    probe = tmp_path / (os.path.basename(page) + ".probe.html")
    probe.write_text(text.replace("<head>", "<head>" + PROBE_HEAD, 1).replace("</body>", PROBE_TAIL + "</body>", 1),
                     encoding="utf-8")
    r = _browser(["--dump-dom", "--window-size=1280,2400", f"file://{probe}"])
    m = re.search(r'<pre id="tcpf-probe">(.*?)</pre>', r.stdout, re.S)
    assert m, r.stderr[-2000:]
    out = json.loads(htmllib.unescape(m.group(1)))
    assert out["errors"] == []
    assert len(out["figures"]) == n_figures
    for w, h in out["figures"]:
        assert w > 200 and h > 100, out["figures"]
    assert out["verdicts"] is verdicts
    assert out["claims"] == claims, "one paper-vs-ours table per reproduced experiment"
    assert out["tables"] >= 1
    return out


def _pre_after(text, heading):
    """The first <pre> after a heading, unescaped."""
    i = text.index(heading)
    m = re.search(r"<pre>(.*?)</pre>", text[i:], re.S)
    return htmllib.unescape(m.group(1))


def _refused(p, line):
    """A refused input: exit 2, nothing on stdout, exactly ``line`` on stderr."""
    assert p.returncode == 2 and p.stdout == "", (p.stdout, p.stderr)
    assert p.stderr == line + "\n", p.stderr


# ----- a run ----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    (d / "s.toml").write_text(SMALL_TOML)
    out = d / "out"
    r = subprocess.run([*_tcpf(), "run", str(d / "s.toml"), "--plot", str(out / "plots"), "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return out


def _tcpf():
    from conftest import _tcpf_command

    return _tcpf_command()


def test_run_report(tcpf, run_dir, tmp_path):
    t0 = time.process_time()
    p = tcpf("report", run_dir)
    assert p.returncode == 0, p.stderr
    page = run_dir / "report.html"
    text = page.read_text(encoding="utf-8")
    check_static(text)
    for heading in ("Summary", "Figures", "Scenario (normalised)", "Regenerate"):
        assert f">{heading}</h2>" in text
    assert text.count("<svg") == 5  # goodput, cwnd, rate, rtt, queue
    # canonical beta: the file's keep = 0.875 is shown as beta = 0.125
    scenario = _pre_after(text, "Scenario (normalised)")
    assert "beta = 0.125" in scenario and "keep" not in scenario
    # the regenerate commands: the scenario shown reruns to the same flows
    assert "tcpf run scenario.toml --out" in text and "tcpf report" in text
    rerun = tcpfriendly.run(tcpfriendly.Scenario.from_toml_string(scenario))
    original = json.loads((run_dir / "result.json").read_text())
    assert rerun.raw["flows"] == original["flows"]
    assert len(text) < 1_500_000
    check_in_browser(page, tmp_path, n_figures=5)
    assert time.process_time() - t0 < 60


def test_run_report_from_json_without_series(tcpf, small_path, tmp_path):
    r = tcpf("run", small_path, "--json")
    (tmp_path / "r.json").write_text(r.stdout)
    p = tcpf("report", tmp_path / "r.json", "-o", tmp_path / "r.html")
    assert p.returncode == 0, p.stderr
    text = (tmp_path / "r.html").read_text()
    check_static(text)
    assert text.count("<svg") == 1 and "timeseries = 0.1" in text


# ----- a sweep --------------------------------------------------------------------------------
SWEEP = """
scenario = "{base}"
seeds = 2
metrics = ["goodput_bps_mean", "share", "jain", "loss_event_rate", "link.utilization"]
[set]
duration = 4
"measure.from" = 1
"measure.to" = 4
[axes]
"flows[1].params.alpha" = [0.2, 0.5]
"bottleneck.rate" = ["2Mbps", "5Mbps"]
"""


@pytest.fixture(scope="module")
def sweep_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("sweep")
    (d / "base.toml").write_text(SMALL_TOML)
    (d / "sw.toml").write_text(SWEEP.format(base=str(d / "base.toml")))
    r = subprocess.run([*_tcpf(), "sweep", str(d / "sw.toml"), "--workers", "1", "--out", str(d / "out")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return d / "out"


def test_sweep_report(tcpf, sweep_dir, tmp_path):
    page = tmp_path / "sweep.html"
    p = tcpf("report", sweep_dir, "-o", page)
    assert p.returncode == 0, p.stderr
    text = page.read_text(encoding="utf-8")
    check_static(text)
    # 4 points x 2 groups, mean ± CI over the 2 seeds
    table = text[text.index("<table>"):text.index("</table>")]
    assert table.count("<tr>") == 1 + 8
    assert "±" in table
    assert text.count("<svg") == 5  # one per metric (share, goodput, jain, loss-event rate, utilisation)
    spec = _pre_after(text, "Sweep spec (sweep.json)")
    from tcpfriendly.sweep import Sweep

    assert Sweep.from_toml_string(spec).spec() == json.loads((sweep_dir / "sweep.json").read_text())["spec"]
    base = _pre_after(text, "Base scenario at the first grid point")
    assert "beta = 0.125" in base and "alpha = 0.2" in base
    check_in_browser(page, tmp_path, n_figures=5)


def test_sweep_report_per_flow(tcpf, tmp_path):
    """A sweep run with --per-flow gets a "Per flow" section: per point and group the spread of
    each flow's share (min, median, max over every seed's flows) and a scatter panel per value
    of the axis that still varies once x is fixed; a sweep without it has no such section."""
    (tmp_path / "base.toml").write_text(SMALL_TOML)
    (tmp_path / "sw.toml").write_text(SWEEP.format(base=str(tmp_path / "base.toml")))
    out = tmp_path / "out"
    r = subprocess.run([*_tcpf(), "sweep", str(tmp_path / "sw.toml"), "--workers", "1", "--per-flow",
                        "--out", str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    page = tmp_path / "sweep.html"
    p = tcpf("report", out, "-o", page)
    assert p.returncode == 0, p.stderr
    text = page.read_text(encoding="utf-8")
    check_static(text)
    section = text[text.index("<section id=\"flows\">"):]
    section = section[:section.index("</section>")]
    table = section[section.index("<table>"):section.index("</table>")]
    assert table.count("<tr>") == 1 + 8  # 4 points x 2 groups
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 4 * 2 * 4  # points x seeds x flows
    # the first row: point alpha = 0.2, 2 Mb/s, group 0: its 2 flows x 2 seeds
    first = flows[(flows["flows[1].params.alpha"] == 0.2) & (flows["bottleneck.rate"] == "2Mbps") & (flows["group"] == 0)]
    cells = re.findall(r"<td[^>]*>(.*?)</td>", table[table.index("<tbody>"):])[:8]
    assert cells[:5] == ["0.2", "2Mbps", "0", "2", "4"], cells  # the point, group, runs, flows
    assert float(cells[5]) == pytest.approx(first["share"].min(), rel=1e-3)
    assert float(cells[6]) == pytest.approx(first["share"].median(), rel=1e-3)
    assert float(cells[7]) == pytest.approx(first["share"].max(), rel=1e-3)
    # x = alpha (the first numeric axis); the rate still varies: one panel per rate
    assert section.count("<svg") == 2
    assert "bottleneck.rate=2Mbps" in section and "bottleneck.rate=5Mbps" in section
    # 5 group-metric figures before it, as without per_flow
    assert text.count("<svg") == 5 + 2


def test_big_sweep_report_stays_small_and_fast(sweep_dir, tmp_path):
    """A sweep of 400 points x 30 seeds (synthesised from the small one's rows) gives a page of
    the same order of size: an aggregated table cut at MAX_ROWS, at most MAX_SERIES lines a figure."""
    from tcpfriendly.report import sweep as src

    big = tmp_path / "big"
    big.mkdir()
    table = pd.read_parquet(sweep_dir / "results.parquet")
    rows = []
    one_seed = table[table["seed"] == table["seed"].min()]
    for a in range(200):
        for seed in range(1, 31):
            t = one_seed.copy()
            t["flows[1].params.alpha"] = 0.1 + a * 0.01
            t["seed"] = seed
            t["share"] = t["share"] * (1 + 0.001 * seed)
            rows.append(t)
    pd.concat(rows, ignore_index=True).to_parquet(big / "results.parquet", index=False)
    record = json.loads((sweep_dir / "sweep.json").read_text())
    record["points"] = [{"flows[1].params.alpha": 0.1 + a * 0.01, "bottleneck.rate": r}
                        for a in range(200) for r in ("2Mbps", "5Mbps")]
    record["runs"] = [{"point": i, "seed": s, "key": f"{i}-{s}"} for i in range(400) for s in range(1, 31)]
    (big / "sweep.json").write_text(json.dumps(record))
    t0 = time.process_time()
    text = report.render(big)
    cpu = time.process_time() - t0
    check_static(text)
    assert f"first {src.MAX_ROWS} of 800 rows" in text  # 400 points x 2 groups
    assert text.count("<svg") == 5
    assert len(text) < 1_000_000, len(text)
    assert cpu < 20, cpu


@pytest.mark.parametrize("key, value, message", [
    ("axes", [1, [2]], "axes is not a list of names"),
    ("points", 5, "points is not a list of objects"),
    ("runs", [1], "runs is not a list of objects"),
    ("spec", [1], "spec is not an object"),
    ("controllers", [1], "controllers is not an object"),
])
def test_a_malformed_sweep_record_is_refused_by_report_and_plot(tcpf, sweep_dir, tmp_path, key, value, message):
    # a hand-edited sweep.json: `tcpf report` gave "internal error: TypeError/AttributeError"
    # (exit 1) where `tcpf sweep plot` checked the axes; both now read it through
    # sweep.store.read_record, which checks each part
    bad = tmp_path / "sw"
    shutil.copytree(sweep_dir, bad)
    record = json.loads((bad / "sweep.json").read_text())
    record[key] = value
    (bad / "sweep.json").write_text(json.dumps(record))
    for args, field in ((("report", bad, "-o", tmp_path / "r.html"), "PATH"),
                        (("sweep", "plot", bad, "--x", "seed", "--y", "share", "--out", tmp_path / "p.png"), "DIR")):
        p = tcpf(*args)
        _refused(p, f"error: {field}: {bad / 'sweep.json'}: not a sweep record ({message})")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "p.png").exists()


# ----- an evaluation --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def evaluate_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("ev") / "out"
    r = subprocess.run([*_tcpf(), "evaluate", "gaimd", "--params", "alpha=0.2,beta=0.125", "--quick",
                        "--only", "s1", "--only", "sastry2005", "--workers", "1", "--out", str(d)],
                       capture_output=True, text=True, timeout=600)
    if r.returncode != 0:
        pytest.fail(f"tcpf evaluate failed: {r.stderr[-1000:]}")
    return d


def test_evaluate_report(tcpf, evaluate_dir, tmp_path):
    page = tmp_path / "ev.html"
    p = tcpf("report", evaluate_dir, "-o", page)
    assert p.returncode == 0, p.stderr
    text = page.read_text(encoding="utf-8")
    check_static(text)
    ev = json.loads((evaluate_dir / "evaluation-gaimd.json").read_text())
    verdicts = text[text.index('<table class="verdicts">'):]
    verdicts = verdicts[:verdicts.index("</table>")]
    assert f">{htmllib.escape(ev['grades']['S1'])}</td>" in verdicts
    assert "tsao2007 Table 4" in verdicts and ("matched" in verdicts or "differs" in verdicts)
    assert f"{ev['numbers']['S1']['equivalence']:.2f}" in verdicts  # the number behind the grade
    svgs = sorted(f for f in os.listdir(evaluate_dir) if f.endswith(".svg"))
    assert svgs and text.count("<svg") == len(svgs)
    assert "tcpf evaluate gaimd --params alpha=0.2,beta=0.125 --quick --only s1 --only sastry2005 --out" in text
    check_in_browser(page, tmp_path, n_figures=len(svgs), verdicts=True)


# ----- a reproduction -------------------------------------------------------------------------
#: two analytic experiments of two papers (well under a second each): `tcpf reproduce all` writes
#: both papers into one --out directory; fig10-curves has a claim that differs (with its reason)
REPRO = {"yang2000": "fig10-curves", "liu2008": "eq31-lossy-bound"}


@pytest.fixture(scope="module")
def reproduce_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("repro") / "out"
    only = [a for x in REPRO.values() for a in ("--only", x)]
    r = subprocess.run([*_tcpf(), "reproduce", "all", "--quick", *only, "--out", str(d)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        pytest.fail(f"tcpf reproduce failed: {r.stderr[-1000:]}")
    return d


@pytest.mark.parametrize("edit, message", [
    (lambda d: d[0].__setitem__("claims", [1]), "[0].claims must be a list of objects"),
    (lambda d: d[0].__setitem__("runs", [1]), "[0].runs must be an object, got [1]"),
    (lambda d: d[0].__setitem__("assumptions", "x"), '[0].assumptions must be an object, got "x"'),
    (lambda d: d[0].__setitem__("experiment", "../../etc/x"), '[0].experiment must be a name, got "../../etc/x"'),
])
def test_a_malformed_reproduction_is_refused_naming_the_entry(tcpf, reproduce_dir, tmp_path, edit, message):
    # a hand-edited <paper>/results.json: the claims, runs or assumptions were "internal error:
    # ..." (exit 1); an experiment name with a path in it named the SVG the page inlines
    bad = tmp_path / "r"
    shutil.copytree(reproduce_dir, bad)
    paper = sorted(p.name for p in bad.iterdir() if (p / "results.json").is_file())[0]
    path = bad / paper / "results.json"
    data = json.loads(path.read_text())
    edit(data)
    path.write_text(json.dumps(data))
    p = tcpf("report", bad, "-o", tmp_path / "r.html")
    _refused(p, f"error: PATH: {path}: {message}")
    assert not (tmp_path / "r.html").exists()


def _claims_table(text, paper, exp):
    """The paper-vs-ours table under the experiment's heading."""
    i = text.index(f'id="{paper}-{exp}"')
    j = text.index('<table class="claims">', i)
    return text[j:text.index("</table>", j)]


def test_reproduce_report(tcpf, reproduce_dir, tmp_path):
    page = tmp_path / "repro.html"
    t0 = time.monotonic()
    p = tcpf("report", reproduce_dir, "-o", page)
    assert p.returncode == 0, p.stderr
    assert time.monotonic() - t0 < 20
    text = page.read_text(encoding="utf-8")
    check_static(text)
    assert len(text) < 400_000
    n_differs = 0
    for paper, exp in REPRO.items():
        (e,) = json.loads((reproduce_dir / paper / "results.json").read_text())
        table = _claims_table(text, paper, exp)
        rows = re.findall(r'<tr class="(matched|differs)">(.*?)</tr>', table, re.S)
        assert len(rows) == len(e["claims"]) > 0
        for (cls, row), c in zip(rows, e["claims"]):
            assert htmllib.escape(c["claim"]) in row
            assert cls == ("matched" if c["matched"] else "differs")
            assert ("✓ matched" if c["matched"] else "✗ differs") in row
            if not c["matched"]:  # the hypothesis printed beside the difference
                n_differs += 1
                reason = c["verdict"].split(":", 1)[1].strip()
                assert reason and htmllib.escape(reason) in row
        m = sum(c["matched"] for c in e["claims"])
        summary = text[text.index(f'id="paper-{paper}"'):]
        assert f"Claims matched: <b>{m} of {len(e['claims'])}</b>" in summary[:2000]
    assert n_differs >= 1, "the fixture should show a difference and its reason"
    svgs = sorted(reproduce_dir.glob("*/*.svg"))
    assert len(svgs) == len(REPRO) and text.count("<svg") == len(svgs)
    # the command recorded by tcpf reproduce, then the report's own
    cmd = (f"tcpf reproduce all --quick --only {REPRO['yang2000']} --only {REPRO['liu2008']} "
           f"--out {reproduce_dir}")
    assert htmllib.escape(cmd) in text and htmllib.escape(f"tcpf report {reproduce_dir} -o report.html") in text
    check_in_browser(page, tmp_path, n_figures=len(svgs), claims=len(REPRO))


def test_reproduce_report_of_one_paper(reproduce_dir):
    """A paper's directory, or its results.json, gives that paper alone."""
    for path in (reproduce_dir / "liu2008", reproduce_dir / "liu2008" / "results.json"):
        text = report.render(path)
        check_static(text)
        assert 'id="paper-liu2008"' in text and 'id="paper-yang2000"' not in text
        assert text.count('<table class="claims">') == 1 and text.count("<svg") == 1


def test_reproduce_report_errors(tcpf, tmp_path):
    d = tmp_path / "liu2008"
    d.mkdir()
    (d / "REPRODUCTION.md").write_text("# Reproduction of liu2008\n")
    (d / "results.json").write_text('{"not": "a list"}')
    p = tcpf("report", tmp_path)
    assert p.returncode == 2 and "expected a list of experiments" in p.stderr
    (d / "results.json").write_text("[{")
    p = tcpf("report", d)
    assert p.returncode == 2 and "not a readable reproduction results.json" in p.stderr


# ----- the hook, errors -----------------------------------------------------------------------
def test_a_source_plugs_in_with_register(tmp_path):
    (tmp_path / "custom.json").write_text('{"answer": 42}')

    def detect(path):
        return os.path.isfile(os.path.join(path, "custom.json"))

    def build(path):
        data = json.loads(open(os.path.join(path, "custom.json")).read())
        return report.Page(title="custom output", sections=[
            report.Section("numbers", "Numbers", report.html.table(["answer"], [[data["answer"]]], numeric_from=0))],
            commands=["make-custom", f"tcpf report {path}"], kind="custom")

    report.register("custom", detect, build, first=True)
    try:
        text = report.render(tmp_path)
    finally:
        report.SOURCES[:] = [s for s in report.SOURCES if s.name != "custom"]
    check_static(text)
    assert "<h1>custom output</h1>" in text and '<td class="num">42</td>' in text and "make-custom" in text


def test_report_errors_exit_2(tcpf, tmp_path, run_dir):
    p = tcpf("report", tmp_path / "nothing")
    assert p.returncode == 2 and "no such file" in p.stderr and p.stderr.count("\n") == 1
    (tmp_path / "x.txt").write_text("hello")
    p = tcpf("report", tmp_path / "x.txt")
    assert p.returncode == 2 and "not an output tcpf report knows" in p.stderr
    p = tcpf("report", run_dir, "-o", tmp_path)
    assert p.returncode == 2 and p.stderr.startswith("error: -o:")
    (tmp_path / "bad.json").write_text('{"flows": [')
    p = tcpf("report", tmp_path / "bad.json")
    assert p.returncode == 2 and "not valid JSON" in p.stderr


@pytest.mark.parametrize("edit, message", [
    (lambda d: d["flows"].__setitem__(0, [1, 2]), "flows[0] is not an object"),
    (lambda d: d["flows"][0].__setitem__("id", "x"), 'flows[0].id must be a whole number >= 0, got "x"'),
    (lambda d: d["flows"][1].__setitem__("group", -1), "flows[1].group must be a whole number >= 0, got -1"),
    (lambda d: d["flows"][0].__setitem__("goodput_bps", "fast"),
     'flows[0].goodput_bps must be a number or null, got "fast"'),
    (lambda d: d["flows"][0].__setitem__("timeouts", True), "flows[0].timeouts must be a number or null, got true"),
    (lambda d: d.__setitem__("links", [{"name": 3}]), "links[0] is not an object with a name"),
    (lambda d: d.__setitem__("scenario", 5), '"scenario" is not an object'),
    (lambda d: d.__setitem__("warnings", 5), '"warnings" is not a list of strings'),
    (lambda d: d.__setitem__("timeseries", 5), '"timeseries" is not an object'),
    (lambda d: d["timeseries"]["flows"].__setitem__("cwnd", [1]),
     "timeseries.flows.cwnd has 1 values, time has {n}"),
    (lambda d: d["timeseries"]["flows"]["cwnd"].__setitem__(2, "x"),
     'timeseries.flows.cwnd[2] must be a number or null, got "x"'),
    (lambda d: d["timeseries"]["links"].pop("link"), "timeseries.links has no column 'link'"),
])
def test_a_malformed_result_is_refused_naming_the_entry(tcpf, tmp_path, run_dir, edit, message):
    # a hand-edited result.json: one line naming the file and the entry, for report and plot
    # alike (a flow that was a list, a scenario, warnings or time series of another shape were
    # internal errors, exit 1; a string id, a bare "invalid literal for int()"; a string count
    # was printed as it stood)
    data = json.loads((run_dir / "result.json").read_text())
    message = message.format(n=len(data["timeseries"]["flows"]["time"]))
    edit(data)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    for args, field in ((("report", bad, "-o", tmp_path / "r.html"), "PATH"),
                        (("plot", bad, "--out", tmp_path / "p"), "RESULT")):
        p = tcpf(*args)
        _refused(p, f"error: {field}: {bad}: {message}")
    assert not (tmp_path / "r.html").exists() and not (tmp_path / "p").exists()


# ----- notebooks ------------------------------------------------------------------------------
def test_result_repr_html_has_tables_and_the_key_figure():
    r = tcpfriendly.run(tcpfriendly.Scenario.from_toml_string(SMALL_TOML), timeseries=0.1)
    a, b = r._repr_html_(), r._repr_html_()
    assert "<table>" in a and a.count("<svg") == 1 and "congestion window" in a
    ids = re.findall(r'\bid="([^"]+)"', a + b)
    assert len(ids) == len(set(ids)), "two displays of one notebook must not share ids"
    assert not re.search(r"https?:|<script", a)
    bare = tcpfriendly.run(tcpfriendly.Scenario.from_toml_string(SMALL_TOML))
    assert "per-flow goodput" in bare._repr_html_()


@pytest.mark.parametrize("key, value, message", [
    ("grades", [1, 2], "grades must be an object, got [1, 2]"),
    ("grades", {"S1": 3}, "grades.S1 must be a string, got 3"),
    ("numbers", {"S1": [1]}, "numbers.S1 must be an object, got [1]"),
    ("algorithm", [1], "algorithm must be a string, got [1]"),
    ("params", "a", 'params must be an object, got "a"'),
    ("metrics", 5, "metrics must be an object, got 5"),
    ("controller", 5, "controller must be a string, got 5"),
    ("assumptions", [1], "assumptions must be an object, got [1]"),
])
def test_a_malformed_evaluation_is_refused_naming_the_entry(tcpf, evaluate_dir, tmp_path, key, value, message):
    # a hand-edited evaluation-<alg>.json: each of these was "error: internal error:
    # AttributeError/TypeError ...", exit 1; now one line naming the file and the entry
    d = json.loads((evaluate_dir / "evaluation-gaimd.json").read_text())
    d[key] = value
    bad = tmp_path / "evaluation-gaimd.json"
    bad.write_text(json.dumps(d))
    p = tcpf("report", bad, "-o", tmp_path / "r.html")
    _refused(p, f"error: PATH: {bad}: {message}")
    assert not (tmp_path / "r.html").exists()


def test_an_oversized_table4_text_is_refused_not_read_whole(tcpf, evaluate_dir, tmp_path):
    # table4.txt beside the evaluations is inlined in the page: read through the bounded
    # reader (it was read whole with f.read())
    d = tmp_path / "ev"
    shutil.copytree(evaluate_dir, d)
    (d / "table4.txt").write_text("x" * (2 * 1024 * 1024))
    p = tcpf("report", d, "-o", tmp_path / "r.html")
    _refused(p, f"error: cannot read Table 4 text {d / 'table4.txt'}: larger than 1 MiB, the limit for a Table 4 text")
    (d / "table4.txt").write_text("ours / paper\n")
    p = tcpf("report", d, "-o", tmp_path / "r.html")
    assert p.returncode == 0 and "ours / paper" in (tmp_path / "r.html").read_text(), p.stderr


def test_evaluation_repr_html_has_verdicts_numbers_and_the_figure(evaluate_dir):
    import dataclasses

    from tcpfriendly.evaluate import Evaluation

    d = json.loads((evaluate_dir / "evaluation-gaimd.json").read_text())
    ev = Evaluation(**{f.name: d[f.name] for f in dataclasses.fields(Evaluation) if f.name in d})
    a, b = ev._repr_html_(), ev._repr_html_()
    verdicts = a[a.index('<table class="verdicts">'):]
    verdicts = verdicts[:verdicts.index("</table>")]
    assert f">{htmllib.escape(ev.grades['S1'])}</td>" in verdicts
    assert f"{ev.numbers['S1']['equivalence']:.2f}" in verdicts  # the number behind the grade
    assert "tsao2007 Table 4" in verdicts and ("matched" in verdicts or "differs" in verdicts)
    assert a.count("<svg") == 1 and "tsao2007 s1-nonperiodic" in a  # S1's figure, from the metrics
    ids = re.findall(r'\bid="([^"]+)"', a + b)
    assert len(ids) == len(set(ids)), "two displays of one notebook must not share ids"
    assert not re.search(r"https?:|<script", a)
    bare = dataclasses.replace(ev, metrics={}, raw={})
    assert "<svg" not in bare._repr_html_() and 'class="verdicts"' in bare._repr_html_()


def test_sweep_result_repr_html_has_the_reports_summary_and_first_figure(sweep_dir, tmp_path):
    from tcpfriendly.sweep import Sweep

    spec = json.loads((sweep_dir / "sweep.json").read_text())["spec"]
    res = Sweep.from_dict(spec).run(sweep_dir, quiet=True)  # every run stored: read back
    assert res.cached == res.total and res.ran == 0
    a, b = res._repr_html_(), res._repr_html_()
    table = a[a.index("<table>"):a.index("</table>")]
    assert table.count("<tr>") == 1 + 8 and "±" in table  # 4 points x 2 groups, as the report
    assert a.count("<svg") == 1 and htmllib.escape(repr(res)) in a
    ids = re.findall(r'\bid="([^"]+)"', a + b)
    assert len(ids) == len(set(ids)), "two displays of one notebook must not share ids"
    assert not re.search(r"https?:|<script", a)
    # a failed run is said, and its row left out of the means
    res.failures = [(next(r for r in Sweep.from_dict(spec).plan()[1]), "boom")]
    assert "1 failed; first: " in res._repr_html_() and "boom" in res._repr_html_()


@pytest.fixture(scope="module")
def reproduction():
    from tcpfriendly.reproduce import reproduce

    return reproduce("yang2000", ["fig10-curves"], quick=True)


def test_reproduction_repr_html_has_the_claims_table_verdicts_and_figure(reproduction):
    import dataclasses

    from tcpfriendly.reproduce import Reproduction

    assert isinstance(reproduction, Reproduction) and isinstance(reproduction, list)
    (r,) = reproduction
    differs = [c for c in r.claims if not c.matched]
    assert differs and any(c.matched for c in r.claims)
    for html in (reproduction._repr_html_(), r._repr_html_()):
        assert html.count('<table class="claims">') == 1 and html.count("<svg") == 1
        rows = re.findall(r'<tr class="(matched|differs)">(.*?)</tr>', html, re.S)
        assert [cls for cls, _ in rows] == ["matched" if c.matched else "differs" for c in r.claims]
        assert html.count("✓ matched") >= sum(c.matched for c in r.claims)
        assert "✗ differs" in html and differs[0].claim.reason
        assert htmllib.escape(differs[0].claim.reason) in html  # the hypothesis beside the difference
        assert not re.search(r"https?:|<script", html)
    summary = reproduction._repr_html_()
    assert f"Claims matched: <b>{r.matched} of {len(r.claims)}</b>" in summary
    ids = re.findall(r'\bid="([^"]+)"', reproduction._repr_html_() + r._repr_html_() + r._repr_html_())
    assert len(ids) == len(set(ids)), "two displays of one notebook must not share ids"
    # nothing to draw (no [figure], no numeric claim): the table alone
    bare = dataclasses.replace(r, experiment=dataclasses.replace(r.experiment, figure={}),
                               claims=[c for c in r.claims if isinstance(c.ours, bool)])
    html = bare._repr_html_()
    assert "<svg" not in html and '<table class="claims">' in html


def _notebook_cells(path):
    nb = json.loads(path.read_text(encoding="utf-8"))
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"]
            for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", sorted(p.name for p in (REPO / "examples").glob("*.ipynb")))
def test_example_notebook_runs(name, tmp_path, monkeypatch):
    """Run the notebook's code cells in order, as a script, in one namespace (what a kernel does),
    and display each cell's last expression the way Jupyter would (its _repr_html_)."""
    import ast

    import matplotlib

    matplotlib.use("Agg")
    monkeypatch.chdir(REPO)
    ns = {"__name__": "__main__"}
    shown = []
    for src in _notebook_cells(REPO / "examples" / name):
        tree = ast.parse(src)
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        exec(compile(tree, name, "exec"), ns)
        if last is not None:
            value = eval(compile(ast.Expression(last.value), name, "eval"), ns)
            if hasattr(value, "_repr_html_"):
                shown.append(value._repr_html_())
            elif value is not None:
                shown.append(repr(value))
    assert any("<svg" in s for s in shown), "the notebook displays at least one figure"
    if name == "see-it.ipynb":  # a run, an evaluation and a reproduction, each with its figure
        for mark in ("congestion window", '<table class="verdicts">', '<table class="claims">'):
            assert any(isinstance(s, str) and mark in s and "<svg" in s for s in shown), mark

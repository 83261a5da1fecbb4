"""Issue 17, item 1: no scenario string can run a command through the ns-2 export.

Names reach the Tcl script only through `tcl_quote` (and only in comments); these tests check
the quoting function itself with hostile strings (as a value and inside a comment, evaluated by a
real Tcl interpreter), and export and run a scenario whose node and link names would run a
command if they were written unquoted.  The strings bypass the scenario validator on purpose:
the exporter must be safe on its own (defence in depth).
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess

import pytest

from tcpfriendly import ns2
from tcpfriendly.ns2 import export_tcl, tcl_quote

TCLSH = shutil.which("tclsh") or shutil.which("ns")


def hostile(marker: str):
    """Strings that would run `touch marker`, break a word or a comment, or mangle the value if
    written into Tcl without (or with naive) quoting."""
    return [
        f"x[exec touch {marker}]",
        f"{{x}}[exec touch {marker}]",
        f"a b [exec touch {marker}]",
        f"}}\nexec touch {marker}\n#",
        f"\\\nexec touch {marker}",
        f"x\\",
        f"\"; exec touch {marker}; \"",
        f"{{*}}[exec touch {marker}]",
        "$env(HOME)",
        "$::tcl_version",
        "{unbalanced",
        "unbalanced}",
        "\\x41\\u0042",
        "tab\there",
        "cr\rlf\n",
        "\x00nul\x01a",
        "\u00e9t\u00e9 \u20ac",
        "\U0001F600",
        "#comment",
        "",
        " ",
        "-minus",
    ]


def _tcl(script: str, cwd) -> subprocess.CompletedProcess:
    path = os.path.join(cwd, "t.tcl")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(script)
    return subprocess.run([TCLSH, path], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_tcl_quote_leaves_plain_names_bare():
    for name in ("bottleneck", "b1-b2", "bottleneck_reverse", "r1.r2", "l0", "a:b/c"):
        assert tcl_quote(name) == name


def test_tcl_quote_output_is_one_line_and_never_ends_in_a_lone_backslash(tmp_path):
    for s in hostile(str(tmp_path / "pwned")):
        q = tcl_quote(s)
        assert "\n" not in q and "\r" not in q
        if q != s:
            # one double-quoted word whose closing quote is not escaped
            assert q.startswith('"') and q.endswith('"')
            body = q[1:-1]
            assert (len(body) - len(body.rstrip("\\"))) % 2 == 0


@pytest.mark.skipif(TCLSH is None, reason="no Tcl interpreter (tclsh or ns) installed")
def test_tcl_quote_round_trips_and_runs_nothing(tmp_path):
    """Each quoted string, set as a value and written in a comment, evaluates to exactly the
    original string (compared as hex-encoded UTF-8) and creates no file."""
    marker = tmp_path / "pwned"
    strings = hostile(str(marker))
    lines = ["fconfigure stdout -translation lf"]
    for s in strings:
        q = tcl_quote(s)
        lines.append(f"set v {q} ;# {q}")
        lines.append(f"# {q}")
        lines.append("puts [binary encode hex [encoding convertto utf-8 $v]]")
    lines.append("puts done")
    proc = _tcl("\n".join(lines) + "\n", tmp_path)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split("\n")
    assert out[len(strings)] == "done"
    for s, got in zip(strings, out):
        # Tcl 8.6 holds only the BMP: a character beyond it reads back as U+FFFD
        want = "".join(c if ord(c) <= 0xFFFF else "\ufffd" for c in s)
        assert bytes.fromhex(got).decode("utf-8") == want, (s, got)
    assert not marker.exists()


# --------------------------------------------------------------------------------------------
# A whole scenario with hostile node and link names
# --------------------------------------------------------------------------------------------

def _engine_available():
    try:
        import tcpfriendly._core  # noqa: F401
        return True
    except ImportError:
        return False


CHAIN = {
    "duration": 6, "seed": 1, "packet_size": 1000, "max_window": 64,
    "measure": {"from": 1, "to": 6},
    "nodes": [{"name": "b1"}, {"name": "b2"}, {"name": "b3"}],
    "links": [
        {"from": "b1", "to": "b2", "rate": "6Mbps", "delay": "10ms", "queue": "droptail", "limit": "1bdp",
         "loss": {"model": "periodic", "packets": 200}},
        {"from": "b2", "to": "b3", "rate": "10Mbps", "delay": "10ms", "queue": "red"},
    ],
    "flows": [
        {"count": 2, "algorithm": "tcp", "path": ["b1", "b2", "b3"], "access_delay": "1ms"},
        {"count": 1, "algorithm": "tfrc", "path": ["b1", "b2", "b3"], "access_delay": "1ms"},
    ],
}


def _renamed(expanded, nodes, links):
    """The expanded scenario with its node and link names replaced (as if the validator had
    let them through)."""
    e = copy.deepcopy(expanded)
    e["nodes"] = [dict(n, name=nodes[n["name"]]) if isinstance(n, dict) else nodes[n] for n in e["nodes"]]
    for lk in e["links"]:
        lk["name"] = links[lk["name"]]
        lk["from"], lk["to"] = nodes[lk["from"]], nodes[lk["to"]]
    for f in e["flows"]:
        f["path"] = [nodes[n] for n in f["path"]]
    return e


# node names b1, b2, b3 and the two link names -> replacements ({m}: the marker file)
CASES = {
    # the report: ns-2 ran the command and the comparison still passed
    "injection": (["n1", "x[exec touch {m}]", "n3"], ["x[exec touch {m}]", "l2"]),
    # names that break a word, a comment or the LINK output line
    "breaking": (["x[exec touch {m}]", "a b}}\nexec touch {m}\n#", "\\"],
                 ["a b {{[exec touch {m}]", "x\\"]),
}


def _hostile_chain(tmp_path, case):
    import tcpfriendly
    marker = tmp_path / "pwned"
    e = tcpfriendly.expand(CHAIN, seed=1)
    node_names, link_names = ([n.format(m=marker) for n in names] for names in CASES[case])
    nodes = dict(zip(["b1", "b2", "b3"], node_names))
    links = dict(zip([lk["name"] for lk in e["links"]], link_names))
    return _renamed(e, nodes, links), marker, link_names


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.skipif(not _engine_available(), reason="tcpfriendly._core is not built")
def test_export_writes_hostile_names_only_quoted(tmp_path, case):
    e, marker, names = _hostile_chain(tmp_path, case)
    script = export_tcl(e)
    assert "[exec" not in script.replace("\\[exec", "")
    for name in names:
        assert tcl_quote(name) in script
    assert f"exec touch {marker}\n" not in script


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.skipif(not _engine_available() or not ns2.ns2_available(),
                    reason="needs tcpfriendly._core and ns-2 (`ns`)")
def test_run_ns2_with_hostile_names_runs_nothing_and_keeps_the_names(tmp_path, case):
    e, marker, names = _hostile_chain(tmp_path, case)
    r = ns2.run_ns2(e, workdir=str(tmp_path / "work"))
    assert not marker.exists()
    assert sorted(os.listdir(tmp_path)) == ["work"]
    # the results carry the engine's names, spaces and all
    assert [lk["name"] for lk in r["links"]] == names
    assert all(f["packets_delivered"] > 0 for f in r["flows"])

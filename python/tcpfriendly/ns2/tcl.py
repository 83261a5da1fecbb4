"""Writing values into Tcl: numbers, booleans, RNG seeds and `tcl_quote` for every string
that comes from a scenario."""

from __future__ import annotations

import re
from typing import Any

def _num(x: Any) -> str:
    """A Tcl-safe decimal for a number (ints stay ints)."""
    if isinstance(x, bool):
        return "1" if x else "0"
    if isinstance(x, int):
        return str(x)
    v = float(x)
    if v == int(v) and abs(v) < 1e15:
        return str(int(v)) + ".0"
    return repr(v)


def _bool(x: Any) -> str:
    return "true" if x else "false"


# Characters a bare Tcl word may hold without any quoting: scenario strings (node, link and
# algorithm names) made only of these are written as they are.
_TCL_BARE = re.compile(r"[A-Za-z0-9_.:+/=@%,-]+")
# Inside double quotes Tcl substitutes after \\, [ and $ and ends the word at "; braces and ;
# are escaped too so that the word stays a word in any context (a braced body, a comment).
_TCL_ESCAPE = {"\\": "\\\\", "[": "\\[", "]": "\\]", "{": "\\{", "}": "\\}", "$": "\\$",
               ";": "\\;", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def tcl_quote(s: Any) -> str:
    """`s` as ONE Tcl word that evaluates to exactly `s`, with no command, variable or
    backslash substitution left for Tcl to perform (issue 17: a scenario name like
    ``x[exec touch p]`` must never run).

    Strings made only of letters, digits and ``_ . : + / = @ % , -`` stay bare; any other
    string is written in double quotes with ``\\ [ ] { } $ ; "`` backslash-escaped, tab, CR
    and newline as ``\\t \\r \\n``, every other character outside printable ASCII as
    ``\\uXXXX`` (exactly four digits, so a following hex digit is never absorbed) or, beyond
    the BMP, ``\\UXXXXXXXX`` (Tcl 8.6 reads those as U+FFFD).  The result holds no raw
    newline, so it is also safe inside a ``#`` comment, and its closing quote is never escaped."""
    s = str(s)
    if _TCL_BARE.fullmatch(s):
        return s
    out = []
    for ch in s:
        if ch in _TCL_ESCAPE:
            out.append(_TCL_ESCAPE[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) <= 0xFFFF:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


def _rng_seed(seed: int, salt: int) -> int:
    """Map the scenario seed to a valid, non-zero ns-2 RNG seed (0 would mean
    'seed from the clock' in ns-2)."""
    return ((int(seed) * 1_000_003 + salt * 7919) % 2_147_483_646) + 1

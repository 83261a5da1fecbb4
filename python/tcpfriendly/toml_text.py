"""Write a scenario (or sweep spec) as TOML that ``tcpf run`` / ``tcpf sweep`` read again
(:meth:`tcpfriendly.Scenario.to_toml`; the scenario a report shows). Only what those dicts hold: tables, arrays of
tables, inline tables, arrays, strings, numbers, booleans; ``None`` (a default left unset) is
left out, as TOML has no null."""

from __future__ import annotations

import json
import math
import re
from typing import Any, List, Mapping

__all__ = ["dumps"]

_BARE = re.compile(r"^[A-Za-z0-9_-]+$")


def _key(k: str) -> str:
    return k if _BARE.match(k) else json.dumps(k, ensure_ascii=False)


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, Mapping):
        items = [f"{_key(str(k))} = {_value(x)}" for k, x in v.items() if x is not None]
        return "{ " + ", ".join(items) + " }" if items else "{}"
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x) for x in v if x is not None) + "]"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def dumps(data: Mapping[str, Any]) -> str:
    """``data`` as TOML: scalars first, then one ``[table]`` per dict and ``[[array]]`` per list
    of dicts; deeper dicts are inline tables."""
    head: List[str] = []
    tables: List[str] = []
    for k, v in data.items():
        if v is None:
            continue
        if isinstance(v, Mapping):
            tables.append(f"\n[{_key(str(k))}]")
            tables.extend(f"{_key(str(kk))} = {_value(vv)}" for kk, vv in v.items() if vv is not None)
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            for item in v:
                tables.append(f"\n[[{_key(str(k))}]]")
                tables.extend(f"{_key(str(kk))} = {_value(vv)}" for kk, vv in item.items() if vv is not None)
        else:
            head.append(f"{_key(str(k))} = {_value(v)}")
    return "\n".join(head + tables).strip() + "\n"

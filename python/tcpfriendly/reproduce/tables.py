"""Selecting rows of a sweep's tables for ``tcpf reproduce``: its group table and, with
``per_flow = true``, its per-flow table (the ``[inputs.*]`` of run.py and the scatter panels
of report.py)."""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

from ..errors import ScenarioError

__all__ = ["select_rows"]


def _matches(cell: Any, want: Any) -> bool:
    if isinstance(want, (Mapping, list)):
        if isinstance(cell, str):
            try:
                cell = json.loads(cell)
            except ValueError:
                return False
        return cell == want
    if isinstance(want, float) or isinstance(cell, float):
        try:
            return math.isclose(float(cell), float(want), rel_tol=1e-9, abs_tol=1e-15)
        except (TypeError, ValueError):
            return False
    return cell == want


def select_rows(table, want: Mapping[str, Any], where: str, which: str = "groups"):
    """The rows of a sweep's ``which`` table (groups or flows) whose columns match ``want``
    (column -> value; tables compare as tables, floats to 1e-9)."""
    import pandas as pd

    rows = table
    for col, value in want.items():
        if col not in rows.columns:
            raise ScenarioError(f"{where}.where: no column {col!r} in the sweep's {which} table",
                                field=where)
        # a boolean mask even when no row is left (an empty list would select columns)
        rows = rows[pd.Series([_matches(c, value) for c in rows[col]], index=rows.index, dtype=bool)]
    return rows

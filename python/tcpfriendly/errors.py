"""Exceptions raised by tcpfriendly's Python API."""

from __future__ import annotations

import re
from typing import Optional

__all__ = ["ScenarioError", "ScenarioFileError"]

# A message from the engine starts with the field path: "flows[1].params.keep: must be ...".
_FIELD_PREFIX = re.compile(r"^([A-Za-z_][\w]*(?:\[\d+\])*(?:\.[A-Za-z_][\w]*(?:\[\d+\])*)*):\s")


def one_line(message: object) -> str:
    """Collapse a message onto a single line (CLI errors are always one line)."""
    return " ".join(str(message).split())


class ScenarioError(ValueError):
    """A scenario (or an argument of `run`) is invalid.

    The message names the offending field first, e.g.
    ``flows[1].params.keep: must be in (0, 1), got 1.5``; the field path is also
    available as :attr:`field` (``None`` when the message does not start with one).
    """

    def __init__(self, message: str, field: Optional[str] = None):
        message = one_line(message)
        super().__init__(message)
        if field is None:
            m = _FIELD_PREFIX.match(message)
            field = m.group(1) if m else None
        self.field = field


class ScenarioFileError(ScenarioError, OSError):
    """The scenario file does not exist or cannot be read.

    Both a :class:`ScenarioError` (so a ``ValueError``) and an ``OSError``.
    """

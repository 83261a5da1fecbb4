"""What a report source returns: a :class:`Page` of :class:`Section` s (see :mod:`.core`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, List

__all__ = ["Page", "Section", "Source"]


@dataclass
class Section:
    anchor: str
    heading: str
    body: str


@dataclass
class Page:
    title: str
    subtitle: str = ""
    sections: List[Section] = field(default_factory=list)
    #: shell commands that regenerate what the report shows (its inputs, then the report)
    commands: List[str] = field(default_factory=list)
    #: the kind of output, for the footer ("run", "sweep", "evaluate", ...)
    kind: str = ""


@dataclass
class Source:
    name: str
    detect: Callable[[str], bool]
    build: Callable[[str], Page]

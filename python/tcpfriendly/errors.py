"""Exceptions raised by tcpfriendly's Python API."""

from __future__ import annotations

from typing import Optional

__all__ = ["InputError", "ScenarioError", "ScenarioFileError"]

def json_brief(value: object, limit: int = 40) -> str:
    """A value read from a JSON file, as an error message shows it: its JSON text, cut to
    ``limit`` characters ("got \"x\"", "got [1, 2]", "got null")."""
    import json

    return json.dumps(value, default=str)[:limit]


def one_line(message: object) -> str:
    """Collapse a message onto a single line (CLI errors are always one line)."""
    return " ".join(str(message).split())


class InputError(ValueError):
    """Bad input that names its field: the base of :class:`ScenarioError` and
    ``tcpfriendly.models.ModelError``.

    The message names the offending field first (``field: what is wrong``); the field is also
    available as :attr:`field` (``None`` when the error is not about one field) and the rest as
    :attr:`message`.
    """

    def __init__(self, message: str, field: Optional[str] = None):
        message = one_line(message)
        super().__init__(message)
        self.field = field or None
        prefix = f"{field}: " if field else ""
        self.message = message[len(prefix):] if prefix and message.startswith(prefix) else message


class ScenarioError(InputError):
    """A scenario (or an argument of `run`) is invalid.

    The message names the offending field first, e.g.
    ``flows[1].params.keep: must be in (0, 1), got 1.5``; the field path is also
    available as :attr:`field` (``None`` when the error is not about one field) and the
    rest as :attr:`message`. Errors from the engine carry both as structured data.
    """

    @classmethod
    def at(cls, field: Optional[str], message: str) -> "ScenarioError":
        """The error for ``field`` (a dotted path, or None) with ``message``."""
        return cls(f"{field}: {message}" if field else message, field=field)

    @classmethod
    def from_engine(cls, exc: BaseException) -> "ScenarioError":
        """The engine's ``_core.FieldError`` (its ``field`` and ``message``) as a ScenarioError."""
        return cls.at(getattr(exc, "field", None), getattr(exc, "message", str(exc)))


class ScenarioTypeError(ScenarioError, TypeError):
    """A value of the wrong type where the API expects a scenario, a spec, a path or a table
    (a list where a dict goes, bytes, None): a :class:`ScenarioError` naming the field (so bad
    input, exit 2 in ``tcpf``) and, as before, a ``TypeError``."""


def path_arg(value: object, field: str, what: str = "a path") -> str:
    """``value`` (a str or os.PathLike naming a file or directory) as a str, or a
    :class:`ScenarioTypeError` naming ``field``: the one check of a path given to the API."""
    import os
    if isinstance(value, (str, os.PathLike)):
        name = os.fspath(value)
        if isinstance(name, str):
            return name
    raise ScenarioTypeError(f"{field}: must be {what} (str or os.PathLike), got "
                            f"{type(value).__name__}", field=field)


class ScenarioFileError(ScenarioError, OSError):
    """The scenario file does not exist or cannot be read.

    Both a :class:`ScenarioError` (so a ``ValueError``) and an ``OSError``.
    """

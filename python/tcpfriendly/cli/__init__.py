"""The `tcpf` command line: :func:`main` is the console-script entry point
(``tcpfriendly.cli:main``).

Modules: :mod:`.main` (the root app, ``tcpf run``, ``tcpf algorithms``), :mod:`.model`
(``tcpf model``), :mod:`.sweep` (``tcpf sweep``), :mod:`.ns2` (``tcpf ns2``) and
:mod:`.errors` (the error policy shared by all of them). Nothing is imported until used, so
``python -m tcpfriendly.cli.model`` runs that sub-app alone.
"""

from typing import List, Optional

__all__ = ["app", "main"]


def main(argv: Optional[List[str]] = None) -> None:
    """Console-script entry point (`tcpf`)."""
    from .main import main as tcpf_main

    tcpf_main(argv)


def __getattr__(name: str):
    if name == "app":
        from .main import app
        return app
    raise AttributeError(f"module 'tcpfriendly.cli' has no attribute {name!r}")

"""``tcpfriendly.__version__``: the engine's version (``_core.version()``), else the installed
distribution's, else "0+unknown". A module of its own so that any module can import it
without importing the package's public API (and so without an import cycle)."""


def _version() -> str:
    try:
        from ._core import version
        return version()
    except ImportError:
        pass
    try:
        from importlib.metadata import PackageNotFoundError, version as dist_version
        return dist_version("tcpfriendly")
    except (ImportError, PackageNotFoundError):
        return "0+unknown"


__version__ = _version()

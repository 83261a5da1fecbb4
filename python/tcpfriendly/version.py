"""``tcpfriendly.__version__``: the engine's version (``_core.version()``), else the installed
distribution's, else "0+unknown"; and :func:`engine_id`, the engine build's identity that every
run cache keys on. A module of its own so that any module can import it without importing the
package's public API (and so without an import cycle)."""

import functools
import hashlib


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


@functools.lru_cache(maxsize=None)
def engine_id() -> str:
    """The identity of the engine build: ``_core.engine_id()``, a hash fixed at build time of
    the sources that decide simulation results (``crates/tcpf-core``, ``crates/tcpf-py``, the
    manifests and ``Cargo.lock``), the same for the same sources on any machine. The version
    stays the same when the engine changes, so the run caches of ``tcpf sweep``, ``tcpf
    evaluate`` and ``tcpf reproduce`` key on this as well.

    An extension built before ``engine_id`` existed is identified by a hash of its file instead,
    ``"file:<hex>"`` (another build, another id; not the same across machines); without a
    compiled engine at all, ``"none"``."""
    try:
        from . import _core
    except ImportError:
        return "none"
    fn = getattr(_core, "engine_id", None)
    if fn is not None:
        return fn()
    path = getattr(_core, "__file__", None)
    if not path:
        return "none"
    with open(path, "rb") as f:
        return "file:" + hashlib.sha256(f.read()).hexdigest()[:16]

"""Safe output files: the one place where tcpfriendly writes results to disk.

Every command that writes into a directory (``tcpf run --out``, ``tcpf sweep --out``, ``tcpf
plot``) follows the same rules; those whose directory is shared by all their invocations
(``tcpf evaluate --out`` and its run cache, ``tcpf reproduce --out``) and those that write one
file (``tcpf report``, ``tcpf ns2 export --out``, ``tcpf ns2 compare --bank --report``, ``tcpf
model --plot``, ``tcpf sweep plot --out``) write each file by :func:`atomic_write` too:

- **Atomic files.** A file is written to a fresh temporary name in the same directory
  (``.<name>.<pid>.<random>.tmp``, created exclusively), flushed to disk, then renamed over
  the final name. A reader never sees half a file; a kill or a full disk leaves the previous
  file (or none), never a truncated one.
- **No symlinks followed.** A symbolic link at a file's final name is refused (without
  ``force``) and, with ``force``, replaced by the new file: its target is never written.
- **One directory, one output.** A directory we write into records what it holds in
  :data:`MANIFEST` (``.tcpf-out.json``: the command, an identity hash of what was run, the
  files written). Writing there again is allowed for the same command and identity (a rerun
  of the same run, or resuming the same sweep); a directory holding a *different* output --
  another command's, another identity's, or files we did not write (a non-empty directory
  without our manifest, such as ``/`` or a home directory) -- is refused unless ``force``.
- **Errors name the file.** An I/O error (disk full, file too large, permission) is an
  :class:`OutputError` naming the file, with the temporary removed.

:class:`OutputError` is a :class:`~tcpfriendly.errors.ScenarioError`, so the CLI reports it as
bad input: exit 2, one line.

    out = claim(path, "run", identity, force=force, field="--out", files=["result.json"])
    out.write_text("result.json", text)      # creates the directory if needed
    out.commit()                             # records the manifest
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from typing import IO, Any, Callable, Dict, Iterable, List, Optional

from .errors import ScenarioError

__all__ = ["MANIFEST", "OutputError", "OutDir", "claim", "claim_shared", "atomic_write", "atomic_text",
           "atomic_figure", "check_file", "make_dir", "identity_of",
           "figure_file"]

MANIFEST = ".tcpf-out.json"
_TMP_SUFFIX = ".tmp"


class OutputError(ScenarioError):
    """An output directory or file cannot be (or may not be) written; the message names it."""

    def __init__(self, message: str, field: Optional[str] = "out"):
        super().__init__(message, field=field)


def identity_of(value: Any) -> str:
    """The identity hash (SHA-256 hex) of a JSON-able value, keys sorted."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return " ".join(str(exc).split()) or type(exc).__name__


def _is_io_error(exc: BaseException) -> bool:
    # pyarrow's and pandas' I/O failures are OSError subclasses (ArrowIOError is OSError)
    return isinstance(exc, OSError)


def temp_name(path: str) -> str:
    """A fresh temporary name next to ``path`` (the pid is the third field from the end, so a
    stale temporary of a dead process can be recognised)."""
    directory, base = os.path.split(path)
    return os.path.join(directory, f".{base}.{os.getpid()}.{secrets.token_hex(6)}{_TMP_SUFFIX}")


def stale_temp_pid(name: str) -> Optional[int]:
    """The pid in a temporary's name made by :func:`temp_name`, or None."""
    if not (name.startswith(".") and name.endswith(_TMP_SUFFIX)):
        return None
    parts = name.split(".")
    try:
        return int(parts[-3])
    except (IndexError, ValueError):
        return None


def atomic_write(path: str, write: Callable[[IO[bytes]], None], *, force: bool = False,
                 field: Optional[str] = "out", sync: bool = True) -> str:
    """Write ``path`` through ``write(binary_file)``: a temporary in the same directory,
    flushed (and fsync'ed unless ``sync`` is False: for files whose loss in a power cut is
    detected and repaired, such as a sweep's run cache), then renamed over ``path``. A symbolic link at ``path`` is refused
    unless ``force`` (then the link itself is replaced; its target is never opened). On any
    failure the temporary is removed; an I/O failure is an :class:`OutputError` naming
    ``path``. Returns ``path``."""
    path = os.fspath(path)
    if os.path.islink(path) and not force:
        raise OutputError.at(field, f"{path} is a symbolic link; refusing to write through it "
                                    "(remove it, or use --force to replace the link itself)")
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
        # a device, FIFO or socket: renaming over it would replace it (as root, /dev/full
        # became a regular file); never, whatever force says
        raise OutputError.at(field, f"cannot write {path}: it exists and is not a regular file "
                                    "(a device, FIFO or socket); choose a file name")
    tmp = temp_name(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(tmp, flags, 0o666)
    except OSError as exc:
        raise OutputError.at(field, f"cannot write {path}: {_describe(exc)}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            if sync:
                os.fsync(f.fileno())
        if os.path.isdir(path) and not os.path.islink(path):
            raise OutputError.at(field, f"cannot write {path}: it is a directory")
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if _is_io_error(exc) and not isinstance(exc, OutputError):
            raise OutputError.at(field, f"cannot write {path}: {_describe(exc)}") from None
        raise
    return path


def make_dir(path: "os.PathLike[str] | str", field: Optional[str], what: str = "") -> str:
    """Create directory ``path`` (and its parents) if missing; an :class:`OutputError` naming
    ``field`` and the directory ("cannot create <what><path>: <reason>") if it cannot be."""
    path = os.fspath(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError.at(field, f"cannot create {what}{path}: {_describe(exc)}") from None
    return path


def atomic_text(path: "os.PathLike[str] | str", text: str, *, field: Optional[str] = "out") -> str:
    """:func:`atomic_write` of ``text`` as UTF-8 (a report, a script, a table)."""
    data = text.encode("utf-8")
    return atomic_write(os.fspath(path), lambda f: f.write(data), field=field)


def atomic_figure(fig: Any, path: "os.PathLike[str] | str", *, field: Optional[str] = "out",
                  **savefig: Any) -> str:
    """:func:`atomic_write` of a matplotlib figure, in the format its name ends in (``.png``,
    ``.svg``, ``.pdf``, ...; a name without one gets ``.png``, as ``savefig`` gives it);
    ``savefig`` are ``Figure.savefig``'s other arguments (dpi, metadata). Returns the path."""
    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lstrip(".").lower()
    if not fmt:
        fmt = "png"
        path += ".png"
    return atomic_write(path, lambda f: fig.savefig(f, format=fmt, **savefig), field=field)


def check_file(path: "os.PathLike[str] | str", field: Optional[str], *, make_dirs: bool = False,
               example: str = "report.md") -> str:
    """Check the name of a file to be written, before anything is computed (a report written
    after a bank of simulations, a figure): not empty, not a directory (the message suggests
    ``example`` in it), device or FIFO, not a symbolic link (:func:`atomic_write` refuses to
    write through one), and its directory exists (unless ``make_dirs``: the caller creates
    it). Writes nothing; raises :class:`OutputError` naming ``field``; returns the name."""
    name = os.fspath(path)
    if not name:
        raise OutputError.at(field, "must be a file name, got ''")
    if os.path.islink(name):
        raise OutputError.at(field, f"{name} is a symbolic link; refusing to write through it "
                                    "(remove it, or choose another name)")
    if os.path.isdir(name):
        raise OutputError.at(field, f"{name} is a directory; give a file name such as "
                                    f"{os.path.join(name, example)}")
    if os.path.exists(name) and not os.path.isfile(name):
        raise OutputError.at(field, f"cannot write {name}: it exists and is not a regular file "
                                    "(a device, FIFO or socket); choose a file name")
    directory = os.path.dirname(os.path.abspath(name))
    if not make_dirs and not os.path.isdir(directory):
        raise OutputError.at(field, f"directory {directory} does not exist")
    return name


def figure_file(path: "os.PathLike[str] | str", field: Optional[str],
                formats: Iterable[str] = ("png", "svg", "pdf"), make_dirs: bool = False) -> str:
    """Check a figure's file name before anything is computed, and return its format: the
    name ends in one of ``formats`` (matplotlib would otherwise append ``.png`` to a name
    without one, or refuse the format after the work), and :func:`check_file` holds. Raises
    :class:`OutputError` naming ``field``."""
    name = os.fspath(path)
    formats = tuple(formats)
    ext = os.path.splitext(name)[1].lower().lstrip(".")
    if ext not in formats:
        raise OutputError.at(field, f"the file name must end in {', '.join('.' + f for f in formats)}; "
                                    f"got {name or repr(name)}")
    check_file(name, field, make_dirs=make_dirs, example="figure." + formats[0])
    return ext


def _read_manifest(directory: str) -> Optional[Dict[str, Any]]:
    path = os.path.join(directory, MANIFEST)
    if os.path.islink(path) or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as f:
            data = json.loads(f.read(1 << 20).decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("command"), str):
        return None
    return data


class OutDir:
    """A claimed output directory (see :func:`claim`): write files into it, then
    :meth:`commit` the manifest."""

    def __init__(self, path: str, command: str, identity: str, force: bool,
                 field: Optional[str], previous: Optional[Dict[str, Any]]):
        self.path, self.command, self.identity = path, command, identity
        self.force, self.field, self.previous = force, field, previous
        self.written: List[str] = []
        self._made = False

    def _ensure(self) -> None:
        if self._made:
            return
        make_dir(self.path, self.field)
        self._made = True

    def file(self, name: str) -> str:
        return os.path.join(self.path, name)

    def write_with(self, name: str, write: Callable[[IO[bytes]], None]) -> str:
        """Write ``name`` atomically through ``write(binary_file)``; returns its path."""
        self._ensure()
        path = atomic_write(self.file(name), write, force=self.force, field=self.field)
        if name not in self.written:
            self.written.append(name)
        return path

    def write_bytes(self, name: str, data: bytes) -> str:
        return self.write_with(name, lambda f: f.write(data))

    def write_text(self, name: str, text: str) -> str:
        return self.write_bytes(name, text.encode("utf-8"))

    def commit(self, extra: Iterable[str] = (), remove_stale: bool = True) -> str:
        """Record the manifest (command, identity, files). Files that the previous manifest
        of the same command listed and this output did not write are removed (a rerun without
        time series leaves no stale time-series CSV). ``extra`` names other entries this
        output owns (e.g. ``runs/``)."""
        from .version import __version__

        self._ensure()
        files = list(self.written) + [e for e in extra if e not in self.written]
        if remove_stale and self.previous is not None and self.previous.get("command") == self.command:
            for name in self.previous.get("files") or []:
                if (not isinstance(name, str) or name in files or name.endswith("/")
                        or os.sep in name or name in (".", "..", MANIFEST)):
                    continue
                path = self.file(name)
                if os.path.islink(path) or os.path.isfile(path):
                    try:
                        os.unlink(path)
                    except OSError:
                        pass
        record = {"tcpfriendly": __version__, "command": self.command,
                  "identity": self.identity, "files": files}
        text = json.dumps(record, indent=1) + "\n"
        return atomic_write(self.file(MANIFEST), lambda f: f.write(text.encode("utf-8")),
                            force=True, field=self.field)


def claim(directory: "os.PathLike[str] | str", command: str, identity: str, *,
          force: bool = False, field: Optional[str] = "out", files: Iterable[str] = (),
          legacy: Optional[Callable[[str], Optional[str]]] = None,
          force_flag: Optional[str] = "--force") -> OutDir:
    """Check that ``command`` may write its output (``identity``) into ``directory``, writing
    nothing yet. Allowed: a missing or empty directory, or one whose manifest records the same
    command and identity. Anything else (another output, or a non-empty directory without our
    manifest) is an :class:`OutputError` naming ``field`` unless ``force``. ``files`` are the
    names about to be written: a symbolic link among them is refused now (unless ``force``).
    ``legacy(directory)`` may return the identity of an output written before manifests
    existed (e.g. a sweep's ``sweep.json``), or None. ``force_flag`` is the option the
    messages offer (None: a command without one; they only say to choose another directory)."""
    path = os.fspath(directory)
    if not path:
        raise OutputError.at(field, "must be a directory name, got ''")
    previous = None
    if os.path.lexists(path) and not os.path.isdir(path):
        raise OutputError.at(field, f"{path} exists and is not a directory")
    if os.path.isdir(path):
        try:
            entries = os.listdir(path)
        except OSError as exc:
            raise OutputError.at(field, f"cannot read {path}: {_describe(exc)}") from None
        previous = _read_manifest(path)
        if previous is not None:
            same = previous.get("command") == command and previous.get("identity") == identity
            if not same and not force:
                what = previous.get("command")
                held = (f"the output of a different `tcpf {what}` (another scenario, seed or "
                        "spec)" if what == command else
                        f"the output of `tcpf {what}`, not of `tcpf {command}`")
                fix = f"use {force_flag} to replace it, or " if force_flag else ""
                raise OutputError.at(field, f"{path} holds {held}; {fix}choose another directory")
        elif entries:
            old = legacy(path) if legacy is not None else None
            if old is not None and old == identity:
                pass
            elif not force:
                why = (f"holds the output of a different `tcpf {command}`" if old is not None else
                       f"is not empty and holds no tcpfriendly output ({MANIFEST} missing)")
                fix = f"use {force_flag} to write into it anyway, or " if force_flag else ""
                raise OutputError.at(field, f"{path} {why}; {fix}choose a new or empty directory")
    if not force:
        for name in files:
            target = os.path.join(path, name)
            if os.path.islink(target):
                fix = f", or use {force_flag} to replace the link itself" if force_flag else ""
                raise OutputError.at(field, f"{target} is a symbolic link; refusing to write "
                                            f"through it (remove it{fix})")
    return OutDir(path, command, identity, force, field, previous)


def claim_shared(directory: "os.PathLike[str] | str", command: str, *, field: Optional[str],
                 files: Iterable[str] = (),
                 legacy: Optional[Callable[[str], Optional[str]]] = None) -> OutDir:
    """:func:`claim` for a command whose invocations all share one directory (its identity is
    the command itself: evaluations and their run cache, reproductions, figures), which has no
    ``--force``. ``legacy``: as for :func:`claim`; by default any directory written before
    manifests existed is taken as this command's."""
    return claim(directory, command, command, field=field, files=files, force_flag=None,
                 legacy=legacy if legacy is not None else (lambda _d: command))


"""Scenarios: load them from TOML or a dict, or build them with a small fluent API.

The Rust engine owns the schema: it validates a scenario and fills in every default
(:func:`normalize`). This module only turns TOML / Python values into the JSON the engine
reads, and turns the engine's ``ValueError`` into :class:`~tcpfriendly.ScenarioError`.
"""

from __future__ import annotations

import copy
import json
import math
import os
import stat
import sys
from typing import AbstractSet, Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from .errors import ScenarioError, ScenarioFileError, ScenarioTypeError, path_arg

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["Scenario", "ScenarioLike", "normalize", "expand", "algorithms"]

PathLike = Union[str, "os.PathLike[str]"]


def native():
    """The compiled engine module ``tcpfriendly._core`` (clear error when it is not built)."""
    try:
        from . import _core
    except ImportError as exc:
        raise ImportError(
            "tcpfriendly._core (the compiled simulator) is not built; run `bash scripts/setup.sh` "
            "or `maturin develop --release` in the repository"
        ) from exc
    return _core


def _call_engine(fn, *args):
    """Call a ``_core`` function; its FieldError (a bad scenario, with ``field`` and
    ``message``) becomes ScenarioError."""
    try:
        return fn(*args)
    except ScenarioError:
        raise
    except native().FieldError as exc:
        raise ScenarioError.from_engine(exc) from None
    except ValueError as exc:  # any other bad value the extension rejects: no field
        raise ScenarioError(str(exc)) from None


def _plain(value: Any, path: str, depth: int = 0) -> Any:
    """Copy ``value`` into plain JSON types, naming the field of anything that cannot be
    (and of tables or arrays nested more than ``MAX_NESTING`` deep)."""
    if isinstance(value, (Mapping, list, tuple)) and depth >= MAX_NESTING:
        raise ScenarioError.at(path or "<scenario>", f"tables or arrays nested more than {MAX_NESTING} levels deep")
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ScenarioError.at(path, f"must be a finite number, got {value}")
        return float(value)
    if isinstance(value, Mapping):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise ScenarioError(f"{path or '<scenario>'}: keys must be strings, got {key!r}", field=path)
            out[key] = _plain(item, f"{path}.{key}" if path else key, depth + 1)
        return out
    if isinstance(value, (list, tuple)):
        return [_plain(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(value)]
    if hasattr(value, "item") and callable(value.item):  # numpy scalars
        try:
            return _plain(value.item(), path, depth)
        except (TypeError, ValueError):
            pass
    raise ScenarioError(
        f"{path or '<scenario>'}: unsupported value {value!r} of type {type(value).__name__} "
        "(use numbers, strings, booleans, tables and arrays)", field=path
    )


# A scenario file is a few kilobytes; a larger one (or a device such as /dev/zero) is refused
# before it is read into memory. The same limit holds for every TOML input (read_toml_file).
MAX_SCENARIO_BYTES = 16 * 1024 * 1024
# Tables and arrays nest a few levels in any scenario; deeper input is refused, not recursed into.
MAX_NESTING = 64


def _read_toml(text: str, source: str) -> Dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ScenarioError(f"malformed TOML in {source}: {exc}", field=None) from None
    except RecursionError:
        raise ScenarioError(f"malformed TOML in {source}: tables or arrays nested too deeply "
                            f"(a scenario needs a few levels)", field=None) from None


def read_bounded(path: Any, what: str, field: Optional[str] = None,
                 limit: int = MAX_SCENARIO_BYTES,
                 head: Optional[Callable[[bytes], None]] = None) -> bytes:
    """The bytes of an input file, at most ``limit`` of them: the one bounded reader of every
    input file (TOML inputs through :func:`read_toml_file`, run results for ``tcpf plot`` and
    ``tcpf report``). A file that cannot be opened, or is larger than ``limit`` (or endless,
    such as /dev/zero), raises :class:`ScenarioFileError` naming it ("cannot read ``what``
    PATH: ..."), before more than ``limit`` bytes are held. ``head``, if given, is called with
    the first 64 KiB and may raise: input that cannot be of the expected kind is refused
    before the rest is read."""
    name = path_arg(path, field or what, f"the path of a {what}")
    first = min(limit + 1, _HEAD_BYTES) if head is not None else limit + 1
    try:
        with open(name, "rb") as f:
            st = os.fstat(f.fileno())
            if stat.S_ISREG(st.st_mode) and st.st_size > limit:
                raw = None  # a regular file's size is known: refused without reading it
            else:
                raw = f.read(first)
                if head is not None:
                    head(raw)
                if len(raw) == first and first <= limit:
                    raw += f.read(limit + 1 - first)
    except OSError as exc:
        raise ScenarioFileError(f"cannot read {what} {name}: {exc.strerror or type(exc).__name__}",
                                field=field) from None
    if raw is None or len(raw) > limit:
        raise ScenarioFileError(f"cannot read {what} {name}: larger than "
                                f"{limit // (1024 * 1024)} MiB, the limit for a {what}",
                                field=field)
    return raw


_HEAD_BYTES = 64 * 1024


def read_json_object(path: Any, what: str, field: Optional[str], limit: int) -> Dict[str, Any]:
    """The object of :func:`read_json_text`."""
    return read_json_text(path, what, field, limit)[1]


def read_json_text(path: Any, what: str, field: Optional[str], limit: int):
    """(text, object) of a JSON object read from an output file (a run result, an evaluation) through
    :func:`read_bounded`: input that does not start like a JSON object (such as /dev/zero) is
    refused before the rest is read; each failure is a ScenarioError naming ``field`` and the
    file ("PATH: not a run result (not a JSON object)", "not valid JSON (..., line N)")."""
    name = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path

    def an_object(head: bytes) -> None:
        if head.lstrip()[:1] not in (b"{", b""):
            raise ScenarioError.at(field, f"{name}: not a {what} (not a JSON object)")

    raw = read_bounded(path, what, field, limit=limit, head=an_object)
    try:
        text = raw.decode("utf-8")
        data = json.loads(text)
    except UnicodeDecodeError:
        raise ScenarioError.at(field, f"{name}: not a UTF-8 text file") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError.at(field, f"{name}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    except RecursionError:
        raise ScenarioError.at(field, f"{name}: not a {what} (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ScenarioError.at(field, f"{name}: not a {what} (not a JSON object)")
    return text, data


def read_toml_file(path: Any, what: str = "scenario file", field: Optional[str] = None) -> Dict[str, Any]:
    """Read a TOML input file (a scenario, sweep spec, experiment, thresholds or bank file):
    the one reader, so each refuses the same bad input with one line naming the file.

    ``what`` names the kind of file in the messages ("cannot read sweep file PATH: ...");
    ``field`` is the error's field (an option such as ``--thresholds``). A file that cannot be
    opened raises :class:`~tcpfriendly.errors.ScenarioFileError`; one larger than
    :data:`MAX_SCENARIO_BYTES` (or endless, such as /dev/zero) is refused before it is read
    into memory; text that is not UTF-8 or not TOML raises :class:`ScenarioError`
    ("malformed TOML in PATH: ...")."""
    raw = read_bounded(path, what, field)
    name = os.fspath(path)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"malformed TOML in {name}: not UTF-8 text ({exc.reason} at byte {exc.start})",
                            field=field) from None
    try:
        return _read_toml(text, name)
    except ScenarioError as exc:
        if field is None:
            raise
        raise ScenarioError(str(exc), field=field) from None


def _drop_none(d: Mapping[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in d.items() if v is not None}


class Scenario:
    """A simulation scenario: a dumbbell bottleneck, TCP settings and groups of flows.

    Build one from a TOML file or string, from a dict with the same structure, or with the
    fluent builder::

        s = (Scenario.dumbbell(rate="15Mbps", delay="50ms", queue="red", limit="2.5bdp",
                               duration=120)
             .add_flows(16, "tcp", recovery="sack", access_delay="1ms..10ms")
             .add_flows(16, "gaimd", params={"alpha": 0.31, "keep": 0.875}))

    A ``Scenario`` holds exactly what was given; the engine fills in defaults
    (see :meth:`normalized`). Validation happens in :meth:`validate`, :meth:`normalized` and
    :func:`tcpfriendly.run`, which raise :class:`~tcpfriendly.ScenarioError` naming the field.
    """

    def __init__(self, data: Optional[Mapping[str, Any]] = None):
        if data is None:
            data = {}
        if isinstance(data, Scenario):
            data = data.to_dict()
        if not isinstance(data, Mapping):
            raise ScenarioError(
                f"<scenario>: expected a table/dict, got {type(data).__name__}"
            )
        self._data: Dict[str, Any] = _plain(data, "")

    # ----- constructors -------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Scenario":
        """A scenario from a dict shaped like the TOML file (copied)."""
        return cls(data)

    @classmethod
    def from_toml_string(cls, text: str, source: str = "<string>") -> "Scenario":
        """Parse TOML text. ``source`` names the text in error messages."""
        return cls(_read_toml(text, source))

    @classmethod
    def from_toml(cls, path: PathLike) -> "Scenario":
        """Read a TOML scenario file.

        Raises :class:`~tcpfriendly.errors.ScenarioFileError` if it cannot be read and
        :class:`~tcpfriendly.ScenarioError` if it is not valid TOML.
        """
        return cls(read_toml_file(path, "scenario file"))

    @classmethod
    def dumbbell(
        cls,
        rate: Any,
        delay: Any,
        queue: Optional[str] = None,
        limit: Any = None,
        duration: Any = None,
        *,
        ecn: Optional[bool] = None,
        red: Optional[Mapping[str, Any]] = None,
        loss: Optional[Mapping[str, Any]] = None,
        bottleneck: Optional[Mapping[str, Any]] = None,
        **options: Any,
    ) -> "Scenario":
        """Start a dumbbell scenario (add flows with :meth:`add_flows`).

        ``rate``, ``delay``, ``queue``, ``limit``, ``ecn``, ``red`` and ``loss`` (and any
        extra keys in ``bottleneck``) go to the ``[bottleneck]`` table; other keyword
        options (``seed``, ``packet_size``, ``max_window``, ``measure``, ``tcp``, ...) are
        top-level keys. Arguments left as ``None`` take the engine's defaults.
        """
        link = _drop_none(dict(rate=rate, delay=delay, queue=queue, limit=limit, ecn=ecn, red=red, loss=loss))
        if bottleneck:
            link.update(bottleneck)
        data = _drop_none(dict(duration=duration, **options))
        data["bottleneck"] = link
        return cls(data)

    @classmethod
    def network(cls, duration: Any = None, **options: Any) -> "Scenario":
        """Start a scenario on a general topology: add routers' links with :meth:`add_link`
        and flows (with ``path=[...]`` or ``from_``/``to``) with :meth:`add_flows`.

        Keyword options (``seed``, ``packet_size``, ``max_window``, ``tcp``, ...) are
        top-level keys.
        """
        data = _drop_none(dict(duration=duration, **options))
        data["links"] = []
        return cls(data)

    def add_link(self, from_: str, to: str, rate: Any, delay: Any, **fields: Any) -> "Scenario":
        """Append a ``[[links]]`` entry (duplex unless ``duplex=False``) and return ``self``.

        ``fields``: ``queue``, ``limit``, ``ecn``, ``red``, ``loss``, ``name``, ``duplex``.
        """
        links = self._data.setdefault("links", [])
        if not isinstance(links, list):
            raise ScenarioError.at("links", "must be an array of tables")
        link = {"from": from_, "to": to, "rate": rate, "delay": delay}
        link.update(_drop_none(fields))
        links.append(_plain(link, f"links[{len(links)}]"))
        return self

    # ----- fluent builder -----------------------------------------------------------------
    def add_flows(
        self,
        count: int,
        algorithm: str,
        params: Optional[Mapping[str, Any]] = None,
        **fields: Any,
    ) -> "Scenario":
        """Append a ``[[flows]]`` group and return ``self``.

        ``fields`` are the other keys of a flow group (``recovery``, ``access_delay``,
        ``access_rate``, ``receiver_delay``, ``start``, ``stop``, ``direction``, ``path``,
        ``from_``/``to``, ``rtt_noise``, and ``rate``/``on``/``off``/``phase``/``steps`` for
        UDP sources, ...); ``None`` values are left out so the engine fills its default.
        ``access_delay`` and ``receiver_delay`` each take a time (``"5ms"``), a range spread
        evenly over the group's flows (``"1ms..10ms"``) or a list of one time per flow; the
        per-flow values are ``access_delay_s``/``receiver_delay_s`` of :meth:`expand`.
        """
        if "from_" in fields:
            fields["from"] = fields.pop("from_")
        group = dict(count=count, algorithm=algorithm)
        if params is not None:
            group["params"] = dict(params)
        group.update(_drop_none(fields))
        index = len(self._data.get("flows", []))
        flows = self._data.setdefault("flows", [])
        if not isinstance(flows, list):
            raise ScenarioError.at("flows", "must be an array of tables")
        flows.append(_plain(group, f"flows[{index}]"))
        return self

    def copy(self) -> "Scenario":
        return Scenario(self._data)

    # ----- views --------------------------------------------------------------------------
    def to_dict(self) -> Dict[str, Any]:
        """A deep copy of the scenario as given (no defaults filled)."""
        return copy.deepcopy(self._data)

    def to_json(self) -> str:
        """The scenario as the JSON the engine reads."""
        return json.dumps(self._data, separators=(",", ":"), allow_nan=False)

    def to_toml(self) -> str:
        """The scenario as a TOML file's text, which ``tcpf run FILE`` and
        :meth:`from_toml` read back as the same scenario (as given: no defaults filled; see
        :meth:`normalized` for every value the engine will use)::

            with open("my.toml", "w") as f:
                f.write(scenario.to_toml())
        """
        from .toml_text import dumps
        return dumps(self._data)

    def validate(self) -> "Scenario":
        """Check the scenario with the engine; return ``self`` or raise ScenarioError."""
        self.normalized()
        return self

    def normalized(self, controllers: ControllerNames = None) -> Dict[str, Any]:
        """The validated scenario with every default filled in (as the engine sees it).
        ``controllers``: the names (or the ``{name: class}`` dict of :func:`tcpfriendly.run`)
        of Python controllers that flow groups may use as their ``algorithm``."""
        return json.loads(_call_engine(native().normalize, self.to_json(), controller_names(controllers)))

    def expand(self, seed: Optional[int] = None, controllers: ControllerNames = None) -> Dict[str, Any]:
        """The normalized scenario plus every per-flow value resolved for ``seed``
        (``controllers`` as for :meth:`normalized`)."""
        return json.loads(_call_engine(native().expand, self.to_json(), check_seed(seed),
                                       controller_names(controllers)))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Scenario):
            return self._data == other._data
        return NotImplemented

    __hash__ = None  # mutable

    def __repr__(self) -> str:
        return f"Scenario({self._data!r})"


ScenarioLike = Union[Scenario, Mapping[str, Any], str, "os.PathLike[str]"]


def as_scenario(scenario: ScenarioLike) -> Scenario:
    """Accept a Scenario, a dict, or the path of a TOML file."""
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, Mapping):
        return Scenario(scenario)
    if isinstance(scenario, (str, os.PathLike)):
        return Scenario.from_toml(scenario)
    raise ScenarioTypeError(
        f"scenario: expected a Scenario, a dict or the path of a TOML file, got "
        f"{type(scenario).__name__}", field="scenario")


#: Names of Python controllers: an iterable of names or a ``{name: class}`` mapping.
ControllerNames = Optional[Union[Mapping[str, Any], Sequence[str], AbstractSet[str]]]


def controller_names(controllers: ControllerNames) -> List[str]:
    """The names of ``controllers`` (a ``{name: class}`` mapping or an iterable of names) that
    the engine accepts as algorithms besides its registry; [] for None."""
    if controllers is None:
        return []
    if isinstance(controllers, str) or not isinstance(controllers, (Mapping, list, tuple, set, frozenset)):
        raise ScenarioTypeError(f"controllers: expected names or a dict {{name: Controller subclass}}, "
                                f"got {type(controllers).__name__}", field="controllers")
    names = list(controllers)
    for n in names:
        if not isinstance(n, str) or not n:
            raise ScenarioError(f"controllers: names must be non-empty strings, got {n!r}", field="controllers")
    return names


def check_seed(seed: Any, name: str = "seed") -> Optional[int]:
    if seed is None:
        return None
    if isinstance(seed, bool) or not isinstance(seed, int):
        if hasattr(seed, "item") and isinstance(getattr(seed, "item")(), int):
            seed = seed.item()
        else:
            raise ScenarioError.at(name, f"must be a non-negative integer, got {seed!r}")
    if not 0 <= seed < 2**64:
        raise ScenarioError.at(name, f"must be a non-negative integer, got {seed}")
    return int(seed)


def normalize(scenario: ScenarioLike, controllers: ControllerNames = None) -> Dict[str, Any]:
    """Validate ``scenario`` and return it with every default filled in (``controllers``: the
    Python controllers' names its flow groups may use, or the dict given to :func:`run`)."""
    return as_scenario(scenario).normalized(controllers)


def expand(scenario: ScenarioLike, seed: Optional[int] = None,
           controllers: ControllerNames = None) -> Dict[str, Any]:
    """The normalized scenario plus per-flow resolved values (delays, start times, ...);
    ``controllers`` as for :func:`normalize`."""
    return as_scenario(scenario).expand(seed, controllers)


def algorithms() -> List[Dict[str, Any]]:
    """The controller registry: one dict per algorithm with ``name``, ``family``,
    ``summary``, ``source``, ``params`` (``name``, ``default``, ``min``, ``max``, ``unit``,
    ``doc``) and ``taxonomy``."""
    return json.loads(native().algorithms())

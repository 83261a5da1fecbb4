"""Results of a run: the engine's JSON, with pandas views and a readable summary."""

from __future__ import annotations

import json
import math
import os
from typing import TYPE_CHECKING, Any, Dict, List, Mapping, Optional, Sequence, Tuple

if TYPE_CHECKING:  # annotations only: pandas is imported on first use (CLI start-up)
    import pandas as pd

from . import metrics
from .errors import ScenarioError, ScenarioTypeError, json_brief
from .outfiles import OutDir, atomic_write, claim, identity_of
# the text formatting of results (one home: tcpfriendly.formatting, shared with plot and report)
from .formatting import (_algorithm_label, _fixed, _int, _link_label, _num, _params_label,  # noqa: F401
                         _percent, _table)
from .scenario import ScenarioLike, _call_engine, as_scenario, check_seed, controller_names, native

__all__ = ["Result", "run"]

# Columns the JSON contract guarantees, in the order DataFrames show them first.
FLOW_COLUMNS = [
    "id", "group", "algorithm", "params", "direction", "throughput_bps", "goodput_bps",
    "packets_sent", "packets_delivered", "retransmissions", "loss_events", "timeouts",
    "loss_event_rate", "mean_rtt_s", "mean_cwnd",
]
#: Per-flow counters (integers; empty where a flow has none, such as a UDP source's loss events).
COUNT_COLUMNS = frozenset({"packets_sent", "packets_delivered", "retransmissions", "loss_events",
                           "timeouts", "fast_retransmits", "ecn_reactions"})
LINK_COLUMNS = ["name", "utilization", "drops", "marks", "mean_queue_pkts"]
TIMESERIES_KINDS = ("flows", "links")


def _frame(rows: List[Dict[str, Any]], first: Sequence[str]) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame(rows)
    ordered = [c for c in first if c in df.columns] + [c for c in df.columns if c not in first]
    return df[ordered] if len(df.columns) else df


def _csv_ready(df: pd.DataFrame) -> pd.DataFrame:
    """JSON-encode dict/list cells so a CSV cell holds parseable JSON, not a Python repr; a
    counter with empty cells (``loss_events`` of a UDP source) stays a column of integers."""
    import pandas as pd

    out = df.copy()
    for col in out.columns:
        dtype = out[col].dtype
        if dtype.kind == "f" and col in COUNT_COLUMNS:
            known = out[col].dropna()
            if (known == known.round()).all():
                out[col] = out[col].astype("Int64")
            continue
        if dtype != object and (dtype.kind in "biufcmM" or isinstance(dtype, pd.StringDtype)):
            continue  # numbers, booleans, times, strings: no dicts or lists there
        if out[col].map(lambda v: isinstance(v, (dict, list))).any():
            out[col] = out[col].map(
                lambda v: json.dumps(v, separators=(",", ":")) if isinstance(v, (dict, list)) else v
            )
    return out


# A run's result JSON is at most a few hundred MB (2e6 time-series rows, the engine's limit);
# a larger file (or a device such as /dev/zero) is refused before it is read (tcpf plot, report).
MAX_RESULT_BYTES = 1024 * 1024 * 1024


# The numbers of a flow's result that the metrics, tables and figures read (an integer id and
# group, the rest numbers or null); other keys (algorithm, direction, params, ...) pass.
_FLOW_NUMBERS = ("goodput_bps", "throughput_bps", "loss_event_rate", "mean_rtt_s", "mean_rto_s",
                 "mean_rtt_sample_s", "mean_cwnd", "packets_sent", "packets_delivered",
                 "retransmissions", "fast_retransmits", "loss_events", "timeouts", "ecn_reactions",
                 "start_s")


def check_result_shape(raw: Dict[str, Any], where: str, field: Optional[str]) -> None:
    """Refuse a run result (read back from a file: ``tcpf report``, ``tcpf plot``) whose parts
    are not what the engine writes, with a ScenarioError naming ``field``, the file (``where``)
    and the entry: ``flows`` a list of objects with a whole-number ``id`` and ``group`` and
    numbers (or null) where the engine writes numbers, ``links`` (if present) a list of objects
    with a ``name``, ``scenario`` an object, ``warnings`` strings, and ``timeseries`` (if any)
    tables of equally long columns of numbers (or null; a link's name in ``link``). A
    hand-edited file then fails here, in one line, not in a metric's arithmetic."""
    def is_number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool)

    flows = raw.get("flows")
    if not isinstance(flows, list):
        raise ScenarioError.at(field, f"{where}: not a run result (no \"flows\" list)")
    for i, f in enumerate(flows):
        if not isinstance(f, dict):
            raise ScenarioError.at(field, f"{where}: flows[{i}] is not an object")
        for key in ("id", "group"):
            v = f.get(key)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                raise ScenarioError.at(field, f"{where}: flows[{i}].{key} must be a whole number >= 0, "
                                              f"got {json_brief(v)}")
        for key in _FLOW_NUMBERS:
            v = f.get(key)
            if v is not None and not is_number(v):
                raise ScenarioError.at(field, f"{where}: flows[{i}].{key} must be a number or null, "
                                              f"got {json_brief(v)}")
    links = raw.get("links", [])
    if not isinstance(links, list):
        raise ScenarioError.at(field, f"{where}: \"links\" is not a list")
    for i, lk in enumerate(links):
        if not isinstance(lk, dict) or not isinstance(lk.get("name"), str):
            raise ScenarioError.at(field, f"{where}: links[{i}] is not an object with a name")
    if not isinstance(raw.get("scenario"), dict):
        raise ScenarioError.at(field, f"{where}: \"scenario\" is not an object")
    warnings = raw.get("warnings", [])
    if not isinstance(warnings, list) or not all(isinstance(w, str) for w in warnings):
        raise ScenarioError.at(field, f"{where}: \"warnings\" is not a list of strings")
    ts = raw.get("timeseries")
    if ts is None:
        return
    if not isinstance(ts, dict):
        raise ScenarioError.at(field, f"{where}: \"timeseries\" is not an object")
    # each table: columns of one length; numbers (or null) but for the link's name
    for table, key, text in (("flows", "flow", ()), ("links", "link", ("link",))):
        cols = ts.get(table)
        if cols is None:
            continue
        at = f"{where}: timeseries.{table}"
        if not isinstance(cols, dict) or not all(isinstance(v, list) for v in cols.values()):
            raise ScenarioError.at(field, f"{at} is not an object of columns (lists)")
        for need in ("time", key):
            if need not in cols:
                raise ScenarioError.at(field, f"{at} has no column {need!r}")
        n = len(cols["time"])
        for name, values in cols.items():
            if len(values) != n:
                raise ScenarioError.at(field, f"{at}.{name} has {len(values)} values, time has {n}")
            allowed = {str} if name in text else {int, float, type(None)}
            if set(map(type, values)) <= allowed:  # (map and set at C speed: 2e6 rows allowed)
                continue
            j, v = next((j, v) for j, v in enumerate(values) if type(v) not in allowed)
            kind = "a string" if name in text else "a number or null"
            raise ScenarioError.at(field, f"{at}.{name}[{j}] must be {kind}, got {json_brief(v)}")


class Result:
    """The outcome of :func:`run`.

    Attributes:
        raw: the parsed JSON result (dict).
        flows: one row per flow (pandas DataFrame).
        links: one row per link, the bottleneck first (pandas DataFrame).
    """

    def __init__(self, text: str, trace: Optional[bytes] = None, raw: Optional[Dict[str, Any]] = None):
        self._text = text
        #: The packet trace (the scenario's ``[trace]`` table) in its format, or None.
        self.trace: Optional[bytes] = trace
        # ``raw``: ``text`` already parsed (by a reader that checked it), not parsed twice
        self.raw: Dict[str, Any] = raw if raw is not None else json.loads(text)
        self._flows: Optional[pd.DataFrame] = None
        self._links: Optional[pd.DataFrame] = None
        #: The names of the Python controllers the run was given (:func:`run`'s
        #: ``controllers``): what ``expand(result.scenario, controllers=...)`` needs to accept
        #: the algorithms they name.
        self.controllers: Tuple[str, ...] = ()

    def _record_controllers(self, controllers: Mapping[str, type]) -> None:
        """Add ``"controllers": {name: {"class": NAME's origin, "fingerprint": ...}}`` to the
        result's JSON (after the engine's fields, which stay byte for byte): where each Python
        class came from (``FILE:CLASS`` or ``MODULE:CLASS`` as ``--controller NAME=`` takes it,
        None for a class typed at a prompt) and the hash of its code
        (:func:`tcpfriendly.controller.fingerprint`), so a saved result says which law made it."""
        from .controller import fingerprint, origin

        record = {n: {"class": origin(c), "fingerprint": fingerprint(c)} for n, c in controllers.items()}
        body = self._text.rstrip()
        if not body.endswith("}"):  # (the engine's JSON object)
            return
        self._text = body[:-1] + ',"controllers":' + json.dumps(record, separators=(",", ":")) + "}"
        self.raw["controllers"] = record

    def write_trace(self, path: "Optional[os.PathLike[str] | str]" = None) -> str:
        """Write the run's packet trace to ``path`` (default: the scenario's ``trace.file``);
        see :func:`write_trace`. Raises ScenarioError if the run recorded no trace."""
        if self.trace is None:
            raise ScenarioError.at("trace", "the run recorded no packet trace: add a [trace] "
                                            "table to the scenario (or tcpf run --trace FILE)")
        field = "trace.file"
        if path is None:
            path = self.scenario.get("trace", {}).get("file")
            if not path:
                raise ScenarioError.at("trace.file", "no file to write the trace to")
        return write_trace(path, self.trace, field=field)

    @property
    def version(self) -> Optional[str]:
        return self.raw.get("version")

    @property
    def scenario(self) -> Dict[str, Any]:
        """The normalized scenario the run used (every default filled)."""
        return self.raw.get("scenario", {})

    @property
    def flows(self) -> pd.DataFrame:
        if self._flows is None:
            self._flows = _frame(self.raw.get("flows", []), FLOW_COLUMNS)
        return self._flows

    @property
    def links(self) -> pd.DataFrame:
        if self._links is None:
            self._links = _frame(self.raw.get("links", []), LINK_COLUMNS)
        return self._links

    def has_timeseries(self) -> bool:
        return isinstance(self.raw.get("timeseries"), dict)

    def timeseries(self, kind: str = "flows") -> pd.DataFrame:
        """Sampled time series as a long DataFrame.

        ``kind="flows"``: columns time, flow, cwnd, ssthresh, rate_bps, srtt_s;
        ``kind="links"``: time, link, queue_pkts, utilization, drops, marks
        Only available when :func:`run` was given ``timeseries=SECONDS``.
        """
        if kind not in TIMESERIES_KINDS:
            raise ValueError(f"kind: must be one of {', '.join(TIMESERIES_KINDS)}, got {kind!r}")
        if not self.has_timeseries():
            raise ValueError("this result has no time series: pass timeseries=SECONDS to run()")
        import pandas as pd

        return pd.DataFrame(self.raw["timeseries"].get(kind, {}))

    def to_json(self) -> str:
        """The engine's JSON, unchanged (what ``tcpf run --json`` prints)."""
        return self._text

    def output_files(self) -> List[str]:
        """The names :meth:`write` writes: result.json, flows.csv, links.csv (and
        timeseries_flows.csv, timeseries_links.csv when the run recorded time series)."""
        names = ["result.json", "flows.csv", "links.csv"]
        if self.has_timeseries():
            names += [f"timeseries_{kind}.csv" for kind in TIMESERIES_KINDS]
        return names

    def write(self, directory: "os.PathLike[str] | str", force: bool = False,
              field: Optional[str] = "directory") -> List[str]:
        """Write result.json, flows.csv, links.csv (and timeseries_flows.csv,
        timeseries_links.csv when present) into ``directory``, creating it; returns the paths
        written.

        The rules of :mod:`tcpfriendly.outfiles`: each file is written to a temporary name and
        renamed; a symbolic link is never followed; a directory holding another output (a
        different scenario or seed, or files tcpfriendly did not write) is refused with an
        :class:`~tcpfriendly.outfiles.OutputError` unless ``force``; an I/O error names the
        file. Rewriting the same run's directory is allowed."""
        out = claim_run_dir(directory, self.scenario, force=force, field=field,
                            files=self.output_files())
        return self.write_claimed(out)

    def write_claimed(self, out) -> List[str]:
        """Write the files into ``out``, an :class:`~tcpfriendly.outfiles.OutDir` from
        :func:`claim_run_dir`, and record its manifest."""
        written = [out.write_text("result.json", self._text + "\n")]
        frames = [("flows.csv", self.flows), ("links.csv", self.links)]
        if self.has_timeseries():
            frames += [(f"timeseries_{k}.csv", self.timeseries(k)) for k in TIMESERIES_KINDS]
        for name, df in frames:
            written.append(out.write_text(name, _csv_ready(df).to_csv(index=False)))
        out.commit()
        return written

    # ----- readable summary ---------------------------------------------------------------
    def group_summary(self) -> pd.DataFrame:
        """One row per flow group: its algorithm, params, direction and every group metric of
        :mod:`tcpfriendly.metrics` (``goodput_bps_mean``, ``share`` = group mean goodput /
        mean flow goodput in the same direction, pooled ``loss_event_rate`` = loss events /
        packets sent, ``jain``, ``mean_rtt_s``, ``retransmissions``, ``timeouts``, ...)."""
        import pandas as pd

        flows = self.raw.get("flows") or []
        if not flows:
            return pd.DataFrame()
        groups = metrics.by_group(flows)
        values = metrics.group_metrics(flows, series=metrics.window_samples(self.raw))
        rows = []
        for group, fs in groups.items():
            first = fs[0]
            rows.append({"group": group, "algorithm": _algorithm_label(first),
                         "params": _params_label(first.get("params")),
                         "direction": metrics.direction(first), **values[group]})
        return pd.DataFrame(rows)

    def summary(self) -> str:
        """A plain-text report: one table row per flow group, then the links."""
        lines = []
        sc = self.scenario
        head = [f"tcpfriendly {self.version}" if self.version else "tcpfriendly"]
        for key, label, unit in (("duration", "duration", " s"), ("seed", "seed", "")):
            if key in sc:
                head.append(f"{label} {_num(sc[key])}{unit}")
        measure = sc.get("measure")
        if isinstance(measure, dict) and "from" in measure and "to" in measure:
            head.append(f"measured {_num(measure['from'])}..{_num(measure['to'])} s")
        lines.append(", ".join(head))
        link = sc.get("bottleneck")
        if isinstance(link, dict):
            lines.append(f"bottleneck {_link_label(link)}")
        lines.append("")

        groups = self.group_summary()
        if not groups.empty:
            show_dir = (groups["direction"] != "forward").any()
            headers = ["group", "algorithm", "params"] + (["dir"] if show_dir else []) + [
                "flows", "goodput Mb/s", "min..max Mb/s", "share", "loss-ev rate",
                "RTT ms", "cwnd", "rtx", "RTOs"]
            rows = []
            for _, r in groups.iterrows():
                rows.append([str(r["group"]), r["algorithm"], r["params"]]
                            + ([str(r["direction"])] if show_dir else []) + [
                    str(r["n_flows"]),
                    _fixed(r["goodput_bps_mean"] / 1e6, 3),
                    f"{_fixed(r['goodput_bps_min'] / 1e6, 3)}..{_fixed(r['goodput_bps_max'] / 1e6, 3)}",
                    _fixed(r["share"], 2),
                    _fixed(r["loss_event_rate"], 5),
                    _fixed(r["mean_rtt_s"] * 1e3, 1),
                    _fixed(r["mean_cwnd"], 1),
                    _int(r["retransmissions"]),
                    _int(r["timeouts"]),
                ])
            lines.append("flows (per group; share = group mean goodput / mean flow goodput in the same direction, 1 = fair)")
            lines.extend(_table(headers, rows, left=3 + (1 if show_dir else 0)))
            lines.append("")

        links = self.links
        if not links.empty:
            headers = ["link", "utilization", "drops", "marks", "mean queue pkts"]
            rows = [[str(r.get("name")), _percent(r.get("utilization")), _int(r.get("drops")),
                     _int(r.get("marks")), _fixed(r.get("mean_queue_pkts"), 1)]
                    for _, r in links.iterrows()]
            lines.append("links")
            lines.extend(_table(headers, rows, left=1))
        return "\n".join(lines).rstrip("\n")

    # ----- figures and notebook display (tcpfriendly.plot, tcpfriendly.report) ----------------
    def plot(self, kind: str = "cwnd", **options: Any):
        """One figure of this run as a matplotlib Figure: ``kind`` is ``cwnd``, ``rate``,
        ``rtt``, ``queue`` or ``goodput``; options as :func:`tcpfriendly.plot.figure`
        (``by``, ``flows``, ``bin_s``, ``links``, ``t0``, ``t1``). Save it with
        ``fig.savefig("cwnd.svg")`` or :func:`tcpfriendly.plot.save`."""
        from .plot import figure

        return figure(self, kind, **options)

    def _repr_html_(self) -> str:
        """Jupyter display: the group and link tables and the key figure."""
        from .report.notebook import result_html

        return result_html(self)

    def __repr__(self) -> str:
        return f"<tcpfriendly.Result: {len(self.raw.get('flows', []))} flows, {len(self.raw.get('links', []))} links>"


# ----- output directories -------------------------------------------------------------------
def run_identity(normalized: Dict[str, Any]) -> str:
    """What makes two runs' files the same output: the normalized scenario (its ``seed``
    included), as recorded in ``result.json``'s ``scenario``."""
    return identity_of({"scenario": normalized})


def claim_run_dir(directory: "os.PathLike[str] | str", normalized: Dict[str, Any], *,
                  force: bool = False, field: Optional[str] = "directory",
                  files: Sequence[str] = ("result.json", "flows.csv", "links.csv")) -> OutDir:
    """Check that the run of ``normalized`` may write into ``directory`` (see
    :func:`tcpfriendly.outfiles.claim`); nothing is written yet."""
    return claim(directory, "run", run_identity(normalized), force=force, field=field,
                 files=files)


# ----- running ----------------------------------------------------------------------------
def run(scenario: ScenarioLike, seed: Optional[int] = None,
        timeseries: Optional[float] = None,
        controllers: Optional[Dict[str, type]] = None) -> Result:
    """Simulate ``scenario`` and return a :class:`Result`.

    Args:
        scenario: a :class:`Scenario`, a dict shaped like the TOML file, or a TOML path.
        seed: overrides the scenario's ``seed`` (same scenario + seed => identical result).
        timeseries: sampling interval in seconds for per-flow and per-link time series
            (``Result.timeseries("flows"|"links")``); ``None`` records none.
        controllers: user-defined window controllers, ``{name: class}`` with each class a
            subclass of :class:`tcpfriendly.Controller`; flow groups use them by ``name`` as
            their ``algorithm``, with ``params`` passed to the class as keyword arguments.
            They run in Python on every ACK (slow; see :mod:`tcpfriendly.controller`).

    Raises:
        ScenarioError: the scenario or an argument is invalid (the message names the field).
        RuntimeError: the simulation failed while running (e.g. a formula evaluated to NaN,
            or a Python controller raised; the message names the flow and the time).
    """
    sc = as_scenario(scenario)
    seed = check_seed(seed)
    if timeseries is not None:
        if isinstance(timeseries, bool) or not isinstance(timeseries, (int, float)) \
                or not math.isfinite(timeseries) or timeseries <= 0:
            raise ScenarioError(f"timeseries: must be a positive number of seconds, got {timeseries!r}")
        timeseries = float(timeseries)
    traced = sc.to_dict().get("trace") is not None
    if controllers:
        controllers = _check_controllers(sc, controllers)
    args = (sc.to_json(), seed, timeseries) + ((controllers,) if controllers else ())
    if not traced:
        result = Result(_call_engine(native().run, *args))
    else:
        text, trace = _call_engine(native().run_traced, *args)
        result = Result(text, trace)
        if trace is not None and result.scenario.get("trace", {}).get("file"):
            result.write_trace()
    result.controllers = tuple(controllers or ())
    if controllers:
        result._record_controllers(controllers)
    return result


def write_trace(path: "os.PathLike[str] | str", trace: bytes, *, field: str = "trace.file") -> str:
    """Write a packet trace to ``path`` (relative to the current directory) through
    :func:`tcpfriendly.outfiles.atomic_write`: a temporary renamed into place, a symbolic link
    at ``path`` refused; the name never reaches a shell. Returns ``path``."""
    return atomic_write(os.fspath(path), lambda f: f.write(trace), field=field)


def check_controller_classes(controllers) -> Dict[str, type]:
    """``controllers`` as a plain ``{name: class}`` dict, after the checks that need no
    scenario: a mapping, names the engine accepts, each a :class:`tcpfriendly.Controller`
    subclass (ScenarioError naming ``controllers`` otherwise). Shared by :func:`run` and
    :class:`tcpfriendly.sweep.Sweep`."""
    from .controller import Controller
    if not isinstance(controllers, Mapping):
        raise ScenarioTypeError(f"controllers: must be a dict {{name: Controller subclass}}, got "
                                f"{type(controllers).__name__}", field="controllers")
    controller_names(controllers)  # the names' checks
    out = {}
    for name, cls in controllers.items():
        if not (isinstance(cls, type) and issubclass(cls, Controller)):
            raise ScenarioError(f"controllers[{name!r}]: must be a subclass of tcpfriendly.Controller, got {cls!r}")
        out[name] = cls
    return out


def _check_controllers(sc, controllers):
    """Check user-defined controller classes, and build each once with its group's params so
    that a bad parameter is reported as a scenario error naming the field."""
    out = check_controller_classes(controllers)
    normalized = sc.normalized(out)
    tcp = normalized.get("tcp", {})
    cap = normalized.get("max_window") or float("inf")
    for gi, group in enumerate(normalized.get("flows", [])):
        cls = out.get(group.get("algorithm"))
        if cls is None:
            continue
        params = group.get("params") or {}
        try:
            cls(initial_window=float(tcp.get("initial_window", 2)), max_window=float(cap), **params)
        except Exception as exc:  # noqa: BLE001 - any failure to build is the user's input
            raise ScenarioError(f"flows[{gi}].params: {cls.__name__}({', '.join(params)}) failed: "
                                f"{type(exc).__name__}: {exc}") from None
    return out

"""Differential checks against ns-2 2.35, the simulator the papers used.

`export_tcl(expanded)` turns an *expanded* scenario (the output of
`tcpfriendly._core.expand(json, seed)`) into a self-contained ns-2 Tcl script;
`run_ns2(expanded)` runs it with the installed `ns` binary and returns the
result in the same schema as the tcpfriendly engine; `tcpfriendly.ns2.compare` runs both
simulators on a scenario and compares them (`tcpf ns2 compare`). The facts behind every
knob set here (sizes, queue limits, RED details, TCP defaults) are collected in
docs/ns2-notes.md.

What ns-2 cannot express raises `Ns2Unsupported`, naming the scenario element.

Modules: `agents` (algorithm -> ns-2 agent, after the registry's `ns2` field), `check` (fields the exporter understands),
`network` (routers, links, routes), `tcl` (values and quoting), `export` (the script, with the
Tcl procedures of `procs.tcl`), `run` (running ns-2, parsing), `compare` (the comparator).
"""

from .agents import (ALGORITHMS, RATE_ALGORITHMS, Ns2Agent, Ns2RateAgent, Ns2Unsupported,
                     ns2_mappings, ns2_tfrc_weights, rfc5348_weights)
from .export import (DEFAULT_SAMPLE_INTERVAL_S, DROP_TRACE_FILE, engine_limits,
                     TCP_HEADER_BYTES, export_tcl)
from .run import count_loss_events, ns2_available, ns2_engine_id, parse_drop_trace, parse_output, run_ns2
from .tcl import tcl_quote

__all__ = ["Ns2Unsupported", "Ns2Agent", "Ns2RateAgent", "ALGORITHMS", "RATE_ALGORITHMS",
           "ns2_mappings", "export_tcl", "tcl_quote", "run_ns2",
           "ns2_available", "ns2_engine_id", "parse_output", "parse_drop_trace", "count_loss_events",
           "rfc5348_weights", "ns2_tfrc_weights", "engine_limits", "DEFAULT_SAMPLE_INTERVAL_S",
           "DROP_TRACE_FILE", "TCP_HEADER_BYTES"]

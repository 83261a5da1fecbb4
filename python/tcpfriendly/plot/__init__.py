"""The standard congestion-control figures of one run (matplotlib; PNG and SVG).

    from tcpfriendly import run, plot
    r = run("examples/quickstart.toml", timeseries=0.1)
    fig = r.plot("cwnd")                       # a matplotlib Figure (same as plot.figure(r, "cwnd"))
    plot.write(r, "out/plots")                 # every kind the run supports, as PNG + SVG

Kinds (:data:`KINDS`):

- ``cwnd``: congestion window (packets) vs time per flow, or the group mean with its min..max
  band; loss events (window reductions from the run's loss log) are marked on it. ssthresh is
  drawn when the time series carries it (the engine does not record it yet).
- ``rate``: delivered rate (goodput, Mb/s) averaged in bins of ``bin_s`` seconds (default 0.2 s,
  jin2001 §6.2.3), with the fair share of the bottleneck.
- ``rtt``: the smoothed RTT samples of the time series (ms).
- ``queue``: queue length (packets) and drops (and ECN marks when recorded) per sampling
  interval, one row per link.
- ``goodput``: per-flow goodput bars over the measurement window, each group's mean and Jain's
  index, and Jain's index over all flows. Needs no time series.

Every kind but ``goodput`` needs the run's time series: record one with ``timeseries = 0.1``
in the scenario file, ``tcpf run FILE --timeseries 0.1`` (``--plot`` records one) or
``run(..., timeseries=0.1)``; without it :class:`NoTimeSeries` (a ScenarioError, exit 2 from the
CLI) says so. Loss markers need ``loss_log = true`` in the scenario (``--plot`` sets it).

The numbers (bins, group means, Jain's index) come from :mod:`tcpfriendly.metrics`; this
package only draws them.
"""

from .core import (DEFAULT_BIN_S, KINDS, SERIES_KINDS, NoTimeSeries, available_kinds, default_bin,
                   figure, fit, rate_bin, save, svg_text, write)

__all__ = ["KINDS", "SERIES_KINDS", "DEFAULT_BIN_S", "NoTimeSeries", "available_kinds", "default_bin",
           "figure", "fit", "rate_bin", "save", "svg_text", "write"]

"""The metrics layer: every measure computed from a run, one definition each.

The engine (``crates/tcpf-core/src/metrics``) measures each flow and link once; the Python
side turns those measurements into the numbers the papers compare:

- :mod:`.groups` -- aggregates of a run's per-flow results per flow group (throughput,
  ``share``, ``fraction``, pooled ``loss_event_rate``, Jain index, CoV, counters).
  ``Result.group_summary()`` / ``tcpf run``, sweeps, ``tcpf ns2 compare`` and ``tcpf
  evaluate`` all call :func:`group_metrics`, so one name always means one number. Its names
  are importable from here (``metrics.group_metrics``, ``metrics.VERSION``, ...).
- :mod:`.dynamics` -- the time-series yardsticks (smoothness at a time scale, fairness over
  time, aggressiveness, responsiveness, convergence, sastry2005's trough test, tsao2007's
  measures), used by ``tcpf evaluate`` and usable on any run.

``VERSION`` is bumped whenever a definition in :mod:`.groups` changes, so that results
computed with an older definition (a sweep's cached run files) are not mixed with new ones.

    from tcpfriendly import metrics
    metrics.group_metrics(result.raw["flows"])[0]["loss_event_rate"]   # group 0, pooled
    metrics.dynamics.smoothness_cov(result.timeseries("flows"), flow=0, bin_s=0.2)
"""

from . import groups
from .groups import (FLOW_METRICS, GROUP_METRICS, INT_METRICS, LINK_METRICS, VERSION, RunFlows, run_flows, by_group, flow_metrics, link_metrics, cov, direction, fraction,
                     goodputs, group_metrics, jain, loss_event_rate, mean, rate_cov, cwnd_cov, window_samples, share,
                     aimd_law, formula_rate_pps, formula_ratio_cov, window_epochs, concave_fraction,
                     cwnd_concave_frac, reduction_indices, cwnd_sync_frac,
                     t975, total)
from .groups import __all__ as _groups_all

__all__ = list(_groups_all) + ["direction", "groups", "dynamics"]


def __getattr__(name: str):
    # :mod:`.dynamics` needs numpy and pandas: loaded on first use, so that runs, sweeps and
    # the CLI's start-up do not pay for them.
    if name == "dynamics":
        import importlib

        return importlib.import_module(f"{__name__}.dynamics")  # sets the attribute
    raise AttributeError(f"module 'tcpfriendly.metrics' has no attribute {name!r}")

"""tcpfriendly: simulate TCP-friendly congestion control.

    import tcpfriendly as tf
    s = (tf.Scenario.dumbbell(rate="5Mbps", delay="20ms", queue="red", limit="2.5bdp", duration=20)
         .add_flows(4, "tcp", recovery="sack")
         .add_flows(4, "gaimd", params={"alpha": 0.31, "keep": 0.875}))
    r = tf.run(s, seed=1)
    r.flows    # pandas DataFrame, one row per flow
    r.links    # pandas DataFrame, one row per link

β convention: ``beta`` is the fraction of the window REMOVED on a loss event; ``keep`` is the
kept fraction (yang2000, ns-2's ``decrease_num_``). Outputs always show the canonical ``beta``.
"""

from .controller import Controller
from .errors import InputError, ScenarioError, ScenarioFileError
from .results import Result, run
from .scenario import Scenario, algorithms, expand, normalize
from .version import __version__

__all__ = [
    "Scenario", "Result", "Controller", "InputError", "ScenarioError", "ScenarioFileError",
    "run", "normalize", "expand", "algorithms", "Sweep", "__version__",
]


# Subpackages reachable as attributes (``tf.models.rate(...)``), imported on first use so that
# ``import tcpfriendly`` stays cheap.
_SUBMODULES = {"models", "metrics", "sweep", "evaluate", "reproduce", "report", "plot", "ns2",
               "controller"}


def __getattr__(name: str):
    # Sweeps pull in pyarrow (and Dask when used): load them on first use.
    if name == "Sweep":
        from .sweep import Sweep
        return Sweep
    if name in _SUBMODULES:
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'tcpfriendly' has no attribute {name!r}")


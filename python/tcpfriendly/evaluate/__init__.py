"""``tcpf evaluate``: tsao2007's TCP-friendliness verdicts, jin2001's impulse response and
sastry2005's trough test for one algorithm, with TCP SACK as the reference.

    from tcpfriendly.evaluate import evaluate
    ev = evaluate("gaimd", params={"alpha": 0.2, "beta": 0.125}, quick=True)
    ev.grades      # {"S1": "Δ(O)", "S2 hom": "X", ...}
    ev.numbers     # the number behind each grade
    ev.metrics     # per experiment: jin2001 Table 5, sastry2005 Table I, S1-S4 tables
    evs = evaluate_many([("gaimd", {"alpha": 0.2, "beta": 0.125}), ("tcp", None)], out="ev/")

Simulations run on the sweep engine's executors (all cores, ``workers=``, ``dask=``), each
reduced where it ran; with ``out`` they are cached in ``out/runs`` so a rerun resumes.

The experiments (scenarios, assumptions, published values) live in ``experiments/``; the
thresholds in ``experiments/tsao2007/thresholds.toml``. Command line:
``python -m tcpfriendly.evaluate ALG [options]`` (see :func:`evaluate_command`).
"""

from .core import Evaluation, check_algorithm, evaluate, evaluate_many
from .grades import load_thresholds

__all__ = ["Evaluation", "evaluate", "evaluate_many", "evaluate_command", "add_arguments",
           "load_thresholds"]


def evaluate_command(argv=None) -> int:
    """The ``tcpf evaluate`` command: parse ``argv``, run, print; returns the exit code."""
    from .cli import evaluate_command as _cmd
    return _cmd(argv)


def add_arguments(parser) -> None:
    """Add ``tcpf evaluate``'s options to an argparse parser (for wiring into ``tcpf``)."""
    from .cli import add_arguments as _add
    _add(parser)

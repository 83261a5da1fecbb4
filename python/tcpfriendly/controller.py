"""Window controllers written in Python.

Subclass :class:`Controller`, override what your law changes, and pass the class to
:func:`tcpfriendly.run` under the name your scenario uses::

    import tcpfriendly as tf

    class Halving(tf.Controller):
        \"\"\"AIMD(alpha, beta): +alpha per RTT, W <- W - beta*W per loss event.\"\"\"
        def __init__(self, alpha=1.0, beta=0.5, **kw):
            super().__init__(**kw)
            self.alpha, self.beta = alpha, beta

        def on_ack(self, ack):
            if self.cwnd < self.ssthresh:          # slow start: +1 per ACK
                self.cwnd = min(self.cwnd + 1.0, self.max_window)
            else:                                   # +alpha per RTT, applied per ACK
                self.cwnd = min(self.cwnd + self.alpha / self.cwnd, self.max_window)

        def on_loss_event(self, ev):
            self.ssthresh = self.cwnd = max(ev.window * (1 - self.beta), 2.0)

    scenario = tf.Scenario.dumbbell(rate="10Mbps", delay="20ms", duration=30) \\
        .add_flows(2, "halving", params={"alpha": 0.5}) .add_flows(2, "tcp")
    result = tf.run(scenario, controllers={"halving": Halving})

The engine calls into Python on every ACK, so these flows run one to two orders of
magnitude slower than the built-in controllers (which are compiled Rust); use them to try an
idea, then write it as a formula (``algorithm = "formula"``) or in Rust for large sweeps.

The transport (slow start's exit, loss recovery, timeouts, RTT measurement) stays in the
engine; a controller only sets ``cwnd`` and ``ssthresh`` (packets). An exception raised in a
method stops the run with a ``RuntimeError`` naming the flow, the simulated time, the method
and the original exception.
"""

from collections import namedtuple

#: An ACK that acknowledged new data outside loss recovery. ``now`` and ``rtt`` in seconds;
#: ``rtt`` is the sample this ACK carried (None if none); ``min_rtt`` the smallest so far.
Ack = namedtuple("Ack", ["now", "acked", "rtt", "min_rtt", "in_flight"])
#: A loss event (losses within one RTT of the first, or an ECN echo); ``window`` is the window
#: in use when it was detected (packets).
LossEvent = namedtuple("LossEvent", ["now", "window", "in_flight", "ecn"])
#: A retransmission timeout.
Timeout = namedtuple("Timeout", ["now", "window", "in_flight"])

INF = float("inf")


class Controller:
    """Base class: standard TCP (slow start, AIMD(1, 1/2), timeout to one packet).

    The engine passes ``initial_window`` and ``max_window`` (the receiver window cap) as
    keyword arguments, together with the group's ``params``; accept your parameters as keyword
    arguments and pass the rest to ``super().__init__``. Keep ``self.cwnd`` and
    ``self.ssthresh`` up to date: the engine reads them after every call.
    """

    def __init__(self, initial_window=2.0, max_window=INF):
        self.cwnd = float(initial_window)
        self.ssthresh = INF
        self.max_window = float(max_window)

    def on_ack(self, ack):
        """New data acknowledged (outside loss recovery): grow the window."""
        if self.cwnd < self.ssthresh:
            self.cwnd = min(self.cwnd + 1.0, self.max_window)
        else:
            self.cwnd = min(self.cwnd + 1.0 / self.cwnd, self.max_window)

    def on_rtt_sample(self, now, rtt):
        """Every RTT sample, duplicate ACKs included (delay-based laws). Override only if
        needed: when it is not overridden the engine skips the call."""

    def on_loss_event(self, ev):
        """A loss event: decrease the window once."""
        self.ssthresh = max(ev.window / 2.0, 2.0)
        self.cwnd = self.ssthresh

    def on_timeout(self, to):
        """A retransmission timeout: threshold to half the window, window to one packet."""
        self.ssthresh = max(to.window / 2.0, 2.0)
        self.cwnd = 1.0


def fingerprint(cls):
    """What a run of ``cls`` depends on, as a hash: the code of its methods and its
    class-level settings (and those of its bases outside tcpfriendly), with the files those
    methods are defined in (for the module-level helpers they call). Caches of runs (``tcpf
    evaluate --out``) key a Python controller's runs by it, so an edited class never reuses
    the old class's results. None when a method's file cannot be read (a class typed into
    ``python -c`` or an interactive prompt): its runs are then not cached on disk. Helpers
    imported from other modules are not covered."""
    import hashlib

    h = hashlib.sha256()
    files = set()
    for c in cls.__mro__:
        if c is object or c.__module__.split(".")[0] == "tcpfriendly":
            continue
        h.update(f"class {c.__module__}.{c.__qualname__}\n".encode())
        for name, member in sorted(vars(c).items()):
            fn = _function(member)
            if fn is not None:
                h.update(f"def {name}\n".encode())
                _hash_code(h, fn.__code__)
                files.add(fn.__code__.co_filename)
            elif isinstance(member, (bool, int, float, str, tuple)) and name != "__firstlineno__":
                h.update(f"{name}={member!r}\n".encode())  # class-level settings
    for f in sorted(files):
        if f.startswith("<"):  # "<string>", "<stdin>": no file to read
            return None
        try:
            with open(f, "rb") as fh:
                h.update(fh.read())
        except OSError:
            return None
    return h.hexdigest()[:16]


def origin(cls):
    """Where ``cls`` can be loaded from, as ``--controller NAME=`` takes it: ``MODULE:CLASS`` for
    an importable module, ``FILE:CLASS`` for a class loaded from a file (``--controller
    NAME=my_cc.py:MyCC``), None for a class with neither (typed at a prompt)."""
    import sys

    mod = cls.__module__
    if mod != "__main__" and getattr(sys.modules.get(mod), "__spec__", None):
        found = sys.modules[mod]
        for part in cls.__qualname__.split("."):
            found = getattr(found, part, None)
        if found is cls:  # the module really holds it (not a class exec'd into a dict)
            return f"{mod}:{cls.__qualname__}"
    for member in vars(cls).values():
        fn = _function(member)
        if fn is not None and fn.__code__.co_filename.endswith(".py"):
            return f"{fn.__code__.co_filename}:{cls.__qualname__}"
    return None


def _function(member):
    """The Python function a class attribute defines (a method, classmethod or
    staticmethod), or None."""
    import inspect

    fn = getattr(member, "__func__", member)
    return fn if inspect.isfunction(fn) else None


def _hash_code(h, code):
    """Feed a code object's instructions, names and constants (nested code included) to
    ``h``: what it computes, not where it sits in its file."""
    h.update(code.co_code)
    h.update(repr((code.co_names, code.co_varnames, code.co_freevars)).encode())
    for k in code.co_consts:
        if hasattr(k, "co_code"):
            _hash_code(h, k)
        else:
            h.update(repr(k).encode())


def identity(controllers, prints, algorithms):
    """What a run's cache key holds of the Python controllers among its flows' ``algorithms``:
    ``({name: fingerprint}, unsourced)``, in name order, a class without a source
    (``prints[name]`` None) standing as its identity in this process, and ``unsourced`` True
    when there is one (such runs are never cached on disk). ``prints``: ``{name:
    fingerprint(cls)}`` of ``controllers``. The one rule of ``tcpf evaluate``'s run cache and a
    sweep's run keys."""
    used = sorted(set(algorithms) & set(prints))
    return ({n: prints[n] or f"object-{id(controllers[n])}" for n in used},
            any(prints[n] is None for n in used))


def shippable(controllers):
    """``{name: "MODULE:CLASS" or "FILE:CLASS"}`` when every class of ``controllers`` can be
    loaded again in a worker process as the same code (a ``--controller`` file, or a class of
    an importable module: reloaded here once and compared by :func:`fingerprint`); None
    otherwise: a class typed at a prompt, or defined in the main script (loading that file in a
    worker would run the script again), runs in this process."""
    specs = {}
    for name, cls in (controllers or {}).items():
        where, print_ = origin(cls), fingerprint(cls)
        if cls.__module__ == "__main__" or where is None or print_ is None:
            return None
        try:
            again = load_controllers([f"{name}={where}"])[name]
        except Exception:  # noqa: BLE001 - not reloadable: stays in this process
            return None
        if fingerprint(again) != print_:
            return None
        specs[name] = where
    return specs or None


#: Classes loaded in a worker process by :func:`worker_controllers`, by (specs, fingerprints).
_LOADED = {}


def worker_controllers(specs, prints):
    """In a worker process: the classes of ``specs`` (:func:`shippable`'s), loaded once per
    worker and checked against ``prints`` (name -> :func:`fingerprint` in the parent): a file
    edited since the parent loaded it is an error, not a silent mix of two laws."""
    key = (tuple(sorted(specs.items())), tuple(sorted(prints.items())))
    if key not in _LOADED:
        classes = load_controllers([f"{n}={w}" for n, w in specs.items()])
        for n, c in classes.items():
            if fingerprint(c) != prints[n]:
                raise RuntimeError(f"controller {n}: {specs[n]} changed since this run started "
                                   "(the hash of its code differs); rerun")
        _LOADED[key] = classes
    return _LOADED[key]


def load_controllers(specs, option="--controller"):
    """``NAME=MODULE:CLASS`` specs (``tcpf run --controller``, ``tcpf evaluate --controller``)
    -> ``{NAME: class}``. MODULE is an importable module or a ``.py`` file. Any failure,
    including a module that calls ``sys.exit``, is the user's input: :class:`ScenarioError`
    naming ``option``. The one loader of the command line's controllers."""
    import importlib
    import importlib.util

    from .errors import ScenarioError

    out = {}
    for spec in specs or []:
        name, sep, target = str(spec).partition("=")
        module, sep2, cls_name = target.rpartition(":")
        if not (sep and sep2 and name and module and cls_name):
            raise ScenarioError(f"{option}: expected NAME=MODULE:CLASS, got {spec!r}")
        try:
            if module.endswith(".py"):
                loader = importlib.util.spec_from_file_location(f"_tcpf_user_{name}", module)
                if loader is None or loader.loader is None:
                    raise ImportError(f"cannot load {module}")
                mod = importlib.util.module_from_spec(loader)
                loader.loader.exec_module(mod)  # the user's own file, by request
            else:
                mod = importlib.import_module(module)
            out[name] = getattr(mod, cls_name)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - any import failure (even a
            # module that calls sys.exit) is bad input, reported as such with exit code 2
            from .errors import one_line
            raise ScenarioError(f"{option} {name}: cannot load {target}: "
                                f"{type(exc).__name__}: {one_line(exc)}") from None
    return out

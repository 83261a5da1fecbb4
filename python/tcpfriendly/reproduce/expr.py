"""The small expression language of ``published.toml``'s ``ours = "..."``: arithmetic,
comparisons, ``and``/``or``/``not``, attribute access (``t1.alpha``), indexing
(``s["0.15"]``) and calls of the functions in :data:`FUNCTIONS`. Parsed with :mod:`ast` and
walked here; nothing is ever passed to ``eval``."""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, Dict, List, Mapping

from ..errors import ScenarioError
from ..metrics.groups import mean
from ..metrics.transients import LowerBound, compare_censored

__all__ = ["evaluate_expr", "expr_names", "FUNCTIONS", "Series", "Undecided", "NotRun"]


class NotRun:
    """A value the simulator could not produce: a part of an evaluation whose experiment it
    cannot express (ns-2 has no agent for the scheme, no model of the loss process), with
    ``reason``. An expression that reaches one, in any operand, index or argument, is not run
    with it (:func:`evaluate_expr` returns it): a claim built on it is neither matched nor
    differing."""

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"not run: {self.reason}"

    __str__ = __repr__


class _Absent(Exception):
    """Raised through :func:`evaluate_expr`'s walk when it reaches a :class:`NotRun`."""

    def __init__(self, value: NotRun):
        super().__init__(value.reason)
        self.value = value


class Undecided:
    """A yes/no value the data cannot decide: a comparison of right-censored times
    (:class:`LowerBound`) that the unknown excess could still turn (two censored times, or a
    bound below the other number). Falsy; ``reason`` says which comparison; ``not`` keeps it
    undecided. A claim whose value is undecided differs, with the reason stated."""

    def __init__(self, reason: str):
        self.reason = reason

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"undecided: {self.reason}"

    __str__ = __repr__


def _text(v: Any) -> str:
    if isinstance(v, LowerBound):
        return f"(above {float(v):.4g}: {v.note})" if v.note else f"(above {float(v):.4g})"
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def _censored_op(name: str, fn: Callable[[float, float], float]) -> Callable[[Any, Any], float]:
    """``fn`` on numbers where either may be a :class:`LowerBound`: a lower bound plus or
    minus an exact number, or times or over a positive one, is a lower bound; anything else
    with a censored operand (a difference of two, a censored divisor) has no value (NaN)."""
    def op(a, b):
        und = _undecided((a, b))
        if und is not None:
            return und
        la, lb = isinstance(a, LowerBound), isinstance(b, LowerBound)
        if not (la or lb):
            return fn(a, b)
        ok = (la and not lb and (name in ("+", "-") or name in ("*", "/") and b > 0)) or \
             (lb and not la and name == "+") or (lb and not la and name == "*" and a > 0)
        if not ok:
            return float("nan")
        v = fn(float(a), float(b))
        return LowerBound(v, (a if la else b).note) if math.isfinite(v) else v
    return op


class Series(dict):
    """An x -> y mapping (a curve): the value of a ``[inputs.*]`` series."""

    def xs(self):
        return sorted(self)

    def ys(self):
        return [self[x] for x in self.xs()]


def _series_op(fn: Callable[[float, float], float]) -> Callable[[Any, Any], Any]:
    def op(a, b):
        if isinstance(a, Series) and isinstance(b, Series):
            return Series({x: fn(a[x], b[x]) for x in a if x in b})
        if isinstance(a, Series):
            return Series({x: fn(v, b) for x, v in a.items()})
        if isinstance(b, Series):
            return Series({x: fn(a, v) for x, v in b.items()})
        return fn(a, b)
    return op


def _div(a: float, b: float) -> float:
    return a / b if b != 0 else float("nan")


_BIN = {ast.Add: _series_op(_censored_op("+", operator.add)),
        ast.Sub: _series_op(_censored_op("-", operator.sub)),
        ast.Mult: _series_op(_censored_op("*", operator.mul)),
        ast.Div: _series_op(_censored_op("/", _div)),
        ast.Pow: _series_op(_censored_op("**", operator.pow))}
_CMP = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _compare(op: str, a: Any, b: Any) -> Any:
    """``a op b``; with a censored time on either side, by the censoring rule
    (:func:`compare_censored`): an :class:`Undecided` when the excess could turn it (or
    when a side is itself undecided, e.g. the ``argmax`` of censored times)."""
    und = _undecided((a, b))
    if und is not None:
        return und
    r = compare_censored(op, a, b)
    return Undecided(f"cannot tell whether {_text(a)} {op} {_text(b)}") if r is None else r


def _censored_extreme(vals, hi: bool) -> Any:
    """The largest (``hi``) or smallest of values some of which may be censored. The largest
    of a set holding a censored time is a lower bound (the largest number, bounds included);
    the smallest is exact when an exact value is at most every bound, else a lower bound."""
    vals = list(vals)
    und = _undecided(vals)
    if und is not None:
        return und
    cens = [v for v in vals if isinstance(v, LowerBound)]
    if not cens:
        return max(vals) if hi else min(vals)
    nums = [float(v) for v in vals]
    exact = [v for v in vals if not isinstance(v, LowerBound)]
    if not hi and exact and min(exact) <= min(float(c) for c in cens):
        return min(exact)
    note = "; ".join(dict.fromkeys(c.note for c in cens))
    return LowerBound(max(nums) if hi else min(nums),
                      f"{len(cens)} of {len(vals)} values censored: {note}" if len(vals) > 1 else note)


def _values(s: Any):
    return list(s.values()) if isinstance(s, Mapping) else list(s)


def _at(s: Series, x: float) -> float:
    for k in s:
        if math.isclose(float(k), float(x), rel_tol=1e-9, abs_tol=1e-12):
            return s[k]
    raise ScenarioError(f"at: no point x = {x} in the series (has {sorted(s)})")


def _undecided(vals) -> Any:
    """The first :class:`Undecided` among ``vals``, or None: a value built from one is
    undecided too."""
    return next((v for v in vals if isinstance(v, Undecided)), None)


def _holds(r: Any) -> bool:
    """A comparison's result (:func:`_compare`) that is decided and true."""
    return not isinstance(r, Undecided) and bool(r)


def _fails(r: Any) -> bool:
    """A comparison's result that is decided and false."""
    return not isinstance(r, Undecided) and not r


def _arg_extreme(s: Series, hi: bool) -> Any:
    """The x of the largest (``hi``) or smallest y of ``s``, the first in ``s``'s order on a
    tie. With a censored y (:class:`LowerBound`) the x whose y is known to be at least (at
    most) every other y by :func:`compare_censored` — a bound of 700 s is the largest beside
    500 s, and the smallest value is an exact one at or below every bound — and an
    :class:`Undecided` naming the values when no y is (a bound below an exact y, or two
    bounds)."""
    vals = list(s.values())
    if not any(isinstance(v, (LowerBound, Undecided)) for v in vals):
        return max(s, key=lambda k: s[k]) if hi else min(s, key=lambda k: s[k])
    op = ">=" if hi else "<="
    for k in s:
        if all(_holds(_compare(op, s[k], s[j])) for j in s if j != k):
            return k
    name = "argmax" if hi else "argmin"
    return Undecided(f"{name}: cannot tell which y is the {'largest' if hi else 'smallest'} of "
                     + ", ".join(f"{_text(x)} -> {_text(v)}" for x, v in s.items()))


def _argmin(s: Series) -> Any:
    return _arg_extreme(s, hi=False)


def _argmax(s: Series) -> Any:
    return _arg_extreme(s, hi=True)


def _frac_in(s: Any, lo: float, hi: float) -> Any:
    """The fraction of the (non-NaN) values of ``s`` in ``[lo, hi]``. A censored value
    (:class:`LowerBound`) is placed by :func:`compare_censored`: outside when its bound is at
    or above ``hi``; below that the unknown excess could carry it out, so it may or may not
    lie inside, and the fraction is then :class:`Undecided`, naming how many values and
    which."""
    vals = [x for x in _values(s) if isinstance(x, Undecided) or not math.isnan(x)]
    if not vals:
        return float("nan")
    inside, unknown = 0, []
    for x in vals:
        r = [_compare(">=", x, lo), _compare("<=", x, hi)]
        if any(_fails(c) for c in r):
            continue
        if all(_holds(c) for c in r):
            inside += 1
        else:
            unknown.append(x)
    if unknown:
        return Undecided(f"frac_in: {len(unknown)} of {len(vals)} values may or may not lie in "
                         f"[{_text(lo)}, {_text(hi)}]: " + ", ".join(_text(x) for x in unknown[:5])
                         + (", ..." if len(unknown) > 5 else ""))
    return inside / len(vals)


def _in_order(name: str, op: str, xs, labels=None) -> Any:
    """Whether ``xs[i] op xs[j]`` for every i < j (``<``: strictly increasing), by
    :func:`_compare`: False when a pair fails whatever the censored values are, an
    :class:`Undecided` naming the first pair the censoring leaves open when none fails, else
    True. Every pair, not only neighbours: with censored values a pair of non-neighbours can
    decide (``ordered(> 300, > 100, 200)`` fails on its first and last). Without a censored
    value this is the neighbours' test (an order is transitive)."""
    xs = list(xs)
    undecided = None
    for i in range(len(xs)):
        for j in range(i + 1, len(xs)):
            r = _compare(op, xs[i], xs[j])
            if isinstance(r, Undecided):
                if undecided is None:
                    where = f" (at x = {_text(labels[i])} and {_text(labels[j])})" if labels else ""
                    undecided = Undecided(f"{name}{where}: {r.reason}")
            elif not r:
                return False
    return undecided if undecided is not None else True


def _increasing(s: Series) -> Any:
    return _in_order("increasing", "<", s.ys(), s.xs())


def _nondecreasing(s: Series) -> Any:
    return _in_order("nondecreasing", "<=", s.ys(), s.xs())


def _ordered(*xs: float) -> Any:
    return _in_order("ordered", "<", xs)


def _crossing(s: Series) -> float:
    """The first x where the series falls from positive to zero or below (linear
    interpolation between the two points); NaN if it never does."""
    xs = s.xs()
    for a, b in zip(xs, xs[1:]):
        ya, yb = s[a], s[b]
        if ya > 0 and yb <= 0:
            return a + (b - a) * ya / (ya - yb)
    return float("nan")


def _curve(xs: Series, ys: Series) -> Series:
    """The parametric curve (xs[t], ys[t]) of two series over the same parameter t."""
    return Series({xs[t]: ys[t] for t in xs if t in ys})


def _loglog_slope(s: Series) -> float:
    """Least-squares slope of log y against log x."""
    pts = [(math.log(x), math.log(y)) for x, y in s.items() if x > 0 and y > 0]
    if len(pts) < 2:
        return float("nan")
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx > 0 else float("nan")


def _below(s: Series, x: float) -> Series:
    """The points of ``s`` with x ≤ ``x``."""
    return Series({k: v for k, v in s.items() if k <= x * (1 + 1e-12)})


def _above(s: Series, x: float) -> Series:
    """The points of ``s`` with x ≥ ``x``."""
    return Series({k: v for k, v in s.items() if k >= x * (1 - 1e-12)})


def _when(s: Series, cond: Series, lo: float, hi: float) -> Any:
    """The points of ``s`` whose x has ``lo <= cond[x] <= hi``. The two comparisons are
    :func:`_compare`'s, so a censored ``cond[x]`` (:class:`LowerBound`) is dropped when the
    bound decides it is outside (``> 3`` in [0, 2]), and otherwise, its unknown excess possibly
    carrying it above ``hi`` (``> 3`` in [0, 5]), the whole result is an :class:`Undecided`
    naming the first such point; so is it when ``s``, ``cond``, ``lo``, ``hi`` or a ``cond[x]``
    is undecided itself. A point dropped whatever its excess never makes the result
    undecided. The values of ``s`` pass through as they are (censored or undecided: the
    functions applied next judge them)."""
    und = _undecided((s, cond, lo, hi))
    if und is not None:
        return Undecided(f"when: {und.reason}")
    out = Series()
    for k, v in s.items():
        if k not in cond:
            continue
        r = [_compare("<=", lo, cond[k]), _compare("<=", cond[k], hi)]
        if any(_fails(c) for c in r):
            continue
        if not all(_holds(c) for c in r):
            return Undecided(f"when: cannot tell whether the condition at x = {_text(k)}, "
                             f"{_text(cond[k])}, lies in [{_text(lo)}, {_text(hi)}]: "
                             + next(c.reason for c in r if isinstance(c, Undecided)))
        out[k] = v
    return out


def _diff(s: Series) -> Series:
    """Successive differences: at each x but the first, y(x) minus y at the previous x."""
    xs = s.xs()
    return Series({b: s[b] - s[a] for a, b in zip(xs, xs[1:])})


def _xs(s: Series) -> Series:
    """The curve x -> x over the points of ``s`` (its x values as values)."""
    return Series({x: float(x) for x in s})


def _abs(x: Any) -> Any:
    """``|x|``; a censored value at or above 0 stays the lower bound it is (``abs`` of a
    float would drop the censoring), an undecided value stays undecided."""
    if isinstance(x, Undecided) or isinstance(x, LowerBound) and x >= 0:
        return x
    return abs(x)


def _mean(s: Any) -> float:
    und = _undecided(_values(s))
    if und is not None:
        return und
    v = [x for x in _values(s) if not math.isnan(x)]
    m = mean(v)   # the metrics layer's mean; over censored values, of their bounds
    cens = [x for x in v if isinstance(x, LowerBound)]
    if cens:  # a mean over censored times is a lower bound
        return LowerBound(m, f"{len(cens)} of {len(v)} values censored: "
                             + "; ".join(dict.fromkeys(c.note for c in cens)))
    return m


def _extreme(hi: bool) -> Callable[..., Any]:
    def fn(*a):
        vals = _values(a[0]) if len(a) == 1 and not isinstance(a[0], (int, float, Undecided)) else list(a)
        return _censored_extreme(vals, hi)
    return fn


def _all(s: Any) -> Any:
    """Every value of ``s`` holds: False when one is decided false, else an
    :class:`Undecided` (the first) when one is undecided, else True."""
    vals = _values(s)
    if any(_fails(v) for v in vals):
        return False
    und = _undecided(vals)             # falsy: not `or True`
    return und if und is not None else True


def _strict(fn: Callable[..., Any], n: int = 1) -> Callable[..., Any]:
    """``fn`` whose first ``n`` arguments (a curve, or a number for ``sqrt``) are returned
    as they are when one is an :class:`Undecided` (a ``when`` or ``frac_in`` the censoring
    left open): what is computed from an undecided value is undecided."""
    def call(*args):
        und = _undecided(args[:n])
        return und if und is not None else fn(*args)
    return call


#: Functions callable from an expression.
FUNCTIONS: Dict[str, Callable[..., Any]] = {
    "abs": lambda x: _series_op(lambda a, _b: _abs(a))(x, 0) if isinstance(x, Series) else _abs(x),
    "min": _extreme(False),
    "max": _extreme(True),
    "mean": _strict(_mean), "at": _strict(_at), "argmin": _strict(_argmin),
    "argmax": _strict(_argmax), "frac_in": _strict(_frac_in),
    "increasing": _strict(_increasing), "nondecreasing": _strict(_nondecreasing), "ordered": _ordered,
    "crossing": _strict(_crossing), "curve": _strict(_curve, 2), "below": _strict(_below),
    "series": lambda *v: Series({float(i): x for i, x in enumerate(v)}), "when": _when,
    "above": _strict(_above), "diff": _strict(_diff), "xs": _strict(_xs),
    "loglog_slope": _strict(_loglog_slope), "sqrt": _strict(math.sqrt), "log": _strict(math.log),
    "exp": _strict(math.exp), "gamma": _strict(math.gamma),
    "all": _strict(_all), "len": _strict(lambda s: len(_values(s))),
}


def expr_names(text: str) -> List[str]:
    """The identifiers an expression (a claim's ``ours``, an ``expr`` input) refers to."""
    try:
        tree = ast.parse(str(text), mode="eval")
    except SyntaxError:
        return []
    return sorted({n.id for n in ast.walk(tree) if isinstance(n, ast.Name)})


def evaluate_expr(text: str, names: Mapping[str, Any], where: str = "ours") -> Any:
    """The value of ``text`` with the identifiers in ``names``, or the first :class:`NotRun`
    it reaches. Raises ScenarioError naming ``where`` for a syntax error, an unknown name or
    an unsupported construct."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ScenarioError(f"{where}: cannot parse {text!r}: {exc.msg}", field=where) from None

    def ev(node: ast.AST) -> Any:
        v = walk(node)
        if isinstance(v, NotRun):
            raise _Absent(v)
        return v

    def walk(node: ast.AST) -> Any:
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool)):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in names:
                return names[node.id]
            if node.id in ("true", "True"):
                return True
            if node.id in ("false", "False"):
                return False
            raise ScenarioError(f"{where}: unknown name {node.id!r} in {text!r} "
                                f"(known: {', '.join(sorted(names))})", field=where)
        if isinstance(node, ast.Attribute):
            base = ev(node.value)
            if isinstance(base, Mapping) and node.attr in base:
                return base[node.attr]
            raise ScenarioError(f"{where}: no field {node.attr!r} in {text!r}", field=where)
        if isinstance(node, ast.Subscript):
            base, key = ev(node.value), ev(node.slice)
            if isinstance(base, Series):
                return _at(base, float(key))
            try:
                return base[key]
            except (KeyError, IndexError, TypeError):
                raise ScenarioError(f"{where}: no item {key!r} in {text!r}", field=where) from None
        if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
            return _BIN[type(node.op)](ev(node.left), ev(node.right))
        if isinstance(node, ast.UnaryOp):
            v = ev(node.operand)
            if isinstance(node.op, ast.USub):
                return _series_op(lambda a, _b: -a)(v, 0) if isinstance(v, Series) else -v
            if isinstance(node.op, ast.UAdd):
                return v
            if isinstance(node.op, ast.Not):
                return v if isinstance(v, Undecided) else not v
        if isinstance(node, ast.BoolOp):
            # three-valued: an undecided part decides nothing the others do not
            vals = [ev(v) for v in node.values]
            und = [v for v in vals if isinstance(v, Undecided)]
            known = [v for v in vals if not isinstance(v, Undecided)]
            if isinstance(node.op, ast.And):
                return False if not all(known) else und[0] if und else True
            return True if any(known) else und[0] if und else False
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            undecided = None
            for op, right_node in zip(node.ops, node.comparators):
                right = ev(right_node)
                if type(op) not in _CMP:
                    return False
                r = _compare(_CMP[type(op)], left, right)
                if isinstance(r, Undecided):
                    undecided = undecided or r
                elif not r:
                    return False
                left = right
            return undecided if undecided is not None else True
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
            fn = FUNCTIONS.get(node.func.id)
            if fn is None:
                raise ScenarioError(f"{where}: unknown function {node.func.id!r} in {text!r} "
                                    f"(known: {', '.join(sorted(FUNCTIONS))})", field=where)
            return fn(*[ev(a) for a in node.args])
        if isinstance(node, ast.Tuple):
            return tuple(ev(e) for e in node.elts)
        raise ScenarioError(f"{where}: unsupported expression {ast.dump(node)[:40]} in {text!r}",
                            field=where)

    try:
        return ev(tree)
    except _Absent as absent:
        return absent.value

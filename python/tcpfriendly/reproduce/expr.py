"""The small expression language of ``published.toml``'s ``ours = "..."``: arithmetic,
comparisons, ``and``/``or``/``not``, attribute access (``t1.alpha``), indexing
(``s["0.15"]``) and calls of the functions in :data:`FUNCTIONS`. Parsed with :mod:`ast` and
walked here; nothing is ever passed to ``eval``."""

from __future__ import annotations

import ast
import math
import operator
from typing import Any, Callable, Dict, Mapping

from ..errors import ScenarioError

__all__ = ["evaluate_expr", "FUNCTIONS", "Series"]


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


_BIN = {ast.Add: _series_op(operator.add), ast.Sub: _series_op(operator.sub),
        ast.Mult: _series_op(operator.mul), ast.Div: _series_op(_div),
        ast.Pow: _series_op(operator.pow)}
_CMP = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
        ast.Eq: operator.eq, ast.NotEq: operator.ne}


def _values(s: Any):
    return list(s.values()) if isinstance(s, Mapping) else list(s)


def _at(s: Series, x: float) -> float:
    for k in s:
        if math.isclose(float(k), float(x), rel_tol=1e-9, abs_tol=1e-12):
            return s[k]
    raise ScenarioError(f"at: no point x = {x} in the series (has {sorted(s)})")


def _argmin(s: Series) -> float:
    return min(s, key=lambda k: s[k])


def _argmax(s: Series) -> float:
    return max(s, key=lambda k: s[k])


def _frac_in(s: Any, lo: float, hi: float) -> float:
    v = [x for x in _values(s) if not math.isnan(x)]
    return sum(1 for x in v if lo <= x <= hi) / len(v) if v else float("nan")


def _increasing(s: Series) -> bool:
    ys = s.ys()
    return all(b > a for a, b in zip(ys, ys[1:]))


def _nondecreasing(s: Series) -> bool:
    ys = s.ys()
    return all(b >= a for a, b in zip(ys, ys[1:]))


def _ordered(*xs: float) -> bool:
    return all(b > a for a, b in zip(xs, xs[1:]))


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


def _when(s: Series, cond: Series, lo: float, hi: float) -> Series:
    """The points of ``s`` whose x has ``lo <= cond[x] <= hi``."""
    return Series({k: v for k, v in s.items() if k in cond and lo <= cond[k] <= hi})


def _diff(s: Series) -> Series:
    """Successive differences: at each x but the first, y(x) minus y at the previous x."""
    xs = s.xs()
    return Series({b: s[b] - s[a] for a, b in zip(xs, xs[1:])})


def _xs(s: Series) -> Series:
    """The curve x -> x over the points of ``s`` (its x values as values)."""
    return Series({x: float(x) for x in s})


def _mean(s: Any) -> float:
    v = [x for x in _values(s) if not math.isnan(x)]
    return sum(v) / len(v) if v else float("nan")


#: Functions callable from an expression.
FUNCTIONS: Dict[str, Callable[..., Any]] = {
    "abs": lambda x: _series_op(lambda a, _b: abs(a))(x, 0) if isinstance(x, Series) else abs(x),
    "min": lambda *a: min(_values(a[0])) if len(a) == 1 and not isinstance(a[0], (int, float)) else min(a),
    "max": lambda *a: max(_values(a[0])) if len(a) == 1 and not isinstance(a[0], (int, float)) else max(a),
    "mean": _mean, "at": _at, "argmin": _argmin, "argmax": _argmax, "frac_in": _frac_in,
    "increasing": _increasing, "nondecreasing": _nondecreasing, "ordered": _ordered,
    "crossing": _crossing, "curve": _curve, "below": _below, "series": lambda *v: Series({float(i): x for i, x in enumerate(v)}), "when": _when, "above": _above, "diff": _diff, "xs": _xs, "loglog_slope": _loglog_slope, "sqrt": math.sqrt, "log": math.log, "exp": math.exp,
    "gamma": math.gamma, "all": lambda s: all(_values(s)), "len": lambda s: len(_values(s)),
}


def evaluate_expr(text: str, names: Mapping[str, Any], where: str = "ours") -> Any:
    """The value of ``text`` with the identifiers in ``names``. Raises ScenarioError naming
    ``where`` for a syntax error, an unknown name or an unsupported construct."""
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ScenarioError(f"{where}: cannot parse {text!r}: {exc.msg}", field=where) from None

    def ev(node: ast.AST) -> Any:
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
                return not v
        if isinstance(node, ast.BoolOp):
            vals = [ev(v) for v in node.values]
            return all(vals) if isinstance(node.op, ast.And) else any(vals)
        if isinstance(node, ast.Compare):
            left = ev(node.left)
            for op, right_node in zip(node.ops, node.comparators):
                right = ev(right_node)
                if type(op) not in _CMP or not _CMP[type(op)](left, right):
                    return False
                left = right
            return True
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

    return ev(tree)

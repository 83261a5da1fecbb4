"""tcpf reproduce's expression functions on right-censored values (a convergence time some run
did not reach before its phase ended: metrics.transients.LowerBound). Each function decides
when the bounds decide and is Undecided, saying why, when they cannot; on constructed series."""
import math

import pytest

from tcpfriendly.metrics.transients import LowerBound
from tcpfriendly.reproduce.expr import Series, Undecided, evaluate_expr
from tcpfriendly.reproduce.rules import compare

A700 = LowerBound(700.0, "a: 1 of 5 seeds did not reach the new level")
B300 = LowerBound(300.0, "b: 2 of 5 seeds did not reach the new level")


def ev(text, **names):
    return evaluate_expr(text, names)


def undecided(v, *words):
    assert isinstance(v, Undecided), v
    for w in words:
        assert w in v.reason, (w, v.reason)
    return True


# ----- ordered ---------------------------------------------------------------------------------
def test_ordered_decides_with_a_bound_above_the_exact_values():
    # a time above 700 s comes after 100 s and 500 s, whatever its excess
    assert ev("ordered(x, y, a)", x=100.0, y=500.0, a=A700) is True
    assert ev("ordered(a, x)", x=500.0, a=A700) is False        # > 700 cannot be below 500


def test_ordered_is_undecided_for_two_bounds_or_a_bound_below_an_exact_value():
    assert undecided(ev("ordered(b, a)", a=A700, b=B300), "ordered", "above 300", "above 700")
    assert undecided(ev("ordered(b, y)", y=500.0, b=B300), "ordered", "< 500")
    # undecided is not true: a claim of an order the data cannot decide does not hold
    ok, why = compare({"equals": True}, True, ev("ordered(b, a)", a=A700, b=B300))
    assert not ok and why.startswith("undecided: ordered")


def test_ordered_fails_on_a_pair_of_non_neighbours_the_bounds_decide():
    # > 700 and > 300 side by side are open, > 300 and 200 too; but > 700 before 200 fails
    assert ev("ordered(a, b, z)", a=A700, b=B300, z=200.0) is False


def test_ordered_of_exact_values_is_unchanged():
    assert ev("ordered(x, y, z)", x=1.0, y=2.0, z=3.0) is True
    assert ev("ordered(x, z, y)", x=1.0, y=2.0, z=3.0) is False
    assert ev("ordered(x, x)", x=1.0) is False                    # strictly
    assert ev("ordered(x, n, z)", x=1.0, n=float("nan"), z=3.0) is False


# ----- increasing / nondecreasing ---------------------------------------------------------------
def test_increasing_decides_with_bounds_and_says_where_it_cannot():
    s = Series({1.0: 100.0, 2.0: 500.0, 4.0: A700})
    assert ev("increasing(s)", s=s) is True and ev("nondecreasing(s)", s=s) is True
    assert ev("increasing(s)", s=Series({1.0: A700, 2.0: 500.0})) is False
    u = ev("increasing(s)", s=Series({1.0: 100.0, 2.0: B300, 4.0: A700}))
    assert undecided(u, "increasing", "at x = 2 and 4", "above 300", "above 700")
    assert undecided(ev("nondecreasing(s)", s=Series({1.0: B300, 2.0: 500.0})), "nondecreasing")
    assert ev("nondecreasing(s)", s=Series({1.0: B300, 2.0: 200.0})) is False   # above 300, then 200: falls
    assert ev("increasing(s)", s=Series({1.0: 1.0, 2.0: 3.0, 3.0: 2.0})) is False


# ----- argmax / argmin ----------------------------------------------------------------------------
def test_argmax_takes_a_bound_above_every_exact_value():
    s = Series({0.1: 500.0, 0.2: A700, 0.3: 650.0})
    assert ev("argmax(s)", s=s) == 0.2
    assert ev("argmax(s) == 0.2", s=s) is True
    # the smallest is an exact value at or below every bound
    assert ev("argmin(s)", s=s) == 0.1


def test_argmax_is_undecided_when_a_bound_could_still_lose_or_two_bounds_compete():
    below = Series({0.1: 500.0, 0.2: B300})
    assert undecided(ev("argmax(s)", s=below), "argmax", "above 300")
    assert undecided(ev("argmax(s)", s=Series({0.1: A700, 0.2: B300})), "argmax")
    # and so is whatever compares it: argmax(s) >= 4 of a curve whose top is not known
    assert undecided(ev("argmax(s) >= 0.2 and argmax(s) <= 0.3", s=below), "argmax")
    assert undecided(ev("argmin(s)", s=Series({0.1: B300, 0.2: A700})), "argmin")


def test_argmax_of_exact_values_is_unchanged():
    assert ev("argmax(s)", s=Series({1.0: 2.0, 2.0: 5.0, 3.0: 5.0})) == 2.0   # first on a tie
    assert ev("argmin(s)", s=Series({1.0: 2.0, 2.0: 1.0})) == 2.0


# ----- frac_in ------------------------------------------------------------------------------------
def test_frac_in_places_a_bound_at_or_above_the_interval_outside():
    s = Series({1.0: 100.0, 2.0: 200.0, 3.0: A700})
    assert ev("frac_in(s, 0, 500)", s=s) == pytest.approx(2 / 3)


def test_frac_in_is_undecided_when_a_bound_may_or_may_not_be_inside():
    s = Series({1.0: 100.0, 2.0: B300, 3.0: A700})
    u = ev("frac_in(s, 0, 500)", s=s)
    assert undecided(u, "frac_in", "1 of 3", "above 300")
    ok, why = compare({"min": 0.5}, 0.5, u)
    assert not ok and "undecided" in why
    # an undecided fraction stays undecided through min, mean and arithmetic
    assert undecided(ev("min(frac_in(s, 0, 500), 1)", s=s), "frac_in")
    assert undecided(ev("mean(series(frac_in(s, 0, 500), 1))", s=s), "frac_in")
    assert undecided(ev("1 - frac_in(s, 0, 500)", s=s), "frac_in")


def test_frac_in_of_exact_values_is_unchanged():
    s = Series({1.0: 0.5, 2.0: 0.9, 3.0: 1.1, 4.0: float("nan")})
    assert ev("frac_in(s, 0.8, 1.25)", s=s) == pytest.approx(2 / 3)
    assert math.isnan(ev("frac_in(s, 0, 1)", s=Series({1.0: float("nan")})))


def test_abs_keeps_a_positive_bound():
    v = ev("abs(a)", a=A700)
    assert isinstance(v, LowerBound) and float(v) == 700.0


# ----- when ---------------------------------------------------------------------------------------
def test_when_drops_a_bound_at_or_above_the_interval():
    s = Series({1.0: 10.0, 2.0: 20.0, 3.0: 30.0})
    c = Series({1.0: 1.0, 2.0: B300, 3.0: 5.0})
    # above 300 is outside [0, 250] and [0, 300] whatever its excess
    assert ev("when(s, c, 0, 250)", s=s, c=c) == Series({1.0: 10.0, 3.0: 30.0})
    assert ev("when(s, c, 0, 300)", s=s, c=c) == Series({1.0: 10.0, 3.0: 30.0})
    assert ev("when(s, c, 2, 250)", s=s, c=c) == Series({3.0: 30.0})


def test_when_is_undecided_when_a_bound_may_or_may_not_be_inside():
    s = Series({1.0: 10.0, 2.0: 20.0, 3.0: 30.0})
    c = Series({1.0: 1.0, 2.0: B300, 3.0: 5.0})
    u = ev("when(s, c, 0, 500)", s=s, c=c)       # above 300: below 500 or not
    assert undecided(u, "when", "x = 2", "above 300", "[0, 500]")
    # and so is what is computed from it
    assert undecided(ev("mean(when(s, c, 0, 500))", s=s, c=c), "when")
    assert undecided(ev("len(when(s, c, 0, 500)) >= 2", s=s, c=c), "when")


def test_when_of_an_undecided_condition_or_bound_is_undecided():
    s = Series({1.0: 10.0, 2.0: 20.0})
    u = ev("argmax(c)", c=Series({0.1: A700, 0.2: B300}))
    assert undecided(ev("when(s, c, 0, 1)", s=s, c=Series({1.0: 0.5, 2.0: u})), "when", "argmax")
    assert undecided(ev("when(s, c, lo, 1)", s=s, c=Series({1.0: 0.5}), lo=u), "when", "argmax")


def test_when_of_exact_values_is_unchanged():
    s = Series({1.0: 10.0, 2.0: 20.0, 3.0: 30.0, 4.0: 40.0})
    c = Series({1.0: 1.0, 2.0: 0.5, 3.0: float("nan"), 5.0: 1.0})
    assert ev("when(s, c, 1, 1)", s=s, c=c) == Series({1.0: 10.0})
    assert ev("when(s, c, 0, 2)", s=s, c=c) == Series({1.0: 10.0, 2.0: 20.0})
    # the values of s pass through as they are, censored too
    w = ev("when(s, c, 0, 2)", s=Series({1.0: A700, 2.0: 20.0}), c=c)
    assert isinstance(w[1.0], LowerBound) and float(w[1.0]) == 700.0


# ----- all ----------------------------------------------------------------------------------------
def test_all_of_an_undecided_value_is_undecided_unless_another_fails():
    u = ev("a < b", a=A700, b=B300)                 # two censored times: cannot tell
    assert isinstance(u, Undecided)
    assert undecided(ev("all(series(1 < 2, u))", u=u))
    assert ev("all(series(2 < 1, u))", u=u) is False     # one decided false decides it
    assert ev("all(series(1 < 2, 3 < 4))") is True
    assert ev("all(series(1 < 2, 4 < 3))") is False

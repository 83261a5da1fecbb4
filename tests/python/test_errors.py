"""Errors cross the Rust/Python boundary as structured data (field, message), not as text to
parse; and the algorithm registry's aliases and kinds as Python sees them."""

import json

import pytest

import tcpfriendly as tf
from tcpfriendly import _core, models


def dumbbell(flows):
    return {"duration": 2, "bottleneck": {"rate": "1Mbps", "delay": "10ms"}, "flows": flows}


def test_engine_error_carries_field_and_message():
    s = tf.Scenario(dumbbell([{"algorithm": "gaimd", "params": {"keep": 1.5}}]))
    with pytest.raises(tf.ScenarioError) as info:
        tf.run(s)
    e = info.value
    assert e.field == "flows[0].params.keep"
    assert e.message.startswith("must be in (0, 1)") and e.message.endswith("got 1.5")
    assert str(e) == f"{e.field}: {e.message}"


def test_the_extension_raises_a_field_error_with_both_attributes():
    text = json.dumps(dumbbell([{"algorithm": "no-such-cc"}]))
    with pytest.raises(_core.FieldError) as info:
        _core.normalize(text)
    assert isinstance(info.value, ValueError)
    assert info.value.field == "flows[0].algorithm"
    assert info.value.message.startswith("unknown algorithm 'no-such-cc' (known: tcp, gaimd,")
    # an error about the input as a whole has no field
    with pytest.raises(_core.FieldError) as info:
        _core.normalize("{")
    assert info.value.field is None
    assert info.value.message.startswith("scenario is not valid JSON")


def test_the_field_comes_from_the_engine_not_from_the_text():
    # a message that looks like "name: ..." but belongs to no field keeps field None
    e = tf.ScenarioError.from_engine(type("E", (), {"field": None, "message": "links: not a field here"})())
    assert e.field is None and e.message == "links: not a field here"
    e = tf.ScenarioError("flows: must be an array of tables")
    assert e.field is None
    e = tf.ScenarioError.at("flows", "must be an array of tables")
    assert (e.field, e.message, str(e)) == ("flows", "must be an array of tables", "flows: must be an array of tables")


def test_model_errors_carry_field_and_message():
    with pytest.raises(models.ModelError) as info:
        models.call("convergence", alg="tcp", beta=0.3, W=110, W1=10, W2=30, eps=10)
    assert info.value.field == "beta"
    assert info.value.message == "tcp is AIMD(1, 1/2): its beta is fixed at 0.5 (use alg = aimd)"
    assert "--" not in str(info.value)


@pytest.mark.parametrize("alias,canonical", [("aimd", "gaimd"), ("aiad", "aiad_h")])
def test_model_algorithm_names_are_scenario_aliases(alias, canonical):
    s = tf.Scenario(dumbbell([{"algorithm": alias}]))
    flow = s.normalized()["flows"][0]
    assert flow["algorithm"] == canonical
    listed = {a["name"]: a for a in tf.algorithms()}
    assert listed[alias]["alias_of"] == canonical
    assert listed[alias]["kind"] == listed[canonical]["kind"] == "window"


def test_aimd_alias_uses_jin2001_defaults():
    flow = tf.Scenario(dumbbell([{"algorithm": "aimd"}])).normalized()["flows"][0]
    beta = 1 / 16
    assert flow["params"] == {"alpha": pytest.approx(3 * beta / (2 - beta)), "beta": beta}


def test_registry_lists_every_kind_and_the_ns2_mapping():
    listed = {a["name"]: a for a in tf.algorithms()}
    assert {listed[n]["kind"] for n in ("tcp", "tfrc", "cbr")} == {"window", "rate", "udp"}
    assert listed["gaimd"]["ns2"] == {"agent": "gaimd"}
    assert listed["cubic"]["ns2"] == {"linux": "cubic"}
    assert "unsupported" in listed["tear"]["ns2"]

"""Issue #6 elements through the Python builder: general topology, loss models, cross traffic."""
import textwrap

import pytest

import tcpfriendly as tf

TOML = textwrap.dedent("""
    duration = 30
    seed = 4
    [[links]]
    from = "r1"
    to = "r2"
    rate = "10Mbps"
    delay = "10ms"
    queue = "red"
    loss = { model = "schedule", phases = [
        { from = 0, model = "periodic", interval = 1 },
        { from = 10, model = "general_exponential", mean = 2, cv = 0.5 } ] }
    [[links]]
    from = "r2"
    to = "r3"
    rate = "5Mbps"
    delay = "10ms"
    [[flows]]
    count = 2
    from = "r1"
    to = "r3"
    stop = [20, 25]
    [[flows]]
    count = 1
    algorithm = "cbr"
    path = ["r2", "r3"]
    rate = "0.5x"
    on = 5
    off = 5
    [[flows]]
    count = 3
    algorithm = "pareto"
    path = ["r1", "r2"]
    rate = "500kbps"
""")


def built():
    loss = {"model": "schedule", "phases": [
        {"from": 0, "model": "periodic", "interval": 1},
        {"from": 10, "model": "general_exponential", "mean": 2, "cv": 0.5}]}
    return (tf.Scenario.network(duration=30, seed=4)
            .add_link("r1", "r2", "10Mbps", "10ms", queue="red", loss=loss)
            .add_link("r2", "r3", "5Mbps", "10ms")
            .add_flows(2, "tcp", from_="r1", to="r3", stop=[20, 25])
            .add_flows(1, "cbr", path=["r2", "r3"], rate="0.5x", on=5, off=5)
            .add_flows(3, "pareto", path=["r1", "r2"], rate="500kbps"))


def test_builder_and_toml_agree_and_run():
    s = built()
    assert s.normalized() == tf.Scenario.from_toml_string(TOML).normalized()
    n = s.normalized()
    assert n["flows"][0]["path"] == ["r1", "r2", "r3"]
    assert n["flows"][1]["rate"] == 2.5e6
    r = tf.run(s)
    names = set(r.links["name"])
    assert {"r1-r2", "r2-r3", "r1-r2_reverse", "r2-r3_reverse"} <= names
    r12 = r.links.set_index("name").loc["r1-r2"]
    assert r12["random_drops"] > 0
    assert (r.flows["packets_sent"] > 0).all()


def test_builder_errors_name_the_field():
    bad = tf.Scenario.network(duration=10).add_link("a", "b", "1Mbps", "1ms").add_flows(1, "tcp", path=["a", "c"])
    with pytest.raises(tf.ScenarioError) as err:
        bad.normalized()
    assert str(err.value).startswith("flows[0].path: unknown node 'c'")

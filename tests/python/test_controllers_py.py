"""Python-defined controllers (issue #4 item 7) and run-time faults surfacing cleanly."""
import json
import subprocess
import sys
import textwrap

import pytest

import tcpfriendly as tf


class PyGaimd(tf.Controller):
    """GAIMD written exactly as the built-in: same operations, same order."""

    def __init__(self, alpha=0.31, beta=0.125, **kw):
        super().__init__(**kw)
        self.alpha, self.beta = alpha, beta

    def on_ack(self, ack):
        if self.cwnd < self.ssthresh:
            self.cwnd = min(self.cwnd + 1.0, self.max_window)
        else:
            self.cwnd = min(self.cwnd + self.alpha / self.cwnd, self.max_window)

    def on_loss_event(self, ev):
        removed = 0.5 if self.cwnd < self.ssthresh else self.beta
        self.ssthresh = self.cwnd = max(ev.window * (1.0 - removed), 2.0)


def scenario(algorithm, params):
    return {
        "duration": 20, "seed": 3, "max_window": 64,
        "bottleneck": {"rate": "5Mbps", "delay": "20ms", "queue": "red"},
        "flows": [
            {"count": 2, "algorithm": algorithm, "params": params, "access_delay": "1ms..4ms", "start": "0..1"},
            {"count": 2, "algorithm": "tcp", "access_delay": "1ms..4ms", "start": "0..1"},
        ],
    }


COUNTERS = ["packets_sent", "packets_delivered", "retransmissions", "loss_events", "timeouts",
            "goodput_bps", "mean_cwnd"]


def test_python_gaimd_reproduces_the_builtin_exactly():
    params = {"alpha": 0.2, "beta": 0.125}
    builtin = tf.run(scenario("gaimd", params)).raw["flows"]
    mine = tf.run(scenario("pygaimd", params), controllers={"pygaimd": PyGaimd}).raw["flows"]
    assert [f["algorithm"] for f in mine[:2]] == ["pygaimd", "pygaimd"]
    assert mine[0]["params"] == params
    for a, b in zip(builtin, mine):
        for key in COUNTERS:
            assert a[key] == b[key], (key, a[key], b[key])
    # and the flows actually ran
    assert all(f["packets_sent"] > 500 for f in mine)


class Faulty(tf.Controller):
    def on_loss_event(self, ev):
        raise ValueError("boom")


def test_exception_inside_a_controller_names_flow_and_time():
    with pytest.raises(RuntimeError) as err:
        tf.run(scenario("faulty", {}), controllers={"faulty": Faulty})
    msg = str(err.value)
    assert "flow 0 (faulty)" in msg or "flow 1 (faulty)" in msg
    assert "at t = " in msg and "on_loss_event" in msg and "ValueError: boom" in msg


class Vanishing(tf.Controller):
    """Sets a window that is positive in spirit but not valid: -1e-300."""

    def on_loss_event(self, ev):
        self.cwnd = -1e-300


def test_an_invalid_window_from_a_python_controller_is_named_readably():
    with pytest.raises(RuntimeError) as err:
        tf.run(scenario("vanishing", {}), controllers={"vanishing": Vanishing})
    msg = str(err.value)
    # the value in its short form (error::show_num), not 300 digits of a fixed-point float
    assert "cwnd must be a positive finite number; got -1e-300" in msg, msg
    assert len(msg) < 400, msg


def test_bad_params_for_a_python_controller_are_a_scenario_error():
    with pytest.raises(tf.ScenarioError) as err:
        tf.run(scenario("pygaimd", {"gamma": 1}), controllers={"pygaimd": PyGaimd})
    assert str(err.value).startswith("flows[0].params:")
    with pytest.raises(tf.ScenarioError):
        tf.run(scenario("pygaimd", {}), controllers={"pygaimd": dict})


def test_formula_nan_stops_the_run_with_a_clear_message():
    s = scenario("formula", {"increase": "1/(w - w)", "decrease": "0.5*w"})
    with pytest.raises(RuntimeError) as err:
        tf.run(s)
    assert "flow 0 (formula)" in str(err.value)


def test_cli_loads_a_controller_from_a_file(tmp_path):
    law = tmp_path / "law.py"
    law.write_text(textwrap.dedent("""
        import tcpfriendly as tf
        class Slow(tf.Controller):
            def on_ack(self, ack):
                self.cwnd = min(self.cwnd + (1.0 if self.cwnd < self.ssthresh else 0.5 / self.cwnd), self.max_window)
    """))
    toml = tmp_path / "s.toml"
    toml.write_text(textwrap.dedent("""
        duration = 10
        [bottleneck]
        rate = "5Mbps"
        delay = "20ms"
        [[flows]]
        count = 2
        algorithm = "slow"
    """))
    tcpf = [sys.executable, "-m", "tcpfriendly.cli"]
    r = subprocess.run(tcpf + ["run", str(toml), "--json", "--controller", f"slow={law}:Slow"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert [f["algorithm"] for f in out["flows"]] == ["slow", "slow"]
    # the result says which law made it: the class's origin and the hash of its code ...
    from tcpfriendly.controller import fingerprint, load_controllers
    from tcpfriendly.scenario import native
    classes = load_controllers([f"slow={law}:Slow"])
    assert out["controllers"] == {"slow": {"class": f"{law}:Slow", "fingerprint": fingerprint(classes["slow"])}}
    # ... after the engine's own text, unchanged byte for byte
    engine = native().run(tf.Scenario.from_toml(toml).to_json(), None, None, classes).rstrip()
    assert r.stdout.strip() == engine[:-1] + ',"controllers":' + json.dumps(out["controllers"], separators=(",", ":")) + "}"
    # and `tcpf report` on the saved result gives the command that reruns it with the class
    (tmp_path / "r.json").write_text(r.stdout)
    rep = subprocess.run(tcpf + ["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.html")],
                         capture_output=True, text=True)
    assert rep.returncode == 0, rep.stderr
    assert f"tcpf run scenario.toml --controller slow={law}:Slow --out" in (tmp_path / "r.html").read_text()
    assert "controllers" not in tf.run(tf.Scenario.from_toml_string(toml.read_text().replace('"slow"', '"tcp"'))).raw
    r = subprocess.run(tcpf + ["run", str(toml), "--controller", "slow=nope.py:Slow"], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith("error: --controller slow") and "Traceback" not in r.stderr


def test_normalize_and_expand_accept_the_python_controllers_names():
    sc = tf.Scenario({"duration": 5, "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                      "flows": [{"algorithm": "pygaimd", "count": 2, "access_delay": "1ms..3ms"}]})
    with pytest.raises(tf.ScenarioError, match="flows\\[0\\].algorithm: unknown algorithm 'pygaimd'"):
        tf.expand(sc)
    ex = tf.expand(sc, seed=1, controllers={"pygaimd": PyGaimd})   # run()'s dict, or the names
    assert ex == sc.expand(1, ["pygaimd"])
    assert [f["access_delay_s"] for f in ex["flows"]] == [0.001, 0.003]
    assert tf.normalize(sc, ("pygaimd",))["flows"][0]["algorithm"] == "pygaimd"
    r = tf.run(sc, seed=1, controllers={"pygaimd": PyGaimd})
    assert r.controllers == ("pygaimd",) and tf.run(sc.to_dict() | {"flows": [{"algorithm": "tcp"}]}).controllers == ()
    assert tf.expand(r.scenario, controllers=r.controllers)["flows"][1]["access_delay_s"] == 0.003
    with pytest.raises(tf.ScenarioError, match="controllers: expected names or a dict"):
        tf.expand(sc, controllers="pygaimd")
    with pytest.raises(tf.ScenarioError, match="controllers: names must be non-empty strings"):
        sc.normalized([""])


def test_a_python_controller_may_not_take_a_built_in_name():
    # it replaced the engine's TCP in every group using "tcp" (the reference a law is judged
    # against in tcpf evaluate), and lost silently to a rate-based or UDP entry
    sc = tf.Scenario({"duration": 5, "bottleneck": {"rate": "10Mbps", "delay": "20ms"},
                      "flows": [{"algorithm": "tcp"}]})
    for name in ("tcp", "cbr"):
        with pytest.raises(tf.ScenarioError, match=f"controllers: '{name}' is a built-in algorithm") as e:
            tf.run(sc, controllers={name: PyGaimd})
        assert e.value.field == "controllers"


def test_the_records_are_the_named_tuples_of_tcpfriendly_controller():
    """The engine makes each record as the named tuple's own __new__ does (tuple.__new__(cls,
    values)): the same type, fields, indexing and unpacking as Ack(...) etc."""
    from tcpfriendly.controller import Ack, LossEvent, Timeout
    seen = {}

    class Spy(tf.Controller):
        def on_ack(self, ack):
            seen.setdefault("ack", ack)
            super().on_ack(ack)

        def on_loss_event(self, ev):
            seen.setdefault("loss", ev)
            super().on_loss_event(ev)

        def on_timeout(self, to):
            seen.setdefault("timeout", to)
            super().on_timeout(to)

    tf.run({"duration": 30, "seed": 1, "bottleneck": {"rate": "2Mbps", "delay": "20ms", "limit": 5},
            "flows": [{"count": 6, "algorithm": "spy"}]}, controllers={"spy": Spy})
    ack, loss, timeout = seen["ack"], seen["loss"], seen["timeout"]
    assert type(ack) is Ack and type(loss) is LossEvent and type(timeout) is Timeout
    now, acked, rtt, min_rtt, in_flight = ack
    assert ack == Ack(now, acked, rtt, min_rtt, in_flight) and ack.now == ack[0] > 0
    assert acked >= 1 and (rtt is None or rtt >= min_rtt > 0) and in_flight >= 0
    assert loss == LossEvent(*loss) and loss.window > 0 and loss.ecn is False
    assert timeout == Timeout(*timeout) and timeout.now > 0 and timeout.window > 0

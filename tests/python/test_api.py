"""The Python API: Scenario construction, run() -> Result with DataFrames, errors."""

import json
import math

import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

import tcpfriendly as tf
from conftest import FLOW_FIELDS, LINK_FIELDS, SMALL_TOML


def small_builder():
    return (tf.Scenario.dumbbell(rate="5Mbps", delay="20ms", queue="red", limit="2.5bdp",
                                 duration=10, seed=7, packet_size=1000,
                                 measure={"from": 2, "to": 10})
            .add_flows(2, "tcp", recovery="sack", access_delay="1ms..5ms", start="0..1")
            .add_flows(2, "gaimd", params={"alpha": 0.31, "keep": 0.875},
                       access_delay="1ms..5ms", start="0..1"))


# ----- construction ---------------------------------------------------------------------------
def test_builder_toml_and_dict_agree():
    from_toml = tf.Scenario.from_toml_string(SMALL_TOML)
    built = small_builder()
    assert built == from_toml  # the same data, before the engine fills defaults
    assert tf.Scenario(from_toml.to_dict()) == tf.Scenario.from_dict(from_toml.to_dict()) == from_toml
    normalized = built.normalized()
    assert normalized == from_toml.normalized()
    assert normalized == tf.normalize(from_toml.to_dict())
    # defaults filled in
    for key in ("packet_size", "max_window", "tcp", "bottleneck", "flows"):
        assert key in normalized


def test_from_toml_file_and_run_accepts_a_path(small_path):
    assert tf.Scenario.from_toml(small_path) == tf.Scenario.from_toml_string(SMALL_TOML)
    assert tf.run(small_path).to_json() == tf.run(tf.Scenario.from_toml(small_path)).to_json()


def test_to_toml_writes_a_file_that_reads_back_as_the_same_scenario(tmp_path, tcpf):
    import glob
    import os

    root = os.path.join(os.path.dirname(__file__), "..", "..")
    files = sorted(glob.glob(os.path.join(root, "examples", "*.toml"))
                   + glob.glob(os.path.join(root, "validation", "ns2", "*.toml")))
    scenarios = [small_builder()]
    for f in files:
        try:
            scenarios.append(tf.Scenario.from_toml(f))
        except tf.ScenarioError:
            continue  # a sweep spec or the bank's own table, not a scenario
    assert len(scenarios) > 40
    for sc in scenarios:  # parking lots, any graph, loss models, RED/ECN, formulas, traces
        assert tf.Scenario.from_toml_string(sc.to_toml()) == sc
    # and `tcpf run` reads it: the same result as the builder's
    path = tmp_path / "built.toml"
    path.write_text(small_builder().to_toml())
    out = tcpf("run", path, "--json")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == tf.run(small_builder()).to_json().strip()


def test_keep_and_beta_mean_the_same_decrease():
    kept = small_builder().normalized()
    removed = (tf.Scenario.from_toml_string(SMALL_TOML.replace("keep = 0.875", "beta = 0.125"))
               .normalized())
    assert kept == removed
    assert kept["flows"][1]["params"]["beta"] == pytest.approx(0.125)


@settings(max_examples=25, deadline=None)
@given(alpha=st.floats(0.05, 2.0), keep=st.floats(0.05, 0.95))
def test_keep_normalizes_to_canonical_beta(alpha, keep):
    s = tf.Scenario.dumbbell(rate="5Mbps", delay="20ms", duration=5).add_flows(
        1, "gaimd", params={"alpha": alpha, "keep": keep})
    params = s.normalized()["flows"][0]["params"]
    assert params["beta"] == pytest.approx(1 - keep)
    assert params["alpha"] == pytest.approx(alpha)


# ----- errors ---------------------------------------------------------------------------------
@pytest.mark.parametrize("old,new,field", [
    ("keep = 0.875", "keep = 1.5", "flows[1].params.keep"),
    ("keep = 0.875", "beta = 1.5", "flows[1].params.beta"),
    ('algorithm = "gaimd"', 'algorithm = "no-such-cc"', "flows[1].algorithm"),
])
def test_scenario_error_names_the_field(old, new, field):
    s = tf.Scenario.from_toml_string(SMALL_TOML.replace(old, new))
    with pytest.raises(tf.ScenarioError) as info:
        tf.run(s)
    assert isinstance(info.value, ValueError)
    assert str(info.value).startswith(field), str(info.value)
    assert info.value.field == field
    assert "\n" not in str(info.value)
    with pytest.raises(tf.ScenarioError):
        s.normalized()


def test_python_side_errors():
    with pytest.raises(tf.ScenarioError, match="malformed TOML in <string>"):
        tf.Scenario.from_toml_string("duration = [")
    with pytest.raises(tf.ScenarioError) as info:
        tf.Scenario.dumbbell(rate="5Mbps", delay="20ms", duration=float("nan"))
    assert info.value.field == "duration"
    with pytest.raises(tf.ScenarioError) as info:
        tf.Scenario.from_toml("/nonexistent/dir/s.toml")
    assert isinstance(info.value, OSError) and isinstance(info.value, ValueError)
    with pytest.raises(tf.ScenarioError, match="^seed:"):
        tf.run(small_builder(), seed=-1)
    with pytest.raises(tf.ScenarioError, match="^timeseries:"):
        tf.run(small_builder(), timeseries=0)
    missing_rate = tf.Scenario({"duration": 5, "bottleneck": {"delay": "20ms"},
                                "flows": [{"count": 1, "algorithm": "tcp"}]})
    with pytest.raises(tf.ScenarioError, match="rate"):
        missing_rate.validate()


# ----- results --------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def result():
    return tf.run(tf.Scenario.from_toml_string(SMALL_TOML), timeseries=1.0)


def test_run_returns_dataframes_with_contract_columns(result):
    flows, links = result.flows, result.links
    assert isinstance(flows, pd.DataFrame) and isinstance(links, pd.DataFrame)
    assert list(flows.columns[:len(FLOW_FIELDS)]) == FLOW_FIELDS
    assert list(links.columns[:len(LINK_FIELDS)]) == LINK_FIELDS
    assert len(flows) == 4 and flows["id"].is_unique
    assert sorted(flows["algorithm"].unique()) == ["gaimd", "tcp"]
    for col in ("throughput_bps", "goodput_bps", "loss_event_rate", "mean_rtt_s", "mean_cwnd"):
        assert pd.api.types.is_numeric_dtype(flows[col]), col
    assert (flows["goodput_bps"] > 0).all()
    assert (flows["goodput_bps"] <= flows["throughput_bps"] * (1 + 1e-9)).all()
    bottleneck = links.set_index("name").loc["bottleneck"]
    assert 0 < bottleneck["utilization"] <= 1
    # the flows share a 5 Mb/s link
    assert flows["goodput_bps"].sum() <= 5e6 * (1 + 1e-9)


def test_result_json_and_raw(result, tcpf, small_path):
    assert json.loads(result.to_json()) == result.raw
    assert result.raw["version"] == tf.__version__
    assert result.scenario == result.raw["scenario"]
    # to_json() is exactly what `tcpf run --json` prints (apart from the final newline);
    # the CLI run has no time series, so compare with a plain run
    plain = tf.run(small_path)
    assert tcpf("run", small_path, "--json").stdout == plain.to_json() + "\n"
    assert tf.run(small_path, seed=7).to_json() == plain.to_json()
    assert tf.run(small_path, seed=8).to_json() != plain.to_json()


def test_timeseries(result):
    ts = result.timeseries("flows")
    assert {"time", "flow", "cwnd", "rate_bps", "srtt_s"} <= set(ts.columns)
    assert len(ts) > 0 and set(ts["flow"]) <= set(result.flows["id"])
    assert ts["time"].between(0, 10 + 1e-9).all()
    lts = result.timeseries("links")
    assert {"time", "link", "queue_pkts", "utilization", "drops"} <= set(lts.columns)
    assert len(lts) > 0
    with pytest.raises(ValueError):
        result.timeseries("packets")
    with pytest.raises(ValueError, match="timeseries"):
        tf.run(tf.Scenario.from_toml_string(SMALL_TOML)).timeseries("flows")


def test_summary_has_a_row_per_group(result):
    groups = result.group_summary()
    assert len(groups) == 2
    assert groups["n_flows"].tolist() == [2, 2]
    # shares are relative to the mean flow: the flow-weighted mean share is 1
    assert (groups["share"] * groups["n_flows"]).sum() / groups["n_flows"].sum() == pytest.approx(1)
    # fractions of the direction's goodput add up to 1
    assert groups["fraction"].sum() == pytest.approx(1)
    text = result.summary()
    assert "gaimd" in text and "bottleneck" in text


def test_a_udp_source_has_no_loss_events_where_its_losses_show(tmp_path):
    # A CBR source loses packets but has no notion of a loss event: the engine reports null
    # (as the ns-2 side does), not 0, so the table shows "-" and the pooled rate is NaN; its
    # CSV keeps the counter a column of integers with an empty cell.
    sc = (tf.Scenario.dumbbell(rate="2Mbps", delay="20ms", queue="droptail", limit=20,
                               duration=10, seed=3, measure={"from": 2, "to": 10})
          .add_flows(2, "tcp", recovery="sack")
          .add_flows(1, "cbr", rate="1.5Mbps"))
    res = tf.run(sc)
    cbr = next(f for f in res.raw["flows"] if f["algorithm"] == "cbr")
    assert cbr["packets_delivered"] < cbr["packets_sent"]      # it did lose packets
    assert cbr["loss_events"] is None and cbr["loss_event_rate"] is None
    tcp = [f for f in res.raw["flows"] if f["algorithm"] == "tcp"]
    assert all(f["loss_events"] > 0 and f["loss_event_rate"] > 0 for f in tcp)
    groups = res.group_summary().set_index("algorithm")
    assert math.isnan(groups.loc["cbr", "loss_event_rate"]) and pd.isna(groups.loc["cbr", "loss_events"])
    row = next(line for line in res.summary().splitlines() if " cbr " in line)
    assert row.split()[7] == "-", row          # the loss-ev rate column
    res.write(tmp_path / "out")
    lines = (tmp_path / "out" / "flows.csv").read_text().splitlines()
    col = lines[0].split(",").index("loss_events")
    cells = [line.split(",")[col] for line in lines[1:]]
    assert cells[2] == "" and all(c.isdigit() for c in cells[:2]), cells


def test_algorithms_registry():
    registry = tf.algorithms()
    by_name = {a["name"]: a for a in registry}
    assert {"tcp", "gaimd"} <= set(by_name)
    for algo in registry:
        assert {"name", "family", "summary", "source", "params"} <= set(algo)
        for p in algo["params"]:
            assert {"name", "default", "min", "max", "unit", "doc"} <= set(p)
    gaimd_params = {p["name"] for p in by_name["gaimd"]["params"]}
    assert {"alpha", "beta"} <= gaimd_params


def test_version():
    assert isinstance(tf.__version__, str) and tf.__version__[0].isdigit()
    assert not math.isnan(float(tf.__version__.split(".")[0]))


def test_normalize_is_idempotent_to_the_last_bit(small_toml):
    # A normalized scenario normalizes to itself: every float crosses Python -> JSON -> Rust
    # exactly (serde_json's float_roundtrip; without it 10.799999999999999, RED's min_th of
    # this scenario, came back as 10.8 and a rerun of result.json's scenario differed).
    first = tf.normalize(tf.Scenario.from_toml_string(small_toml))
    assert first["bottleneck"]["red"]["min_th"] == 0.15 * first["bottleneck"]["limit"]
    assert tf.normalize(first) == first
    for value in (10.799999999999999, 0.1 + 0.2, 1 / 3, 2.2250738585072014e-308 * 3):
        assert json.loads(tf.Scenario.from_dict({**first, "duration": value}).to_json())["duration"] == value
        run_length = 10.0 + value  # measure.to is 10 s
        assert tf.normalize({**first, "duration": run_length})["duration"] == run_length

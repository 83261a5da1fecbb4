"""tcpf sweep plot's ratios, taken per run before the mean and CI over seeds: group A over
group B in the same run (--ratio) and runs paired by seed across one axis (--paired, tsao2007's
TCP-equivalence under the identical loss process)."""
import math

import pandas as pd
import pytest

from tcpfriendly.errors import ScenarioError
from tcpfriendly.sweep.plot import group_ratio, paired_ratio, plot

from conftest import REPO
from test_cli import assert_one_line_error


def _table():
    """2 rates x 3 seeds x 2 groups; group 1's goodput is (seed + rate index) times group 0's."""
    rows = []
    for p, rate in enumerate([1.5e6, 15e6]):
        for seed in (1, 2, 3):
            for g, gp in ((0, 10.0 * seed), (1, 10.0 * seed * (seed + p))):
                rows.append({"point": p, "bottleneck.rate": rate, "seed": seed, "group": g,
                             "algorithm": "tcp" if g == 0 else "gaimd", "recovery": "sack", "params": "{}",
                             "direction": "forward", "goodput_bps_mean": gp, "link.bottleneck.drops": 7.0 + p,
                             "run": f"r{p}{seed}"})
    return pd.DataFrame(rows)


def test_group_ratio_divides_within_each_run():
    r = group_ratio(_table(), "goodput_bps_mean", "1/0")
    assert len(r) == 6 and set(r["group"]) == {1}
    got = {(row["bottleneck.rate"], row["seed"]): row["goodput_bps_mean"] for _, row in r.iterrows()}
    assert got == {(1.5e6, s): float(s) for s in (1, 2, 3)} | {(15e6, s): float(s + 1) for s in (1, 2, 3)}
    inverse = group_ratio(_table(), "goodput_bps_mean", "0/1")
    assert inverse["goodput_bps_mean"].tolist() == pytest.approx([1 / v for v in r["goodput_bps_mean"]])


def test_paired_ratio_matches_seeds_and_leaves_zipped_axes_out_of_the_key():
    rows = []
    for cv in (0.0, 1.0):
        for seed in (1, 2):
            for alg, params, gp in (("gaimd", '{"alpha": 0.2}', 8.0 * seed * (1 + cv)), ("tcp", "{}", 10.0 * seed)):
                rows.append({"point": 0, "loss.cv": cv, "flows[0].algorithm": alg, "flows[0].params": params,
                             "seed": seed, "group": 0, "algorithm": alg, "goodput_bps_mean": gp, "run": f"{cv}{seed}{alg}"})
    axes = ["loss.cv", "flows[0].algorithm", "flows[0].params"]
    out, left = paired_ratio(pd.DataFrame(rows), axes, "goodput_bps_mean", "flows[0].algorithm=gaimd/tcp")
    assert left == ["loss.cv", "flows[0].params"]
    got = sorted((r["loss.cv"], r["seed"], r["goodput_bps_mean"]) for _, r in out.iterrows())
    assert got == [(0.0, 1, 0.8), (0.0, 2, 0.8), (1.0, 1, 1.6), (1.0, 2, 1.6)]
    with pytest.raises(ScenarioError) as e:
        paired_ratio(pd.DataFrame(rows), axes, "goodput_bps_mean", "flows[0].algorithm=gaimd/reno")
    assert e.value.field == "paired" and "reno" in str(e.value)


def test_plot_checks_its_ratio_arguments(tmp_path):
    t = _table()
    for kwargs, field in (({"ratio": "1/5"}, "ratio"), ({"ratio": "a/b"}, "ratio"), ({"ratio": "1"}, "ratio"),
                          ({"ratio": "1/0", "y": "link.bottleneck.drops"}, "ratio"),
                          ({"ratio": "1/0", "group": 1}, "group"), ({"paired": "nope=1/2"}, "paired"),
                          ({"paired": "bottleneck.rate=1500000.0/15000000.0"}, "x")):
        args = {"x": "bottleneck.rate", "y": "goodput_bps_mean", **kwargs}
        with pytest.raises(ScenarioError) as e:
            plot(t, out=tmp_path / "x.png", **args)
        assert e.value.field == field, (kwargs, e.value)


def test_cli_plots_a_paired_ratio_of_a_real_sweep(tcpf, tmp_path):
    """examples/sweep-tsao2007-s1.toml cut to 200 s: GAIMD(0.2, 1/8) over TCP under the identical
    loss process; at CV[T] = 0 (periodic losses) the TCP-friendly pair gets about TCP's throughput."""
    spec = (REPO / "examples" / "sweep-tsao2007-s1.toml").read_text()
    spec = spec.replace("duration = 600.0", "duration = 200.0").replace("to = 600.0", "to = 200.0")
    spec = spec.replace("seeds = 5", "seeds = 2")
    path = tmp_path / "s1.toml"
    path.write_text(spec)
    out = tmp_path / "s1"
    p = tcpf("sweep", str(path), "--out", str(out), "--workers", "1")
    assert p.returncode == 0, p.stderr
    png = tmp_path / "s1.png"
    p = tcpf("sweep", "plot", str(out), "--x", "bottleneck.loss.cv", "--y", "goodput_bps_mean",
             "--paired", "flows[0].algorithm=gaimd/tcp", "--out", str(png))
    assert p.returncode == 0, p.stderr
    assert png.stat().st_size > 10_000
    from tcpfriendly.sweep.store import load_results
    t = load_results(str(out))
    r, _ = paired_ratio(t, ["bottleneck.loss.cv", "flows[0].algorithm", "flows[0].params"], "goodput_bps_mean",
                        "flows[0].algorithm=gaimd/tcp")
    at0 = r[r["bottleneck.loss.cv"] == 0.0]["goodput_bps_mean"]
    assert len(at0) == 2 and all(0.9 <= v <= 1.1 for v in at0), at0.tolist()
    p = tcpf("sweep", "plot", str(out), "--x", "bottleneck.loss.cv", "--y", "goodput_bps_mean",
             "--paired", "flows[0].algorithm=gaimd/cubic", "--out", str(png))
    assert_one_line_error(p, 2, "--paired", "cubic")


def test_link_rates_and_arrivals_reach_the_sweep_table():
    """The metrics layer's link metrics (issue 14: drop and mark rates, arrivals) as sweep columns:
    drop_rate = drops / arrivals of the engine's link record, one definition for every consumer."""
    import tcpfriendly as tf
    from tcpfriendly.metrics import LINK_METRICS, link_metrics
    from tcpfriendly.sweep import Sweep

    assert {"arrivals", "drop_rate", "mark_rate"} <= set(LINK_METRICS)
    assert link_metrics({"drops": 5, "marks": 0, "arrivals": 200})["drop_rate"] == 0.025
    assert math.isnan(link_metrics({"drops": 0, "arrivals": 0})["drop_rate"])
    sc = tf.Scenario.from_toml(str(REPO / "examples" / "quickstart.toml")).to_dict()
    sc["duration"] = 5.0
    if "measure" in sc:
        sc.pop("measure")
    link = tf.run(sc, seed=3).raw["links"][0]
    table = Sweep(sc, seeds=[3], metrics=["goodput_bps_mean", "link.arrivals", "link.drop_rate",
                                         "link.mark_rate"]).run(workers=1).table
    name = link["name"]
    row = table.iloc[0]
    assert int(row[f"link.{name}.arrivals"]) == link["arrivals"] > 0
    assert row[f"link.{name}.drop_rate"] == pytest.approx(link["drops"] / link["arrivals"])
    assert row[f"link.{name}.drop_rate"] == pytest.approx(link["drop_rate"])   # the engine's own
    assert row[f"link.{name}.mark_rate"] == 0.0


def test_a_run_reported_failed_whose_file_was_stored_counts_once_as_done(tmp_path, monkeypatch):
    """A process worker can store its chunk's run file and die before returning it: the pool
    then reports those runs failed although their results are on disk. The sweep counts such a
    run once, as done (ran + failures = total, one row per group), not also as a failure."""
    from tcpfriendly.sweep import Sweep, executors, runner

    sc = {"duration": 2.0, "bottleneck": {"rate": "5Mbps", "delay": "10ms"},
          "flows": [{"algorithm": "tcp", "count": 2}]}

    class StoredThenFailed:
        kind = "processes"  # the Executor protocol: what ran the runs (a broken process pool here)

        def run(self, todo, collector):
            first = todo[0]
            executors._run_and_store(first, collector.store)  # the worker stored it ...
            collector.store.flush()
            collector.fail_message(first, "A process in the process pool was terminated abruptly")
            for run in todo[1:]:
                collector.ok(run, executors._run_and_store(run, collector.store))
            return False

    monkeypatch.setattr(runner, "_executor", lambda *a, **k: StoredThenFailed())
    res = Sweep(sc, seeds=3).run(out=tmp_path / "o", quiet=True)
    assert (res.ran, len(res.failures), res.total) == (3, 0, 3)
    assert len(res.table) == 3 and set(res.table["status"]) == {"ok"}


def test_ratios_and_shares_draw_the_line_at_one(tmp_path):
    """A ratio's plot and a share's plot mark 1 (equals, the fair share); other metrics do not."""
    def refs(fig):
        return [l.get_label() for l in fig.get_axes()[0].get_lines() if l.get_linestyle() == ":"]

    t = _table()
    assert refs(plot(t, "bottleneck.rate", "goodput_bps_mean", ratio="1/0")) == ["ratio 1 (equal)"]
    assert refs(plot(t, "bottleneck.rate", "goodput_bps_mean", group=1)) == []
    t["share"] = t["goodput_bps_mean"] / 20.0
    fig = plot(t, "bottleneck.rate", "share", group=1)
    assert refs(fig) == ["share 1 (fair)"]
    assert "share 1 (fair)" in [x.get_text() for x in fig.get_axes()[0].get_legend().get_texts()]

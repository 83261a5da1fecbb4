"""Per-flow rows in sweeps (issue 14: the papers' scatter plots, jin2001 Figs. 8-13, liu2008):
``per_flow = true`` / ``tcpf sweep --per-flow`` adds flows.parquet/flows.csv, one row per run x
flow, whose per-flow metrics are those the group table averages (metrics.FLOW_METRICS)."""

import math

import pandas as pd
import pytest

from tcpfriendly import metrics
from tcpfriendly.errors import ScenarioError, ScenarioFileError
from tcpfriendly.sweep import FLOW_METRICS, Sweep, SweepError, load_flows
from tcpfriendly.sweep.plot import plot

from conftest import REPO
from test_cli import assert_one_line_error

QUICKSTART = REPO / "examples" / "quickstart.toml"
SET = {"duration": 4, "measure": {"from": 1, "to": 4}}
RATES = ["2Mbps", "5Mbps"]
FLOWS = 8  # quickstart: 4 TCP SACK + 4 GAIMD flows


def small(per_flow=True, seeds=2):
    """examples/quickstart.toml cut to 4 s: 2 bottleneck rates x ``seeds`` seeds."""
    return Sweep(QUICKSTART, set=SET, axes={"bottleneck.rate": RATES}, seeds=seeds, per_flow=per_flow)


def spec_file(tmp_path, extra=""):
    path = tmp_path / "spec.toml"
    path.write_text(f'scenario = "{QUICKSTART}"\nseeds = 2\n{extra}\n'
                    '[set]\nduration = 4\nmeasure = { from = 1, to = 4 }\n'
                    '[axes]\n"bottleneck.rate" = ["2Mbps", "5Mbps"]\n')
    return path


def test_one_row_per_run_and_flow_whose_group_means_are_the_group_table(tmp_path):
    res = small().run(out=tmp_path / "o", workers=2, quiet=True, executor="threads")
    f, t = res.flows, res.table
    assert len(f) == 4 * FLOWS and len(t) == 4 * 2
    assert list(f.columns) == ["point", "bottleneck.rate", "seed", "flow", "group", "algorithm", "recovery",
                               "params", "direction", *FLOW_METRICS, "run"]
    assert sorted(f.groupby("run")["flow"].apply(list).tolist()) == [list(range(FLOWS))] * 4
    assert f["bottleneck.rate"].tolist() == [r for r in RATES for _ in range(2 * FLOWS)]
    by = f.groupby(["run", "group"])
    g = t.set_index(["run", "group"])
    for col, mean_col in (("throughput_bps", "throughput_bps_mean"), ("goodput_bps", "goodput_bps_mean"),
                          ("share", "share"), ("mean_rtt_s", "mean_rtt_s"), ("mean_cwnd", "mean_cwnd")):
        per_flow = by[col].mean()
        group = g[mean_col].reindex(per_flow.index)
        assert ((per_flow - group).abs() <= 1e-9 * group.abs()).all(), col
    # counters sum to the group's, and the pooled loss-event rate is theirs
    sums = by[["loss_events", "packets_sent", "retransmissions"]].sum()
    assert (sums["loss_events"] == g["loss_events"].reindex(sums.index)).all()
    assert (sums["retransmissions"] == g["retransmissions"].reindex(sums.index)).all()
    pooled = sums["loss_events"] / sums["packets_sent"]
    assert ((pooled - g["loss_event_rate"].reindex(pooled.index)).abs() <= 1e-12).all()
    # over the 3-s measurement window of 1000-byte packets: the rates are the counts' rates
    bits = 8 * 1000 / 3.0
    assert ((f["throughput_bps"] - f["packets_sent"] * bits).abs() <= 1e-9 * f["throughput_bps"]).all()
    assert ((f["goodput_bps"] - f["packets_delivered"] * bits).abs() <= 1e-9 * f["goodput_bps"]).all()
    # the files hold the same table
    pd.testing.assert_frame_equal(load_flows(tmp_path / "o"), f, check_exact=True)
    csv = pd.read_csv(tmp_path / "o" / "flows.csv")
    assert len(csv) == len(f) and list(csv.columns) == list(f.columns)


def test_flow_metrics_are_the_group_metrics_one_flow_at_a_time():
    flows = [{"id": 0, "group": 0, "throughput_bps": 3.0e5, "goodput_bps": 2.0e5, "packets_sent": 100,
              "packets_delivered": 90, "loss_events": 4, "mean_rtt_s": 0.1, "direction": "forward"},
             {"id": 1, "group": 0, "throughput_bps": 1.0e5, "goodput_bps": 1.0e5, "packets_sent": 50,
              "packets_delivered": 50, "loss_events": 1, "mean_rtt_s": None, "direction": "forward"},
             {"id": 2, "group": 1, "throughput_bps": 6.0e5, "goodput_bps": 6.0e5, "packets_sent": 200,
              "packets_delivered": 200, "loss_events": None, "direction": "forward"}]
    per = [metrics.flow_metrics(f, flows) for f in flows]
    assert per[0]["loss_event_rate"] == 4 / 100 and math.isnan(per[2]["loss_event_rate"])
    assert per[0]["share"] == pytest.approx(2.0e5 / 3.0e5) and per[2]["loss_events"] is None
    assert math.isnan(per[1]["mean_rtt_s"]) and per[1]["packets_delivered"] == 50
    groups = metrics.group_metrics(flows)
    assert groups[0]["throughput_bps_mean"] == 2.0e5 and groups[0]["mean_rtt_s"] == 0.1  # NaN left out
    assert groups[0]["share"] == pytest.approx((per[0]["share"] + per[1]["share"]) / 2, rel=1e-15)
    assert groups[0]["loss_events"] == per[0]["loss_events"] + per[1]["loss_events"]
    assert metrics.flow_metrics(flows[0])["share"] == 1.0  # alone in its run


def test_threads_and_processes_give_identical_flow_tables(tmp_path):
    a = small().run(out=tmp_path / "t", workers=2, quiet=True, executor="threads")
    b = small().run(out=tmp_path / "p", workers=2, quiet=True, executor="processes")
    pd.testing.assert_frame_equal(a.flows, b.flows, check_exact=True)
    pd.testing.assert_frame_equal(a.table, b.table, check_exact=True)
    for name in ("flows.csv", "flows.parquet", "results.csv"):
        assert (tmp_path / "t" / name).read_bytes() == (tmp_path / "p" / name).read_bytes(), name


def test_dask_gives_the_same_flow_table(tmp_path):
    distributed = pytest.importorskip("distributed")
    import logging

    local = small().run(workers=1, quiet=True, executor="threads")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=logging.ERROR) as cluster, distributed.Client(cluster) as client:
        on_dask = small().run(out=tmp_path / "d", dask=client, quiet=True)
    assert on_dask.ran == 4
    pd.testing.assert_frame_equal(local.flows, on_dask.flows, check_exact=True)


def test_without_per_flow_the_table_keys_and_files_are_unchanged(tmp_path):
    off = small(per_flow=False).run(out=tmp_path / "off", workers=2, quiet=True, executor="threads")
    on = small().run(out=tmp_path / "on", workers=2, quiet=True, executor="threads")
    assert off.flows is None
    assert not (tmp_path / "off" / "flows.csv").exists() and not (tmp_path / "off" / "flows.parquet").exists()
    # the runs of a sweep without per_flow keep the keys (and so the cache) of earlier versions
    _, runs = small(per_flow=False).plan()
    assert all("per_flow" not in r.canonical and not r.per_flow for r in runs)
    assert "per_flow" not in small(per_flow=False).spec()
    # same columns and values; only the run keys (another run file) differ
    assert list(off.table.columns) == list(on.table.columns)
    pd.testing.assert_frame_equal(off.table.drop(columns="run"), on.table.drop(columns="run"), check_exact=True)
    assert not set(off.table["run"]) & set(on.table["run"])
    with pytest.raises(ScenarioFileError, match="per_flow = true"):
        load_flows(tmp_path / "off")


def test_runs_stored_without_flows_are_rerun_when_flows_are_asked(tmp_path):
    out = tmp_path / "o"
    first = small(per_flow=False).run(out=out, workers=2, quiet=True, executor="threads")
    assert (first.ran, first.cached) == (4, 0)
    on = small().run(out=out, workers=2, quiet=True, executor="threads")
    assert (on.ran, on.cached) == (4, 0) and len(on.flows) == 4 * FLOWS
    assert (out / "flows.parquet").exists()
    again = small().run(out=out, workers=2, quiet=True, executor="threads")
    assert (again.ran, again.cached) == (0, 4)
    pd.testing.assert_frame_equal(again.flows, on.flows, check_exact=True)
    # back to no per-flow rows: its own stored runs are cached, and the stale flows files go
    off = small(per_flow=False).run(out=out, workers=2, quiet=True, executor="threads")
    assert (off.ran, off.cached) == (0, 4)
    pd.testing.assert_frame_equal(off.table, first.table, check_exact=True)
    assert not (out / "flows.parquet").exists() and not (out / "flows.csv").exists()


def test_resume_from_a_partial_out_dir(tmp_path):
    out = tmp_path / "o"
    half = small(seeds=1).run(out=out, workers=2, quiet=True, executor="processes")
    assert (half.ran, len(half.flows)) == (2, 2 * FLOWS)
    full = small(seeds=2).run(out=out, workers=2, quiet=True, executor="processes")
    assert (full.ran, full.cached) == (2, 2)
    fresh = small(seeds=2).run(out=tmp_path / "fresh", workers=2, quiet=True, executor="threads")
    pd.testing.assert_frame_equal(full.flows, fresh.flows, check_exact=True)
    assert (out / "flows.csv").read_bytes() == (tmp_path / "fresh" / "flows.csv").read_bytes()


def test_bad_per_flow_values_are_refused_naming_the_field(tcpf, tmp_path):
    for bad in (1, "yes", None):
        with pytest.raises(SweepError) as e:
            Sweep(QUICKSTART, per_flow=bad)
        assert e.value.field == "per_flow", bad
    with pytest.raises(SweepError) as e:
        Sweep.from_dict({"scenario": str(QUICKSTART), "per_flow": "true"})
    assert e.value.field == "per_flow" and "true or false" in str(e.value)
    p = tcpf("sweep", spec_file(tmp_path, 'per_flow = "yes"'), "--out", tmp_path / "o")
    assert_one_line_error(p, 2, "per_flow")
    assert not (tmp_path / "o").exists()  # refused before anything ran


def test_cli_per_flow_sweep_and_scatter_plot(tcpf, tmp_path):
    spec = spec_file(tmp_path)
    out = tmp_path / "o"
    p = tcpf("sweep", spec, "--out", out, "--workers", "2", "--per-flow")
    assert p.returncode == 0, p.stderr
    assert f"8 rows (and {4 * FLOWS} flow rows)" in p.stdout and (out / "flows.csv").exists()
    png = tmp_path / "flows.png"
    p = tcpf("sweep", "plot", out, "--per-flow", "--x", "bottleneck.rate", "--y", "share", "--out", png)
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    # a group metric is not a per-flow one; --hue does not apply; a sweep without flows says so
    p = tcpf("sweep", "plot", out, "--per-flow", "--x", "bottleneck.rate", "--y", "jain", "--out", png)
    assert p.returncode == 2 and "--y" in p.stderr and "per-flow metric" in p.stderr
    p = tcpf("sweep", "plot", out, "--per-flow", "--x", "bottleneck.rate", "--y", "share", "--hue", "group",
             "--out", png)
    assert p.returncode == 2 and "--hue" in p.stderr
    p = tcpf("sweep", spec, "--out", tmp_path / "plain", "--workers", "2")
    assert p.returncode == 0, p.stderr
    p = tcpf("sweep", "plot", tmp_path / "plain", "--per-flow", "--x", "bottleneck.rate", "--y", "share",
             "--out", png)
    assert p.returncode == 2 and "per_flow = true" in p.stderr


def test_plot_of_a_result_flows_table_fixes_other_axes(tmp_path):
    res = Sweep(QUICKSTART, set=SET, axes={"bottleneck.rate": RATES, "bottleneck.delay": ["10ms", "40ms"]},
                seeds=1, per_flow=True).run(workers=2, quiet=True, executor="threads")
    with pytest.raises(ScenarioError) as e:
        plot(res.flows, x="bottleneck.rate", y="throughput_bps", per_flow=True)
    assert e.value.field == "where" and "bottleneck.delay" in str(e.value)
    fig = plot(res.flows, x="bottleneck.rate", y="throughput_bps", per_flow=True,
               where={"bottleneck.delay": "40ms"}, group=1, out=tmp_path / "g1.png")
    ax = fig.axes[0]
    points = [c for c in ax.collections]
    assert len(points) == 1 and len(points[0].get_offsets()) == 2 * 4  # 2 rates x group 1's 4 flows
    assert (tmp_path / "g1.png").stat().st_size > 0
    with pytest.raises(ScenarioError) as e:
        plot(None, x="bottleneck.rate", y="share", per_flow=True)
    assert e.value.field == "per_flow"


def test_per_flow_and_line_plots_share_their_axis_decoration(tmp_path):
    """plot_flows decorates its axes as plot's lines do (sweep.plot.decorate): the same x
    label, the metric as y label ("(per flow)" added), log scales when asked, a small legend,
    a light grid."""
    from matplotlib.font_manager import FontProperties

    res = small(seeds=1).run(workers=2, quiet=True, executor="threads")
    line = plot(res.table, x="bottleneck.rate", y="share", logy=True, out=tmp_path / "l.png").axes[0]
    flows = plot(res.flows, x="bottleneck.rate", y="share", per_flow=True, logy=True,
                 out=tmp_path / "f.png").axes[0]
    assert line.get_ylabel() == "share" and flows.get_ylabel() == "share (per flow)"
    small_pt = FontProperties(size="small").get_size_in_points()
    for ax in (line, flows):
        assert ax.get_xlabel() == "bottleneck.rate"
        assert (ax.get_xscale(), ax.get_yscale()) == ("linear", "log")
        # (the dotted line at the fair share is part of the shared decoration)
        assert sorted(t.get_text() for t in ax.get_legend().get_texts()) == [
            "group 0 (tcp)", "group 1 (gaimd)", "share 1 (fair)"]
        assert all(t.get_fontsize() == small_pt for t in ax.get_legend().get_texts())
        grid = ax.yaxis.get_gridlines()
        assert grid and all(g.get_visible() and g.get_alpha() == 0.3 for g in grid)
    flat = plot(res.flows, x="bottleneck.rate", y="share", per_flow=True, out=tmp_path / "g.png").axes[0]
    assert flat.get_yscale() == "linear"

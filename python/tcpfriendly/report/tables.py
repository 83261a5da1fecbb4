"""The tables of a run (a :class:`tcpfriendly.Result`): per group, per link, per flow; shared by
the run report and the notebook display."""

from __future__ import annotations

from . import html as H

__all__ = ["group_table", "link_table", "flow_table", "MAX_FLOW_ROWS"]

#: Per-flow rows shown before the table is cut (the CSV has them all).
MAX_FLOW_ROWS = 200


def group_table(result) -> str:
    from ..formatting import _fixed, _int

    groups = result.group_summary()
    if groups.empty:
        return "<p class=\"note\">no flows</p>"
    rows = []
    for _, r in groups.iterrows():
        rows.append([r["group"], r["algorithm"], r["params"], r["direction"], int(r["n_flows"]),
                     _fixed(r["goodput_bps_mean"] / 1e6, 3),
                     f"{_fixed(r['goodput_bps_min'] / 1e6, 3)}..{_fixed(r['goodput_bps_max'] / 1e6, 3)}",
                     _fixed(r["share"], 3), _fixed(r.get("jain"), 3), _fixed(r["loss_event_rate"], 5),
                     _fixed(r["mean_rtt_s"] * 1e3, 1), _fixed(r["mean_cwnd"], 1),
                     _int(r["retransmissions"]), _int(r["timeouts"])])
    return H.table(["group", "algorithm", "params (β = fraction removed)", "direction", "flows",
                    "goodput Mb/s (mean)", "min..max Mb/s", "share", "Jain", "loss-event rate",
                    "RTT ms", "cwnd pkts", "rtx", "RTOs"], rows, numeric_from=4,
                   caption="per flow group; share = group mean goodput / mean flow goodput in the same "
                           "direction (1 = fair); loss-event rate = loss events / packets sent (pooled)")


def link_table(result) -> str:
    from ..formatting import _fixed, _int, _percent

    links = result.links
    if links.empty:
        return ""
    rows = [[r.get("name"), _percent(r.get("utilization")), _int(r.get("drops")), _int(r.get("marks")),
             _fixed(r.get("mean_queue_pkts"), 1)] for _, r in links.iterrows()]
    return H.table(["link", "utilization", "drops", "marks", "mean queue pkts"], rows, caption="links")


def flow_table(result) -> str:
    flows = result.flows
    cols = [c for c in ("id", "group", "algorithm", "goodput_bps", "packets_sent", "retransmissions",
                        "loss_events", "timeouts", "loss_event_rate", "mean_rtt_s", "mean_cwnd")
            if c in flows.columns]
    rows = flows[cols].head(MAX_FLOW_ROWS).itertuples(index=False)
    note = (f"<p class=\"note\">first {MAX_FLOW_ROWS} of {len(flows)} flows (flows.csv has them all)</p>"
            if len(flows) > MAX_FLOW_ROWS else "")
    return H.details(f"every flow ({len(flows)})", H.table(cols, rows, numeric_from=3) + note)

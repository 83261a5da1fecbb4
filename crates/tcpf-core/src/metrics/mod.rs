//! Measurement: per-flow and per-link results, time series, and the papers' yardsticks.

use crate::config::{FlowKind, FlowSpec};
use crate::net::LinkStats;
use serde::Serialize;
use serde_json::Value;

/// Per-flow results over the measurement window.
#[derive(Clone, Debug, Serialize)]
pub struct FlowResult {
    pub id: u32,
    pub group: u32,
    pub algorithm: String,
    pub params: Value,
    pub recovery: Option<&'static str>,
    pub direction: String,
    pub start_s: f64,
    pub throughput_bps: f64,
    pub goodput_bps: f64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub retransmissions: u64,
    /// Window reductions (TCP) or loss events (rate-based flows); None (null) for a UDP
    /// source, which has no notion of one (its losses: packets_sent − packets_delivered).
    pub loss_events: Option<u64>,
    pub timeouts: u64,
    pub fast_retransmits: u64,
    pub ecn_reactions: u64,
    /// loss_events / packets_sent (0 when nothing was sent); NaN (null) for a UDP source.
    pub loss_event_rate: f64,
    pub mean_rtt_s: f64,
    /// Mean RTT sample as the controller saw it (differs from mean_rtt_s with RTT noise).
    pub mean_rtt_sample_s: f64,
    pub mean_rto_s: f64,
    pub mean_cwnd: f64,
}

impl FlowResult {
    pub fn new(id: u32, spec: &FlowSpec) -> Self {
        let (params, recovery) = match &spec.kind {
            FlowKind::Tcp { params, external, recovery, .. } => (external.clone().unwrap_or_else(|| params.to_json()), Some(recovery.name())),
            FlowKind::Udp { .. } => (Value::Object(Default::default()), None),
            FlowKind::Rate { params, .. } => (params.to_json(), None),
        };
        FlowResult {
            id,
            group: spec.group,
            algorithm: spec.algorithm.clone(),
            params,
            recovery,
            direction: spec.direction.clone(),
            start_s: crate::sim::to_secs(spec.start),
            throughput_bps: 0.0,
            goodput_bps: 0.0,
            packets_sent: 0,
            packets_delivered: 0,
            retransmissions: 0,
            loss_events: None,
            timeouts: 0,
            fast_retransmits: 0,
            ecn_reactions: 0,
            loss_event_rate: f64::NAN,
            mean_rtt_s: f64::NAN,
            mean_rtt_sample_s: f64::NAN,
            mean_rto_s: f64::NAN,
            mean_cwnd: f64::NAN,
        }
    }
}

/// Per-link results over the measurement window.
#[derive(Clone, Debug, Serialize)]
pub struct LinkResult {
    pub name: String,
    pub utilization: f64,
    pub drops: u64,
    pub early_drops: u64,
    pub forced_drops: u64,
    pub random_drops: u64,
    pub marks: u64,
    pub mean_queue_pkts: f64,
    pub arrivals: u64,
    pub departures: u64,
    pub drop_rate: f64,
}

impl LinkResult {
    pub fn from_stats(name: &str, s: &LinkStats, window_s: f64) -> Self {
        let window_ns = window_s * 1e9;
        LinkResult {
            name: name.to_string(),
            utilization: s.busy_ns as f64 / window_ns,
            drops: s.drops,
            early_drops: s.early_drops,
            forced_drops: s.forced_drops,
            random_drops: s.loss_model_drops,
            marks: s.marks,
            mean_queue_pkts: s.queue_area as f64 / window_ns,
            arrivals: s.arrivals,
            departures: s.departures,
            drop_rate: if s.arrivals > 0 { s.drops as f64 / s.arrivals as f64 } else { 0.0 },
        }
    }
}

/// Sampled time series in long (columnar) form.
#[derive(Clone, Debug, Default, Serialize)]
pub struct TimeSeries {
    pub flows: FlowSeries,
    pub links: LinkSeries,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct FlowSeries {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd: Vec<f64>,
    /// The slow-start threshold (packets; null before the first decrease and for rate-based
    /// and UDP flows).
    pub ssthresh: Vec<f64>,
    pub rate_bps: Vec<f64>,
    pub srtt_s: Vec<f64>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct LinkSeries {
    pub time: Vec<f64>,
    pub link: Vec<String>,
    pub queue_pkts: Vec<f64>,
    pub utilization: Vec<f64>,
    pub drops: Vec<u64>,
    /// ECN marks over the interval (0 on a link that does not mark).
    pub marks: Vec<u64>,
}

impl TimeSeries {
/// Bytes held by the samples (for the run's memory guard; link names counted inline).
    pub fn held_bytes(&self) -> u64 {
        (self.flows.time.capacity() * 44 + self.links.time.capacity() * 64) as u64
    }

        pub fn push_flow(&mut self, t: f64, flow: u32, cwnd: f64, ssthresh: f64, rate: f64, srtt: f64) {
        let f = &mut self.flows;
        f.time.push(t);
        f.flow.push(flow);
        f.cwnd.push(cwnd);
        f.ssthresh.push(ssthresh);
        f.rate_bps.push(rate);
        f.srtt_s.push(srtt);
    }

    pub fn push_link(&mut self, t: f64, link: &str, q: f64, util: f64, drops: u64, marks: u64) {
        let l = &mut self.links;
        l.time.push(t);
        l.link.push(link.to_string());
        l.queue_pkts.push(q);
        l.utilization.push(util);
        l.drops.push(drops);
        l.marks.push(marks);
    }
}

/// Every window reduction, in time order (columnar), and every loss event a rate-based flow's
/// receiver detects (`kind` "rate_loss_event", windows NaN: null in the JSON).
#[derive(Clone, Debug, Default, Serialize)]
pub struct LossLog {
    pub time: Vec<f64>,
    pub flow: Vec<u32>,
    pub kind: Vec<&'static str>,
    pub window_before: Vec<f64>,
    pub window_after: Vec<f64>,
}

/// Everything a run produced.
#[derive(Clone, Debug)]
pub struct RunResult {
    pub flows: Vec<FlowResult>,
    pub links: Vec<LinkResult>,
    pub timeseries: Option<TimeSeries>,
    pub loss_log: Option<LossLog>,
    /// Events processed (for benchmarks).
    pub events: u64,
    /// The packet trace's bytes (the scenario's `[trace]`), in its format.
    pub trace: Option<Vec<u8>>,
}

/// Jain's fairness index (Σx)² / (n·Σx²); 1 for equal shares, 1/n when one takes all.
pub fn jain_index(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let s: f64 = x.iter().sum();
    let s2: f64 = x.iter().map(|v| v * v).sum();
    if s2 == 0.0 {
        return 1.0;
    }
    s * s / (x.len() as f64 * s2)
}

/// Coefficient of variation (population standard deviation / mean).
pub fn cov(x: &[f64]) -> f64 {
    let n = x.len() as f64;
    if x.is_empty() {
        return f64::NAN;
    }
    let m = x.iter().sum::<f64>() / n;
    let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / n;
    v.sqrt() / m
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_bounds() {
        assert!((jain_index(&[1.0, 1.0, 1.0, 1.0]) - 1.0).abs() < 1e-12);
        assert!((jain_index(&[1.0, 0.0, 0.0, 0.0]) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn cov_of_constant_is_zero() {
        assert_eq!(cov(&[3.0, 3.0, 3.0]), 0.0);
        assert!((cov(&[1.0, 3.0]) - 0.5).abs() < 1e-12);
    }
}

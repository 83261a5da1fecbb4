//! A run's configuration in engine units: what `scenario` resolves a scenario file into, what
//! the `engine` runs and what `metrics` labels its results with. It sits below all three, so
//! neither the engine nor the metrics import each other for it.

use crate::cc;
use crate::net::topology::{Route, Topology};
use crate::sim::Time;
use crate::transport::{Recovery, TcpParams, UdpPattern, Window};

/// What a flow is.
#[derive(Clone, Debug)]
pub enum FlowKind {
    /// `external`: parameters of a controller built by a `ControllerFactory` (not the registry).
    Tcp { params: cc::Params, external: Option<serde_json::Value>, recovery: Recovery, tcp: TcpParams, ack_size: u32, delayed_ack: bool, delack_timeout: Time },
    Udp { size: u32, pattern: UdpPattern },
    /// A rate-based sender (TFRC, TFRCP, TEAR) and its receiver; `size` on the wire, `payload`
    /// counted in goodput.
    Rate { params: cc::Params, size: u32, payload: u32, ack_size: u32 },
}

impl FlowKind {
    /// Payload bits of one packet (what goodput counts).
    pub fn payload_bits(&self) -> f64 {
        match self {
            FlowKind::Tcp { tcp, .. } => tcp.packet_size as f64 * 8.0,
            FlowKind::Udp { size, .. } => *size as f64 * 8.0,
            FlowKind::Rate { payload, .. } => *payload as f64 * 8.0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct FlowSpec {
    pub group: u32,
    pub route: Route,
    pub start: Time,
    pub stop: Option<Time>,
    pub kind: FlowKind,
    /// Labels copied into the results.
    pub algorithm: String,
    pub direction: String,
}

/// Everything a run needs, resolved to engine units.
#[derive(Clone, Debug)]
pub struct SimConfig {
    pub seed: u64,
    pub duration: Time,
    pub measure: Window,
    pub topology: Topology,
    pub flows: Vec<FlowSpec>,
    pub timeseries: Option<Time>,
}

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
    pub limits: Limits,
    /// The packet trace to record, if any.
    pub trace: Option<crate::trace::TraceSpec>,
    /// The scenario's `loss_log`: record every window reduction (TCP flows, `TcpParams::
    /// log_losses`) and every loss event of a rate-based flow's receiver.
    pub loss_log: bool,
}

/// A run's resource limits (the scenario's `[limits]` table; docs/scenario.md, "Resource
/// limits"): what keeps one run's memory bounded whatever its input.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    /// Bytes the run may hold in what grows with its traffic (packets queued and in flight,
    /// senders' per-packet state, loss log, time series); the run fails past it.
    pub memory: u64,
    /// Packets an access link (the per-flow links, unlimited queues) holds, the one being
    /// sent included; arrivals beyond it are dropped.
    pub access_queue: u32,
}

impl Limits {
    /// Default `limits.memory`: 1 GiB.
    pub const MEMORY: u64 = 1 << 30;
    /// Largest `limits.memory`: 64 GiB.
    pub const MAX_MEMORY: u64 = 64 << 30;
    /// Smallest `limits.memory`: 1 MiB.
    pub const MIN_MEMORY: u64 = 1 << 20;
    /// Default `limits.access_queue`: the default window cap, so that no TCP sender's window
    /// ever overflows its own access link.
    pub const ACCESS_QUEUE: u32 = Limits::WINDOW;
    /// Largest `limits.access_queue` (and of `max_window`): 2^24 packets.
    pub const MAX_PACKETS: u32 = 1 << 24;
    /// The window cap of every window-based sender when the scenario sets no `max_window`:
    /// 2^20 packets (10 Gb/s × 840 ms of 1000-byte packets).
    pub const WINDOW: u32 = 1 << 20;
    /// Most time-series rows a run may record: samples × (flows + reported links). One row
    /// costs ~400 bytes from the engine to a Python data frame.
    pub const TIMESERIES_ROWS: u64 = 2_000_000;
}

impl Default for Limits {
    fn default() -> Self {
        Limits { memory: Limits::MEMORY, access_queue: Limits::ACCESS_QUEUE }
    }
}

//! Transport endpoints: the TCP sender (slow start, loss recovery, RTO) with congestion
//! avoidance delegated to a `cc::Controller`, the TCP receiver, the rate-based senders and
//! receivers (`rate`: TFRC, TFRCP, TEAR), and UDP sources.
//!
//! Endpoints are driven by the engine: each call takes the current time and appends the
//! packets to send to an output buffer; timers are exposed as deadlines the engine arms.

/// The `RateSender` accessors of a sender that keeps its `Pacer` in a field named `pace`.
macro_rules! pacer_in_field {
    () => {
        fn pacer(&self) -> &Pacer {
            &self.pace
        }

        fn pacer_mut(&mut self) -> &mut Pacer {
            &mut self.pace
        }
    };
}

pub mod udp;
pub mod rate;
pub mod rtt;
mod seqruns;
pub mod sink;
pub mod tcp;

pub use udp::{OnOff, UdpPattern, UdpSource};
pub use sink::TcpSink;
pub use tcp::{Recovery, TcpParams, TcpSender};

use crate::sim::Time;

/// A measurement window [from, to] in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub from: Time,
    pub to: Time,
}

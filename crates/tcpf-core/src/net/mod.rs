//! Network elements: packets, queues, loss models, links and topologies.

pub mod link;
pub mod loss;
pub mod packet;
pub mod queue;
pub mod topology;

pub use link::{Link, LinkStats, Pipes};
pub use loss::{LossAttach, LossModel, LossSpec};
pub use packet::{Ext, Packet, PacketKind, Wire, MAX_ROUTE_LINKS};
pub use queue::{Admission, Discipline, QueueSpec, RedParams};
pub use topology::{Dumbbell, DumbbellFlow, Topology};

/// Index of a link in a topology.
pub type LinkId = u32;
/// Index of a node in a topology.
pub type NodeId = u32;

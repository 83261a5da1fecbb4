//! Topologies as plain data: nodes, unidirectional links and per-flow routes (the list of
//! links a flow's data and ACKs traverse). Builders turn a compact description, such as a
//! dumbbell, into that form.

use super::loss::LossAttach;
use super::queue::QueueSpec;
use super::{LinkId, NodeId};
use crate::sim::Time;

#[derive(Clone, Debug)]
pub struct LinkSpec {
    pub name: String,
    pub from: NodeId,
    pub to: NodeId,
    pub rate_bps: f64,
    pub delay: Time,
    pub queue: QueueSpec,
    pub loss: Option<LossAttach>,
    /// Reported in results (bottlenecks are; access links are not).
    pub report: bool,
}

/// A flow's static route: the links its data take, and those its ACKs take back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Route {
    pub fwd: Vec<LinkId>,
    pub rev: Vec<LinkId>,
}

#[derive(Clone, Debug, Default)]
pub struct Topology {
    pub nodes: Vec<String>,
    pub links: Vec<LinkSpec>,
}

impl Topology {
    pub fn add_node(&mut self, name: impl Into<String>) -> NodeId {
        self.nodes.push(name.into());
        (self.nodes.len() - 1) as NodeId
    }

    #[allow(clippy::too_many_arguments)]
    pub fn add_link(&mut self, name: impl Into<String>, from: NodeId, to: NodeId, rate_bps: f64, delay: Time, queue: QueueSpec, report: bool) -> LinkId {
        self.links.push(LinkSpec { name: name.into(), from, to, rate_bps, delay, queue, loss: None, report });
        (self.links.len() - 1) as LinkId
    }

    /// Check that a route is a connected walk and (if it has an ACK path) returns to where it
    /// started.
    pub fn check_route(&self, r: &Route) -> Result<(), String> {
        for path in [&r.fwd, &r.rev] {
            for w in path.windows(2) {
                let (a, b) = (&self.links[w[0] as usize], &self.links[w[1] as usize]);
                if a.to != b.from {
                    return Err(format!("links '{}' and '{}' do not connect", a.name, b.name));
                }
            }
        }
        if r.rev.is_empty() {
            return Ok(());
        }
        let (f0, fl) = (&self.links[r.fwd[0] as usize], &self.links[*r.fwd.last().unwrap() as usize]);
        let (r0, rl) = (&self.links[r.rev[0] as usize], &self.links[*r.rev.last().unwrap() as usize]);
        if r0.from != fl.to || rl.to != f0.from {
            return Err("the ACK path does not join the data path's ends".into());
        }
        Ok(())
    }
}

/// One flow's attachment to a dumbbell.
#[derive(Clone, Debug)]
pub struct DumbbellFlow {
    /// One-way delay of the sender's access link.
    pub access_delay: Time,
    /// One-way delay of the receiver's access link.
    pub receiver_delay: Time,
    pub access_rate_bps: f64,
    /// Data flows from the right side to the left (through the reverse bottleneck).
    pub reverse: bool,
}

/// Two routers joined by a bottleneck, each flow with its own sender and receiver hosts.
#[derive(Clone, Debug)]
pub struct Dumbbell {
    pub rate_bps: f64,
    pub delay: Time,
    /// Queue of the forward (left → right) bottleneck.
    pub queue: QueueSpec,
    /// Queue of the reverse (right → left) bottleneck.
    pub reverse_queue: QueueSpec,
    /// Loss model on the forward bottleneck.
    pub loss: Option<LossAttach>,
}

impl Dumbbell {
    pub const BOTTLENECK: &'static str = "bottleneck";
    pub const REVERSE: &'static str = "bottleneck_reverse";

    pub fn build(&self, flows: &[DumbbellFlow]) -> (Topology, Vec<Route>) {
        let mut t = Topology::default();
        let r1 = t.add_node("r1");
        let r2 = t.add_node("r2");
        let fwd = t.add_link(Self::BOTTLENECK, r1, r2, self.rate_bps, self.delay, self.queue.clone(), true);
        t.links[fwd as usize].loss = self.loss.clone();
        let rev = t.add_link(Self::REVERSE, r2, r1, self.rate_bps, self.delay, self.reverse_queue.clone(), true);
        let mut routes = Vec::with_capacity(flows.len());
        for (i, f) in flows.iter().enumerate() {
            let s = t.add_node(format!("s{i}"));
            let d = t.add_node(format!("d{i}"));
            let (near, far, mid_f, mid_r) = if f.reverse { (r2, r1, rev, fwd) } else { (r1, r2, fwd, rev) };
            let s_up = t.add_link(format!("s{i}_up"), s, near, f.access_rate_bps, f.access_delay, QueueSpec::Unlimited, false);
            let s_down = t.add_link(format!("s{i}_down"), near, s, f.access_rate_bps, f.access_delay, QueueSpec::Unlimited, false);
            let d_down = t.add_link(format!("d{i}_down"), far, d, f.access_rate_bps, f.receiver_delay, QueueSpec::Unlimited, false);
            let d_up = t.add_link(format!("d{i}_up"), d, far, f.access_rate_bps, f.receiver_delay, QueueSpec::Unlimited, false);
            routes.push(Route { fwd: vec![s_up, mid_f, d_down], rev: vec![d_up, mid_r, s_down] });
        }
        (t, routes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumbbell_routes_connect() {
        let db = Dumbbell { rate_bps: 1e6, delay: 10, queue: QueueSpec::DropTail { limit: 10 }, reverse_queue: QueueSpec::DropTail { limit: 10 }, loss: None };
        let flows = vec![
            DumbbellFlow { access_delay: 1, receiver_delay: 0, access_rate_bps: 1e7, reverse: false },
            DumbbellFlow { access_delay: 2, receiver_delay: 0, access_rate_bps: 1e7, reverse: true },
        ];
        let (t, routes) = db.build(&flows);
        for r in &routes {
            t.check_route(r).unwrap();
        }
        assert_eq!(t.links[routes[0].fwd[1] as usize].name, "bottleneck");
        assert_eq!(t.links[routes[1].fwd[1] as usize].name, "bottleneck_reverse");
    }
}

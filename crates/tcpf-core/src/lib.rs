//! tcpfriendly's engine: a deterministic packet-level simulator for TCP-friendly congestion
//! control, the papers' window controllers, measurement, and analytic models.
//!
//! Modules, one job each: `sim` (event queue, clock, seeded RNG), `net` (links, queues, loss
//! models, topologies), `transport` (TCP sender/receiver, UDP sources), `cc` (window
//! controllers, pure), `config` (a run's configuration in engine
//! units), `registry` (one entry per algorithm: schema, source, constructor),
//! `metrics`, `models` (analytic), `scenario` (user-facing scenario files: validation,
//! defaults, resolution into an engine configuration), `engine` (the run), `error` (the one
//! `FieldError` for bad input), `alloc` (the global allocator the binaries install: large
//! arrays on huge pages).

pub mod alloc;
pub mod api;
pub mod cc;
pub mod config;
pub mod engine;
pub mod error;
pub mod metrics;
pub mod models;
pub mod net;
pub mod registry;
pub mod sim;
pub mod trace;
pub mod scenario;
pub mod transport;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");

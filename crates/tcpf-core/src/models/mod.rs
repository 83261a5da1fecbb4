//! Analytic models from the papers (pure functions; no simulator types).
//!
//! One file per paper topic:
//! - `rate`: sending-rate formulas — Padhye, Mathis, and yang2000's GAIMD formula (the
//!   approximate eq. 2 and the full eq. 55 with E[W] (24), E[X] (28), Q̂ (45), f(p) (56)).
//! - `friendly`: yang2000's TCP-friendly (α, β) curves: TD (eq. 6), TO (eq. 7) and the
//!   error-minimising curve (eq. 8).
//! - `spectrum`: jin2001's history-based spectrum (eqs. 4–8), convergence times (Table 2,
//!   Appendix C), the smoothness/aggressiveness/responsiveness trade-off (Table 3, Appendix D)
//!   and the Fig. 4(c) region map.
//! - `cyrf`: sastry2005's TCP-compatible f for a g (Corollary 15) and the n-flow fairness
//!   condition (eq. 13).
//! - `illinois`: liu2008's κ1..κ4 (eq. 4), the α(d_a), β(d_a) curves (eqs. 2–3, Fig. 1), the
//!   lossy-link bound (eq. 31) and Vegas's equilibrium under RTT noise (eqs. 32–33).
//! - `markov`: liu2008's stochastic matrix model (eqs. 16–18, Assumption 2) as a seeded
//!   Monte-Carlo simulator.
//! - `chiu_jain`: the Chiu–Jain synchronous binary-feedback model driving any registered
//!   controller through the `cc::Controller` trait.
//! - `api`: JSON in, JSON out — what the Python bindings and the `tcpf model` command call.
//!
//! β convention (REFERENCE.md §1): `beta` is the fraction REMOVED on a loss event; yang2000
//! writes the kept fraction, called `keep` here. Functions that follow yang2000's algebra take
//! `keep` explicitly in their signature.

pub mod api;
pub mod chiu_jain;
pub mod cyrf;
pub mod friendly;
pub mod illinois;
pub mod markov;
pub mod rate;
pub mod spectrum;

/// A bad model parameter: which one (named as the model's parameter, e.g. `beta`, `W1`), and why.
pub type ModelError = crate::error::FieldError;

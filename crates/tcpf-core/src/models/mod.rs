//! Analytic models from the papers (pure functions; no simulator types).

pub mod rate;

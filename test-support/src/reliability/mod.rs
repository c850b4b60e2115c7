//! Helpers for the reliability tests: the real local executor with a
//! per-instance environment overlay, fake `rg` scripts that inject faults,
//! `/proc` probes (process groups, open descriptors, peak memory), and
//! small builders for engines and trees.

pub mod engine;
pub mod fake_rg;
pub mod procfs;

pub use engine::{load, local_executor, registry_with};
pub use fake_rg::FakeRg;

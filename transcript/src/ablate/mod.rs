//! `workbench ablate`: what the package's budgets cost. Recorded
//! agent sessions (fixture transcripts or live recordings) are replayed
//! under every combination of `--set` config values, with rg run once per
//! call, and each variant gets its page tokens, the calls it truncates,
//! samples and spills, the paths and matches the model no longer sees, and
//! the KV prefix its tool surface shares with the baseline's.
//!
//! - [`grid`]: `--set KEY=V1,V2,…` and the combinations of their values;
//! - `capture`: the executor that runs rg once per call for all variants;
//! - [`run`]: the replay of each call under each variant;
//! - [`stats`]: the figures of one variant;
//! - [`report`]: the figures as a Markdown table, CSV or JSON.

mod capture;
pub(crate) mod grid;
pub(crate) mod report;
pub(crate) mod run;
pub(crate) mod stats;

pub use run::{AblateError, Ablation, Control, Input, PageEvent, Progress, ablate};

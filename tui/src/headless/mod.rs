//! The headless commands: the engine without a terminal, for scripts and
//! CI (docs/design.md §2). Each prints exactly what the model sees, or one JSON
//! object; its entry, `run(args) -> Result<ExitCode, Error>` (three in
//! `transcripts`), returns the exit status or the failure `crate::run`
//! reports.
//!
//! - [`ablate`]: `workbench ablate`, the cost of config variants;
//! - [`ablate_host`]: `ablate --host`, what one agent host does to each
//!   variant's pages;
//! - [`call`]: `workbench call`, one tool call;
//! - [`explain`]: `workbench explain`, why a path is or is not on the page;
//! - [`lens`]: `workbench lens`, a tool result as a host's model receives it;
//! - [`rg_variants`]: `freeze --also-rg` and `replay --add-variant`,
//!   one fixture for every rg;
//! - [`surface`]: `workbench surface`, the prompt sections and tool definitions;
//! - [`transcripts`]: `workbench replay`, `workbench record` and
//!   `workbench freeze`.

pub(crate) mod ablate;
pub(crate) mod ablate_host;
pub(crate) mod call;
pub(crate) mod explain;
pub(crate) mod lens;
pub(crate) mod rg_variants;
pub(crate) mod surface;
pub(crate) mod transcripts;

use std::io::Write;

/// Writes `text` to stdout as is.
pub(crate) fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
}

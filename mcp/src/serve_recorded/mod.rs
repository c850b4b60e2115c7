//! `workbench mcp --replay TRANSCRIPT... [--on-miss error|live]`: recorded
//! sessions served back as a deterministic MCP server, over stdio or HTTP
//! like the live one (docs/mcp.md).
//!
//! - [`load`]: the transcripts read, the surface's engine loaded, and with
//!   `--on-miss live` the tree prepared and `--record` opened on it.
//! - [`recorded`]: the recorded answers, served through the `tools/call`
//!   seam of [`crate::answers`]; [`matching`]: when a call matches a
//!   record, and which recorded calls come closest when none does.

pub(crate) mod load;
pub(crate) mod matching;
pub(crate) mod recorded;

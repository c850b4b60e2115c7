//! `fs-search-engine`: the model-facing `glob` and `grep` tools of
//! `@deepseek-ai/dsh-tool-fs-search`, re-implemented to the letter of
//! CONTRACT.md, with the minimal host they need: a tool registry with its
//! post-execute step and timeout policy, a bash executor seam with a local
//! executor, and a spill store seam with a local store.
//!
//! One call flows one way: [`Registry::call`] → argument checks →
//! [`command`] (quoting is the security boundary) → [`bash`] → [`parse`]
//! → canonical [`value`] → [`render`] and [`meta`] → post-execute spill.

pub mod args;
pub mod bash;
pub mod classify;
pub mod command;
pub mod config;
pub mod error;
pub mod exec;
mod ids;
pub mod meta;
pub mod mtime_sort;
pub mod parse;
pub mod paths;
pub mod pipeline;
pub mod plugin;
pub mod post_execute;
pub mod present;
pub mod quote;
pub mod registry;
pub mod render;
pub mod result;
mod rg_json;
pub mod sample;
pub mod spill;
mod stream;
pub mod surface;
pub mod text;
pub mod tools;
pub mod value;

pub use bash::{BashExecutor, LocalBashConfig, LocalBashExecutor};
pub use config::Config;
pub use error::{SearchCode, SearchError, ToolError};
pub use exec::{ExecContext, SessionHeader};
pub use ids::random_hex;
pub use plugin::{LoadError, LoadOutcome};
pub use registry::{Host, Registry};
pub use result::ToolResult;
pub use spill::{LocalSpillStore, SpillStore};

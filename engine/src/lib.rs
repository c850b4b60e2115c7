//! `fs-search-engine`: the model-facing `glob` and `grep` tools of
//! `@deepseek-ai/dsh-tool-fs-search`, re-implemented to the letter of its
//! contract, with the minimal host they need.
//!
//! A host loads the plugin into a [`Registry`] built on a [`Host`]: a bash
//! executor ([`BashExecutor`]; the `fs-search-exec` crate's
//! `LocalBashExecutor` runs a local bash in its own process group), an
//! optional spill store ([`SpillStore`]; that crate's `LocalSpillStore`
//! writes private temp files, writing a large result as it is formatted:
//! [`SpillStore::save_text_in_pieces`]), and whether
//! the timeout policy is on. The load probes `command -v rg` through the executor and
//! registers nothing, with [`RG_MISSING_WARNING`], when rg is missing.
//!
//! Then there are two ways to call the tools:
//! - by name with the model's raw argument text, exactly as a model sends
//!   it: [`Registry::call_json`], which reads it as the reference's
//!   `JSON.parse` does ([`json`]: a lone surrogate escape becomes U+FFFD,
//!   nesting is bounded), then [`Registry::call`] with the parsed value
//!   (argument-schema check, timeout policy, spill);
//! - typed, for a host with its own tool router: [`Registry::glob`] and
//!   [`Registry::grep`] take [`GlobArgs`] / [`GrepArgs`] and run the same
//!   path.
//!
//! Both return a [`ToolResult`]: the model-visible `text` with its parts
//! ([`ToolResult::footer`], [`ToolResult::locator`]), the canonical
//! [`value::ToolValue`], the [`render::SearchMeta`] card, the
//! [`spill::SpillRef`] of a saved full result, and a typed [`ErrorCode`].
//! The fixed surface the model sees on every request, prompt sections and
//! tool definitions, comes from [`Registry::prompt_sections`] and
//! [`Registry::tool_definitions`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use fs_search_engine::{Config, ExecContext, GrepArgs, Host, Registry};
//! use fs_search_exec::{LocalBashConfig, LocalBashExecutor, LocalSpillStore};
//!
//! # async fn example() -> Result<(), Box<dyn std::error::Error>> {
//! let bash = LocalBashExecutor::new(LocalBashConfig {
//!     cwd: Some("/path/to/repo".into()),
//!     ..LocalBashConfig::default()
//! })?;
//! let mut registry = Registry::new(Host {
//!     bash: Some(Arc::new(bash)),
//!     spill_store: Some(Arc::new(LocalSpillStore::new(None))),
//!     timeout_policy: true,
//! });
//! registry.load(&Config::with_sampling(true)).await?;
//! let exec = ExecContext::new("call-1").with_session(Some("session-1"), None);
//! let args = GrepArgs { pattern: "fn main".into(), ..GrepArgs::default() };
//! let result = registry.grep(&args, &exec).await;
//! println!("{}", result.text);
//! # Ok(())
//! # }
//! ```
//!
//! The crate root holds what an embedder needs (at most 30 names;
//! `engine/tests/root_names.rs` counts them). The rest lives in topic
//! modules, as ripgrep's `grep` facade groups its parts:
//! - [`bash`]: the executor seam with its plumbing (requests and specs,
//!   capped and streamed runs, stdout sinks); the executors themselves
//!   (local, sandboxed, over ssh) are `fs-search-exec`'s;
//! - [`spill`]: the store seam (what to save, the pieces of a large text,
//!   its errors, the [`spill::SpillRef`] locator) and the post-execute
//!   listeners;
//! - [`value`]: the canonical values of both tools;
//! - [`render`]: the page and its parts, the card, glob coverage;
//! - [`registry`]: load outcomes, the fixed surface, tool names;
//! - [`request`]: arguments, the plugin config and its keys, the
//!   execution context; [`json`] reads a model's argument text.
//!
//! `helpers`, behind the cargo feature of that name, mirrors the helpers
//! the original package exports for its tests (CONTRACT §1.1); only tests,
//! benchmarks and the workbench's explain need it.
//!
//! One call flows one way: registry → argument checks → the fixed rg
//! command (shell quoting is the security boundary) → the bash seam →
//! parsing rg's output → the canonical value → the rendered page and card
//! → post-execute spill → the timeout policy.
#![deny(missing_docs)]
#![warn(unreachable_pub)]
// The workspace builds the engine with `helpers` on (the workbench's
// explain uses it), where every `pub` item is reachable and used; without
// the feature the helper-only items are crate-internal and unused, and
// the lints would only repeat that.
#![cfg_attr(not(feature = "helpers"), allow(unreachable_pub, dead_code))]

pub mod bash;
mod command;
mod error;
mod parse;
pub mod registry;
pub mod release;
pub mod render;
pub mod request;
mod result;
mod run;
pub mod spill;
mod support;
pub mod value;

pub use bash::BashExecutor;
pub use error::{ErrorCode, SearchCode, SearchError, ToolError};
pub use registry::{Host, LoadError, LoadOutcome, RG_MISSING_WARNING, Registry};
pub use request::json;
pub use request::{Config, ConfigError, ExecContext, GlobArgs, GrepArgs};
pub use result::{ResultError, ToolResult};
pub use spill::SpillStore;

/// The package's public helpers (CONTRACT §1.1 lists what the original
/// exports for its tests): the constants, the argument parsers, the
/// command builders and their quoting, the output parsers, the renderers
/// and presenters, as pure functions. Hosts need none of them to call the
/// tools; they serve tests and benchmarks that pin one step of a call.
pub mod helpers {
    pub use crate::command::quote::single_quote;
    pub use crate::command::{GLOB_VCS_EXCLUDES, build_glob_command, build_grep_command};
    pub use crate::parse::{parse_glob_paths, parse_grep_matches};
    pub use crate::registry::surface::{
        GREP_PROMPT_TEXT, INJECT, PLUGIN_NAME, prompt_sections, tool_definitions,
    };
    pub use crate::render::coverage::measure_glob_coverage;
    pub use crate::render::meta::{glob_search_meta, grep_search_meta};
    pub use crate::render::present::{
        CallCard, SearchView, present_glob_call, present_glob_result, present_grep_call,
        present_grep_result,
    };
    pub use crate::render::sample::sample_across_top_level;
    pub use crate::render::sample_levels::{LevelReach, LevelSample, sample_level_by_level};
    pub use crate::render::text::{
        format_grep_matches, glob_spill_content, grep_spill_content, preview_line, render_glob,
        render_grep,
    };
    pub use crate::request::args::{parse_glob_args, parse_grep_args};
    pub use crate::request::config::{
        GLOB_MAX_RESULTS, GREP_MAX_LINE_BYTES, GREP_MAX_MATCHES, RAW_OUTPUT_MAX_BYTES,
        SEARCH_GRACE_MS, SEARCH_META_MAX_BYTES, SEARCH_STDERR_MAX_BYTES, SEARCH_TIMEOUT_MS,
    };
    pub use crate::run::pipeline::{RawSearch, run_ripgrep};
    pub use crate::value::paths::to_workdir_relative;
}

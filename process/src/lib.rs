//! `fs-search-process`: the process-level services every front end of the
//! workbench shares (the `workbench` binary's commands, the MCP server,
//! transcripts): nothing here knows a terminal, a screen or a protocol.
//!
//! The modules are private; what other crates use is re-exported flat
//! below (as ripgrep's `grep-cli` does), and [`exit`] is a namespace of
//! the exit statuses.
//!
//! - `atomic_file`: replacing a file at once (temp file, sync, rename);
//! - `bounded`: reading the files a user names, regular files only, capped;
//! - `console`: the one way to write a line to the terminal ([`stderr_line!`]);
//! - `executor`: choosing the local, sandboxed or ssh executor;
//! - [`exit`]: the exit statuses of every command;
//! - `flags` (feature `clap`): the flag structs every front end flattens
//!   (`--config`, `--tokenizer`, `--sandbox`/`--executor`, the spill flags,
//!   `--contract`/`--rg`);
//! - `log_records`: the `log` facade, forwarded to tracing, and one
//!   target's records captured for a thread;
//! - `logging`: the log file of each TUI or MCP server process;
//! - `nearest`: the known name nearest a mistyped one ("did you mean");
//! - `prune`: removing what is older than `--retention`;
//! - `rg`: which rg runs (version, path, major version);
//! - `setup`: loading the engine the way every front end runs it (the
//!   chosen executor rooted at the workdir, a spill store, the timeout
//!   policy, the release and rg chosen), and reading `--config` and `--args`;
//! - `signals`: SIGINT, SIGTERM and SIGHUP cancel the call in flight;
//! - `tokens`: loading the tokenizer, the request prefix;
//! - `user_dirs`: the per-user directories the workbench writes to (spill
//!   root, logs, recordings), created private.

#![warn(unreachable_pub)]

mod atomic_file;
mod bounded;
mod console;
mod executor;
pub mod exit;
#[cfg(feature = "clap")]
mod flags;
mod log_records;
mod logging;
mod nearest;
mod prune;
mod rg;
mod runtime;
mod setup;
mod signals;
mod tokens;
mod user_dirs;

pub use atomic_file::{Staged, replace as replace_file};
pub use bounded::{
    TOKEN_FILE_MAX_BYTES, TRANSCRIPT_MAX_BYTES, open_for_append, open_regular, read_file,
    read_stream, read_text,
};
pub use console::write_line;
pub use executor::{
    ExecutorError, ExecutorFlag, ExecutorKind, RemoteHost, SANDBOX_READABLE,
    build as build_executor, parse_executor, remote_landlock_refusal,
};
#[cfg(feature = "clap")]
pub use flags::{
    ConfigArg, ContractArgs, SandboxArg, SpillArgs, TokenizerArg, parse_release, parse_rg_path,
    parse_runner, spill_root,
};
pub use log_records::{capture as capture_log_records, install as install_log_records};
pub use logging::{Logging, init as init_logging};
pub use nearest::{edit_distance, nearest};
pub use prune::{DEFAULT_RETENTION_DAYS, cutoff as retention_cutoff};
pub use rg::{RgInfo, major_of_line};
pub use runtime::runtime;
pub use setup::{
    ContractChoice, Loaded, RC8_CONFIG_KEYS, SetupError, SpillChoice, check_workdir,
    choose_spill_root, config_key_hint, config_key_hint_as, load_engine, load_engine_with,
    parse_config_flag, read_args, read_config, read_config_flag, unknown_config_keys,
};
pub use signals::{Stop, install as install_signals, installed as installed_signals, stopped_by};
pub use tokens::{
    SharedTokenizer, join as join_tokenizer, load_in_background as load_tokenizer_in_background,
    request_parts, thousands,
};
pub use user_dirs::{DirError, ensure_private, recordings_dir};

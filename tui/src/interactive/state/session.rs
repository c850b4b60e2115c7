//! The session facts every part of the workbench shares: where it runs
//! and logs, the plugin as last loaded, and the one-off status message.

use std::path::PathBuf;

/// Where the session runs and logs; shown in the header and the help.
#[derive(Debug, Clone, Default)]
pub struct SessionInfo {
    pub workdir: String,
    pub session_id: String,
    /// The spill root (none with `--no-spill`).
    pub spill_root: Option<PathBuf>,
    /// Where `R` saves recordings: outside the workdir, so later greps do
    /// not find them ([`fs_search_process::recordings_dir`]).
    pub recordings_dir: PathBuf,
    pub log_path: Option<PathBuf>,
    /// The rg the calls run; its version is shown in the header.
    pub rg: fs_search_process::RgInfo,
    /// The executor when it is not the local one (`sandbox-bwrap`,
    /// `ssh://HOST`): the header names it before the rg version.
    pub executor: Option<String>,
    /// The release the calls run as and the rg binary `--rg` chose: the
    /// header names the release unless it is the seed's 0.0.1, and the
    /// binary's path when `--rg` chose it.
    pub contract: fs_search_process::ContractChoice,
}

/// The plugin as last loaded.
#[derive(Debug, Clone, PartialEq)]
pub enum PluginStatus {
    Loading,
    Registered,
    /// Loaded, but rg is missing: nothing registered.
    RgMissing(String),
    /// The load failed (config error): nothing registered.
    Failed(String),
}

/// A one-off message, shown until the next key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub text: String,
    pub alert: bool,
}

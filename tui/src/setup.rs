//! Builds an engine the way the workbench runs it: the local executor
//! rooted at the workdir, an optional local spill store, and the timeout
//! policy; and reads `--config JSON|@FILE`.

use std::path::Path;
use std::sync::Arc;

use fs_search_engine::{
    Host, LoadOutcome, LocalBashConfig, LocalBashExecutor, LocalSpillStore, Registry,
};
use serde_json::Value;
use thiserror::Error;

/// Failures before any call runs: usage, config or load (exit 2).
#[derive(Debug, Error)]
pub enum SetupError {
    /// A config flag's `@FILE` cannot be read; `flag` names the flag
    /// (`--config`, `--against`).
    #[error("{flag}: cannot read {path}: {source}")]
    ConfigFile {
        flag: &'static str,
        path: String,
        source: std::io::Error,
    },
    #[error("{flag} is not valid JSON: {source}")]
    ConfigJson {
        flag: &'static str,
        source: serde_json::Error,
    },
    /// The config of a flag other than `--config` (`surface --against`)
    /// does not load; the message names the flag.
    #[error("{flag}: {source}")]
    FlagLoad {
        flag: &'static str,
        source: fs_search_engine::LoadError,
    },
    #[error("--args is not valid JSON: {0}")]
    ArgsJson(fs_search_engine::json::JsonError),
    #[error("--workdir {path}: {problem}")]
    Workdir { path: String, problem: String },
    #[error("{0}")]
    Executor(String),
    #[error("{0}")]
    Load(#[from] fs_search_engine::LoadError),
    /// A missing or invalid `--tokenizer FILE` (the message names it).
    #[error("--tokenizer: {0}")]
    Tokenizer(#[from] fs_search_tokens::Error),
}

/// Reads `--config`: inline JSON or `@FILE`. No config means `{}`, which
/// the load rejects for lack of `sampleOverCapGlobResults`.
pub fn read_config(raw: Option<&str>) -> Result<Value, SetupError> {
    read_config_flag("--config", raw)
}

/// Reads the config given to `flag` (inline JSON or `@FILE`); an error
/// names `flag`.
pub fn read_config_flag(flag: &'static str, raw: Option<&str>) -> Result<Value, SetupError> {
    let Some(raw) = raw else {
        return Ok(Value::Object(Default::default()));
    };
    let text = match raw.strip_prefix('@') {
        Some(path) => crate::bounded::read_text(Path::new(path), crate::bounded::CONFIG_MAX_BYTES)
            .map_err(|source| SetupError::ConfigFile {
                flag,
                path: path.to_owned(),
                source,
            })?,
        None => raw.to_owned(),
    };
    serde_json::from_str(&text).map_err(|source| SetupError::ConfigJson { flag, source })
}

/// Checks `--workdir` before anything else uses it: it must be an
/// existing directory the process can enter, or the error says what is
/// wrong with it (never blaming the shell the executor would spawn there).
pub fn check_workdir(path: &Path) -> Result<(), SetupError> {
    let problem = match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            "no such file or directory".to_owned()
        }
        Err(e) => format!("cannot be inspected: {e}"),
        Ok(meta) if meta.is_dir() => match std::fs::read_dir(path) {
            Ok(_) => return Ok(()),
            Err(e) => format!("cannot be read: {e}"),
        },
        Ok(meta) => {
            use std::os::unix::fs::FileTypeExt;
            let kind = meta.file_type();
            let what = if kind.is_fifo() {
                "a FIFO"
            } else if kind.is_socket() {
                "a socket"
            } else if kind.is_char_device() || kind.is_block_device() {
                "a device"
            } else {
                "a regular file"
            };
            format!("not a directory ({what})")
        }
    };
    Err(SetupError::Workdir {
        path: path.display().to_string(),
        problem,
    })
}

/// Where spilled results go.
pub enum SpillChoice<'a> {
    None,
    PrivateTemp,
    Root(&'a Path),
}

/// A loaded registry and the load's warnings.
pub struct Loaded {
    pub registry: Registry,
    pub warnings: Vec<String>,
}

/// Creates and loads a registry for `workdir`.
pub async fn load_engine(
    workdir: Option<&Path>,
    config: &Value,
    spill: SpillChoice<'_>,
) -> Result<Loaded, SetupError> {
    let bash = LocalBashExecutor::new(LocalBashConfig {
        cwd: workdir.map(|w| w.to_string_lossy().into_owned()),
        ..LocalBashConfig::default()
    })
    .map_err(|e| SetupError::Executor(e.to_string()))?;
    let spill_store: Option<Arc<dyn fs_search_engine::SpillStore>> = match spill {
        SpillChoice::None => None,
        SpillChoice::PrivateTemp => Some(Arc::new(LocalSpillStore::new(None))),
        SpillChoice::Root(root) => Some(Arc::new(LocalSpillStore::new(Some(root)))),
    };
    let mut registry = Registry::new(Host {
        bash: Some(Arc::new(bash)),
        spill_store,
        timeout_policy: true,
    });
    let warnings = match registry.load_fs_search(config).await? {
        LoadOutcome::RgMissing { warning } => vec![warning],
        LoadOutcome::Registered | LoadOutcome::Pending => Vec::new(),
    };
    Ok(Loaded { registry, warnings })
}

//! Builds an engine the way the workbench runs it: the chosen executor
//! (local or sandboxed, `executor.rs`) rooted at the workdir, an optional
//! local spill store, and the timeout policy, loaded as the chosen release
//! with the chosen rg ([`ContractChoice`]: `--contract`, `--rg`); and
//! reads `--config JSON|@FILE`, warning of keys the release does not read
//! (accepted and ignored, as the contract says).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs_search_engine::release::Release;
use fs_search_engine::{BashExecutor, Host, LoadOutcome, Registry};

use fs_search_exec::{LocalBashConfig, LocalSpillStore};
use serde_json::Value;
use thiserror::Error;

use crate::executor::{ExecutorError, ExecutorKind};
use crate::stderr_line;

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
    /// `--args @FILE` (or `@-`, stdin) cannot be read.
    #[error("--args: cannot read {path}: {source}")]
    ArgsFile {
        path: String,
        source: std::io::Error,
    },
    #[error("--workdir {path}: {problem}")]
    Workdir { path: String, problem: String },
    /// The per-user spill root cannot be used.
    #[error("the spill root {0} (--spill-dir DIR or --no-spill chooses otherwise)")]
    SpillRoot(crate::user_dirs::DirError),
    #[error("{0}")]
    Executor(#[from] ExecutorError),
    #[error("{0}")]
    Load(#[from] fs_search_engine::LoadError),
    /// A missing or invalid `--tokenizer FILE` (the message names it).
    #[error("--tokenizer: {0}")]
    Tokenizer(#[from] fs_search_tokens::Error),
}

/// The release the engine is exact to and the rg binary its executor
/// runs: what `--contract` and `--rg` choose (the seed's 0.0.1 and the
/// first `rg` on `PATH` by default).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContractChoice {
    /// The package release the tools behave as.
    pub release: Release,
    /// The rg binary (`--rg PATH`, absolute); `None`: the first `rg` on
    /// the executor's `PATH`.
    pub rg: Option<PathBuf>,
}

impl ContractChoice {
    /// The seed's release with the rg on `PATH`.
    pub fn seed() -> Self {
        Self::default()
    }

    /// `release` with the rg on `PATH`.
    pub fn of(release: Release) -> Self {
        Self { release, rg: None }
    }

    /// The rg that `executor`'s commands run: `--rg`'s binary when one
    /// was chosen, else the one [`crate::RgInfo::detect_for`] finds.
    pub fn rg_info(&self, executor: &ExecutorKind) -> crate::RgInfo {
        match &self.rg {
            Some(path) => crate::RgInfo::at(path),
            None => crate::RgInfo::detect_for(executor),
        }
    }
}

/// The config keys only 0.1.0-rc.8 reads (validated at its load).
pub const RC8_CONFIG_KEYS: [&str; 2] = ["graceMs", "stderrMaxBytes"];

/// The names of the config keys `release` reads.
fn config_key_names(release: Release) -> impl Iterator<Item = &'static str> + Clone {
    let rc8: &'static [&'static str] = match release {
        Release::Rc8 => &RC8_CONFIG_KEYS,
        Release::Seed => &[],
    };
    fs_search_engine::request::CONFIG_KEYS
        .iter()
        .map(|k| k.name)
        .chain(rc8.iter().copied())
}

/// Reads `--config`: inline JSON or `@FILE`. No config means `{}`, which
/// the load rejects for lack of `sampleOverCapGlobResults`. Warnings name
/// the keys `release` does not read.
pub fn read_config(raw: Option<&str>, release: Release) -> Result<Value, SetupError> {
    read_config_flag("--config", raw, release)
}

/// Reads the config given to `flag` (inline JSON or `@FILE`); an error
/// names `flag`. Each key `release` does not read is said on stderr
/// ([`unknown_config_keys`]); the config is returned as given, so the
/// engine ignores those keys as the contract says.
pub fn read_config_flag(
    flag: &'static str,
    raw: Option<&str>,
    release: Release,
) -> Result<Value, SetupError> {
    let config = parse_config_flag(flag, raw)?;
    for warning in unknown_config_keys(flag, &config, release) {
        stderr_line!("workbench: warning: {warning}");
    }
    Ok(config)
}

/// [`read_config_flag`] without the warnings on stderr (the TUI, whose
/// terminal is its screen, says them in its status line).
pub fn parse_config_flag(flag: &'static str, raw: Option<&str>) -> Result<Value, SetupError> {
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

/// One warning per key of `config` that `release` does not read (the
/// engine's [`fs_search_engine::request::CONFIG_KEYS`], and under
/// 0.1.0-rc.8 [`RC8_CONFIG_KEYS`] too): the engine ignores it (the
/// contract accepts unknown keys), so a misspelt key silently leaves its
/// default. Each names the nearest key ([`config_key_hint`]). None for a
/// config that is not an object (the load refuses it anyway).
pub fn unknown_config_keys(flag: &str, config: &Value, release: Release) -> Vec<String> {
    let Some(object) = config.as_object() else {
        return Vec::new();
    };
    object
        .keys()
        .filter(|key| !config_key_names(release).any(|name| name == *key))
        .map(|key| {
            format!(
                "{flag}: {key:?} is not a config key and is ignored ({})",
                config_key_hint_as(key, release)
            )
        })
        .collect()
}

/// What to say of `key`, which is not a config key of the seed's
/// release: [`config_key_hint_as`] for 0.0.1.
pub fn config_key_hint(key: &str) -> String {
    config_key_hint_as(key, Release::Seed)
}

/// What to say of `key`, which `release` does not read: the nearest
/// config key if one is near ([`crate::nearest::nearest`]), then all of
/// them.
pub fn config_key_hint_as(key: &str, release: Release) -> String {
    let names = config_key_names(release);
    let all = names.clone().collect::<Vec<_>>().join(", ");
    match crate::nearest::nearest(key, names) {
        Some(near) => format!("did you mean {near}? the keys are {all}"),
        None => format!("the keys are {all}"),
    }
}

/// Reads `--args`: the arguments' JSON text as given, or with `@FILE`
/// read from that file (`@-`: from stdin), at most
/// `crate::bounded::ARGS_MAX_BYTES`, for arguments over the shell's
/// limit. The text is parsed as the engine parses a model's (JSON.parse).
/// Arguments are a JSON object, so no JSON text starts with `@`.
pub async fn read_args(raw: &str) -> Result<Value, SetupError> {
    let text = match raw.strip_prefix('@') {
        Some(source) => read_args_file(source).await?,
        None => raw.to_owned(),
    };
    fs_search_engine::json::parse(&text).map_err(SetupError::ArgsJson)
}

/// The text of `--args @SOURCE`: the file SOURCE, or stdin for `-`.
async fn read_args_file(source: &str) -> Result<String, SetupError> {
    let max = crate::bounded::ARGS_MAX_BYTES;
    let owned = source.to_owned();
    // Blocking reads, on their own thread.
    let read = tokio::task::spawn_blocking(move || {
        if owned == "-" {
            crate::bounded::read_stream(std::io::stdin(), max).and_then(|bytes| {
                String::from_utf8(bytes).map_err(|_| {
                    std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8")
                })
            })
        } else {
            crate::bounded::read_text(Path::new(&owned), max)
        }
    })
    .await
    .map_err(|e| std::io::Error::other(e.to_string()))
    .and_then(|read| read);
    read.map_err(|source_error| SetupError::ArgsFile {
        path: if source == "-" {
            "<stdin>".to_owned()
        } else {
            source.to_owned()
        },
        source: source_error,
    })
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
    Root(&'a Path),
}

impl<'a> SpillChoice<'a> {
    /// A store rooted at `root`, or none.
    pub fn of(root: Option<&'a Path>) -> Self {
        root.map_or(Self::None, Self::Root)
    }
}

/// The spill root: none with `no_spill`, `spill_dir` as given, else the
/// per-user root (`crate::user_dirs::spill_root`), created private and
/// pruned of what is older than `cutoff`. Never a per-process directory
/// in TMPDIR.
pub fn choose_spill_root(
    no_spill: bool,
    spill_dir: Option<&Path>,
    cutoff: std::time::SystemTime,
) -> Result<Option<PathBuf>, SetupError> {
    if no_spill {
        return Ok(None);
    }
    if let Some(dir) = spill_dir {
        return Ok(Some(dir.to_path_buf()));
    }
    let root = crate::user_dirs::spill_root();
    crate::user_dirs::ensure_private(&root).map_err(SetupError::SpillRoot)?;
    let pruned = crate::prune::spill_root(&root, cutoff);
    tracing::debug!(root = %root.display(), ?pruned, "spill root pruned");
    Ok(Some(root))
}

/// A loaded registry and the load's warnings.
pub struct Loaded {
    pub registry: Registry,
    pub warnings: Vec<String>,
}

/// Creates and loads a registry for `workdir` with the `executor` kind,
/// as `contract`'s release with its rg.
pub async fn load_engine(
    workdir: Option<&Path>,
    config: &Value,
    spill: SpillChoice<'_>,
    executor: &ExecutorKind,
    contract: &ContractChoice,
) -> Result<Loaded, SetupError> {
    load_engine_with(workdir, config, spill, executor, contract, |bash| bash).await
}

/// [`load_engine`] with the executor handed through `wrap` first (the TUI
/// taps it to show each call's command line).
pub async fn load_engine_with(
    workdir: Option<&Path>,
    config: &Value,
    spill: SpillChoice<'_>,
    executor: &ExecutorKind,
    contract: &ContractChoice,
    wrap: impl FnOnce(Arc<dyn BashExecutor>) -> Arc<dyn BashExecutor>,
) -> Result<Loaded, SetupError> {
    let bash = crate::executor::build(
        executor,
        LocalBashConfig {
            cwd: workdir.map(|w| w.to_string_lossy().into_owned()),
            rg: contract.rg.clone(),
            ..LocalBashConfig::default()
        },
    )?;
    let spill_store: Option<Arc<dyn fs_search_engine::SpillStore>> = match spill {
        SpillChoice::None => None,
        SpillChoice::Root(root) => Some(Arc::new(LocalSpillStore::new(Some(root)))),
    };
    let mut registry = Registry::new(Host {
        bash: Some(wrap(bash)),
        spill_store,
        timeout_policy: true,
    });
    let warnings = match registry.load_fs_search_as(contract.release, config).await? {
        LoadOutcome::RgMissing { warning } if executor.is_remote() => vec![
            warning,
            format!(
                "ripgrep (rg) was looked for on {}, where the commands run",
                executor.as_str()
            ),
        ],
        LoadOutcome::RgMissing { warning } => vec![warning],
        LoadOutcome::Registered | LoadOutcome::Pending => Vec::new(),
    };
    Ok(Loaded { registry, warnings })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rc8_s_own_keys_are_unknown_to_0_0_1_only() {
        let config = serde_json::json!({
            "sampleOverCapGlobResults": true,
            "graceMs": 100,
            "stderrMaxBytes": 10,
            "globMaxResult": 5,
        });
        let rc8 = unknown_config_keys("--config", &config, Release::Rc8);
        assert_eq!(rc8.len(), 1, "{rc8:?}");
        assert!(
            rc8[0].starts_with("--config: \"globMaxResult\" is not a config key and is ignored (did you mean globMaxResults?"),
            "{rc8:?}"
        );
        assert!(rc8[0].ends_with(", graceMs, stderrMaxBytes)"), "{rc8:?}");
        let seed = unknown_config_keys("--config", &config, Release::Seed);
        let named: Vec<&str> = seed
            .iter()
            .map(|w| w.split('"').nth(1).unwrap_or_default())
            .collect();
        assert_eq!(named, ["graceMs", "stderrMaxBytes", "globMaxResult"]);
        assert!(!seed[2].contains("graceMs"), "{seed:?}");
    }

    #[test]
    fn the_chosen_rg_is_the_one_described() {
        let choice = ContractChoice {
            release: Release::Rc8,
            rg: Some(PathBuf::from("/nonexistent/rg")),
        };
        let info = choice.rg_info(&ExecutorKind::Local);
        assert_eq!(info.path.as_deref(), Some(Path::new("/nonexistent/rg")));
        assert_eq!(info.version, None);
        assert_eq!(
            ContractChoice::seed().rg_info(&ExecutorKind::Local),
            crate::RgInfo::detect()
        );
    }
}

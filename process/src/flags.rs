//! The flag structs every front end flattens into its command line, so
//! each flag has one definition and one help text: `--config`,
//! `--tokenizer`, `--sandbox`/`--executor`, the spill flags
//! (`--spill-dir`, `--no-spill`, `--retention`), with the spill root they
//! choose ([`spill_root`]), and the release and rg (`--contract`, `--rg`).

use std::path::{Path, PathBuf};

use clap::Args;
use fs_search_engine::release::Release;
use fs_search_exec::Runner;

use crate::setup::{ContractChoice, SetupError};

/// `--config JSON|@FILE`: the plugin config, as every command reads it
/// ([`crate::setup::read_config`]; none means `{}`).
#[derive(Debug, Args)]
pub struct ConfigArg {
    /// Plugin config as JSON, or @FILE to read it from a file.
    #[arg(long = "config", value_name = "JSON|@FILE")]
    pub config: Option<String>,
}

impl ConfigArg {
    /// The raw flag value, for [`crate::setup::read_config`].
    pub fn raw(&self) -> Option<&str> {
        self.config.as_deref()
    }
}

/// `--tokenizer FILE`: count tokens with this `tokenizer.json` instead of
/// the embedded one.
#[derive(Debug, Args)]
pub struct TokenizerArg {
    /// Count tokens with this `tokenizer.json` instead of the embedded
    /// DeepSeek V4 one.
    #[arg(long = "tokenizer", value_name = "FILE")]
    pub tokenizer: Option<PathBuf>,
}

impl TokenizerArg {
    /// The file, if one was given.
    pub fn file(&self) -> Option<&Path> {
        self.tokenizer.as_deref()
    }
}

/// `--sandbox[=auto|bwrap|landlock]`: run every command confined to the
/// workspace, read-only, and the files bash and rg run from
/// (`crate::executor`); with `--executor`, the sandbox is bubblewrap on
/// HOST.
#[derive(Debug, Clone, Args)]
pub struct SandboxArg {
    /// Run rg confined to the workspace (read-only) and the files bash and
    /// rg run from, by bubblewrap or Landlock (auto: bubblewrap where it
    /// can start, else Landlock; docs/reliability.md); on HOST with
    /// --executor (bubblewrap there); exits 2 when the runner cannot
    /// confine.
    #[arg(
        long,
        value_name = "RUNNER",
        num_args = 0..=1,
        require_equals = true,
        default_missing_value = "auto",
        value_parser = parse_runner
    )]
    pub sandbox: Option<Runner>,
    /// Run rg on another machine over ssh, in --workdir there (an
    /// absolute path on HOST): the user's ssh configuration, keys and
    /// known hosts apply, never a prompt (docs/workbench.md). Exits 2 when
    /// HOST cannot be reached. `--executor direct`: run rg here without
    /// bash (its argv spawned directly), otherwise as the local executor.
    #[arg(
        long,
        value_name = "ssh://[USER@]HOST[:PORT]",
        value_parser = crate::parse_executor
    )]
    pub executor: Option<crate::ExecutorFlag>,
}

impl SandboxArg {
    /// The executor the flags choose.
    pub fn kind(&self) -> crate::ExecutorKind {
        match &self.executor {
            Some(flag) => flag.kind(self.sandbox),
            None => crate::ExecutorKind::from_flag(self.sandbox),
        }
    }

    /// The host of `--executor ssh://…`, if one was given.
    pub fn remote(&self) -> Option<&std::sync::Arc<crate::RemoteHost>> {
        self.executor.as_ref().and_then(crate::ExecutorFlag::remote)
    }
}

/// Parses `--sandbox=RUNNER`: `auto`, `bwrap` or `landlock`.
pub fn parse_runner(raw: &str) -> Result<Runner, String> {
    [Runner::Auto, Runner::Bwrap, Runner::Landlock]
        .into_iter()
        .find(|runner| runner.as_str() == raw)
        .ok_or_else(|| format!("`{raw}` is not a runner: auto, bwrap or landlock"))
}

/// `--spill-dir DIR | --no-spill`, `--retention DAYS` (default: the
/// per-user spill root, `crate::user_dirs::spill_root`, resolved by
/// [`spill_root`]).
#[derive(Debug, Args)]
pub struct SpillArgs {
    /// Root the local spill store here (default: the per-user root,
    /// $XDG_CACHE_HOME/fs-search-workbench/spill).
    #[arg(long, conflicts_with = "no_spill")]
    pub spill_dir: Option<PathBuf>,
    /// Load no spill store.
    #[arg(long)]
    pub no_spill: bool,
    /// At start, delete what the workbench wrote more than DAYS days ago:
    /// spilled results of the per-user root (never of --spill-dir) and,
    /// for mcp and the TUI, log files.
    #[arg(long, value_name = "DAYS", default_value_t = crate::prune::DEFAULT_RETENTION_DAYS)]
    pub retention: u32,
}

impl SpillArgs {
    /// The cut-off of `--retention`: what is older goes.
    pub fn cutoff(&self) -> std::time::SystemTime {
        crate::prune::cutoff(self.retention, std::time::SystemTime::now())
    }
}

/// The spill root `args` choose: none with `--no-spill`, `--spill-dir` as
/// given, else the per-user root, created private and pruned of what is
/// older than `--retention` ([`crate::setup::choose_spill_root`]).
pub fn spill_root(args: &SpillArgs) -> Result<Option<PathBuf>, SetupError> {
    crate::setup::choose_spill_root(args.no_spill, args.spill_dir.as_deref(), args.cutoff())
}

/// `--contract RELEASE`, `--rg PATH`: the package release the tools
/// behave as and the rg binary the executor runs
/// ([`crate::setup::ContractChoice`]). `--rg` names a file on this
/// machine, so it conflicts with `--executor` (whose commands run the
/// host's rg); every command flattening this also flattens `--executor`.
#[derive(Debug, Clone, Default, Args)]
pub struct ContractArgs {
    /// The package release the tools behave as: 0.0.1 (the default: rg
    /// through bash, a load probe for rg) or 0.1.0-rc.8 (rg spawned
    /// directly, no probe; docs/contract.md).
    #[arg(long, value_name = "RELEASE", value_parser = parse_release)]
    pub contract: Option<Release>,
    /// The rg binary the commands run (default: the first rg on PATH); a
    /// file on this machine, so not with --executor.
    #[arg(
        long,
        value_name = "PATH",
        value_parser = parse_rg_path,
        conflicts_with = "executor"
    )]
    pub rg: Option<PathBuf>,
}

impl ContractArgs {
    /// The release asked for, the seed's 0.0.1 when none was.
    pub fn release(&self) -> Release {
        self.contract.unwrap_or_default()
    }

    /// The release and rg the flags choose.
    pub fn choice(&self) -> ContractChoice {
        ContractChoice {
            release: self.release(),
            rg: self.rg.clone(),
        }
    }
}

/// Parses `--contract RELEASE`: one of [`Release::NAMES`].
pub fn parse_release(raw: &str) -> Result<Release, String> {
    raw.parse::<Release>().map_err(|e| e.to_string())
}

/// Parses `--rg PATH`: an executable regular file, made absolute (the
/// commands run in the workdir, not here); symlinks are kept as named.
pub fn parse_rg_path(raw: &str) -> Result<PathBuf, String> {
    use std::os::unix::fs::PermissionsExt;
    let path = Path::new(raw);
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() && meta.permissions().mode() & 0o111 != 0 => {}
        Ok(meta) if meta.is_file() => return Err(format!("{raw} is not executable")),
        Ok(_) => return Err(format!("{raw} is not a file")),
        Err(e) => return Err(format!("{raw}: {e}")),
    }
    std::path::absolute(path).map_err(|e| format!("{raw}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rg_must_be_an_executable_file_and_is_made_absolute() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rg");
        std::fs::write(&file, "#!/bin/sh\n").unwrap();
        let raw = file.to_str().unwrap();
        assert_eq!(parse_rg_path(raw), Err(format!("{raw} is not executable")));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert_eq!(parse_rg_path(raw), Ok(file.clone()));
        let dir_raw = dir.path().to_str().unwrap();
        assert_eq!(
            parse_rg_path(dir_raw),
            Err(format!("{dir_raw} is not a file"))
        );
        let missing = dir.path().join("missing");
        assert!(parse_rg_path(missing.to_str().unwrap()).is_err());
        let relative = parse_rg_path("Cargo.toml");
        assert_eq!(relative, Err("Cargo.toml is not executable".to_owned()));
    }

    #[test]
    fn a_release_is_one_of_the_two_names() {
        assert_eq!(parse_release("0.1.0-rc.8"), Ok(Release::Rc8));
        assert_eq!(parse_release("0.0.1"), Ok(Release::Seed));
        assert_eq!(
            parse_release("rc8"),
            Err("unknown contract release `rc8` (expected 0.0.1 or 0.1.0-rc.8)".to_owned())
        );
        assert_eq!(ContractArgs::default().choice(), ContractChoice::default());
    }
}

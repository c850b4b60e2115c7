//! Runs of a request's argv without bash: which program an argv names
//! (`rg` as the executor's `--rg` binary, or found on the child's `PATH`;
//! for the 0.1.0-rc.8 subprocess run resolved once per executor), the
//! rc.8 environment (the case-insensitive scrub, no fixed overlay), and
//! the `Command` that spawns it.
//!
//! Two runs take this path: the rc.8 subprocess run of any executor
//! (`BashSpec::subprocess`), and the direct mode of the local executor
//! (`--executor direct`: the seed's run, with the argv spawned where bash
//! would have exec'd it).

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use tokio::process::Command;

use super::launcher::LaunchPrefix;
use super::shell::find_program_on_path;
use crate::LocalBashConfig;
use fs_search_engine::bash::{BashError, BashSpec};

/// The program name the executor's `rg` setting stands for.
pub(super) const RG: &str = "rg";

/// True for variables the rc.8 subprocess seam never forwards: names
/// matching `/KEY|PASSWORD|SECRET|TOKEN/i`, and names starting with
/// `DSH_` in any case (the seed's scrub, `local::is_scrubbed`, only drops
/// an upper-case `DSH_`).
pub(super) fn is_scrubbed_any_case(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["KEY", "PASSWORD", "SECRET", "TOKEN"]
        .iter()
        .any(|word| upper.contains(word))
        || upper.starts_with("DSH_")
}

/// The environment of an rc.8 subprocess run: this process's variables
/// that `passes` (a sandbox's allowlist) less the scrubbed ones, then the
/// configured `env`, then the spec's `env` and `dshEnv`; no fixed
/// overlay. `path_prefix` goes first on `PATH` (the executor's `--rg`
/// directory: the sandbox finds what it exposes by the child's `PATH`).
pub(super) fn subprocess_env_with(
    config: &LocalBashConfig,
    spec: &BashSpec,
    path_prefix: Option<&Path>,
    passes: impl Fn(&OsStr) -> bool,
) -> BTreeMap<OsString, OsString> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os()
        .filter(|(name, _)| passes(name) && !is_scrubbed_any_case(&name.to_string_lossy()))
        .collect();
    for (name, value) in &config.env {
        env.insert(name.into(), value.into());
    }
    for extra in [&spec.env, &spec.dsh_env].into_iter().flatten() {
        for (name, value) in extra {
            env.insert(name.into(), value.into());
        }
    }
    if let Some(dir) = path_prefix {
        super::rg_dir::prepend_to_path(&mut env, dir);
    }
    env
}

/// The rc.8 run's rg, resolved on the first subprocess run and kept for
/// the executor's life (rc.8 resolves its binary once per process): the
/// `--rg` binary, else the first `rg` on the child's `PATH`; `None` when
/// there is none, and every run then fails to start alike.
#[derive(Debug, Default)]
pub(super) struct ResolvedRg(OnceLock<Option<PathBuf>>);

impl ResolvedRg {
    /// The rg of every subprocess run of the executor (see the type).
    pub(super) fn get(
        &self,
        config: &LocalBashConfig,
        env: &BTreeMap<OsString, OsString>,
    ) -> Option<&Path> {
        self.0
            .get_or_init(|| match &config.rg {
                Some(rg) => Some(std::path::absolute(rg).unwrap_or_else(|_| rg.clone())),
                None => {
                    find_program_on_path(RG, env.get(OsStr::new("PATH")).map(|p| p.as_os_str()))
                }
            })
            .as_deref()
    }
}

/// The failure of a spawn whose program does not exist.
pub(super) fn not_found() -> BashError {
    BashError::Spawn(std::io::Error::from_raw_os_error(nix::libc::ENOENT))
}

/// The argv a run spawns, with its program: for an rc.8 run `argv[0]`
/// `rg` is `rg` (the executor's resolved one) and any other `argv[0]`
/// is spawned as given; for a direct run (the seed's), `rg` is the
/// `--rg` binary when set, and any other name is found on the child's
/// `PATH` as bash would find it. An empty argv is a spawn failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Spawned {
    /// What the spawn executes (an absolute path when one is known).
    pub(super) program: OsString,
    /// The argv, `argv[0]` as the program sees it.
    pub(super) argv: Vec<OsString>,
}

impl Spawned {
    /// The spawn of `argv` in an rc.8 run whose rg is `rg`.
    pub(super) fn subprocess(argv: &[String], rg: Option<&Path>) -> Result<Self, BashError> {
        let (first, rest) = argv.split_first().ok_or_else(not_found)?;
        let program = if first == RG {
            rg.ok_or_else(not_found)?.as_os_str().to_owned()
        } else {
            OsString::from(first)
        };
        // As Node's spawn does: argv[0] is the program spawned.
        let argv = std::iter::once(program.clone())
            .chain(rest.iter().map(OsString::from))
            .collect();
        Ok(Self { program, argv })
    }

    /// The spawn of `argv` in a direct run (the seed's) whose child
    /// environment is `env`: what bash would exec, with argv as bash
    /// hands it over (`argv[0]` as written). The program is found on the
    /// child's `PATH` as bash finds it, so `rg` is the `--rg` binary
    /// through the executor's `--rg` directory, first there (`rg_dir.rs`),
    /// and a `--rg` that is missing falls through to the next `rg` as it
    /// does for bash.
    pub(super) fn direct(
        argv: &[String],
        env: &BTreeMap<OsString, OsString>,
    ) -> Result<Self, BashError> {
        let first = argv.first().ok_or_else(not_found)?;
        let path = env.get(OsStr::new("PATH")).map(OsString::as_os_str);
        let program = if first.contains('/') {
            OsString::from(first)
        } else {
            find_program_on_path(first, path)
                .map_or_else(|| OsString::from(first), PathBuf::into_os_string)
        };
        Ok(Self {
            program,
            argv: argv.iter().map(OsString::from).collect(),
        })
    }

    /// The command spawning this argv, after a launcher's `prefix` (whose
    /// program runs it) when there is one.
    pub(super) fn command(&self, prefix: Option<LaunchPrefix>) -> Command {
        match prefix {
            Some(prefix) => {
                let mut command = Command::new(prefix.program);
                command.args(prefix.args).args(&self.argv);
                command
            }
            None => {
                let mut command = Command::new(&self.program);
                if let Some((first, rest)) = self.argv.split_first() {
                    command.arg0(first).args(rest);
                }
                command
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_any_case_scrub_drops_a_lower_case_dsh_name_too() {
        for name in ["API_KEY", "my_token", "Password", "DSH_X", "dsh_x", "Dsh_y"] {
            assert!(is_scrubbed_any_case(name), "{name}");
        }
        for name in ["PATH", "HOME", "dshx", "RIPGREP_CONFIG_PATH"] {
            assert!(!is_scrubbed_any_case(name), "{name}");
        }
    }

    #[test]
    fn a_subprocess_argv_spawns_the_resolved_rg_and_other_programs_as_given() {
        let argv = ["rg", "--no-config", "$(touch x)"].map(String::from);
        let spawned = Spawned::subprocess(&argv, Some(Path::new("/opt/rg"))).unwrap();
        assert_eq!(spawned.program, "/opt/rg");
        assert_eq!(spawned.argv, ["/opt/rg", "--no-config", "$(touch x)"]);
        let missing = Spawned::subprocess(&argv, None).unwrap_err();
        assert_eq!(missing.to_string(), "spawn bash ENOENT");
        let sleep = Spawned::subprocess(&["sleep".to_owned()], None).unwrap();
        assert_eq!(sleep.program, "sleep");
        assert!(Spawned::subprocess(&[], None).is_err());
    }

    #[test]
    fn a_direct_argv_is_found_on_the_child_s_path_and_keeps_argv0_as_written() {
        let root = tempfile::tempdir().unwrap();
        let rg = root.path().join("rg");
        std::fs::write(&rg, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&rg, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let mut path = root.path().as_os_str().to_owned();
        path.push(":/usr/bin:/bin");
        let env = BTreeMap::from([(OsString::from("PATH"), path)]);
        let spawned = Spawned::direct(&["rg".to_owned(), "-x".to_owned()], &env).unwrap();
        assert_eq!(spawned.program, rg.into_os_string());
        assert_eq!(spawned.argv, ["rg", "-x"]);
        let spawned = Spawned::direct(&["./here".to_owned()], &env).unwrap();
        assert_eq!(spawned.program, "./here");
    }
}

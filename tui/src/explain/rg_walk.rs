//! Asks rg itself what the call's walk did: `rg --files --debug` with the
//! call's own walk flags (grep: its `include` glob and rg's defaults;
//! glob: its pattern, `--no-ignore --hidden` and the VCS excludes) and its
//! `path`, started in the workdir like the call. stdout lists exactly the
//! files the call's rg walked to; stderr reports each ignore decision
//! (see [`super::rg_debug`]) and each file rg could not read.

use std::collections::HashMap;
use std::process::Stdio;

use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use super::paths::CallPaths;
use super::rg_debug::{Decision, parse_line};

/// The tool whose walk is asked for, with the arguments that shape it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WalkSpec {
    Glob { pattern: String },
    Grep { include: Option<String> },
}

/// A failure to ask rg.
#[derive(Debug, Error)]
pub enum WalkError {
    #[error("cannot run rg to explain the walk: {0}")]
    Spawn(std::io::Error),
    #[error("interrupted")]
    Cancelled,
}

/// What rg's walk did, every path absolute.
#[derive(Debug, Default)]
pub struct Walk {
    /// The files rg walked to (for grep: the files it opened to search).
    pub listed: std::collections::HashSet<String>,
    /// rg's ignore and whitelist decisions, by path.
    pub decisions: HashMap<String, Decision>,
    /// rg's error lines, by the path they name (when they name one).
    pub errors: HashMap<String, String>,
    /// rg's error lines that name no path.
    pub other_errors: Vec<String>,
}

/// The rg arguments of the call's walk, without the `--files --debug`.
pub fn walk_args(spec: &WalkSpec, root_arg: Option<&str>) -> Vec<String> {
    let mut args = Vec::new();
    match spec {
        WalkSpec::Glob { pattern } => {
            args.push(format!("--glob={pattern}"));
            args.push("--no-ignore".to_owned());
            args.push("--hidden".to_owned());
            for name in GLOB_VCS_EXCLUDES {
                args.push(format!("--glob=!**/{name}"));
                args.push(format!("--glob=!**/{name}/**"));
            }
        }
        WalkSpec::Grep { include } => {
            if let Some(include) = include {
                args.push(format!("--glob={include}"));
            }
        }
    }
    if let Some(root) = root_arg {
        args.push("--".to_owned());
        args.push(root.to_owned());
    }
    args
}

/// Runs the walk in the workdir, with `rg_config` as rg's config file when
/// given (else rg reads what this process's environment names); `stop`
/// ends rg early.
pub async fn run(
    spec: &WalkSpec,
    paths: &CallPaths,
    rg_config: Option<&std::path::Path>,
    stop: &CancellationToken,
) -> Result<Walk, WalkError> {
    let mut command = tokio::process::Command::new("rg");
    if let Some(file) = rg_config {
        command.env("RIPGREP_CONFIG_PATH", file);
    }
    command
        .arg("--files")
        .arg("--debug")
        .args(walk_args(spec, paths.root_arg.as_deref()))
        .current_dir(&paths.workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().map_err(WalkError::Spawn)?;
    let output = tokio::select! {
        output = child.wait_with_output() => output.map_err(WalkError::Spawn)?,
        () = stop.cancelled() => return Err(WalkError::Cancelled),
    };
    Ok(read_output(&output.stdout, &output.stderr, paths))
}

/// The walk from rg's stdout and stderr.
pub fn read_output(stdout: &[u8], stderr: &[u8], paths: &CallPaths) -> Walk {
    let mut walk = Walk::default();
    for line in String::from_utf8_lossy(stdout).split('\n') {
        if !line.is_empty() {
            walk.listed.insert(paths.absolute(line));
        }
    }
    for line in String::from_utf8_lossy(stderr).split('\n') {
        if let Some(decision) = parse_line(line) {
            walk.decisions
                .insert(paths.absolute(&decision.path), decision);
        } else if !line.contains("DEBUG|") && !line.is_empty() {
            let message = line.strip_prefix("rg: ").unwrap_or(line);
            match message.split_once(": ") {
                Some((path, _)) => {
                    walk.errors.insert(paths.absolute(path), message.to_owned());
                }
                None => walk.other_errors.push(message.to_owned()),
            }
        }
    }
    walk
}

#[cfg(test)]
mod tests {
    use fs_search_engine::helpers::{build_glob_command, build_grep_command, single_quote};
    use fs_search_engine::{GlobArgs, GrepArgs};

    use super::*;

    /// The walk's arguments as the call's command line writes them.
    fn as_command(args: &[String]) -> String {
        let mut out = vec!["rg --files".to_owned()];
        let mut after_dashes = false;
        for arg in args {
            if after_dashes {
                out.push(single_quote(arg));
            } else if let Some(glob) = arg.strip_prefix("--glob=") {
                out.push(format!("--glob={}", single_quote(glob)));
            } else {
                after_dashes = arg == "--";
                out.push(arg.clone());
            }
        }
        out.join(" ")
    }

    #[test]
    fn the_glob_walk_has_the_calls_own_flags_without_its_sort() {
        let args = walk_args(
            &WalkSpec::Glob {
                pattern: "*.{rs,md}".into(),
            },
            Some("-src dir"),
        );
        let call = build_glob_command(&GlobArgs {
            pattern: "*.{rs,md}".into(),
            path: Some("-src dir".into()),
        });
        assert_eq!(as_command(&args), call.replace(" --sort=modified", ""));
    }

    #[test]
    fn the_grep_walk_has_the_calls_own_include_and_path() {
        let args = walk_args(
            &WalkSpec::Grep {
                include: Some("*.ts".into()),
            },
            Some("src"),
        );
        let call = build_grep_command(&GrepArgs {
            pattern: "x".into(),
            path: Some("src".into()),
            include: Some("*.ts".into()),
        });
        assert_eq!(
            as_command(&args),
            call.replace("rg --json --regexp='x'", "rg --files")
        );
    }
}

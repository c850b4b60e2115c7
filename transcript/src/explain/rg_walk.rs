//! Asks rg itself what the call's walk did: `rg --files --debug` with the
//! call's own walk flags (grep: its `include` glob and rg's defaults;
//! glob: its pattern, `--no-ignore --hidden` and the VCS excludes) and its
//! `path`, started in the workdir like the call. stdout lists exactly the
//! files the call's rg walked to; stderr reports each ignore decision
//! (see [`super::rg_debug`]) and each file rg could not read.
//!
//! For grep's `--unsearched` the same walk also finds rg's binary files in
//! the same process ([`Scan::Nul`]): `rg --debug -a -H --count
//! --include-zero --max-count=1 --null -e '\x00'` with the walk flags
//! prints each file the walk reaches (`PATH\0COUNT`, 1 when it holds a NUL
//! byte after rg's own transcoding) and the same ignore decisions; rg 13,
//! 14 and 15 print it alike. One walk and one read of the tree instead of
//! a walk and a second read of every listed file.

use foldhash::{HashMap, HashSet};
use std::process::Stdio;

use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;
use thiserror::Error;
use tokio_util::sync::CancellationToken;

use super::paths::CallPaths;
use super::rg_debug::{Decision, parse_line};

/// The tool whose walk is asked for, with the arguments that shape it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum WalkSpec {
    Glob { pattern: String },
    Grep { include: Option<String> },
}

/// What the walk does besides walking.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scan {
    /// `rg --files`: only the walk.
    Walk,
    /// Also reads every file the walk reaches for a NUL byte (rg's binary
    /// rule): [`Walk::nul_files`] is filled, and a file rg cannot read is
    /// an error rather than listed.
    Nul,
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
pub(super) struct Walk {
    /// The files rg walked to (for grep: the files it opened to search).
    pub listed: HashSet<String>,
    /// rg's ignore and whitelist decisions, by path (with `--debug`; else
    /// the `ignore` crate's, see [`Walk::decided_by_crate`]).
    pub decisions: HashMap<String, Decision>,
    /// Whether [`Walk::decisions`] are the `ignore` crate's replay of the
    /// walk ([`super::crate_walk`]) rather than rg's own report.
    pub decided_by_crate: bool,
    /// rg's error lines, by the path they name (when they name one).
    pub errors: HashMap<String, String>,
    /// rg's error lines that name no path.
    pub other_errors: Vec<String>,
    /// With [`Scan::Nul`]: the listed files that hold a NUL byte (rg's
    /// `-a` search for one found it); empty otherwise.
    pub nul_files: HashSet<String>,
}

/// The arguments that make rg read each walked file for a NUL byte and
/// print `PATH\0COUNT` (0 or 1), `-H` so a single file is named too.
const NUL_SCAN_ARGS: [&str; 8] = [
    "-a",
    "-H",
    "--count",
    "--include-zero",
    "--max-count=1",
    "--null",
    "-e",
    "\\x00",
];

/// The rg arguments of the call's walk, without the `--files --debug`.
pub(super) fn walk_args(spec: &WalkSpec, root_arg: Option<&str>) -> Vec<String> {
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
/// given (else rg reads what this process's environment names), by the
/// rg binary `rg` (`--rg`; `None`: the one on `PATH`); `stop` ends rg
/// early. With `debug`, rg reports its ignore decisions
/// ([`Walk::decisions`]); without, only what it walked and its errors.
pub(super) async fn run(
    spec: &WalkSpec,
    scan: Scan,
    debug: bool,
    paths: &CallPaths,
    rg_config: Option<&std::path::Path>,
    rg: Option<&std::path::Path>,
    stop: &CancellationToken,
) -> Result<Walk, WalkError> {
    let mut command = tokio::process::Command::new(rg.unwrap_or(std::path::Path::new("rg")));
    if let Some(file) = rg_config {
        command.env("RIPGREP_CONFIG_PATH", file);
    }
    match scan {
        Scan::Walk => command.arg("--files"),
        Scan::Nul => command.args(NUL_SCAN_ARGS),
    };
    // rg writes each `--debug` line in several unbuffered writes: into a
    // pipe every one wakes the reader, into a file it is about a third
    // cheaper (the explain figures in docs/performance.md). Both outputs
    // go to unnamed temporary files, read once rg is done.
    let stdout = tempfile::tempfile().map_err(WalkError::Spawn)?;
    let stderr = tempfile::tempfile().map_err(WalkError::Spawn)?;
    if debug {
        command.arg("--debug");
    }
    command
        .args(walk_args(spec, paths.root_arg.as_deref()))
        .current_dir(&paths.workdir)
        .stdin(Stdio::null())
        .stdout(Stdio::from(stdout.try_clone().map_err(WalkError::Spawn)?))
        .stderr(Stdio::from(stderr.try_clone().map_err(WalkError::Spawn)?))
        .kill_on_drop(true);
    let mut child = command.spawn().map_err(WalkError::Spawn)?;
    // The parent's copies of the files stay with the parent only.
    drop(command);
    tokio::select! {
        status = child.wait() => status.map_err(WalkError::Spawn)?,
        () = stop.cancelled() => return Err(WalkError::Cancelled),
    };
    let read = |mut file: std::fs::File| -> std::io::Result<Vec<u8>> {
        use std::io::{Read, Seek};
        let mut bytes = Vec::new();
        file.seek(std::io::SeekFrom::Start(0))?;
        file.read_to_end(&mut bytes)?;
        Ok(bytes)
    };
    let stdout = read(stdout).map_err(WalkError::Spawn)?;
    let stderr = read(stderr).map_err(WalkError::Spawn)?;
    Ok(read_output(scan, &stdout, &stderr, paths))
}

/// The walk from rg's stdout and stderr.
pub(super) fn read_output(scan: Scan, stdout: &[u8], stderr: &[u8], paths: &CallPaths) -> Walk {
    let mut walk = Walk::default();
    for line in String::from_utf8_lossy(stdout).split('\n') {
        if line.is_empty() {
            continue;
        }
        match scan {
            Scan::Walk => {
                walk.listed.insert(paths.absolute(line));
            }
            Scan::Nul => {
                // A path holds no NUL, so the first one ends it.
                let (path, count) = line.split_once('\0').unwrap_or((line, "0"));
                let path = paths.absolute(path);
                if count != "0" {
                    walk.nul_files.insert(path.clone());
                }
                walk.listed.insert(path);
            }
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

    /// Runs the real rg on a small git tree both ways.
    fn both_scans(dir: &std::path::Path, root_arg: Option<&str>) -> (Walk, Walk) {
        let paths = CallPaths::new(&dir.to_string_lossy(), root_arg);
        let spec = WalkSpec::Grep { include: None };
        let stop = CancellationToken::new();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let walk = run(&spec, Scan::Walk, true, &paths, None, None, &stop)
                .await
                .unwrap();
            let nul = run(&spec, Scan::Nul, true, &paths, None, None, &stop)
                .await
                .unwrap();
            (walk, nul)
        })
    }

    #[test]
    fn the_nul_scan_lists_what_the_walk_lists_with_the_same_decisions_and_finds_the_nul_files() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.o\nbuild/\n").unwrap();
        std::fs::write(root.join("a.txt"), "text\n").unwrap();
        let mut late = vec![b'a'; 200_000];
        late.push(0);
        std::fs::write(root.join("late.bin"), &late).unwrap();
        std::fs::write(root.join("early.bin"), b"x\0y").unwrap();
        std::fs::write(root.join("utf16.txt"), [0xFF, 0xFE, b'h', 0, b'i', 0]).unwrap();
        std::fs::write(root.join("a.o"), b"\0ELF").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::write(root.join("build/out"), "x").unwrap();
        std::fs::create_dir(root.join(".hidden")).unwrap();
        std::fs::write(root.join(".hidden/f"), "x").unwrap();
        let (walk, nul) = both_scans(root, None);
        assert_eq!(nul.listed, walk.listed);
        assert_eq!(walk.listed.len(), 4, "{:?}", walk.listed);
        let mut decided: Vec<&String> = walk.decisions.keys().collect();
        let mut decided_nul: Vec<&String> = nul.decisions.keys().collect();
        decided.sort();
        decided_nul.sort();
        assert_eq!(decided_nul, decided);
        assert!(decided.iter().any(|p| p.ends_with("/build")));
        let abs = |name: &str| root.join(name).to_string_lossy().into_owned();
        let expected: HashSet<String> = [abs("late.bin"), abs("early.bin")].into_iter().collect();
        assert_eq!(nul.nul_files, expected);
        assert!(walk.nul_files.is_empty());
        // A single file as the path is named too (`-H`).
        let (_, one) = both_scans(root, Some("early.bin"));
        assert_eq!(one.nul_files, [abs("early.bin")].into_iter().collect());
    }
}

//! The call's walk replayed in this process by ripgrep's own `ignore`
//! crate, configured as rg configures it for the call — grep: rg's
//! default filters (hidden names; `.gitignore`, `.ignore` and `.rgignore`
//! of the root and its parents; `.git/info/exclude`; the global git
//! excludes; git rules only inside a git tree) and the `include` glob;
//! glob: its pattern and the VCS excludes, no ignore file, hidden files
//! kept — started in the workdir like rg. It is asked one thing: why it
//! skips what it skips. The crate logs each decision exactly as `rg
//! --debug` prints it (the same `ignore::walk` code), and
//! [`fs_search_process::capture_log_records`] hears them in-process.
//!
//! `--unsearched` takes its rules from here: `rg --debug` writes each of
//! its tens of thousands of decisions in dozens of small writes, which
//! cost more than the search (docs/performance.md). What rg searched is
//! still rg's own answer ([`super::rg_walk`]); where the crate would have
//! decided otherwise, the summary says so ([`super::unsearched`]).

use foldhash::HashMap;

use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;

use super::paths::CallPaths;
use super::rg_debug::{Decision, parse_message};
use super::rg_walk::WalkSpec;
use fs_search_engine::helpers::GLOB_VCS_EXCLUDES;

/// The `log` target of the crate's walk decisions.
const WALK_TARGET: &str = "ignore::walk";

/// The rg majors whose reading of ignore files above the search root the
/// crate shares (the property tests in tui/tests/workbench/explain.rs,
/// with the search root below the workdir and the workdir below the
/// repository's top): rg 14 names `hidden` for some paths a parent's rule
/// ignores, rg 13 applies a parent's rules to other paths than the crate.
const AGREEING_MAJORS: [u32; 1] = [15];

/// Whether the crate's replay can stand for rg's own report of this call:
/// rg reads no config file (its flags are the call's alone) and, when an
/// ignore file lies above the search root, the installed rg is one that
/// reads such files as the crate does. Otherwise the caller asks rg.
pub(super) fn stands_for_rg(paths: &CallPaths, rg_config: Option<&std::path::Path>) -> bool {
    let configured = rg_config.is_some()
        || std::env::var_os("RIPGREP_CONFIG_PATH").is_some_and(|v| !v.is_empty());
    if configured {
        return false;
    }
    let above_root = std::path::Path::new(&paths.root)
        .ancestors()
        .skip(1)
        .any(|dir| {
            [".gitignore", ".ignore", ".rgignore", ".git/info/exclude"]
                .iter()
                .any(|name| dir.join(name).is_file())
        });
    !above_root
        || fs_search_process::RgInfo::detect()
            .major()
            .is_some_and(|major| AGREEING_MAJORS.contains(&major))
}

/// The crate's decisions for the call's walk, by absolute path; `None`
/// when they cannot be heard (another `log` logger owns the process) or a
/// glob does not build (then rg refused it too and searched nothing).
pub(super) fn decisions(spec: &WalkSpec, paths: &CallPaths) -> Option<HashMap<String, Decision>> {
    let mut builder = WalkBuilder::new(&paths.root);
    builder
        .current_dir(std::path::PathBuf::from(&paths.workdir))
        .follow_links(false);
    let mut overrides = OverrideBuilder::new(&paths.workdir);
    match spec {
        WalkSpec::Grep { include } => {
            builder
                .standard_filters(true)
                .require_git(true)
                .add_custom_ignore_filename(".rgignore");
            if let Some(include) = include {
                overrides.add(include).ok()?;
            }
        }
        WalkSpec::Glob { pattern } => {
            builder.standard_filters(false);
            overrides.add(pattern).ok()?;
            for name in GLOB_VCS_EXCLUDES {
                overrides.add(&format!("!**/{name}")).ok()?;
                overrides.add(&format!("!**/{name}/**")).ok()?;
            }
        }
    }
    builder.overrides(overrides.build().ok()?);
    let ((), messages) = fs_search_process::capture_log_records(WALK_TARGET, || {
        for entry in builder.build() {
            // Errors are rg's to report; the walk only has to be made.
            drop(entry);
        }
    })?;
    Some(
        messages
            .iter()
            .filter_map(|message| parse_message(message))
            .map(|decision| (paths.absolute(&decision.path), decision))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::explain::rg_debug::Matcher;

    #[test]
    fn the_crate_names_the_rule_hidden_name_and_include_that_skip_each_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join(".gitignore"), "*.o\nbuild/\n").unwrap();
        std::fs::create_dir(root.join("build")).unwrap();
        std::fs::write(root.join("build/x.c"), "x").unwrap();
        std::fs::write(root.join("a.o"), "x").unwrap();
        std::fs::write(root.join("a.c"), "x").unwrap();
        std::fs::write(root.join("a.h"), "x").unwrap();
        std::fs::write(root.join(".env"), "x").unwrap();
        let workdir = root.to_string_lossy().into_owned();
        let paths = CallPaths::new(&workdir, None);
        let plain = decisions(&WalkSpec::Grep { include: None }, &paths).unwrap();
        let at = |name: &str| &plain[&format!("{workdir}/{name}")].matcher;
        assert!(matches!(at("a.o"), Matcher::IgnoreFile { original, .. } if original == "*.o"));
        assert!(
            matches!(at("build"), Matcher::IgnoreFile { original, .. } if original == "build/")
        );
        assert_eq!(at(".env"), &Matcher::Hidden);
        // As in rg, the include glob is asked first: it decides files.
        let include = WalkSpec::Grep {
            include: Some("*.c".into()),
        };
        let decisions = decisions(&include, &paths).unwrap();
        let at = |name: &str| &decisions[&format!("{workdir}/{name}")].matcher;
        assert_eq!(at("a.h"), &Matcher::OverrideUnmatched);
        assert_eq!(at("a.o"), &Matcher::OverrideUnmatched);
        assert!(
            matches!(at("build"), Matcher::IgnoreFile { original, .. } if original == "build/")
        );
        assert!(!decisions[&format!("{workdir}/a.c")].ignored, "whitelisted");
    }
}

//! The per-user directories the workbench writes to (docs/workbench.md,
//! "Files the workbench writes"): the spill root under the XDG cache
//! directory, the log files under the XDG state directory, the TUI's
//! saved recordings under the XDG data directory. None of them is inside
//! a workdir (where later greps would find them) or a per-process
//! directory in TMPDIR (which nothing would remove). Each is created
//! private: mode 0700, owned by this user, never a symbolic link.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use thiserror::Error;

/// The directory every base directory holds the workbench's files in.
pub(crate) const APP_DIR: &str = "fs-search-workbench";

/// A directory the workbench cannot use.
#[derive(Debug, Error)]
#[error("{path}: {problem}")]
pub struct DirError {
    pub path: String,
    pub problem: String,
}

/// `$var` when it is an absolute path (the XDG rule: a relative one is
/// ignored), else `$HOME/home_relative`, then [`APP_DIR`]; with neither,
/// a per-user (not per-process) directory of the temp dir.
fn base(var: &str, home_relative: &str) -> PathBuf {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    match absolute(var).or_else(|| absolute("HOME").map(|home| home.join(home_relative))) {
        Some(base) => base.join(APP_DIR),
        None => std::env::temp_dir().join(format!("{APP_DIR}-{}", nix::unistd::getuid())),
    }
}

/// The spill root shared by every workbench process of this user:
/// `$XDG_CACHE_HOME/fs-search-workbench/spill` (`~/.cache/…`).
pub(crate) fn spill_root() -> PathBuf {
    base("XDG_CACHE_HOME", ".cache").join("spill")
}

/// The log directory: `$XDG_STATE_HOME/fs-search-workbench`
/// (`~/.local/state/…`).
pub(crate) fn log_dir() -> PathBuf {
    base("XDG_STATE_HOME", ".local/state")
}

/// Where the TUI saves recordings (`R`):
/// `$XDG_DATA_HOME/fs-search-workbench/recordings` (`~/.local/share/…`).
pub fn recordings_dir() -> PathBuf {
    base("XDG_DATA_HOME", ".local/share").join("recordings")
}

/// Creates `dir` (and its missing parents) with mode 0700, and checks that
/// it is a real directory owned by this user; a directory of ours that
/// others may read is made 0700.
pub fn ensure_private(dir: &Path) -> Result<(), DirError> {
    let fail = |problem: String| DirError {
        path: dir.display().to_string(),
        problem,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| fail(format!("cannot be created: {e}")))?;
    let meta = std::fs::symlink_metadata(dir).map_err(|e| fail(e.to_string()))?;
    if meta.file_type().is_symlink() {
        return Err(fail("is a symbolic link".to_owned()));
    }
    if !meta.is_dir() {
        return Err(fail("is not a directory".to_owned()));
    }
    if meta.uid() != nix::unistd::getuid().as_raw() {
        return Err(fail("is owned by another user".to_owned()));
    }
    if meta.mode() & 0o077 != 0 {
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
            .map_err(|e| fail(format!("cannot be made private: {e}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_dir_is_created_0700_and_an_open_one_is_closed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a/b");
        ensure_private(&dir).unwrap();
        let mode = std::fs::metadata(&dir).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        ensure_private(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
    }

    #[test]
    fn a_symbolic_link_or_a_file_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("elsewhere");
        std::fs::create_dir(&target).unwrap();
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        let err = ensure_private(&link).unwrap_err();
        assert_eq!(err.problem, "is a symbolic link");
        let file = tmp.path().join("file");
        std::fs::write(&file, "x").unwrap();
        assert!(ensure_private(&file).is_err());
    }
}

//! The program the local executor starts for `bash -c`: `bash` looked up
//! on the child's own `PATH` here, in the parent, so that the spawn names
//! it by its absolute path while argv stays `['bash', '-c', command]`.
//!
//! Why: a bare program name under an environment of the child's own makes
//! the standard library fork this whole (multi-threaded) process and search
//! `PATH` in the child; an absolute path lets it use `posix_spawn`, a vfork
//! that copies no page tables and leaves the parent no copy-on-write faults
//! to take afterwards. The lookup follows `execvp`: the first `PATH` entry
//! holding an executable regular file named `bash`. A `PATH` that is absent
//! or has an empty or relative entry before the match (which `execvp`
//! would resolve against the child's working directory) is left to the
//! standard library's own search, as before.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use nix::unistd::{AccessFlags, access};

/// The name the executor runs, and argv[0] of every command.
pub(super) const SHELL: &str = "bash";

/// `bash`'s absolute path on `path` (the child's `PATH`), or `None` when
/// the standard library's own search must decide.
pub(super) fn find_on_path(path: Option<&OsStr>) -> Option<PathBuf> {
    find_program_on_path(SHELL, path)
}

/// `name`'s absolute path on `path` as `execvp` would pick it, or `None`
/// when there is none or a relative entry comes first.
pub(super) fn find_program_on_path(name: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    for entry in path?.as_bytes().split(|&b| b == b':') {
        let dir = Path::new(OsStr::from_bytes(entry));
        if !dir.is_absolute() {
            return None;
        }
        let candidate = dir.join(name);
        if is_executable_file(&candidate) {
            return Some(candidate);
        }
    }
    None
}

fn is_executable_file(path: &Path) -> bool {
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
        && access(path, AccessFlags::X_OK).is_ok()
}

#[cfg(test)]
mod tests {
    use std::ffi::OsString;

    use super::*;

    fn file(dir: &Path, mode: u32) -> PathBuf {
        let path = dir.join(SHELL);
        std::fs::write(&path, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    fn joined(dirs: &[&Path]) -> OsString {
        let parts: Vec<&OsStr> = dirs.iter().map(|d| d.as_os_str()).collect();
        parts.join(OsStr::new(":"))
    }

    #[test]
    fn the_first_executable_bash_on_path_wins_as_execvp_would_pick_it() {
        let root = tempfile::tempdir().unwrap();
        let [missing, not_executable, a_directory, first, second] =
            ["missing", "noexec", "dir", "first", "second"].map(|name| root.path().join(name));
        for dir in [&not_executable, &a_directory, &first, &second] {
            std::fs::create_dir(dir).unwrap();
        }
        file(&not_executable, 0o644);
        std::fs::create_dir(a_directory.join(SHELL)).unwrap();
        let expected = file(&first, 0o755);
        file(&second, 0o755);
        let path = joined(&[&missing, &not_executable, &a_directory, &first, &second]);
        assert_eq!(find_on_path(Some(&path)), Some(expected));
    }

    #[test]
    fn a_relative_or_empty_entry_before_a_match_or_no_path_leaves_the_search_to_the_spawn() {
        let root = tempfile::tempdir().unwrap();
        file(root.path(), 0o755);
        for path in [
            joined(&[Path::new("relative/bin"), root.path()]),
            joined(&[Path::new(""), root.path()]),
        ] {
            assert_eq!(find_on_path(Some(&path)), None, "{path:?}");
        }
        assert_eq!(find_on_path(None), None);
        // No bash anywhere on an all-absolute PATH: the spawn's own search
        // reports the failure.
        let empty = tempfile::tempdir().unwrap();
        assert_eq!(find_on_path(Some(empty.path().as_os_str())), None);
    }
}

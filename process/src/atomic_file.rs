//! Replacing a file all at once: the new content is written to a
//! temporary file in the target's own directory, synced, and renamed over
//! the target. A write that fails (a full disk, a file-size limit) leaves
//! the old file as it was and removes the temporary file; no reader ever
//! sees a half-written target. Used by every command that rewrites a file
//! the user keeps (`freeze --out` and `--tree-out`, `replay --update`,
//! `record --out`, the TUI's saved recordings, a recording's rotation).

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Tells temporary names of one process apart.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// How many taken temporary names are skipped before giving up.
const NAME_ATTEMPTS: u32 = 64;

/// New content for `target`, written and synced to a temporary file next
/// to it; [`Staged::commit`] renames it over the target, dropping it
/// uncommitted removes it.
#[derive(Debug)]
pub struct Staged {
    temp: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl Staged {
    /// Writes `bytes` to a new temporary file in `target`'s directory
    /// (with the target's permissions when it exists, else the umask's)
    /// and syncs it. On failure nothing is left behind. A target that is
    /// a symbolic link is replaced where it points, the link kept.
    pub fn write(target: &Path, bytes: &[u8]) -> std::io::Result<Self> {
        let target = match std::fs::symlink_metadata(target) {
            Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(target)?,
            _ => target.to_path_buf(),
        };
        let (temp, file) = create_temp(&target)?;
        let staged = Self {
            temp,
            target,
            committed: false,
        };
        fill(&file, &staged.target, bytes)?;
        Ok(staged)
    }

    /// Renames the temporary file over the target and syncs the directory.
    pub fn commit(mut self) -> std::io::Result<()> {
        std::fs::rename(&self.temp, &self.target)?;
        self.committed = true;
        // The rename is durable once the directory is synced; a directory
        // that cannot be opened or synced (some file systems) still holds it.
        if let Ok(dir) = File::open(parent_of(&self.target)) {
            let _ = dir.sync_all();
        }
        Ok(())
    }

    /// The temporary file's path (for messages and tests).
    pub fn temp_path(&self) -> &Path {
        &self.temp
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.temp);
        }
    }
}

/// Replaces `target`'s content with `bytes` at once (see the module doc).
/// A target that exists and is neither a regular file nor a directory (a
/// FIFO, `/dev/stdout`) is a stream, not a file to replace: it is written
/// by `crate::bounded::write_file`, which refuses a FIFO with no reader
/// instead of waiting on it.
pub fn replace(target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Ok(meta) = std::fs::metadata(target)
        && !meta.is_file()
        && !meta.is_dir()
    {
        return crate::bounded::write_file(target, bytes);
    }
    Staged::write(target, bytes)?.commit()
}

fn parent_of(target: &Path) -> &Path {
    target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."))
}

/// Creates a fresh temporary file next to `target`: `.NAME.PID-N.tmp`.
fn create_temp(target: &Path) -> std::io::Result<(PathBuf, File)> {
    let name = target
        .file_name()
        .ok_or_else(|| std::io::Error::new(ErrorKind::InvalidInput, "names no file"))?
        .to_string_lossy()
        .into_owned();
    let dir = parent_of(target);
    for _ in 0..NAME_ATTEMPTS {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let temp = dir.join(format!(".{name}.{}-{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o666)
            .open(&temp)
        {
            Ok(file) => return Ok((temp, file)),
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::new(
        ErrorKind::AlreadyExists,
        format!("no free temporary name next to {name}"),
    ))
}

/// Writes and syncs the temporary file, with the target's permissions.
fn fill(mut file: &File, target: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Ok(old) = std::fs::metadata(target) {
        file.set_permissions(old.permissions())?;
    }
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_replaced_file_keeps_its_permissions_and_no_temp_file_is_left() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("t.jsonl");
        std::fs::write(&target, "old").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o640)).unwrap();
        replace(&target, b"new").unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let mode = std::fs::metadata(&target).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(names.len(), 1);
    }

    #[test]
    fn a_symbolic_link_is_kept_and_the_file_it_names_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real.jsonl");
        let link = dir.path().join("link.jsonl");
        std::fs::write(&real, "old").unwrap();
        std::os::unix::fs::symlink("real.jsonl", &link).unwrap();
        replace(&link, b"new").unwrap();
        assert!(
            std::fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "new");
    }

    #[test]
    fn a_staged_file_dropped_uncommitted_leaves_the_old_file_and_no_temp_file() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("manifest.json");
        std::fs::write(&target, "old").unwrap();
        let staged = Staged::write(&target, b"new").unwrap();
        assert!(staged.temp_path().is_file());
        drop(staged);
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "old");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}

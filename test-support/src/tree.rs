//! Real temporary file trees with pinned modification times, so tests
//! that depend on ripgrep's `--sort=modified` order are deterministic.

use std::fs::{File, FileTimes};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use tempfile::TempDir;

/// Seconds since the epoch of 2000-01-01T00:00:00Z.
pub const Y2000: u64 = 946_684_800;
/// Seconds since the epoch of 2020-01-01T00:00:00Z.
pub const Y2020: u64 = 1_577_836_800;

/// A temporary directory tree; removed on drop.
pub struct TempTree {
    dir: TempDir,
}

fn set_mtime(path: &Path, secs: u64) -> io::Result<()> {
    let time = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    File::open(path)?.set_times(FileTimes::new().set_modified(time).set_accessed(time))
}

impl TempTree {
    pub fn new() -> io::Result<Self> {
        Ok(Self {
            dir: tempfile::Builder::new()
                .prefix("fs-search-tree-")
                .tempdir()?,
        })
    }

    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// The root as a string, as a session cwd carries it.
    pub fn root(&self) -> String {
        self.dir.path().to_string_lossy().into_owned()
    }

    pub fn join(&self, relative: &str) -> PathBuf {
        self.dir.path().join(relative)
    }

    /// Writes `relative` (creating parents) with `content` and `mtime`.
    pub fn file(&self, relative: &str, content: &[u8], mtime: u64) -> io::Result<&Self> {
        let path = self.join(relative);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
        set_mtime(&path, mtime)?;
        Ok(self)
    }

    /// Pins the mtime of an existing file or directory.
    pub fn touch(&self, relative: &str, mtime: u64) -> io::Result<&Self> {
        set_mtime(&self.join(relative), mtime)?;
        Ok(self)
    }
}

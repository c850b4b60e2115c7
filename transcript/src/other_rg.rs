//! An rg named besides the one on `PATH` (`workbench freeze --also-rg
//! DIR|BINARY`, `replay` of a variant), run by putting a directory
//! holding only it first on the executor's `PATH`.

use std::path::{Path, PathBuf};

use fs_search_process::RgInfo;

use super::error::TranscriptError;

/// An rg binary other than the one on `PATH`: a temp directory holding
/// `rg` (a symlink to it) that an executor puts first on its `PATH`, and
/// the version it reports.
#[derive(Debug)]
pub struct OtherRg {
    /// Holds the `rg` symlink; removed on drop.
    dir: tempfile::TempDir,
    binary: PathBuf,
    info: RgInfo,
}

impl OtherRg {
    /// The rg that `named` names: a directory holding an executable `rg`,
    /// or the binary itself (of any name). An error when it is neither,
    /// or when its `--version` does not name a ripgrep version.
    pub fn new(named: &Path, temp_parent: &Path) -> Result<Self, TranscriptError> {
        let candidate = if named.is_dir() {
            named.join("rg")
        } else {
            named.to_path_buf()
        };
        let meta = std::fs::metadata(&candidate).map_err(|e| {
            TranscriptError::Other(format!(
                "{}: {e} (name a directory holding an `rg`, or an rg binary)",
                candidate.display()
            ))
        })?;
        if !meta.is_file() || !is_executable(&meta) {
            return Err(TranscriptError::Other(format!(
                "{}: not an executable file (name a directory holding an `rg`, or an rg binary)",
                candidate.display()
            )));
        }
        let binary = candidate
            .canonicalize()
            .map_err(|e| TranscriptError::io(&candidate, e))?;
        let info = RgInfo::at(&binary);
        if info.major().is_none() {
            return Err(TranscriptError::Other(format!(
                "{}: not an rg whose version can be read (`--version` gave \"{}\")",
                binary.display(),
                info.version_line
            )));
        }
        let dir = tempfile::Builder::new()
            .prefix("fs-search-rg-")
            .tempdir_in(temp_parent)
            .map_err(|e| TranscriptError::io(temp_parent, e))?;
        let link = dir.path().join("rg");
        std::os::unix::fs::symlink(&binary, &link).map_err(|e| TranscriptError::io(&link, e))?;
        Ok(Self { dir, binary, info })
    }

    /// The directory to put first on `PATH`: it holds only `rg`.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// The binary (canonical).
    pub fn binary(&self) -> &Path {
        &self.binary
    }

    /// `rg --version`'s first line, as a transcript header records it.
    pub fn version_line(&self) -> &str {
        &self.info.version_line
    }

    /// Its major version (always known: [`Self::new`] checks it).
    pub fn major(&self) -> Option<u32> {
        self.info.major()
    }
}

fn is_executable(meta: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::PermissionsExt;
    meta.permissions().mode() & 0o111 != 0
}

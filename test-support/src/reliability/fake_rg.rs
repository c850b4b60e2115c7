//! Fake `rg` executables for fault injection. Each lives alone in a fresh
//! `bin` directory that a test puts first on the child's `PATH` (through
//! [`super::local_executor`]); a separate state directory holds what the fake
//! records (argv logs, pids, readiness markers).
//!
//! A fake is a bash script (`#!/bin/bash`, so it runs even when the
//! child's `PATH` has no bash) whose prologue defines `STATE` (the state
//! directory) and `REAL_RG` (the real ripgrep, for fakes that record and
//! then delegate).

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use fs_search_engine::helpers::single_quote;
use tempfile::TempDir;

/// A fake `rg` and its state directory.
#[derive(Debug)]
pub struct FakeRg {
    bin: TempDir,
    state: TempDir,
}

/// The real ripgrep on this process's `PATH`.
pub fn real_rg() -> io::Result<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("rg"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "rg is not on PATH"))
}

/// The records a recording fake writes: one file per run, each argument
/// NUL-terminated.
const RECORDING_BODY: &str = r#"log=$(mktemp "$STATE/argv.XXXXXX")
for a in "$@"; do printf '%s\0' "$a"; done > "$log"
exec "$REAL_RG" "$@"
"#;

impl FakeRg {
    /// A fake whose script is the prologue followed by `body`.
    pub fn new(body: &str) -> io::Result<Self> {
        let bin = tempfile::Builder::new().prefix("fake-rg-bin-").tempdir()?;
        let state = tempfile::Builder::new()
            .prefix("fake-rg-state-")
            .tempdir()?;
        let real = real_rg()?;
        let script = format!(
            "#!/bin/bash\nSTATE={}\nREAL_RG={}\n{body}",
            single_quote(&state.path().to_string_lossy()),
            single_quote(&real.to_string_lossy()),
        );
        let path = bin.path().join("rg");
        std::fs::write(&path, script)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))?;
        Ok(Self { bin, state })
    }

    /// A fake that records its argv, then runs the real ripgrep with it.
    pub fn recording() -> io::Result<Self> {
        Self::new(RECORDING_BODY)
    }

    /// The directory holding only this fake `rg`.
    pub fn bin_dir(&self) -> &Path {
        self.bin.path()
    }

    /// The state directory the script sees as `$STATE`.
    pub fn state_dir(&self) -> &Path {
        self.state.path()
    }

    /// A `PATH` value with the fake first, then this process's `PATH`.
    pub fn path_env(&self) -> String {
        let inherited = std::env::var("PATH").unwrap_or_default();
        format!("{}:{inherited}", self.bin.path().display())
    }

    /// Puts a symlink to the real `name` (found on this process's `PATH`)
    /// beside the fake, for tests whose child `PATH` is only this directory.
    pub fn link_tool(&self, name: &str) -> io::Result<()> {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let real = std::env::split_paths(&path)
            .map(|dir| dir.join(name))
            .find(|candidate| candidate.is_file())
            .ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, format!("{name} not on PATH"))
            })?;
        std::os::unix::fs::symlink(real, self.bin.path().join(name))
    }

    /// Removes `name` from the fake's directory.
    pub fn unlink_tool(&self, name: &str) -> io::Result<()> {
        std::fs::remove_file(self.bin.path().join(name))
    }

    /// A `PATH` value naming only the fake's directory.
    pub fn isolated_path_env(&self) -> String {
        self.bin.path().to_string_lossy().into_owned()
    }

    /// Writes `contents` to `name` in the state directory.
    pub fn write_state(&self, name: &str, contents: &[u8]) -> io::Result<()> {
        std::fs::write(self.state.path().join(name), contents)
    }

    /// Removes the fake `rg` executable (rg "vanishes").
    pub fn remove(&self) -> io::Result<()> {
        std::fs::remove_file(self.bin.path().join("rg"))
    }

    /// The argv of every recorded run (order unspecified), as raw bytes.
    pub fn recorded_argvs(&self) -> io::Result<Vec<Vec<Vec<u8>>>> {
        let mut runs = Vec::new();
        for entry in std::fs::read_dir(self.state.path())? {
            let entry = entry?;
            if !entry.file_name().to_string_lossy().starts_with("argv.") {
                continue;
            }
            let bytes = std::fs::read(entry.path())?;
            let mut args: Vec<Vec<u8>> = bytes.split(|b| *b == 0).map(<[u8]>::to_vec).collect();
            // Every argument is NUL-terminated: the last piece is empty.
            args.pop();
            runs.push(args);
        }
        Ok(runs)
    }

    /// Forgets the recorded runs.
    pub fn clear_records(&self) -> io::Result<()> {
        for entry in std::fs::read_dir(self.state.path())? {
            let entry = entry?;
            if entry.file_name().to_string_lossy().starts_with("argv.") {
                std::fs::remove_file(entry.path())?;
            }
        }
        Ok(())
    }
}

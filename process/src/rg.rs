//! Which rg the workbench runs: the first executable `rg` on `PATH` (the
//! local bash executor's children inherit the workbench's `PATH`), its
//! version as `rg --version` prints it, and the major version that keys a
//! transcript's per-version variants (rg 14.1.0 and 14.1.1 write the same
//! texts; 13 and 14 do not).

use std::path::{Path, PathBuf};

use serde::Serialize;

/// The rg found on `PATH`, as `surface --json` reports it
/// (`"rg": {"version", "path"}`); the default is "not looked for".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RgInfo {
    /// The version number (`13.0.0`); `None` when no rg runs.
    pub version: Option<String>,
    /// Where it is; `None` when no executable `rg` is on `PATH`.
    pub path: Option<PathBuf>,
    /// `rg --version`'s first line (`ripgrep 13.0.0`), or why rg did not
    /// run; what a transcript header records.
    #[serde(skip)]
    pub version_line: String,
}

impl RgInfo {
    /// Finds rg on this process's `PATH` and asks it its version.
    pub fn detect() -> Self {
        let path = std::env::var_os("PATH").and_then(|paths| find_executable(&paths, "rg"));
        let Some(path) = path else {
            return Self {
                version: None,
                path: None,
                version_line: "rg not found on PATH".to_owned(),
            };
        };
        let version_line = version_line_of(&path);
        Self {
            version: version_number(&version_line).map(str::to_owned),
            path: Some(path),
            version_line,
        }
    }

    /// The rg at `path` (not looked up on `PATH`) and its version:
    /// `workbench freeze --also-rg` names one besides the rg on `PATH`.
    pub fn at(path: &Path) -> Self {
        let version_line = version_line_of(path);
        Self {
            version: version_number(&version_line).map(str::to_owned),
            path: Some(path.to_path_buf()),
            version_line,
        }
    }

    /// The rg that `kind`'s commands run: this machine's for the local
    /// and sandboxed executors (the sandbox binds the rg found on `PATH`),
    /// the host's for the remote one.
    pub fn detect_for(kind: &crate::ExecutorKind) -> Self {
        match kind {
            crate::ExecutorKind::Ssh(remote) => remote.rg().clone(),
            crate::ExecutorKind::Local
            | crate::ExecutorKind::Direct
            | crate::ExecutorKind::Sandbox(_) => Self::detect(),
        }
    }

    /// Asks a host, through `ssh` (a command ending in the host's name),
    /// which rg its login `PATH` finds and that rg's version; `label`
    /// names the host in the version line when it cannot be asked.
    pub(crate) fn on_host(mut ssh: std::process::Command, label: &str) -> Self {
        ssh.arg(r#"p=$(command -v rg) || exit 3; printf '%s\n' "$p"; "$p" --version"#)
            .stdin(std::process::Stdio::null());
        let out = match ssh.output() {
            Ok(out) => out,
            Err(e) => return Self::not_run(format!("ssh to {label} did not start: {e}")),
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut lines = stdout.lines();
        match (out.status.code(), lines.next(), lines.next()) {
            (Some(0), Some(path), Some(version_line)) => Self {
                version: version_number(version_line).map(str::to_owned),
                path: Some(PathBuf::from(path)),
                version_line: version_line.to_owned(),
            },
            (Some(3), _, _) => Self::not_run(format!("rg not found on {label}'s PATH")),
            _ => Self::not_run(format!(
                "rg --version on {label} failed ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
        }
    }

    fn not_run(version_line: String) -> Self {
        Self {
            version: None,
            path: None,
            version_line,
        }
    }

    /// The major version (13 for `13.0.0`).
    pub fn major(&self) -> Option<u32> {
        self.version.as_deref().and_then(major_of_number)
    }

    /// A short label: `rg 13.0.0`, or `rg missing`.
    pub fn label(&self) -> String {
        match &self.version {
            Some(version) => format!("rg {version}"),
            None if self.path.is_some() => "rg (version unknown)".to_owned(),
            None => "rg missing".to_owned(),
        }
    }
}

/// The first file named `name` with an execute bit in the directories of
/// `paths` (a `PATH` value), as a shell's `command -v` finds it.
fn find_executable(paths: &std::ffi::OsStr, name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(paths)
        .filter(|dir| !dir.as_os_str().is_empty())
        .map(|dir| dir.join(name))
        .find(|candidate| {
            std::fs::metadata(candidate)
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// `rg --version`'s first line, or a note that it did not run.
fn version_line_of(rg: &Path) -> String {
    match std::process::Command::new(rg).arg("--version").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned(),
        Ok(out) => format!("rg --version failed ({})", out.status),
        Err(e) => format!("rg not runnable: {e}"),
    }
}

/// The version number in a first line like `ripgrep 14.1.1 (rev 4649aa9700)`.
pub(crate) fn version_number(version_line: &str) -> Option<&str> {
    let number = version_line
        .strip_prefix("ripgrep ")?
        .split_whitespace()
        .next()?;
    major_of_number(number).map(|_| number)
}

/// The major version of a version line (`ripgrep 13.0.0` → 13), as a
/// transcript header records it.
pub fn major_of_line(version_line: &str) -> Option<u32> {
    version_number(version_line).and_then(major_of_number)
}

fn major_of_number(number: &str) -> Option<u32> {
    number.split('.').next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_major_version_is_read_from_each_versions_first_line() {
        assert_eq!(major_of_line("ripgrep 13.0.0"), Some(13));
        assert_eq!(major_of_line("ripgrep 14.1.1 (rev 4649aa9700)"), Some(14));
        assert_eq!(major_of_line("ripgrep 15.2.0"), Some(15));
        assert_eq!(
            version_number("ripgrep 14.1.1 (rev 4649aa9700)"),
            Some("14.1.1")
        );
        assert_eq!(major_of_line("rg not runnable: No such file"), None);
        assert_eq!(major_of_line("ripgrep x.y"), None);
    }

    #[test]
    fn the_first_executable_rg_on_path_is_found_and_others_are_skipped() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let (plain, exec) = (dir.path().join("plain"), dir.path().join("exec"));
        std::fs::create_dir_all(&plain).unwrap();
        std::fs::create_dir_all(&exec).unwrap();
        std::fs::write(plain.join("rg"), "not executable").unwrap();
        std::fs::write(exec.join("rg"), "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(exec.join("rg"), std::fs::Permissions::from_mode(0o755)).unwrap();
        let paths = std::env::join_paths([&plain, &exec]).unwrap();
        assert_eq!(find_executable(&paths, "rg"), Some(exec.join("rg")));
        assert_eq!(find_executable(&paths, "no-such-tool"), None);
    }

    #[test]
    fn the_detected_rg_is_the_one_on_path_with_its_version() {
        let info = RgInfo::detect();
        let path = info.path.clone().expect("the tests need rg on PATH");
        let out = std::process::Command::new(&path)
            .arg("--version")
            .output()
            .unwrap();
        let first = String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap()
            .to_owned();
        assert_eq!(info.version_line, first);
        assert_eq!(
            info.label(),
            format!("rg {}", version_number(&first).unwrap())
        );
    }
}

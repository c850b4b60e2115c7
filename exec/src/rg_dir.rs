//! The executor's `--rg` directory: a private directory holding one
//! symbolic link, `rg`, to the configured rg binary, put first on the
//! `PATH` of every child, so that a bash command (`rg …`, `command -v
//! rg`) finds that binary as `rg`; a sandbox finds it there too, and
//! exposes the link and the binary it names (`sandbox/exposed.rs`).
//! Created on first use; removed with the executor.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The link's name: what bash commands run as rg.
const LINK: &str = "rg";

/// The directory (module doc); `None` inside when it could not be made.
#[derive(Debug, Default)]
pub(super) struct RgDir(OnceLock<Option<tempfile::TempDir>>);

impl RgDir {
    /// The directory whose `rg` links to `rg` (made absolute), created on
    /// the first call; `None` when it cannot be made (the child's own
    /// `PATH` then decides, and a warning says so once).
    pub(super) fn path(&self, rg: &Path) -> Option<&Path> {
        self.0
            .get_or_init(|| match make(rg) {
                Ok(dir) => Some(dir),
                Err(e) => {
                    tracing::warn!(
                        "--rg {}: cannot put it first on the commands' PATH: {e}",
                        rg.display()
                    );
                    None
                }
            })
            .as_ref()
            .map(tempfile::TempDir::path)
    }
}

fn make(rg: &Path) -> std::io::Result<tempfile::TempDir> {
    let target: PathBuf = std::path::absolute(rg)?;
    let dir = tempfile::Builder::new()
        .prefix("dsh-rg-")
        .rand_bytes(6)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()?;
    std::os::unix::fs::symlink(&target, dir.path().join(LINK))?;
    Ok(dir)
}

/// `dir` put first on `env`'s `PATH` (the whole `PATH` when it had none).
pub(super) fn prepend_to_path(env: &mut BTreeMap<OsString, OsString>, dir: &Path) {
    let mut path = dir.as_os_str().to_owned();
    if let Some(rest) = env.get(OsStr::new("PATH")) {
        path.push(":");
        path.push(rest);
    }
    env.insert(OsString::from("PATH"), path);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_directory_links_rg_and_goes_with_its_holder() {
        let holder = RgDir::default();
        let dir = holder
            .path(Path::new("/opt/some/rg"))
            .unwrap()
            .to_path_buf();
        assert_eq!(
            std::fs::read_link(dir.join("rg")).unwrap(),
            Path::new("/opt/some/rg")
        );
        let mut env = BTreeMap::from([(OsString::from("PATH"), OsString::from("/usr/bin"))]);
        prepend_to_path(&mut env, &dir);
        assert_eq!(
            env[OsStr::new("PATH")],
            OsString::from(format!("{}:/usr/bin", dir.display()))
        );
        drop(holder);
        assert!(!dir.exists());
    }
}

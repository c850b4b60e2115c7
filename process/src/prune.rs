//! Removing what the workbench wrote longer ago than the retention period
//! (`--retention DAYS`, default [`DEFAULT_RETENTION_DAYS`]), at start: the
//! files of the spill root's session directories, the session directories
//! left empty, and old log files.
//!
//! Several workbench processes may prune and write at once, so only an
//! entry whose own modification time is older than the cut-off goes, a
//! directory only when it was old and is now empty (`rmdir`, which fails
//! on a directory another process has just written to), and every
//! failure (already gone, not empty, not ours) leaves the entry alone.
//! A live process's session directory keeps every file it wrote within
//! the period.

use std::path::Path;
use std::time::{Duration, SystemTime};

/// The default retention period, in days.
pub const DEFAULT_RETENTION_DAYS: u32 = 7;

/// What a prune removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Pruned {
    pub files: usize,
    pub dirs: usize,
}

/// The cut-off `days` days before `now`: entries older than it go.
pub fn cutoff(days: u32, now: SystemTime) -> SystemTime {
    let period = Duration::from_secs(u64::from(days) * 24 * 60 * 60);
    now.checked_sub(period)
        .map_or(SystemTime::UNIX_EPOCH, |cutoff| {
            cutoff.max(SystemTime::UNIX_EPOCH)
        })
}

fn older(meta: &std::fs::Metadata, cutoff: SystemTime) -> bool {
    meta.modified().is_ok_and(|modified| modified < cutoff)
}

/// Prunes the spill root `root`: in each `session-*` directory, the files
/// older than `cutoff`; then the directory, if it was older too and is
/// now empty.
pub(crate) fn spill_root(root: &Path, cutoff: SystemTime) -> Pruned {
    let mut pruned = Pruned::default();
    let Ok(entries) = std::fs::read_dir(root) else {
        return pruned;
    };
    for entry in entries.flatten() {
        if !entry.file_name().to_string_lossy().starts_with("session-") {
            continue;
        }
        let dir = entry.path();
        // Never a symbolic link: only real directories are entered.
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if !meta.is_dir() {
            continue;
        }
        let dir_was_old = older(&meta, cutoff);
        if let Ok(files) = std::fs::read_dir(&dir) {
            for file in files.flatten() {
                let path = file.path();
                let old = std::fs::symlink_metadata(&path)
                    .is_ok_and(|meta| !meta.is_dir() && older(&meta, cutoff));
                if old && std::fs::remove_file(&path).is_ok() {
                    pruned.files += 1;
                }
            }
        }
        if dir_was_old && std::fs::remove_dir(&dir).is_ok() {
            pruned.dirs += 1;
        }
    }
    pruned
}

/// Prunes the log directory `dir`: the `workbench*.log` files older than
/// `cutoff`.
pub(crate) fn logs(dir: &Path, cutoff: SystemTime) -> Pruned {
    let mut pruned = Pruned::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return pruned;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !(name.starts_with("workbench") && name.ends_with(".log")) {
            continue;
        }
        let path = entry.path();
        let old = std::fs::symlink_metadata(&path)
            .is_ok_and(|meta| meta.is_file() && older(&meta, cutoff));
        if old && std::fs::remove_file(&path).is_ok() {
            pruned.files += 1;
        }
    }
    pruned
}

#[cfg(test)]
mod tests {
    use std::fs::{File, FileTimes};

    use super::*;

    const DAY: Duration = Duration::from_secs(24 * 60 * 60);

    fn age(path: &Path, days: u32) {
        let when = SystemTime::now() - DAY * days;
        let times = FileTimes::new().set_modified(when).set_accessed(when);
        File::open(path).unwrap().set_times(times).unwrap();
    }

    #[test]
    fn old_spills_go_and_recent_ones_stay() {
        let root = tempfile::tempdir().unwrap();
        let old_dir = root.path().join("session-aaaaaaaaaaaa");
        let live_dir = root.path().join("session-bbbbbbbbbbbb");
        let mixed_dir = root.path().join("session-cccccccccccc");
        for dir in [&old_dir, &live_dir, &mixed_dir] {
            std::fs::create_dir(dir).unwrap();
        }
        std::fs::write(old_dir.join("1-old"), "x").unwrap();
        std::fs::write(live_dir.join("2-new"), "x").unwrap();
        std::fs::write(mixed_dir.join("3-old"), "x").unwrap();
        std::fs::write(mixed_dir.join("4-new"), "x").unwrap();
        age(&old_dir.join("1-old"), 8);
        age(&mixed_dir.join("3-old"), 8);
        age(&old_dir, 8);
        age(&mixed_dir, 8);
        // Not the workbench's: never touched, however old.
        let other = root.path().join("notes.txt");
        std::fs::write(&other, "x").unwrap();
        age(&other, 30);

        let pruned = spill_root(root.path(), cutoff(7, SystemTime::now()));

        assert_eq!(pruned, Pruned { files: 2, dirs: 1 });
        assert!(!old_dir.exists());
        assert!(live_dir.join("2-new").exists());
        assert!(!mixed_dir.join("3-old").exists());
        assert!(mixed_dir.join("4-new").exists());
        assert!(other.exists());
    }

    #[test]
    fn a_longer_retention_keeps_what_a_shorter_one_removes() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("session-aaaaaaaaaaaa");
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("f"), "x").unwrap();
        age(&dir.join("f"), 3);
        age(&dir, 3);
        assert_eq!(
            spill_root(root.path(), cutoff(7, SystemTime::now())),
            Pruned::default()
        );
        assert!(dir.join("f").exists());
        let pruned = spill_root(root.path(), cutoff(2, SystemTime::now()));
        assert_eq!(pruned, Pruned { files: 1, dirs: 1 });
        assert!(!dir.exists());
    }

    #[test]
    fn a_symbolic_link_in_the_root_is_not_followed() {
        let root = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let victim = elsewhere.path().join("keep");
        std::fs::write(&victim, "x").unwrap();
        age(&victim, 30);
        std::os::unix::fs::symlink(elsewhere.path(), root.path().join("session-link")).unwrap();
        spill_root(root.path(), cutoff(7, SystemTime::now()));
        assert!(victim.exists());
    }

    #[test]
    fn old_log_files_go_and_others_stay() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("workbench-1-2.log");
        let new = dir.path().join("workbench-3-4.log");
        let legacy = dir.path().join("workbench.log");
        let other = dir.path().join("notes.log");
        for file in [&old, &new, &legacy, &other] {
            std::fs::write(file, "x").unwrap();
        }
        age(&old, 8);
        age(&legacy, 8);
        age(&other, 8);
        let pruned = logs(dir.path(), cutoff(7, SystemTime::now()));
        assert_eq!(pruned, Pruned { files: 2, dirs: 0 });
        assert!(!old.exists() && !legacy.exists());
        assert!(new.exists() && other.exists());
    }

    #[test]
    fn the_cutoff_is_the_period_before_now() {
        let now = SystemTime::UNIX_EPOCH + DAY * 10;
        assert_eq!(cutoff(7, now), SystemTime::UNIX_EPOCH + DAY * 3);
        assert_eq!(cutoff(30, now), SystemTime::UNIX_EPOCH);
    }
}

//! The engine-side glob order behind the `globSortInEngine` opt-in: rg
//! lists unsorted (in parallel), then every listed path is stat'ed once,
//! on all cores, and the list is sorted globally by modification time,
//! oldest first, ties by path. (The contract's `rg --sort=modified` is
//! single-threaded and, in rg 13, orders entries only within each
//! directory.) A path that cannot be stat'ed — gone, or a non-UTF-8 name
//! that reached the engine lossily decoded — sorts first, like an unknown
//! time in rg.

use std::path::Path;
use std::time::SystemTime;

use crate::support::parallel::map_parts;

fn modified(workdir: &Path, line: &str) -> Option<SystemTime> {
    std::fs::symlink_metadata(workdir.join(line))
        .and_then(|m| m.modified())
        .ok()
}

/// The non-empty lines of `rg --files` stdout, reordered oldest first,
/// joined by `\n` again. Relative lines are resolved against `workdir`.
pub(crate) fn sort_by_mtime(stdout: &str, workdir: &str) -> String {
    let workdir = Path::new(workdir);
    let lines: Vec<&str> = stdout.split('\n').filter(|l| !l.is_empty()).collect();
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = lines.len().div_ceil(threads).max(1);
    let mut keyed: Vec<(Option<SystemTime>, &str)> = Vec::with_capacity(lines.len());
    let parts: Vec<&[&str]> = lines.chunks(chunk).collect();
    for part in map_parts(&parts, |part| {
        part.iter()
            .map(|line| (modified(workdir, line), *line))
            .collect::<Vec<_>>()
    }) {
        keyed.extend(part);
    }
    keyed.sort_unstable();
    let mut out = String::with_capacity(stdout.len());
    for (i, (_, line)) in keyed.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;
    use std::time::Duration;

    #[test]
    fn sorts_oldest_first_across_directories_with_ties_by_path() {
        let dir = tempfile::tempdir().unwrap();
        let base = SystemTime::UNIX_EPOCH + Duration::from_secs(1_600_000_000);
        std::fs::create_dir(dir.path().join("d")).unwrap();
        for (name, age) in [("d/new", 30), ("old", 10), ("d/b", 20), ("a", 20)] {
            let file = File::create(dir.path().join(name)).unwrap();
            file.set_modified(base + Duration::from_secs(age)).unwrap();
        }
        let workdir = dir.path().to_string_lossy().into_owned();
        let absolute = format!("{workdir}/d/new");
        let stdout = format!("d/b\n{absolute}\nold\na\ngone\n");
        assert_eq!(
            sort_by_mtime(&stdout, &workdir),
            format!("gone\nold\na\nd/b\n{absolute}")
        );
        assert_eq!(sort_by_mtime("", &workdir), "");
    }
}

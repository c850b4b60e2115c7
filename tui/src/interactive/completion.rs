//! Tab completion of a path typed relative to a directory (the "why"
//! panel's path): the entries of the typed path's directory that start
//! with its last component, completed as far as they agree.

use std::path::Path;

/// What completing a typed path gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Completion {
    /// The typed path, completed as far as every candidate agrees.
    pub text: String,
    /// The candidates' names (directories end in `/`), sorted.
    pub candidates: Vec<String>,
}

/// Completes `typed` (relative to `root`, or absolute) against the
/// directory it names; hidden entries are offered too (they are what
/// explain is often asked about). An unreadable directory offers nothing.
pub(crate) fn complete(root: &Path, typed: &str) -> Completion {
    let (dir_part, stem) = match typed.rfind('/') {
        Some(i) => typed.split_at(i + 1),
        None => ("", typed),
    };
    let dir = root.join(if dir_part.is_empty() { "." } else { dir_part });
    let mut candidates: Vec<String> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_owned();
            if !name.starts_with(stem) {
                return None;
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            Some(if is_dir { format!("{name}/") } else { name })
        })
        .collect();
    candidates.sort();
    let common = common_prefix(&candidates);
    let text = if common.len() > stem.len() {
        format!("{dir_part}{common}")
    } else {
        typed.to_owned()
    };
    Completion { text, candidates }
}

/// The longest prefix all `names` share (whole characters).
fn common_prefix(names: &[String]) -> String {
    let Some(first) = names.first() else {
        return String::new();
    };
    let mut end = first.len();
    for name in &names[1..] {
        end = first
            .char_indices()
            .zip(name.chars())
            .find(|((_, a), b)| a != b)
            .map_or(end.min(name.len()), |((i, _), _)| i.min(end));
    }
    first[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_unique_entry_is_completed_and_directories_end_in_a_slash() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src/nested")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join("src/mod.rs"), "").unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        let done = complete(dir.path(), "sr");
        assert_eq!(done.text, "src/");
        assert_eq!(complete(dir.path(), "src/ma").text, "src/main.rs");
        assert_eq!(complete(dir.path(), ".e").text, ".env");
        let several = complete(dir.path(), "src/m");
        assert_eq!(several.text, "src/m");
        assert_eq!(several.candidates, ["main.rs", "mod.rs"]);
        let nested = complete(dir.path(), "src/n");
        assert_eq!(nested.text, "src/nested/");
    }

    #[test]
    fn a_missing_directory_offers_nothing_and_keeps_the_text() {
        let dir = tempfile::tempdir().unwrap();
        let done = complete(dir.path(), "nope/x");
        assert_eq!(done.text, "nope/x");
        assert!(done.candidates.is_empty());
    }

    #[test]
    fn candidates_sharing_a_longer_prefix_are_completed_that_far() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("report-2024.txt"), "").unwrap();
        std::fs::write(dir.path().join("report-2025.txt"), "").unwrap();
        assert_eq!(complete(dir.path(), "r").text, "report-202");
    }
}

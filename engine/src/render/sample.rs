//! Round-robin sampling of an over-cap glob page across top-level entries
//! (`sampleAcrossTopLevel`, CONTRACT §5.7). Linear in the number of paths.

use std::collections::HashMap;

/// The sampled page and how many top-level groups it reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<'a> {
    /// Taken paths, grouped by entry in first-appearance order.
    pub items: Vec<&'a str>,
    /// Groups that received at least one slot.
    pub shown: usize,
    /// Distinct top-level groups.
    pub total: usize,
}

fn strip_leading_separators(s: &str) -> &str {
    s.trim_start_matches('/')
}

/// The path relative to the search root, in display-path space.
pub(crate) fn relative_to_search_root<'a>(path: &'a str, root: &str) -> &'a str {
    if root == "." {
        return path.strip_prefix("./").unwrap_or(path);
    }
    let trimmed_root = root.trim_end_matches('/');
    if trimmed_root.is_empty() {
        return strip_leading_separators(path);
    }
    if path == trimmed_root {
        return "";
    }
    match path.strip_prefix(trimmed_root) {
        Some(rest) if rest.starts_with('/') => &rest[1..],
        _ => path,
    }
}

fn top_level_segment(s: &str) -> &str {
    let s = strip_leading_separators(s);
    s.split('/').next().unwrap_or(s)
}

/// Group key of `path` under `root`.
pub(crate) fn group_key<'a>(path: &'a str, root: &str) -> &'a str {
    top_level_segment(relative_to_search_root(path, root))
}

/// Samples `max_items` paths round-robin across top-level groups. Every
/// group gets one slot before any gets a second; exhausted groups are never
/// revisited; the page lists each group's taken paths together.
pub fn sample_across_top_level<'a, S: AsRef<str>>(
    paths: &'a [S],
    max_items: usize,
    root: &str,
) -> Sample<'a> {
    let mut index_of: HashMap<&str, usize> = HashMap::new();
    // Per group: its size, and its first paths (no group can take more
    // than `max_items` slots, so later paths are only counted).
    let mut groups: Vec<(usize, Vec<&'a str>)> = Vec::new();
    let mut last: Option<(&str, usize)> = None;
    for path in paths {
        let path = path.as_ref();
        let key = group_key(path, root);
        // rg lists a directory's entries together: most paths join the
        // group of the path before, without a hash lookup.
        let at = match last {
            Some((last_key, at)) if last_key == key => at,
            _ => {
                let next = groups.len();
                let at = *index_of.entry(key).or_insert(next);
                if at == next {
                    groups.push((0, Vec::new()));
                }
                last = Some((key, at));
                at
            }
        };
        let group = &mut groups[at];
        group.0 += 1;
        if group.1.len() < max_items {
            group.1.push(path);
        }
    }
    // The slots a group receives are decided round by round; only the
    // count per group matters because a group's taken paths are its first
    // ones, in input order.
    let mut taken = vec![0usize; groups.len()];
    let mut active: Vec<usize> = (0..groups.len()).collect();
    let mut count = 0usize;
    while !active.is_empty() && count < max_items {
        let mut next_round = Vec::with_capacity(active.len());
        for &group in &active {
            if count >= max_items {
                break;
            }
            taken[group] += 1;
            count += 1;
            if taken[group] < groups[group].0 {
                next_round.push(group);
            }
        }
        active = next_round;
    }
    let mut items = Vec::with_capacity(count);
    let mut shown = 0;
    for ((_, first), &n) in groups.iter().zip(&taken) {
        if n > 0 {
            shown += 1;
            items.extend_from_slice(&first[..n]);
        }
    }
    Sample {
        items,
        shown,
        total: groups.len(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(paths: &[&str], max: usize, root: &str) -> (Vec<String>, usize, usize) {
        let s = sample_across_top_level(paths, max, root);
        (
            s.items.iter().map(|p| p.to_string()).collect(),
            s.shown,
            s.total,
        )
    }

    fn v(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    /// CONTRACT §10.7 #48
    #[test]
    fn gives_every_top_level_entry_a_slot_before_any_gets_a_second() {
        let paths = ["v/a", "v/b", "v/c", "v/d", "src/e", "guide/f"];
        assert_eq!(run(&paths, 3, "."), (v(&["v/a", "src/e", "guide/f"]), 3, 3));
        assert_eq!(
            run(&paths, 5, "."),
            (v(&["v/a", "v/b", "v/c", "src/e", "guide/f"]), 3, 3)
        );
    }

    /// CONTRACT §10.7 #49
    #[test]
    fn hands_an_exhausted_entrys_slots_to_entries_that_still_have_paths() {
        let paths = ["solo/a", "many/b", "many/c", "many/d"];
        assert_eq!(
            run(&paths, 3, "."),
            (v(&["solo/a", "many/b", "many/c"]), 2, 2)
        );
    }

    /// CONTRACT §10.7 #50
    #[test]
    fn does_not_rescan_exhausted_entries_while_filling_a_skewed_page() {
        let mut paths: Vec<String> = (0..12_500).map(|i| format!("group-{i}/only")).collect();
        paths.extend((0..12_500).map(|i| format!("late/{i}")));
        let s = sample_across_top_level(&paths, 24_999, ".");
        assert_eq!((s.shown, s.total, s.items.len()), (12_501, 12_501, 24_999));
    }

    /// CONTRACT §10.7 #51
    #[test]
    fn reports_the_entries_it_could_not_reach() {
        assert_eq!(
            run(&["a/1", "b/1", "c/1", "d/1"], 2, "."),
            (v(&["a/1", "b/1"]), 2, 4)
        );
    }

    /// CONTRACT §10.7 #52
    #[test]
    fn groups_an_absolute_path_by_its_first_real_name() {
        let paths = ["/out/a", "/out/b", "/away/c", "/away/d"];
        assert_eq!(run(&paths, 2, "."), (v(&["/out/a", "/away/c"]), 2, 2));
    }

    /// CONTRACT §10.7 #53
    #[test]
    fn reproduces_the_modification_time_head_for_a_flat_result() {
        assert_eq!(
            run(&["a.ts", "b.ts", "c.ts"], 2, "."),
            (v(&["a.ts", "b.ts"]), 2, 3)
        );
    }

    /// CONTRACT §10.7 #54
    #[test]
    fn groups_paths_relative_to_an_explicit_search_root() {
        let ws = [
            "workspace/vendor/a.ts",
            "workspace/vendor/b.ts",
            "workspace/source/c.ts",
            "workspace/guides/d.md",
        ];
        assert_eq!(
            run(&ws, 3, "workspace"),
            (
                v(&[
                    "workspace/vendor/a.ts",
                    "workspace/source/c.ts",
                    "workspace/guides/d.md"
                ]),
                3,
                3
            )
        );
        assert_eq!(
            run(&["./vendor/a.ts", "./src/b.ts"], 2, "."),
            (v(&["./vendor/a.ts", "./src/b.ts"]), 2, 2)
        );
        assert_eq!(
            run(&["/vendor/a.ts", "/src/b.ts"], 2, "/"),
            (v(&["/vendor/a.ts", "/src/b.ts"]), 2, 2)
        );
        assert_eq!(
            run(&["root/a/one", "root/a/two", "root/b/three"], 2, "root/"),
            (v(&["root/a/one", "root/b/three"]), 2, 2)
        );
        assert_eq!(run(&["other/a.ts"], 1, "src"), (v(&["other/a.ts"]), 1, 1));
        assert_eq!(run(&["src"], 1, "src"), (v(&["src"]), 1, 1));
    }

    /// CONTRACT §10.7 #55
    #[test]
    fn treats_posix_backslashes_as_filename_characters() {
        let paths = ["old\\one", "old\\two", "src/a"];
        assert_eq!(run(&paths, 2, "."), (v(&["old\\one", "old\\two"]), 2, 3));
    }

    /// CONTRACT §10.7 #56
    #[test]
    fn handles_more_top_level_groups_than_an_argument_limit() {
        let paths: Vec<String> = (0..125_000).map(|i| format!("dir-{i}/file.txt")).collect();
        let s = sample_across_top_level(&paths, 100, ".");
        assert_eq!((s.shown, s.total), (100, 125_000));
    }
}

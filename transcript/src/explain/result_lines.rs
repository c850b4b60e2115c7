//! Where each path is in the call's result: the lines of the model-visible
//! page that show it (read from the page text itself), and its lines in
//! the complete result the spill file holds (CONTRACT §8.2: glob's paths
//! one a line; grep's `Found N matches`, a blank line, then each file's
//! path and `Line N:` lines, files separated by a blank line), computed
//! from the canonical value so they hold even when nothing was saved.

use std::collections::HashMap;

use fs_search_engine::{ToolResult, value::ToolValue};

use super::paths::CallPaths;

/// The lines of one path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Lines {
    /// 1-based lines of the model-visible text.
    pub page: Vec<u64>,
    /// 1-based lines of the complete result (the spill file).
    pub spill: Vec<u64>,
    /// grep: the file's matches in the complete result.
    pub matches: usize,
}

/// Every result path (absolute) with its lines.
#[derive(Debug, Default)]
pub(super) struct ResultIndex {
    pub by_path: HashMap<String, Lines>,
    /// The complete result's size (paths or matches).
    pub total: usize,
}

impl ResultIndex {
    /// The index of a call's result.
    pub(super) fn of(result: &ToolResult, paths: &CallPaths) -> Self {
        let mut index = Self::default();
        match &result.value {
            Some(ToolValue::Glob(value)) => {
                index.total = value.paths.len();
                for (i, path) in value.paths.iter().enumerate() {
                    let lines = index.by_path.entry(paths.absolute(path)).or_default();
                    lines.spill.push(i as u64 + 1);
                    lines.matches += 1;
                }
                for (i, line) in result.body().split('\n').enumerate() {
                    if let Some(lines) = index.by_path.get_mut(&paths.absolute(line)) {
                        lines.page.push(i as u64 + 1);
                    }
                }
            }
            Some(ToolValue::Grep(value)) => {
                index.total = value.matches.len();
                let mut groups: Vec<(&str, usize)> = Vec::new();
                let mut seen: HashMap<&str, usize> = HashMap::new();
                for m in &value.matches {
                    let slot = *seen.entry(&m.path).or_insert_with(|| {
                        groups.push((&m.path, 0));
                        groups.len() - 1
                    });
                    groups[slot].1 += 1;
                }
                // Line 1 `Found N matches`, line 2 blank, then the groups.
                let mut line = 3u64;
                for (path, count) in groups {
                    let lines = index.by_path.entry(paths.absolute(path)).or_default();
                    lines.spill.extend(line..line + 1 + count as u64);
                    lines.matches += count;
                    line += count as u64 + 2;
                }
                for (header, group) in grep_page_groups(result.body()) {
                    if let Some(lines) = index.by_path.get_mut(&paths.absolute(&header)) {
                        lines.page.extend(group);
                    }
                }
            }
            None => {}
        }
        index
    }
}

/// The groups of a grep page body: each file's path and the 1-based lines
/// of its header and `Line N:` lines.
fn grep_page_groups(body: &str) -> Vec<(String, Vec<u64>)> {
    let mut groups: Vec<(String, Vec<u64>)> = Vec::new();
    let mut at_header = false;
    for (i, line) in body.split('\n').enumerate() {
        let number = i as u64 + 1;
        if number <= 2 {
            at_header = number == 2;
            continue;
        }
        if line.is_empty() {
            at_header = true;
        } else if at_header {
            groups.push((line.to_owned(), vec![number]));
            at_header = false;
        } else if let Some(group) = groups.last_mut() {
            group.1.push(number);
        }
    }
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grep_page_is_read_as_groups_of_header_and_match_lines() {
        let body = "Found 3 matches\n\na.ts\nLine 3: x\nLine 9: y\n\nb.ts\nLine 1: z";
        assert_eq!(
            grep_page_groups(body),
            vec![("a.ts".into(), vec![3, 4, 5]), ("b.ts".into(), vec![7, 8])]
        );
    }
}

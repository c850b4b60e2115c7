//! The one home of "did you mean": the known name nearest a mistyped one
//! (a config key, a tool name), by edit distance, and the edit distance
//! itself, which `mcp --replay` also uses to rank recorded arguments by
//! how close they come to a call's.

/// The most characters of either side [`edit_distance`] compares; the
/// rest of a longer text counts as that many edits, so comparing two huge
/// values costs no more than comparing two of this length.
pub(crate) const COMPARED_CHARS: usize = 512;

/// The edits (insert, delete, substitute, swap two neighbours) that turn
/// `a` into `b`, counting characters; beyond `COMPARED_CHARS` each
/// further character of either side counts as one edit.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a_all: Vec<char> = a.chars().collect();
    let b_all: Vec<char> = b.chars().collect();
    let a_cut = &a_all[..a_all.len().min(COMPARED_CHARS)];
    let b_cut = &b_all[..b_all.len().min(COMPARED_CHARS)];
    let beyond = (a_all.len() - a_cut.len()) + (b_all.len() - b_cut.len());
    optimal_alignment(a_cut, b_cut) + beyond
}

/// The optimal string alignment distance of `a` and `b` (Levenshtein's
/// edits plus swapping two adjacent characters), three rows of memory.
fn optimal_alignment(a: &[char], b: &[char]) -> usize {
    let width = b.len() + 1;
    let mut before: Vec<usize> = vec![0; width];
    let mut previous: Vec<usize> = (0..width).collect();
    let mut current: Vec<usize> = vec![0; width];
    for i in 1..=a.len() {
        current[0] = i;
        for j in 1..width {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (previous[j] + 1)
                .min(current[j - 1] + 1)
                .min(previous[j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(before[j - 2] + 1);
            }
            current[j] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The name of `known` nearest `word`, compared case-insensitively, when
/// it is near enough to be what was meant: at most a third of the longer
/// name's characters differ (and at least one edit is allowed). Among
/// equally near names the first in `known` wins.
pub fn nearest<'a>(word: &str, known: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let word_lower = word.to_lowercase();
    known
        .into_iter()
        .map(|name| (edit_distance(&word_lower, &name.to_lowercase()), name))
        .filter(|(distance, name)| {
            let longest = word.chars().count().max(name.chars().count());
            *distance <= (longest / 3).max(1)
        })
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_inserts_deletes_substitutions_and_swaps() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("grep", "grep"), 0);
        assert_eq!(edit_distance("grpe", "grep"), 1);
        assert_eq!(edit_distance("grepMaxMatch", "grepMaxMatches"), 2);
        assert_eq!(edit_distance("glob", "grep"), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("é", "e"), 1);
    }

    #[test]
    fn edit_distance_beyond_the_compared_chars_counts_one_per_char() {
        let long = "a".repeat(COMPARED_CHARS + 10);
        assert_eq!(edit_distance(&long, ""), COMPARED_CHARS + 10);
        assert_eq!(edit_distance(&long, &long), 20);
    }

    #[test]
    fn nearest_names_the_close_name_and_nothing_for_a_far_one() {
        let keys = ["globMaxResults", "grepMaxMatches", "grepMaxLineBytes"];
        assert_eq!(nearest("grepMaxMatch", keys), Some("grepMaxMatches"));
        assert_eq!(nearest("grepmaxmatches", keys), Some("grepMaxMatches"));
        assert_eq!(nearest("colour", keys), None);
        assert_eq!(nearest("grpe", ["glob", "grep"]), Some("grep"));
        assert_eq!(nearest("find", ["glob", "grep"]), None);
        assert_eq!(nearest("x", ["y"]), Some("y"));
    }
}

//! Level-by-level sampling of an over-cap glob page, the `globSampleDepth`
//! opt-in beyond the contract: the contract's round-robin
//! (`sampleAcrossTopLevel`, CONTRACT §5.7) shares the cap across the
//! search root's entries, then each entry's share across its own entries,
//! and so on down to a given depth. At depth 1 the page is exactly the
//! contract's.
//!
//! Every level keeps the contract's rules: an entry's key is the next
//! path segment (a file is its own entry), entries are ordered by their
//! first path in the input (modification-time) order, every entry gets a
//! slot before any gets a second, exhausted entries drop out, and the
//! earliest entries get the extra slot when a round runs out. Below the
//! last level an entry's slots go to its first paths in input order. The
//! page lists each entry's paths together, at every level.
//!
//! Linear in the number of paths times the depth reached; no recursion.

use crate::render::sample::relative_to_search_root;

/// One level's reach: how many entries at that depth the complete result
/// has, and how many of them got at least one slot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LevelReach {
    /// Entries at this depth that received at least one slot.
    pub shown: usize,
    /// Distinct entries at this depth.
    pub total: usize,
}

/// The sampled page and its reach at every level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LevelSample<'a> {
    /// Taken paths, grouped by entry at every level.
    pub items: Vec<&'a str>,
    /// Reach of level 1 (the top-level entries), 2, … down to the
    /// deepest level (at most the depth asked for) that has any entry.
    pub levels: Vec<LevelReach>,
}

/// One entry of the tree the paths span, down to the sampled depth.
#[derive(Debug, Default)]
struct Entry {
    /// 1 for a top-level entry; 0 for the search root.
    level: usize,
    /// Paths at or below the entry.
    count: usize,
    /// Child entries, in first-appearance order.
    children: Vec<usize>,
    /// How many paths end here (all of them at the last level).
    own_count: usize,
    /// Where those paths take part among the children: before the child
    /// at this index (the number of children when the first arrived).
    own_at: usize,
    /// Slots this entry received.
    quota: usize,
}

impl Entry {
    /// The entry's participants in order: `Some(child)`, or `None` for
    /// its own paths.
    fn participants(&self) -> impl Iterator<Item = Option<usize>> + '_ {
        let own = (self.own_count > 0).then_some(None);
        let (before, after) = self.children.split_at(self.own_at.min(self.children.len()));
        before
            .iter()
            .map(|&c| Some(c))
            .chain(own)
            .chain(after.iter().map(|&c| Some(c)))
    }
}

/// The next segment of `rest` (after leading separators, as the
/// contract's `topLevelSegment`) and what follows it.
fn split_segment(rest: &str) -> (&str, &str) {
    let rest = rest.trim_start_matches('/');
    match rest.split_once('/') {
        Some((segment, tail)) => (segment, tail),
        None => (rest, ""),
    }
}

/// Samples `max_items` paths round-robin at every level down to `depth`
/// (at least 1). `paths` are in modification-time order, `root` in the
/// same display-path space (the canonical value's `root`).
pub fn sample_level_by_level<'a, S: AsRef<str>>(
    paths: &'a [S],
    max_items: usize,
    root: &str,
    depth: usize,
) -> LevelSample<'a> {
    let depth = depth.max(1);
    let mut entries: Vec<Entry> = vec![Entry::default()];
    let mut index_of: foldhash::HashMap<(usize, &'a str), usize> = foldhash::HashMap::default();
    // The entry each path ends at (its own paths' holder).
    let mut holder: Vec<usize> = Vec::with_capacity(paths.len());
    // The entries the previous path passed through: rg lists a
    // directory's entries together, so most lookups hit it. An entry of
    // the trail is reused only while every level above it matched.
    let mut last_trail: Vec<(&'a str, usize)> = Vec::new();
    for path in paths {
        let mut rest = relative_to_search_root(path.as_ref(), root);
        let mut at = 0usize;
        let mut level = 0usize;
        loop {
            let (key, tail) = split_segment(rest);
            let child = match last_trail.get(level) {
                Some(&(last_key, id)) if last_key == key => id,
                _ => {
                    last_trail.truncate(level);
                    let next = entries.len();
                    let id = *index_of.entry((at, key)).or_insert(next);
                    if id == next {
                        entries.push(Entry {
                            level: level + 1,
                            ..Entry::default()
                        });
                        entries[at].children.push(id);
                    }
                    last_trail.push((key, id));
                    id
                }
            };
            entries[at].count += 1;
            at = child;
            level += 1;
            rest = tail;
            if level == depth || rest.trim_start_matches('/').is_empty() {
                break;
            }
        }
        // A deeper path below this entry must not reuse the trail past it.
        last_trail.truncate(level);
        let entry = &mut entries[at];
        entry.count += 1;
        if entry.own_count == 0 {
            entry.own_at = entry.children.len();
        }
        entry.own_count += 1;
        holder.push(at);
    }
    // Shares, top down: entries are created after their parent, so one
    // pass in creation order sees every parent's quota first.
    entries[0].quota = max_items.min(entries[0].count);
    let mut own_quota = vec![0usize; entries.len()];
    for id in 0..entries.len() {
        let quota = entries[id].quota;
        if quota == 0 {
            continue;
        }
        let participants: Vec<Option<usize>> = entries[id].participants().collect();
        let sizes: Vec<usize> = participants
            .iter()
            .map(|p| match *p {
                Some(child) => entries[child].count,
                None => entries[id].own_count,
            })
            .collect();
        for (participant, share) in participants.iter().zip(round_robin(&sizes, quota)) {
            match *participant {
                Some(child) => entries[child].quota = share,
                None => own_quota[id] = share,
            }
        }
    }
    let levels = reach(&entries);
    // Where each entry's own paths go on the page: depth first, each
    // entry's participants in order.
    let mut rank = vec![usize::MAX; entries.len()];
    let mut next_rank = 0usize;
    let mut stack: Vec<(usize, Vec<Option<usize>>, usize)> =
        vec![(0, entries[0].participants().collect(), 0)];
    while let Some(top) = stack.last_mut() {
        let id = top.0;
        let Some(participant) = top.1.get(top.2).copied() else {
            stack.pop();
            continue;
        };
        top.2 += 1;
        match participant {
            None => {
                rank[id] = next_rank;
                next_rank += 1;
            }
            Some(child) if entries[child].quota > 0 => {
                let list = entries[child].participants().collect();
                stack.push((child, list, 0));
            }
            Some(_) => {}
        }
    }
    // Each entry's share goes to its first own paths in input order.
    let mut taken = vec![0usize; entries.len()];
    let mut chosen: Vec<(usize, usize)> = Vec::with_capacity(entries[0].quota);
    for (index, &at) in holder.iter().enumerate() {
        if taken[at] < own_quota[at] {
            taken[at] += 1;
            chosen.push((rank[at], index));
        }
    }
    chosen.sort_unstable();
    let items = chosen
        .into_iter()
        .map(|(_, index)| paths[index].as_ref())
        .collect();
    LevelSample { items, levels }
}

/// The contract's round-robin over participants of `sizes` paths, in
/// order: how many of `budget` slots each receives (linear in the slots
/// given plus the participants visited).
fn round_robin(sizes: &[usize], budget: usize) -> Vec<usize> {
    let mut taken = vec![0usize; sizes.len()];
    let mut active: Vec<usize> = (0..sizes.len()).filter(|&i| sizes[i] > 0).collect();
    let mut count = 0usize;
    while !active.is_empty() && count < budget {
        let mut next_round = Vec::with_capacity(active.len());
        for &i in &active {
            if count >= budget {
                break;
            }
            taken[i] += 1;
            count += 1;
            if taken[i] < sizes[i] {
                next_round.push(i);
            }
        }
        active = next_round;
    }
    taken
}

/// Entries and reached entries per level, down to the deepest level that
/// has any.
fn reach(entries: &[Entry]) -> Vec<LevelReach> {
    let mut levels: Vec<LevelReach> = Vec::new();
    for entry in entries.iter().skip(1) {
        let at = entry.level - 1;
        if levels.len() <= at {
            levels.resize(at + 1, LevelReach { shown: 0, total: 0 });
        }
        levels[at].total += 1;
        levels[at].shown += usize::from(entry.quota > 0);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::sample::sample_across_top_level;
    use proptest::prelude::*;
    use std::collections::{BTreeMap, HashSet};

    fn page(paths: &[&str], max: usize, depth: usize) -> Vec<String> {
        sample_level_by_level(paths, max, ".", depth)
            .items
            .iter()
            .map(|p| p.to_string())
            .collect()
    }

    #[test]
    fn shares_an_entrys_slots_across_its_own_entries() {
        // `drivers` holds most paths, all under `drivers/net` but one.
        let paths = [
            "drivers/net/a.c",
            "drivers/net/b.c",
            "drivers/net/c.c",
            "drivers/usb/d.c",
            "drivers/gpu/e.c",
            "fs/f.c",
        ];
        // The contract's page: drivers' two slots go to its first paths.
        assert_eq!(
            page(&paths, 3, 1),
            ["drivers/net/a.c", "drivers/net/b.c", "fs/f.c"]
        );
        // Two levels: drivers' two slots go to net and usb.
        assert_eq!(
            page(&paths, 3, 2),
            ["drivers/net/a.c", "drivers/usb/d.c", "fs/f.c"]
        );
        assert_eq!(
            page(&paths, 5, 2),
            [
                "drivers/net/a.c",
                "drivers/net/b.c",
                "drivers/usb/d.c",
                "drivers/gpu/e.c",
                "fs/f.c"
            ]
        );
    }

    #[test]
    fn reports_the_reach_of_every_level_down_to_the_deepest_entry() {
        let paths = ["a/x/1", "a/x/2", "a/y/3", "b/4", "c"];
        let sample = sample_level_by_level(&paths, 3, ".", 5);
        assert_eq!(sample.items, ["a/x/1", "b/4", "c"]);
        assert_eq!(
            sample.levels,
            [
                LevelReach { shown: 3, total: 3 },
                LevelReach { shown: 2, total: 3 },
                LevelReach { shown: 1, total: 3 },
            ]
        );
    }

    #[test]
    fn groups_paths_relative_to_the_search_root_at_every_level() {
        let paths = [
            "root/a/x/1",
            "root/a/x/2",
            "root/a/y/3",
            "/away/p/4",
            "/away/q/5",
        ];
        let sample = sample_level_by_level(&paths, 4, "root", 2);
        assert_eq!(
            sample.items,
            ["root/a/x/1", "root/a/y/3", "/away/p/4", "/away/q/5"]
        );
    }

    #[test]
    fn a_path_ending_where_others_continue_is_a_participant_of_its_own() {
        let paths = ["x/y/1", "x/y/2", "x", "x/z/3"];
        let sample = sample_level_by_level(&paths, 3, ".", 3);
        assert_eq!(sample.items, ["x/y/1", "x", "x/z/3"]);
    }

    #[test]
    fn a_huge_depth_stops_at_the_deepest_path() {
        let paths = ["a/b/c/d/e", "a/b/c/d/f", "a/g"];
        let sample = sample_level_by_level(&paths, 2, ".", usize::MAX);
        assert_eq!(sample.items, ["a/b/c/d/e", "a/g"]);
        assert_eq!(sample.levels.len(), 5);
    }

    #[test]
    fn handles_more_top_level_entries_than_an_argument_limit() {
        let paths: Vec<String> = (0..125_000)
            .map(|i| format!("dir-{i}/f/file.txt"))
            .collect();
        let sample = sample_level_by_level(&paths, 100, ".", 3);
        assert_eq!(sample.items.len(), 100);
        assert_eq!(
            sample.levels[0],
            LevelReach {
                shown: 100,
                total: 125_000
            }
        );
    }

    /// A tree of up to three levels below a few top-level entries, listed
    /// directory by directory as rg lists it, in any order of entries.
    fn tree_paths() -> impl Strategy<Value = Vec<String>> {
        proptest::collection::vec(proptest::collection::vec(0u8..3, 1..5), 1..60).prop_map(|raw| {
            let mut seen = HashSet::new();
            raw.into_iter()
                .map(|segments| {
                    let dirs: Vec<String> = segments[..segments.len() - 1]
                        .iter()
                        .map(|s| format!("d{s}"))
                        .collect();
                    let file = format!("f{}", segments[segments.len() - 1]);
                    let mut path = dirs.join("/");
                    if !path.is_empty() {
                        path.push('/');
                    }
                    path.push_str(&file);
                    path
                })
                .filter(|p| seen.insert(p.clone()))
                .collect()
        })
    }

    /// The prefix of the first `level` segments of `path`, or `None` when
    /// the path has fewer segments (it ends above that level).
    fn entry_at(path: &str, level: usize) -> Option<String> {
        let segments: Vec<&str> = path.split('/').collect();
        (segments.len() >= level).then(|| segments[..level].join("/"))
    }

    proptest! {
        #[test]
        fn the_page_has_min_cap_total_distinct_paths_of_the_result(
            paths in tree_paths(), cap in 1usize..40, depth in 1usize..5,
        ) {
            let sample = sample_level_by_level(&paths, cap, ".", depth);
            let distinct: HashSet<&str> = sample.items.iter().copied().collect();
            prop_assert_eq!(sample.items.len(), cap.min(paths.len()));
            prop_assert_eq!(distinct.len(), sample.items.len());
            let all: HashSet<&str> = paths.iter().map(String::as_str).collect();
            prop_assert!(distinct.is_subset(&all));
        }

        #[test]
        fn at_depth_one_the_page_is_the_contracts(
            paths in tree_paths(), cap in 1usize..40,
        ) {
            let contract = sample_across_top_level(&paths, cap, ".");
            let levels = sample_level_by_level(&paths, cap, ".", 1);
            prop_assert_eq!(&levels.items, &contract.items);
            prop_assert_eq!(levels.levels[0], LevelReach { shown: contract.shown, total: contract.total });
        }

        #[test]
        fn sibling_shares_with_paths_left_differ_by_at_most_one_at_every_level(
            paths in tree_paths(), cap in 1usize..40, depth in 1usize..5,
        ) {
            let sample = sample_level_by_level(&paths, cap, ".", depth);
            for level in 1..=depth {
                // Per parent: each child entry's paths in the result and
                // on the page.
                let mut siblings: BTreeMap<String, BTreeMap<String, (usize, usize)>> =
                    BTreeMap::new();
                for path in &paths {
                    if let Some(entry) = entry_at(path, level) {
                        let parent = entry_at(path, level - 1).unwrap_or_default();
                        siblings.entry(parent).or_default().entry(entry).or_default().0 += 1;
                    }
                }
                for path in &sample.items {
                    if let Some(entry) = entry_at(path, level) {
                        let parent = entry_at(path, level - 1).unwrap_or_default();
                        siblings.entry(parent).or_default().entry(entry).or_default().1 += 1;
                    }
                }
                for children in siblings.values() {
                    let left: Vec<usize> = children
                        .values()
                        .filter(|(all, shown)| shown < all)
                        .map(|&(_, shown)| shown)
                        .collect();
                    if let (Some(min), Some(max)) = (left.iter().min(), left.iter().max()) {
                        prop_assert!(max - min <= 1, "level {level}: {children:?}");
                        // And no exhausted sibling got more than those
                        // that still have paths left.
                        for &(all, shown) in children.values() {
                            if shown == all {
                                prop_assert!(shown <= *min + 1, "level {level}: {children:?}");
                            }
                        }
                    }
                }
            }
        }
    }
}

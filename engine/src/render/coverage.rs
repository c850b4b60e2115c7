//! How far an over-cap glob page spans the tree its complete result
//! spans (a measure for people, never shown to the model): for each depth
//! 1 to [`COVERAGE_DEPTHS`], the share of the directories at that depth
//! holding matches that have at least one path on the page, and the
//! largest share of the page under one directory of that depth.
//!
//! A directory at depth `d` is the first `d` segments of a path relative
//! to the search root (as the contract's sampling groups paths, §5.7)
//! when the path has more segments than that; a file directly under the
//! root is in no directory.

use serde::Serialize;

use crate::render::glob_page;
use crate::render::sample::relative_to_search_root;
use crate::request::config::Config;
use crate::value::GlobValue;

/// The deepest level measured.
pub const COVERAGE_DEPTHS: usize = 4;

/// The coverage of one depth.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DepthCoverage {
    /// 1 for the search root's directories.
    pub depth: usize,
    /// Directories at this depth holding paths of the complete result.
    pub directories: usize,
    /// Those with at least one path on the page.
    pub reached: usize,
    /// `reached / directories`; `None` when there are none.
    pub share: Option<f64>,
    /// The largest share of the page under one directory at this depth
    /// (0 when the page has no path that deep).
    pub largest_share: f64,
}

/// The coverage of an over-cap glob page.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GlobCoverage {
    /// Paths on the page.
    pub shown: usize,
    /// Paths in the complete result.
    pub total: usize,
    /// Depths 1 to [`COVERAGE_DEPTHS`].
    pub depths: Vec<DepthCoverage>,
    /// The largest share of the page taken by one subtree: a top-level
    /// directory (depth 1's `largest_share`).
    pub largest_subtree_share: f64,
    /// That directory, relative to the search root (`None` when no path of
    /// the page is in a directory).
    pub largest_subtree: Option<String>,
}

/// The directories holding `path`, shallowest first, at most
/// [`COVERAGE_DEPTHS`] of them: prefixes of its root-relative form.
fn directories<'a>(path: &'a str, root: &str) -> impl Iterator<Item = &'a str> {
    let relative = relative_to_search_root(path, root).trim_start_matches('/');
    relative
        .match_indices('/')
        .map(move |(at, _)| &relative[..at])
        .filter(|prefix| !prefix.ends_with('/'))
        .take(COVERAGE_DEPTHS)
}

/// The coverage of `page` (paths of `all`) over `all`, both relative to
/// `root` as the canonical value's paths are.
pub fn measure_glob_coverage<S: AsRef<str>>(all: &[S], page: &[&str], root: &str) -> GlobCoverage {
    let mut holding: Vec<foldhash::HashSet<&str>> =
        vec![foldhash::HashSet::default(); COVERAGE_DEPTHS];
    for path in all {
        for (depth, directory) in directories(path.as_ref(), root).enumerate() {
            holding[depth].insert(directory);
        }
    }
    let mut on_page: Vec<foldhash::HashMap<&str, usize>> =
        vec![foldhash::HashMap::default(); COVERAGE_DEPTHS];
    for path in page {
        for (depth, directory) in directories(path, root).enumerate() {
            *on_page[depth].entry(directory).or_default() += 1;
        }
    }
    let share = |part: usize, whole: usize| (whole > 0).then(|| part as f64 / whole as f64);
    let depths: Vec<DepthCoverage> = (0..COVERAGE_DEPTHS)
        .map(|at| {
            let largest = on_page[at].values().copied().max().unwrap_or(0);
            DepthCoverage {
                depth: at + 1,
                directories: holding[at].len(),
                reached: on_page[at].len(),
                share: share(on_page[at].len(), holding[at].len()),
                largest_share: share(largest, page.len()).unwrap_or(0.0),
            }
        })
        .collect();
    // The largest top-level subtree; ties go to the name that sorts first
    // so the measure is deterministic.
    let largest_subtree = on_page[0]
        .iter()
        .max_by(|a, b| a.1.cmp(b.1).then_with(|| b.0.cmp(a.0)))
        .map(|(name, _)| (*name).to_owned());
    GlobCoverage {
        shown: page.len(),
        total: all.len(),
        largest_subtree_share: depths[0].largest_share,
        largest_subtree,
        depths,
    }
}

/// The coverage of the page `config` gives `value`; `None` when the
/// result fits (the page is the whole result).
pub fn glob_page_coverage(value: &GlobValue, config: &Config) -> Option<GlobCoverage> {
    let page = glob_page(value, config);
    page.basis.as_ref()?;
    Some(measure_glob_coverage(
        &value.paths,
        &page.paths,
        &value.root,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_the_directories_of_each_depth_that_the_page_reaches() {
        let all = [
            "drivers/net/a.c",
            "drivers/net/b.c",
            "drivers/usb/c.c",
            "fs/ext4/d.c",
            "top.c",
        ];
        let page = ["drivers/net/a.c", "drivers/net/b.c", "top.c"];
        let coverage = measure_glob_coverage(&all, &page, ".");
        assert_eq!((coverage.shown, coverage.total), (3, 5));
        let d1 = &coverage.depths[0];
        assert_eq!((d1.directories, d1.reached, d1.share), (2, 1, Some(0.5)));
        assert!((d1.largest_share - 2.0 / 3.0).abs() < 1e-12);
        let d2 = &coverage.depths[1];
        assert_eq!(
            (d2.directories, d2.reached, d2.share),
            (3, 1, Some(1.0 / 3.0))
        );
        let d3 = &coverage.depths[2];
        assert_eq!((d3.directories, d3.reached, d3.share), (0, 0, None));
        assert_eq!(d3.largest_share, 0.0);
        assert_eq!(coverage.largest_subtree.as_deref(), Some("drivers"));
        assert_eq!(coverage.largest_subtree_share, d1.largest_share);
    }

    #[test]
    fn measures_relative_to_the_search_root_and_ties_go_to_the_first_name() {
        let all = ["src/b/1", "src/a/2", "src/c/d/e/f/g"];
        let page = ["src/b/1", "src/a/2"];
        let coverage = measure_glob_coverage(&all, &page, "src");
        assert_eq!(coverage.depths[0].directories, 3);
        assert_eq!(coverage.depths[3].directories, 1);
        assert_eq!(coverage.largest_subtree.as_deref(), Some("a"));
        assert_eq!(coverage.largest_subtree_share, 0.5);
    }

    #[test]
    fn a_page_within_the_cap_has_no_coverage_measure() {
        let value = GlobValue {
            root: ".".to_owned(),
            paths: vec!["a/1".to_owned(), "b/2".to_owned(), "b/3".to_owned()],
        };
        assert_eq!(
            glob_page_coverage(&value, &Config::with_sampling(true)),
            None
        );
        let capped = Config {
            glob_max_results: crate::request::config::ConfigNumber::new(2),
            ..Config::with_sampling(true)
        };
        let coverage = glob_page_coverage(&value, &capped).unwrap();
        assert_eq!(coverage.depths[0].share, Some(1.0));
        assert_eq!(coverage.largest_subtree_share, 0.5);
    }
}

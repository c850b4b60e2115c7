//! The presentation meta (UI search card) of a direct call, derived from
//! the same inline page as the model text, and bounded to
//! `searchMetaMaxBytes` of compact JSON (CONTRACT §4.6).

use serde::{Deserialize, Serialize};

use crate::render::{GlobPage, glob_page, group_by_file, preview_matches};
use crate::request::config::Config;
use crate::value::{GlobValue, GrepValue};

/// One matched line on the card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CardLine {
    /// The 1-based line number.
    pub line_number: i64,
    /// The previewed line.
    pub line: String,
}

/// One file on the card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CardFile {
    /// The file's display path.
    pub path: String,
    /// Its matched lines, in order.
    pub matches: Vec<CardLine>,
}

/// `presentationMeta`: serialises with keys `shape`, `paths`/`files`,
/// `truncated`, `total`, exactly as the card is measured.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "shape", rename_all = "lowercase")]
pub enum SearchMeta {
    /// A glob card.
    Paths {
        /// The paths shown.
        paths: Vec<String>,
        /// Whether paths were left out.
        truncated: bool,
        /// How many paths matched.
        total: u64,
    },
    /// A grep card.
    Matches {
        /// The files shown with their lines.
        files: Vec<CardFile>,
        /// Whether matches were left out.
        truncated: bool,
        /// How many matches were found.
        total: u64,
    },
}

/// Compact-JSON length of a serialisable value (ECMAScript `JSON.stringify`
/// and serde_json escape strings identically).
fn json_len<T: Serialize>(value: &T) -> usize {
    serde_json::to_vec(value)
        .map(|v| v.len())
        .unwrap_or(usize::MAX)
}

/// Drops trailing elements until the card fits `cap` bytes (keeping at
/// least one); forces `truncated` when the full card did not fit.
fn cap_elements<T: Serialize + Clone>(
    mut elements: Vec<T>,
    truncated: bool,
    cap: usize,
    build: impl Fn(Vec<T>, bool) -> SearchMeta,
) -> SearchMeta {
    let sizes: Vec<usize> = elements.iter().map(json_len).collect();
    let size_of = |k: usize, truncated: bool| -> usize {
        let base = json_len(&build(Vec::new(), truncated));
        base + sizes[..k].iter().sum::<usize>() + k.saturating_sub(1)
    };
    if size_of(elements.len(), truncated) <= cap {
        return build(elements, truncated);
    }
    let mut keep = elements.len();
    while keep > 1 && size_of(keep, true) > cap {
        keep -= 1;
    }
    elements.truncate(keep);
    build(elements, true)
}

fn meta_cap(config: &Config) -> usize {
    config.search_meta_max_bytes.as_usize_saturating()
}

/// The glob card: the inline page, `truncated` when over the cap.
pub fn glob_search_meta(value: &GlobValue, config: &Config) -> SearchMeta {
    glob_meta_from_page(&glob_page(value, config), value.paths.len(), config)
}

/// The glob card of an already computed page of `total` paths.
pub(crate) fn glob_meta_from_page(
    page: &GlobPage<'_>,
    total: usize,
    config: &Config,
) -> SearchMeta {
    let truncated = page.basis.is_some();
    let paths: Vec<String> = page.paths.iter().map(|p| (*p).to_owned()).collect();
    let total = total as u64;
    cap_elements(paths, truncated, meta_cap(config), |paths, truncated| {
        SearchMeta::Paths {
            paths,
            truncated,
            total,
        }
    })
}

/// The grep card: kept, previewed matches grouped by file.
pub fn grep_search_meta(value: &GrepValue, config: &Config) -> SearchMeta {
    let kept = preview_matches(&value.matches, config.grep_cap(), config.line_budget());
    let files: Vec<CardFile> = group_by_file(&kept)
        .into_iter()
        .map(|(path, rows)| CardFile {
            path: path.to_owned(),
            matches: rows
                .into_iter()
                .map(|i| CardLine {
                    line_number: kept[i].line_number,
                    line: kept[i].line.clone().into_owned(),
                })
                .collect(),
        })
        .collect();
    let truncated = value.matches.len() > config.grep_cap();
    let total = value.matches.len() as u64;
    cap_elements(files, truncated, meta_cap(config), |files, truncated| {
        SearchMeta::Matches {
            files,
            truncated,
            total,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::GrepMatch;

    fn m(path: &str, n: i64, line: &str) -> GrepMatch {
        GrepMatch {
            path: path.into(),
            line_number: n,
            line: line.into(),
        }
    }

    fn config(grep_cap: u64, meta_cap: u64) -> Config {
        Config {
            grep_max_matches: grep_cap.into(),
            glob_max_results: grep_cap.into(),
            search_meta_max_bytes: meta_cap.into(),
            ..Config::with_sampling(true)
        }
    }

    fn files(meta: &SearchMeta) -> &[CardFile] {
        match meta {
            SearchMeta::Matches { files, .. } => files,
            SearchMeta::Paths { .. } => panic!("not a matches card"),
        }
    }

    /// CONTRACT §10.16 P1, P3
    #[test]
    fn groups_matches_by_first_seen_file_within_the_cap() {
        let value = GrepValue {
            matches: vec![m("b.ts", 2, "x"), m("a.ts", 1, "y"), m("b.ts", 5, "z")],
        };
        let meta = grep_search_meta(&value, &config(10, 65536));
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"shape":"matches","files":[{"path":"b.ts","matches":[{"lineNumber":2,"line":"x"},{"lineNumber":5,"line":"z"}]},{"path":"a.ts","matches":[{"lineNumber":1,"line":"y"}]}],"truncated":false,"total":3}"#
        );
    }

    /// CONTRACT §10.16 P2
    #[test]
    fn empty_results_give_empty_cards() {
        let meta = grep_search_meta(&GrepValue { matches: vec![] }, &config(10, 65536));
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"shape":"matches","files":[],"truncated":false,"total":0}"#
        );
        let meta = glob_search_meta(
            &GlobValue {
                root: ".".into(),
                paths: vec![],
            },
            &config(10, 65536),
        );
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"shape":"paths","paths":[],"truncated":false,"total":0}"#
        );
    }

    /// CONTRACT §10.16 P4, P5
    #[test]
    fn reports_pre_cap_total_truncation_and_previewed_lines() {
        let value = GrepValue {
            matches: vec![
                m("a.ts", 1, "one"),
                m("a.ts", 2, "two"),
                m("b.ts", 3, "three"),
            ],
        };
        let meta = grep_search_meta(&value, &config(2, 65536));
        assert_eq!(
            serde_json::to_string(&meta).unwrap(),
            r#"{"shape":"matches","files":[{"path":"a.ts","matches":[{"lineNumber":1,"line":"one"},{"lineNumber":2,"line":"two"}]}],"truncated":true,"total":3}"#
        );
        let value = GrepValue {
            matches: vec![m("a.ts", 1, "aéaéaéaé")],
        };
        let c = Config {
            grep_max_line_bytes: 7u64.into(),
            ..config(10, 65536)
        };
        assert_eq!(
            files(&grep_search_meta(&value, &c))[0].matches[0].line,
            "aéaéa (line truncated)"
        );
    }

    /// CONTRACT §10.16 P6
    #[test]
    fn drops_trailing_file_groups_until_the_card_fits() {
        let line = "x".repeat(60);
        let value = GrepValue {
            matches: vec![
                m("a.ts", 1, &line),
                m("b.ts", 1, &line),
                m("c.ts", 1, &line),
            ],
        };
        let meta = grep_search_meta(&value, &config(10, 260));
        let size = serde_json::to_string(&meta).unwrap().len();
        assert!(files(&meta).len() < 3);
        assert!(size <= 260, "{size}");
        assert!(matches!(
            meta,
            SearchMeta::Matches {
                truncated: true,
                total: 3,
                ..
            }
        ));
    }

    /// CONTRACT §10.16 P7
    #[test]
    fn keeps_a_single_oversized_group() {
        let value = GrepValue {
            matches: vec![m("a.ts", 1, &"y".repeat(500))],
        };
        let meta = grep_search_meta(&value, &config(10, 50));
        assert_eq!(files(&meta).len(), 1);
        assert!(matches!(
            meta,
            SearchMeta::Matches {
                truncated: true,
                total: 1,
                ..
            }
        ));
    }

    /// CONTRACT §10.16 P8, P9, P10
    #[test]
    fn path_cards_report_total_truncation_and_fit_the_cap() {
        let value = GlobValue {
            root: ".".into(),
            paths: vec!["a.ts".into(), "b.ts".into()],
        };
        assert_eq!(
            serde_json::to_string(&glob_search_meta(&value, &config(10, 65536))).unwrap(),
            r#"{"shape":"paths","paths":["a.ts","b.ts"],"truncated":false,"total":2}"#
        );
        let value = GlobValue {
            root: ".".into(),
            paths: vec!["a.ts".into(), "b.ts".into(), "c.ts".into()],
        };
        let c = Config {
            sample_over_cap_glob_results: false,
            ..config(2, 65536)
        };
        assert_eq!(
            serde_json::to_string(&glob_search_meta(&value, &c)).unwrap(),
            r#"{"shape":"paths","paths":["a.ts","b.ts"],"truncated":true,"total":3}"#
        );
        let long: Vec<String> = (0..3).map(|i| format!("{i}{}", "p".repeat(102))).collect();
        let value = GlobValue {
            root: ".".into(),
            paths: long,
        };
        let meta = glob_search_meta(&value, &config(10, 180));
        let size = serde_json::to_string(&meta).unwrap().len();
        assert!(size <= 180, "{size}");
        match meta {
            SearchMeta::Paths {
                paths,
                truncated,
                total,
            } => {
                assert!(paths.len() < 3);
                assert!(truncated);
                assert_eq!(total, 3);
            }
            SearchMeta::Matches { .. } => panic!("not a paths card"),
        }
    }
}

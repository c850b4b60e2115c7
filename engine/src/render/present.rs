//! UI presenters (CONTRACT §4.5, §4.7): the pending call card and the
//! completed result card, with defensive narrowing of replayed meta.

use serde::Serialize;
use serde_json::Value;

use crate::render::meta::{CardFile, SearchMeta};
use crate::request::args::{glob_args_from_schema, grep_args_from_schema};

/// The generic call card.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CallCard {
    /// The card kind.
    pub card: &'static str,
    /// The card's title.
    pub title: String,
    /// The call's kind.
    pub kind: &'static str,
    /// The raw input shown on the card.
    pub raw_input: String,
}

/// The search result card: `{card: 'search', ...meta}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchView {
    /// The card kind.
    pub card: &'static str,
    #[serde(flatten)]
    /// The card's content.
    pub meta: SearchMeta,
}

fn call_card(title: String, pattern: String) -> CallCard {
    CallCard {
        card: "generic",
        title,
        kind: "search",
        raw_input: pattern,
    }
}

/// `presentGlobCall`; `None` when the logged arguments are invalid.
pub fn present_glob_call(args: &Value) -> Option<CallCard> {
    let args = glob_args_from_schema(args).ok()?;
    let mut title = format!("Glob {}", args.pattern);
    if let Some(path) = &args.path {
        title.push_str(&format!(" in {path}"));
    }
    Some(call_card(title, args.pattern))
}

/// `presentGrepCall`; `None` when the logged arguments are invalid.
pub fn present_grep_call(args: &Value) -> Option<CallCard> {
    let args = grep_args_from_schema(args).ok()?;
    let mut title = format!("Grep {}", args.pattern);
    if let Some(path) = &args.path {
        title.push_str(&format!(" in {path}"));
    }
    if let Some(include) = &args.include {
        title.push_str(&format!(" ({include})"));
    }
    Some(call_card(title, args.pattern))
}

fn is_record(v: &Value) -> bool {
    v.is_object()
}

fn valid_files(files: &Value) -> bool {
    let Some(files) = files.as_array() else {
        return false;
    };
    files.iter().all(|file| {
        is_record(file)
            && file.get("path").is_some_and(Value::is_string)
            && file
                .get("matches")
                .and_then(Value::as_array)
                .is_some_and(|matches| {
                    matches.iter().all(|m| {
                        is_record(m)
                            && m.get("lineNumber").is_some_and(Value::is_number)
                            && m.get("line").is_some_and(Value::is_string)
                    })
                })
    })
}

/// `searchViewFromMeta`: `None` unless `meta` is a well-formed card.
pub(crate) fn search_view_from_meta(meta: Option<&Value>) -> Option<SearchView> {
    let meta = meta?;
    if !is_record(meta)
        || !meta.get("truncated").is_some_and(Value::is_boolean)
        || !meta.get("total").is_some_and(Value::is_number)
    {
        return None;
    }
    let well_formed = match meta.get("shape").and_then(Value::as_str) {
        Some("matches") => meta.get("files").is_some_and(valid_files),
        Some("paths") => meta
            .get("paths")
            .and_then(Value::as_array)
            .is_some_and(|p| p.iter().all(Value::is_string)),
        _ => false,
    };
    if !well_formed {
        return None;
    }
    let meta = normalised(meta)?;
    Some(SearchView {
        card: "search",
        meta,
    })
}

/// Reads a checked card into its typed form (extra keys dropped; a
/// fractional line number or total is kept as its integer part).
fn normalised(meta: &Value) -> Option<SearchMeta> {
    let truncated = meta.get("truncated")?.as_bool()?;
    let total = meta.get("total")?.as_f64()? as u64;
    match meta.get("shape")?.as_str()? {
        "paths" => Some(SearchMeta::Paths {
            paths: meta
                .get("paths")?
                .as_array()?
                .iter()
                .filter_map(|p| p.as_str().map(str::to_owned))
                .collect(),
            truncated,
            total,
        }),
        _ => {
            let files = meta
                .get("files")?
                .as_array()?
                .iter()
                .map(|f| {
                    Some(CardFile {
                        path: f.get("path")?.as_str()?.to_owned(),
                        matches: f
                            .get("matches")?
                            .as_array()?
                            .iter()
                            .map(|m| {
                                Some(crate::render::meta::CardLine {
                                    line_number: m.get("lineNumber")?.as_f64()? as i64,
                                    line: m.get("line")?.as_str()?.to_owned(),
                                })
                            })
                            .collect::<Option<Vec<_>>>()?,
                    })
                })
                .collect::<Option<Vec<_>>>()?;
            Some(SearchMeta::Matches {
                files,
                truncated,
                total,
            })
        }
    }
}

/// `presentGlobResult`: the card for a successful glob with a paths meta.
pub fn present_glob_result(is_error: bool, meta: Option<&Value>) -> Option<SearchView> {
    present_result(is_error, meta, "paths")
}

/// `presentGrepResult`: the card for a successful grep with a matches meta.
pub fn present_grep_result(is_error: bool, meta: Option<&Value>) -> Option<SearchView> {
    present_result(is_error, meta, "matches")
}

fn present_result(is_error: bool, meta: Option<&Value>, shape: &str) -> Option<SearchView> {
    if is_error {
        return None;
    }
    let view = search_view_from_meta(meta)?;
    let matches_shape = matches!(
        (&view.meta, shape),
        (SearchMeta::Paths { .. }, "paths") | (SearchMeta::Matches { .. }, "matches")
    );
    matches_shape.then_some(view)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// CONTRACT §10.12 #95
    #[test]
    fn glob_titles_carry_the_pattern_and_optional_root() {
        let card = present_glob_call(&json!({"pattern": "**/*.ts"})).unwrap();
        assert_eq!(
            (card.card, card.title.as_str(), card.kind),
            ("generic", "Glob **/*.ts", "search")
        );
        assert_eq!(card.raw_input, "**/*.ts");
        let card = present_glob_call(&json!({"pattern": "*.md", "path": "docs"})).unwrap();
        assert_eq!(card.title, "Glob *.md in docs");
        assert!(present_glob_call(&json!({"pattern": 3})).is_none());
        // Only the schema is re-checked: a blank pattern still gets a card.
        assert_eq!(
            present_glob_call(&json!({"pattern": " "})).unwrap().title,
            "Glob  "
        );
    }

    /// CONTRACT §10.12 #96
    #[test]
    fn grep_titles_carry_the_pattern_target_and_include() {
        assert_eq!(
            present_grep_call(&json!({"pattern": "todo"}))
                .unwrap()
                .title,
            "Grep todo"
        );
        let card = present_grep_call(&json!({"pattern": "todo", "path": "src", "include": "*.ts"}))
            .unwrap();
        assert_eq!(card.title, "Grep todo in src (*.ts)");
    }

    /// CONTRACT §10.12 #100
    #[test]
    fn present_result_is_none_for_errors_and_the_other_shape() {
        let paths = json!({"shape": "paths", "paths": [], "truncated": false, "total": 0});
        let matches = json!({"shape": "matches", "files": [], "truncated": false, "total": 0});
        assert!(present_glob_result(true, Some(&paths)).is_none());
        assert!(present_grep_result(true, Some(&matches)).is_none());
        assert!(present_grep_result(false, Some(&paths)).is_none());
        assert!(present_glob_result(false, Some(&matches)).is_none());
    }

    /// CONTRACT §10.12 #101
    #[test]
    fn present_result_falls_back_on_malformed_replayed_meta() {
        let bad = json!({"shape": "matches", "files": "nope", "truncated": false, "total": 0});
        assert!(present_grep_result(false, Some(&bad)).is_none());
        assert!(present_grep_result(false, Some(&json!(42))).is_none());
    }

    /// CONTRACT §10.16 P11, P12, P13
    #[test]
    fn narrows_well_formed_payloads_into_views() {
        let meta = json!({"shape": "matches", "files": [{"path": "a.ts", "matches": [{"lineNumber": 1, "line": "x"}]}], "truncated": true, "total": 3});
        let view = search_view_from_meta(Some(&meta)).unwrap();
        let mut expected = meta.clone();
        expected
            .as_object_mut()
            .unwrap()
            .insert("card".into(), json!("search"));
        let mut got = serde_json::to_value(&view).unwrap();
        got.as_object_mut().unwrap().sort_keys();
        expected.as_object_mut().unwrap().sort_keys();
        assert_eq!(got, expected);
        let meta = json!({"shape": "paths", "paths": ["a"], "truncated": false, "total": 1});
        assert!(matches!(
            search_view_from_meta(Some(&meta)).unwrap().meta,
            SearchMeta::Paths { .. }
        ));
        for empty in [
            json!({"shape": "paths", "paths": [], "truncated": false, "total": 0}),
            json!({"shape": "matches", "files": [], "truncated": false, "total": 0}),
        ] {
            assert!(search_view_from_meta(Some(&empty)).is_some());
        }
    }

    /// CONTRACT §10.16 P14, P15, P16
    #[test]
    fn rejects_non_object_mistyped_and_unknown_shapes() {
        assert!(search_view_from_meta(None).is_none());
        for bad in [
            json!(null),
            json!("nope"),
            json!([]),
            json!({"shape": "paths", "paths": []}),
            json!({"shape": "paths", "paths": [], "truncated": "no", "total": 0}),
            json!({"shape": "paths", "paths": [], "truncated": false}),
            json!({"shape": "paths", "paths": [], "truncated": false, "total": "0"}),
            json!({"shape": "other", "truncated": false, "total": 0}),
            json!({"truncated": false, "total": 0}),
        ] {
            assert!(search_view_from_meta(Some(&bad)).is_none(), "{bad}");
        }
    }

    /// CONTRACT §10.16 P17, P18
    #[test]
    fn rejects_malformed_files_and_paths() {
        for files in [
            json!("x"),
            json!([null]),
            json!(["x"]),
            json!([[]]),
            json!([{"path": 1, "matches": []}]),
            json!([{"path": "a", "matches": "x"}]),
            json!([{"path": "a", "matches": [null]}]),
            json!([{"path": "a", "matches": [{"lineNumber": "1", "line": "x"}]}]),
            json!([{"path": "a", "matches": [{"lineNumber": 1, "line": 2}]}]),
        ] {
            let meta = json!({"shape": "matches", "files": files, "truncated": false, "total": 0});
            assert!(search_view_from_meta(Some(&meta)).is_none(), "{files}");
        }
        for paths in [json!("x"), json!([1])] {
            let meta = json!({"shape": "paths", "paths": paths, "truncated": false, "total": 0});
            assert!(search_view_from_meta(Some(&meta)).is_none(), "{paths}");
        }
    }
}

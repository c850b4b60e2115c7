//! The KV-prefix comparison on hand-made prefixes, with the embedded
//! tokenizer: identical prefixes, a difference in a section, a difference
//! in a tool, one side a strict prefix of the other.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::OnceLock;

use fs_search_tokens::{
    EncodedPrefix, FirstDifference, Part, PartKind, PrefixComparison, Tokenizer, compare_prefixes,
};
use serde_json::json;

fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| Tokenizer::embedded().unwrap())
}

const GLOB_SECTION: &str =
    "Use the glob tool — not shell find — to discover files by path pattern.";
const GREP_SECTION: &str = "Use the grep tool — not shell grep or rg — to search file contents.";

fn glob_tool(description: &str) -> Part {
    Part::tool_definition(
        "glob",
        description,
        &json!({"type": "object", "properties": {"pattern": {"type": "string"}}, "required": ["pattern"]}),
    )
}

fn prefix(parts: &[Part]) -> EncodedPrefix {
    tokenizer().encode_prefix(parts)
}

fn compare(a: &[Part], b: &[Part]) -> (PrefixComparison, EncodedPrefix, EncodedPrefix) {
    let (a, b) = (prefix(a), prefix(b));
    (compare_prefixes(&a, &b), a, b)
}

/// The number of leading token ids two texts share, tokenized alone.
fn common_ids(a: &str, b: &str) -> usize {
    let t = tokenizer();
    t.encode_ids(a)
        .iter()
        .zip(t.encode_ids(b).iter())
        .take_while(|(x, y)| x == y)
        .count()
}

#[test]
fn identical_prefixes() {
    let parts = [
        Part::section("tool:glob", GLOB_SECTION),
        Part::section("tool:grep", GREP_SECTION),
        glob_tool("Find files."),
    ];
    let (cmp, a, _) = compare(&parts, &parts);
    let total: usize = parts.iter().map(|p| tokenizer().count(&p.text)).sum();
    assert_eq!(a.tokens(), total);
    assert_eq!(
        cmp,
        PrefixComparison {
            identical: true,
            common_tokens: total,
            tokens_a: total,
            tokens_b: total,
            first_difference: None,
        }
    );
    assert_eq!(
        serde_json::to_string(&cmp).unwrap(),
        format!(
            r#"{{"identical":true,"commonTokens":{total},"tokensA":{total},"tokensB":{total},"firstDifference":null}}"#
        )
    );
    assert_eq!(cmp.excerpt(&a, &a, 20), None);
}

#[test]
fn part_names_do_not_count_only_tokens_do() {
    let (cmp, _, _) = compare(
        &[Part::section("one", GLOB_SECTION)],
        &[Part::section("renamed", GLOB_SECTION)],
    );
    assert!(cmp.identical);
}

#[test]
fn difference_in_a_section() {
    let changed = GREP_SECTION.replace("search file contents", "find text in files");
    let a = [
        Part::section("tool:glob", GLOB_SECTION),
        Part::section("tool:grep", GREP_SECTION),
        glob_tool("Find files."),
    ];
    let b = [
        Part::section("tool:glob", GLOB_SECTION),
        Part::section("tool:grep", changed.as_str()),
        glob_tool("Find files."),
    ];
    let (cmp, pa, pb) = compare(&a, &b);
    let glob_tokens = tokenizer().count(GLOB_SECTION);
    let index = glob_tokens + common_ids(GREP_SECTION, &changed);
    assert!(index > glob_tokens);
    assert_eq!(
        cmp.first_difference,
        Some(FirstDifference {
            part: PartKind::Section,
            name: "tool:grep".into(),
            token_index: index,
        })
    );
    assert!(!cmp.identical);
    assert_eq!(cmp.common_tokens, index);
    assert_eq!(cmp.tokens_a, pa.tokens());
    assert_eq!(cmp.tokens_b, pb.tokens());
    assert_eq!(
        serde_json::to_string(&cmp).unwrap(),
        format!(
            r#"{{"identical":false,"commonTokens":{index},"tokensA":{},"tokensB":{},"firstDifference":{{"part":"section","name":"tool:grep","tokenIndex":{index}}}}}"#,
            pa.tokens(),
            pb.tokens()
        )
    );

    let ex = cmp.excerpt(&pa, &pb, 12).unwrap();
    assert_eq!(ex.a.part, Some((PartKind::Section, "tool:grep".into())));
    assert_eq!(ex.b.part, Some((PartKind::Section, "tool:grep".into())));
    assert_eq!(ex.a.before, "…p or rg — to");
    assert_eq!(ex.a.after, " search file…");
    assert_eq!(ex.b.before, "…p or rg — to");
    assert_eq!(ex.b.after, " find text i…");
}

#[test]
fn difference_in_a_tool() {
    let sections = [
        Part::section("tool:glob", GLOB_SECTION),
        Part::section("tool:grep", GREP_SECTION),
    ];
    let a: Vec<Part> = sections
        .iter()
        .cloned()
        .chain([glob_tool("Up to 100 paths come back.")])
        .collect();
    let b: Vec<Part> = sections
        .iter()
        .cloned()
        .chain([glob_tool("Up to 250 paths come back.")])
        .collect();
    let (cmp, pa, pb) = compare(&a, &b);
    let section_tokens = tokenizer().count(GLOB_SECTION) + tokenizer().count(GREP_SECTION);
    let first = cmp.first_difference.clone().unwrap();
    assert_eq!(first.part, PartKind::Tool);
    assert_eq!(first.name, "glob");
    assert_eq!(
        first.token_index,
        section_tokens + common_ids(&a[2].text, &b[2].text)
    );
    assert_eq!(cmp.common_tokens, first.token_index);
    assert_eq!(cmp.tokens_a, cmp.tokens_b);

    let ex = cmp.excerpt(&pa, &pb, 10).unwrap();
    assert_eq!(ex.a.part, Some((PartKind::Tool, "glob".into())));
    assert!(ex.a.after.starts_with("100"), "{:?}", ex.a);
    assert!(ex.b.after.starts_with("250"), "{:?}", ex.b);
    assert_eq!(ex.a.before, ex.b.before);
    assert!(ex.a.before.ends_with("Up to "), "{:?}", ex.a);
}

#[test]
fn one_side_a_strict_prefix_of_the_other() {
    let short = [
        Part::section("tool:glob", GLOB_SECTION),
        Part::section("tool:grep", GREP_SECTION),
    ];
    let long = [
        Part::section("tool:glob", GLOB_SECTION),
        Part::section("tool:grep", GREP_SECTION),
        glob_tool("Find files."),
    ];
    let short_tokens = tokenizer().count(GLOB_SECTION) + tokenizer().count(GREP_SECTION);
    let long_tokens = short_tokens + tokenizer().count(&long[2].text);

    // A ended: the difference is in B's part.
    let (cmp, pa, pb) = compare(&short, &long);
    assert_eq!(
        cmp,
        PrefixComparison {
            identical: false,
            common_tokens: short_tokens,
            tokens_a: short_tokens,
            tokens_b: long_tokens,
            first_difference: Some(FirstDifference {
                part: PartKind::Tool,
                name: "glob".into(),
                token_index: short_tokens,
            }),
        }
    );
    let ex = cmp.excerpt(&pa, &pb, 8).unwrap();
    assert_eq!(ex.a.part, None);
    assert_eq!(ex.a.before, "…ontents.");
    assert_eq!(ex.a.after, "");
    assert_eq!(ex.b.part, Some((PartKind::Tool, "glob".into())));
    assert_eq!(ex.b.before, "");
    assert_eq!(ex.b.after, "{\"name\":…");

    // B ended: the difference is in A's part.
    let (cmp, _, _) = compare(&long, &short);
    assert_eq!(cmp.common_tokens, short_tokens);
    assert_eq!((cmp.tokens_a, cmp.tokens_b), (long_tokens, short_tokens));
    assert_eq!(
        cmp.first_difference
            .map(|d| (d.part, d.name, d.token_index)),
        Some((PartKind::Tool, "glob".into(), short_tokens))
    );

    // A prefix that ends inside a part: only the tokens count.
    let cut = GREP_SECTION.trim_end_matches('.');
    let (cmp, _, _) = compare(
        &[Part::section("s", cut)],
        &[Part::section("s", GREP_SECTION)],
    );
    assert_eq!(cmp.tokens_a, tokenizer().count(cut));
    assert_eq!(cmp.common_tokens, common_ids(cut, GREP_SECTION));
}

#[test]
fn empty_prefixes() {
    let (cmp, _, _) = compare(&[], &[]);
    assert!(cmp.identical);
    let (cmp, _, _) = compare(&[], &[Part::section("s", "x")]);
    assert_eq!(
        cmp.first_difference,
        Some(FirstDifference {
            part: PartKind::Section,
            name: "s".into(),
            token_index: 0
        })
    );
}

//! The faster encoding route gives the ids of the `tokenizers` crate's own
//! `encode_fast` on random text, built from the fragments where the
//! DeepSeek V4 pre-tokenizer and added tokens have their edge cases.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

use std::sync::OnceLock;

use fs_search_tokens::Tokenizer;
use proptest::prelude::*;

fn tokenizer() -> &'static Tokenizer {
    static TOKENIZER: OnceLock<Tokenizer> = OnceLock::new();
    TOKENIZER.get_or_init(|| Tokenizer::embedded().unwrap())
}

const FRAGMENTS: &[&str] = &[
    "a",
    "word",
    "Word",
    "_x",
    "fn",
    "é",
    "e\u{301}",
    "ß",
    "Ω",
    "д",
    "ا",
    "ก",
    " ",
    "  ",
    "    ",
    "\t",
    "\n",
    "\r",
    "\r\n",
    "\u{a0}",
    "\u{3000}",
    "\u{2028}",
    "\u{b}",
    "\u{c}",
    "\u{0}",
    "0",
    "7",
    "12",
    "2026",
    "١٢",
    "½",
    "Ⅻ",
    ".",
    ",",
    "'",
    "\"",
    "(",
    ")",
    "{",
    "}",
    "-",
    "--",
    "/",
    "\\",
    ":",
    ";",
    "!",
    "?",
    "#",
    "@",
    "$",
    "%",
    "^",
    "&",
    "*",
    "+",
    "=",
    "|",
    "~",
    "`",
    "<",
    ">",
    "…",
    "—",
    "«",
    "€",
    "中",
    "文字",
    "の",
    "カタ",
    "ー",
    "한",
    "\u{ff01}",
    "😀",
    "👍🏽",
    "\u{200d}",
    "👨\u{200d}👩",
    "🇯🇵",
    "1\u{fe0f}\u{20e3}",
    "\u{fffd}",
    "\u{feff}",
    "<｜end▁of▁sentence｜>",
    "<｜begin▁of▁sentence｜>",
    "<think>",
    "</think>",
    "<｜User｜>",
    "<｜table｜>",
    "<｜/table>｜",
    "<｜tr｜>",
    "<dsml:",
    "</dsml:",
    "｜DSML｜",
    "<｜",
    "｜>",
    "｜",
    "▁",
];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::collection::vec(prop::sample::select(FRAGMENTS), 0..48)
            .prop_map(|parts| parts.concat()),
        1 => any::<String>(),
        1 => "[ \t\r\na-z0-9.,:;()\u{4e00}-\u{4e10}]{0,64}",
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn the_fast_route_gives_the_generic_ids(text in text()) {
        let t = tokenizer();
        prop_assert_eq!(t.encode_ids(&text), t.try_encode_ids_generic(&text).unwrap());
    }
}

#[test]
fn long_runs_give_the_generic_ids() {
    let t = tokenizer();
    for text in [
        " ".repeat(20_000),
        format!("{}x", " ".repeat(20_000)),
        "\n".repeat(5_000),
        " \n".repeat(5_000),
        "9".repeat(10_000),
        "中".repeat(5_000),
        "a".repeat(20_000),
        ".".repeat(20_000),
        "<｜User｜>".repeat(1_000),
    ] {
        assert_eq!(
            t.encode_ids(&text),
            t.try_encode_ids_generic(&text).unwrap(),
            "{:?}…",
            text.get(..20)
        );
    }
}

#[test]
fn long_pieces_counted_again_give_the_generic_ids() {
    // The second count takes the long pieces' ids from the word cache.
    let t = tokenizer();
    let text = format!(
        "{} {}\n{}",
        "x".repeat(3_000),
        "é".repeat(1_500),
        "lorem_ipsum".repeat(300)
    );
    let generic = t.try_encode_ids_generic(&text).unwrap();
    assert_eq!(t.encode_ids(&text), generic);
    assert_eq!(t.encode_ids(&text), generic);
}

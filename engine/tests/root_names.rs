//! The crate root stays what an embedder needs: at most 30 public names
//! (items, re-exports and modules); the rest lives in the topic modules.
//! The names are read from `src/lib.rs`, which declares every root item
//! as a `pub mod` or a `pub use`; the test also refuses any other `pub`
//! item at the root, so nothing is counted short.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a failed unwrap is a failed test

const MAX_ROOT_NAMES: usize = 30;

/// The names a `pub use` statement brings in: `a::b::{C, D as E, f::G}`
/// gives C, E and G; `a::b` gives b.
fn used_names(path: &str) -> Vec<String> {
    let path: String = path.split_whitespace().collect::<Vec<_>>().join(" ");
    let last_name = |item: &str| -> String {
        let item = item.trim();
        match item.split_once(" as ") {
            Some((_, alias)) => alias.trim().to_string(),
            None => item.rsplit("::").next().unwrap_or(item).trim().to_string(),
        }
    };
    match path.find('{') {
        Some(open) => {
            let close = path.rfind('}').expect("a brace list closes");
            path[open + 1..close]
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(last_name)
                .collect()
        }
        None => vec![last_name(&path)],
    }
}

/// The public names `src/lib.rs` declares at the crate root, outside any
/// inline module.
fn root_names(lib: &str) -> Vec<String> {
    let mut names = Vec::new();
    let mut depth = 0usize;
    let mut statement: Option<String> = None;
    for line in lib.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("//") {
            continue;
        }
        if let Some(text) = statement.as_mut() {
            text.push(' ');
            text.push_str(trimmed);
        } else if depth == 0 && trimmed.starts_with("pub use ") {
            statement = Some(trimmed["pub use ".len()..].to_string());
        } else if depth == 0 && trimmed.starts_with("pub mod ") {
            let name = trimmed["pub mod ".len()..]
                .trim_end_matches([';', '{', ' '])
                .to_string();
            names.push(name);
        } else if depth == 0 && trimmed.starts_with("pub ") {
            panic!("a root item other than `pub mod` or `pub use`: {trimmed}");
        }
        if let Some(text) = statement.as_ref()
            && text.ends_with(';')
        {
            names.extend(used_names(text.trim_end_matches(';')));
            statement = None;
        }
        if statement.is_none() {
            depth += trimmed.matches('{').count();
            depth = depth.saturating_sub(trimmed.matches('}').count());
        }
    }
    names
}

#[test]
fn the_crate_root_exports_at_most_thirty_names() {
    let lib = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/src/lib.rs"))
        .expect("src/lib.rs reads");
    let names = root_names(&lib);
    assert!(
        names.len() <= MAX_ROOT_NAMES,
        "{} names at the root (at most {MAX_ROOT_NAMES}): {names:?}",
        names.len()
    );
    // The count read the real root: the embedder's names are among them.
    for name in [
        "Registry",
        "Host",
        "Config",
        "ExecContext",
        "ToolResult",
        "helpers",
    ] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
}

#[test]
fn the_count_reads_braced_aliased_and_nested_uses() {
    let lib = "pub mod a;\npub use b::{C, d::E as F,\n    G};\npub use h::I;\n\
               pub mod j {\n    pub use k::L;\n}\n";
    assert_eq!(root_names(lib), ["a", "C", "F", "G", "I", "j"]);
}

//! The layout docs/architecture.md promises: no module of a
//! crate depends, through any chain of `crate::`/`super::`/`self::` paths,
//! on a module that depends back on it. Read from the sources: a module is
//! a file (or a `mod.rs` directory); a reference is a `use` tree or an
//! inline path; the module it names is the longest prefix that is a
//! module. `mod x;` declarations are containment, not dependency, and test
//! modules (`#[cfg(test)] mod …`) are left out. Beside the cycle check,
//! the TUI's one-way rules inside the workbench crate are checked as
//! forbidden chains. The rules between crates are Cargo's (a crate names
//! only what it depends on); the test only reads each library crate's
//! `[dependencies]` to hold the layers docs/architecture.md draws.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

type ModulePath = Vec<String>;

/// Every module file under `src` with its module path.
fn modules(src: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut out = BTreeMap::new();
    let mut stack = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let relative = path.strip_prefix(src).unwrap().with_extension("");
            let mut parts: ModulePath = relative
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            // A test-only module file (`#[cfg(test)] mod tests;`) is left out.
            if parts.iter().any(|p| p == "tests" || p.ends_with("_tests")) {
                continue;
            }
            out.insert(parts, path);
        }
    }
    out
}

/// The source without comments and test modules, roughly enough for paths.
fn code_of(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod ") {
        Some(at) => &text[..at],
        None => &text,
    };
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Expands a `use` tree (`a::{b, c::{d}}`) into full paths.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect();
    let Some(open) = tree.find('{') else {
        return vec![tree];
    };
    let prefix = &tree[..open];
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let mut items = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(&inner[start..]);
    items
        .into_iter()
        .filter(|item| !item.is_empty())
        .flat_map(|item| expand(item).into_iter().map(|p| format!("{prefix}{p}")))
        .collect()
}

/// The `crate::`/`super::`/`self::` paths `code` mentions: in `use`
/// statements (expanded) and inline.
fn paths_in(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inline = String::new();
    let mut lines = code.lines();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        let Some(at) = trimmed.find("use ").filter(|&at| {
            let visibility = &trimmed[..at];
            visibility.is_empty() || visibility.starts_with("pub")
        }) else {
            inline.push_str(line);
            inline.push('\n');
            continue;
        };
        let mut statement = trimmed[at + 4..].to_owned();
        while !statement.contains(';') {
            let Some(next) = lines.next() else { break };
            statement.push_str(next);
        }
        let tree = statement.split(';').next().unwrap_or("");
        out.extend(expand(tree));
    }
    for root in ["crate::", "super::"] {
        let mut rest = inline.as_str();
        while let Some(at) = rest.find(root) {
            let tail = &rest[at..];
            let end = tail
                .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':'))
                .unwrap_or(tail.len());
            out.push(tail[..end].to_owned());
            rest = &tail[end..];
        }
    }
    out
}

/// The module a path names from module `from`, if it is one of `known`.
fn target(
    path: &str,
    from: &ModulePath,
    known: &BTreeMap<ModulePath, PathBuf>,
) -> Option<ModulePath> {
    let mut segments = path.split("::").filter(|s| !s.is_empty());
    let mut base: ModulePath = match segments.next()? {
        "crate" => Vec::new(),
        "self" => from.clone(),
        "super" => from[..from.len().checked_sub(1)?].to_vec(),
        _ => return None,
    };
    let mut found = None;
    for segment in segments {
        if segment == "super" {
            base.pop();
            continue;
        }
        base.push(segment.to_owned());
        if known.contains_key(&base) {
            found = Some(base.clone());
        }
    }
    found.or_else(|| known.contains_key(&base).then_some(base))
}

type Edges = BTreeMap<ModulePath, BTreeSet<ModulePath>>;

/// Every module of the crate whose sources are `src`, with the modules it
/// references directly.
fn edges(src: &Path) -> Edges {
    let known = modules(src);
    let mut edges = Edges::new();
    for (module, file) in &known {
        let to: BTreeSet<ModulePath> = paths_in(&code_of(file))
            .iter()
            .filter_map(|p| target(p, module, &known))
            .filter(|t| t != module && !t.is_empty())
            .collect();
        edges.insert(module.clone(), to);
    }
    edges
}

/// The chains of references from a module under `from` to a module under
/// `to` (prefixes of module paths, e.g. `["tui", "views"]`).
fn reaches(edges: &Edges, from: &[&str], to: &[&str]) -> Vec<Vec<String>> {
    let under = |module: &ModulePath, prefix: &[&str]| {
        module.len() >= prefix.len() && module.iter().zip(prefix).all(|(m, p)| m == p)
    };
    let mut found = Vec::new();
    for start in edges.keys().filter(|m| under(m, from)) {
        let mut stack = vec![vec![start.clone()]];
        let mut seen = BTreeSet::new();
        while let Some(trail) = stack.pop() {
            let Some(at) = trail.last() else { continue };
            if under(at, to) {
                found.push(trail.iter().map(|m| m.join("::")).collect());
                break;
            }
            if !seen.insert(at.clone()) {
                continue;
            }
            for next in edges.get(at).into_iter().flatten() {
                let mut longer = trail.clone();
                longer.push(next.clone());
                stack.push(longer);
            }
        }
    }
    found
}

/// The cycles among the modules of the crate whose sources are `src`.
fn cycles(src: &Path) -> Vec<Vec<String>> {
    let edges = edges(src);
    let mut found = Vec::new();
    for start in edges.keys() {
        // A path back to `start` from one of its targets is a cycle.
        let mut stack: Vec<(ModulePath, Vec<ModulePath>)> = edges[start]
            .iter()
            .map(|t| (t.clone(), vec![start.clone(), t.clone()]))
            .collect();
        let mut seen = BTreeSet::new();
        while let Some((at, trail)) = stack.pop() {
            if &at == start {
                found.push(trail.iter().map(|m| m.join("::")).collect());
                break;
            }
            if !seen.insert(at.clone()) {
                continue;
            }
            for next in edges.get(&at).into_iter().flatten() {
                let mut trail = trail.clone();
                trail.push(next.clone());
                stack.push((next.clone(), trail));
            }
        }
    }
    found
}

fn crate_src(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(name)
        .join("src")
}

#[test]
fn the_checker_sees_a_cycle_when_there_is_one() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir(src.join("app")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod app;\nmod view;\n").unwrap();
    std::fs::write(
        src.join("app/mod.rs"),
        "mod state;\nuse crate::view::draw;\n",
    )
    .unwrap();
    std::fs::write(src.join("app/state.rs"), "pub struct S;\n").unwrap();
    std::fs::write(src.join("view.rs"), "use crate::app::{App, state::S};\n").unwrap();
    let found = cycles(src);
    assert!(
        found.iter().any(|c| c.contains(&"view".to_owned())),
        "{found:?}"
    );
    std::fs::write(src.join("view.rs"), "use crate::app::{state::S};\n").unwrap();
    assert_eq!(cycles(src), Vec::<Vec<String>>::new());
}

#[test]
fn no_crate_has_a_module_cycle() {
    for name in [
        "bounded",
        "engine",
        "exec",
        "lens",
        "mcp",
        "process",
        "transcript",
        "tui",
        "test-support",
        "tokens",
    ] {
        let found = cycles(&crate_src(name));
        assert!(found.is_empty(), "{name}: module cycles {found:#?}");
    }
}

#[test]
fn the_checker_sees_a_forbidden_reference_through_a_chain() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path();
    std::fs::create_dir_all(src.join("tui/views")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod tui;\nmod util;\n").unwrap();
    std::fs::write(src.join("tui/mod.rs"), "mod app;\nmod views;\n").unwrap();
    std::fs::write(src.join("tui/app.rs"), "pub struct App;\n").unwrap();
    std::fs::write(src.join("util.rs"), "use crate::tui::app::App;\n").unwrap();
    std::fs::write(src.join("tui/views/mod.rs"), "use crate::util;\n").unwrap();
    let found = reaches(&edges(src), &["tui", "views"], &["tui", "app"]);
    assert_eq!(found, vec![vec!["tui::views", "util", "tui::app"]]);
    std::fs::write(src.join("util.rs"), "pub fn f() {}\n").unwrap();
    assert!(reaches(&edges(src), &["tui", "views"], &["tui", "app"]).is_empty());
}

/// The one-way rules inside the workbench crate that docs/architecture.md
/// states: the TUI's views draw what they are given and never reach the
/// app; its state types are leaves that reach neither the app nor the
/// effects.
#[test]
fn the_workbench_keeps_its_one_way_rules() {
    let edges = edges(&crate_src("tui"));
    for (from, to) in [
        (&["interactive", "views"][..], &["interactive", "app"][..]),
        (&["interactive", "state"][..], &["interactive", "app"][..]),
        (
            &["interactive", "state"][..],
            &["interactive", "effects"][..],
        ),
    ] {
        let found = reaches(&edges, from, to);
        assert!(
            found.is_empty(),
            "{} reaches {}: {found:#?}",
            from.join("::"),
            to.join("::")
        );
    }
}

/// The names in the `[dependencies]` table of crate `name`'s manifest.
fn dependencies(name: &str) -> Vec<String> {
    let manifest = std::fs::read_to_string(crate_src(name).join("../Cargo.toml")).unwrap();
    let table = manifest
        .split("\n[")
        .find(|t| t.starts_with("dependencies]"))
        .unwrap_or("");
    table
        .lines()
        .skip(1)
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split(['.', ' ', '=']).next().map(str::to_owned))
        .collect()
}

/// The layers between crates: each library crate depends only on the
/// crates below it, and the transcript library (what CI runs headless)
/// on no terminal and no network crate.
#[test]
fn each_crate_depends_only_on_the_layers_below_it() {
    let terminal_or_network = ["ratatui", "crossterm", "tui-input", "hyper", "http", "rmcp"];
    for (name, forbidden) in [
        ("bounded", &["fs-search-"][..]),
        ("engine", &["fs-search-"][..]),
        (
            "exec",
            &[
                "fs-search-tokens",
                "fs-search-process",
                "fs-search-lens",
                "fs-search-transcript",
                "fs-search-mcp",
                "fs-search-workbench",
            ][..],
        ),
        (
            "tokens",
            &[
                "fs-search-engine",
                "fs-search-process",
                "fs-search-lens",
                "fs-search-transcript",
                "fs-search-mcp",
                "fs-search-workbench",
            ][..],
        ),
        (
            "process",
            &[
                "fs-search-lens",
                "fs-search-transcript",
                "fs-search-mcp",
                "fs-search-workbench",
            ][..],
        ),
        (
            "lens",
            &[
                "fs-search-process",
                "fs-search-transcript",
                "fs-search-mcp",
                "fs-search-workbench",
            ][..],
        ),
        (
            "transcript",
            &["fs-search-mcp", "fs-search-workbench", "fs-search-lens"][..],
        ),
        ("mcp", &["fs-search-workbench"][..]),
    ] {
        let deps = dependencies(name);
        // The reader of the manifest finds what every crate holds.
        let known = if matches!(name, "bounded" | "exec") {
            "nix"
        } else {
            "serde_json"
        };
        assert!(deps.contains(&known.to_owned()), "{name}: {deps:?}");
        for dep in &deps {
            assert!(
                !forbidden.iter().any(|f| dep.starts_with(f)),
                "{name} depends on {dep}"
            );
            if matches!(
                name,
                "bounded" | "engine" | "exec" | "tokens" | "process" | "lens" | "transcript"
            ) {
                assert!(
                    !terminal_or_network.contains(&dep.as_str()),
                    "{name} depends on {dep}"
                );
            }
        }
    }
}

/// The tests' shared helpers (`test-support/`) are a dev-dependency only:
/// no library or binary of the workspace links them.
#[test]
fn test_support_is_only_ever_a_dev_dependency() {
    for name in [
        "bounded",
        "engine",
        "exec",
        "lens",
        "mcp",
        "process",
        "transcript",
        "tui",
        "tokens",
    ] {
        let deps = dependencies(name);
        // The manifest's table was found and read.
        assert!(!deps.is_empty(), "{name}: no [dependencies] read");
        assert!(
            !deps.iter().any(|d| d == "fs-search-test-support"),
            "{name} depends on fs-search-test-support"
        );
    }
}

/// No crate compiles another's source file as a module of its own (a
/// `mod` with a path attribute): what tests share is
/// `fs-search-test-support`.
#[test]
fn no_source_file_is_included_by_path() {
    let needle = concat!("#[", "path");
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut stack = vec![root.clone()];
    let mut found = Vec::new();
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            if path.is_dir() {
                if !name.starts_with('.') && name != "target" && name != "fixtures" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs")
                && std::fs::read_to_string(&path).unwrap().contains(needle)
            {
                found.push(path.strip_prefix(&root).unwrap().to_path_buf());
            }
        }
    }
    assert!(found.is_empty(), "{found:?}");
}

/// The engine (the contract and its seams) starts no process: its normal
/// dependencies hold no `nix`, no `tempfile` (nor the other crates of the
/// executors), and the tokio it asks for has neither `process` nor `net`.
/// Read from `cargo metadata`, as Cargo resolves the manifests (workspace
/// inheritance included), not from the sources.
#[test]
fn the_engine_asks_for_no_process_crate_and_no_process_or_net_tokio() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = std::process::Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .arg("--manifest-path")
        .arg(root.join("Cargo.toml"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let engine = metadata["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|package| package["name"] == "fs-search-engine")
        .unwrap();
    // Normal dependencies: `kind` is null (dev and build ones name theirs).
    let normal: Vec<&serde_json::Value> = engine["dependencies"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|dep| dep["kind"].is_null())
        .collect();
    let names: Vec<&str> = normal
        .iter()
        .filter_map(|dep| dep["name"].as_str())
        .collect();
    // The reader found the table: the engine's own crates are in it.
    assert!(names.contains(&"serde_json"), "{names:?}");
    for forbidden in ["nix", "tempfile", "libc", "landlock", "close_fds"] {
        assert!(
            !names.contains(&forbidden),
            "the engine depends on {forbidden}"
        );
    }
    let tokio = normal
        .iter()
        .find(|dep| dep["name"] == "tokio")
        .expect("the engine's tokio");
    let features: Vec<&str> = tokio["features"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f.as_str())
        .collect();
    // The features come through: the workspace's shared ones are listed.
    assert!(features.contains(&"sync"), "{features:?}");
    for forbidden in ["process", "net", "full"] {
        assert!(
            !features.contains(&forbidden),
            "the engine asks tokio for `{forbidden}`: {features:?}"
        );
    }
}

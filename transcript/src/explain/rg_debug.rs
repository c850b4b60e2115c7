//! Reads ripgrep's own `--debug` report of its walk: the `ignoring PATH:
//! …` and `whitelisting PATH: …` lines of `ignore::walk`, with the
//! matcher that decided (a hidden name, an ignore-file glob with the file
//! it comes from, an override glob). rg 13 prints them bare, rg 14 and 15
//! after `rg: `; the matcher is Rust `Debug` output.

/// Which matcher decided, as rg reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Matcher {
    /// `IgnoreMatch(Hidden)`: the name starts with `.`.
    Hidden,
    /// `IgnoreMatch(Gitignore(Glob { from, original, … }))`: a rule of an
    /// ignore file (`.gitignore`, `.ignore`, `.rgignore`, excludes).
    IgnoreFile {
        /// The file, as rg names it (`./a/.gitignore` or absolute).
        from: Option<String>,
        /// The rule as written.
        original: String,
        /// A `!rule` that re-includes.
        whitelist: bool,
    },
    /// `Override(Glob(Matched(Glob { original, … })))`: a `--glob` matched.
    OverrideMatched { original: String, whitelist: bool },
    /// `Override(Glob(Unmatched…))`: whitelist `--glob`s exist and none matched.
    OverrideUnmatched,
    /// Anything else, verbatim (a later rg's new matcher).
    Other(String),
}

/// One decision of rg's walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Decision {
    /// The path as rg printed it (`./a/b`, `src/x`, absolute).
    pub path: String,
    /// `ignoring` (true) or `whitelisting` (false).
    pub ignored: bool,
    pub matcher: Matcher,
}

/// The decision on one line of rg's stderr, if it is one.
pub(crate) fn parse_line(line: &str) -> Option<Decision> {
    let after = &line[line.find("|ignore::walk|")? + "|ignore::walk|".len()..];
    // `FILE:LINE: ` (where in the crate it was logged), then the message.
    let start = [": ignoring ", ": whitelisting "]
        .iter()
        .filter_map(|verb| after.find(verb))
        .min()?;
    parse_message(&after[start + 2..])
}

/// The decision in one message of the `ignore` crate's walk (`ignoring
/// PATH: MATCH` or `whitelisting PATH: MATCH`), as rg prints it after its
/// log prefix and as the crate logs it in this process.
pub(crate) fn parse_message(message: &str) -> Option<Decision> {
    let (ignored, rest, marker) = if let Some(rest) = message.strip_prefix("ignoring ") {
        (true, rest, ": Ignore(IgnoreMatch(")
    } else {
        let rest = message.strip_prefix("whitelisting ")?;
        (false, rest, ": Whitelist(IgnoreMatch(")
    };
    let split = rest.rfind(marker)?;
    Some(Decision {
        path: rest[..split].to_owned(),
        ignored,
        matcher: parse_matcher(&rest[split + marker.len()..]),
    })
}

fn parse_matcher(body: &str) -> Matcher {
    if body.starts_with("Hidden)") {
        return Matcher::Hidden;
    }
    if body.starts_with("Gitignore(Glob {") {
        let from = field_str(body, "from: Some(");
        if let Some(original) = field_str(body, "original: ") {
            return Matcher::IgnoreFile {
                from,
                original,
                whitelist: body.contains("is_whitelist: true"),
            };
        }
    }
    if body.starts_with("Override(Glob(Unmatched") {
        return Matcher::OverrideUnmatched;
    }
    let matched = body
        .starts_with("Override(Glob(Matched(Glob {")
        .then(|| field_str(body, "original: "))
        .flatten();
    if let Some(original) = matched {
        return Matcher::OverrideMatched {
            original,
            whitelist: body.contains("is_whitelist: true"),
        };
    }
    Matcher::Other(body.trim_end_matches(')').to_owned())
}

/// The Debug-quoted string right after `key` in `body`.
fn field_str(body: &str, key: &str) -> Option<String> {
    let start = body.find(key)? + key.len();
    parse_debug_str(&body[start..])
}

/// Reads one Rust `Debug` string literal (`"…"` with `\"`, `\\`, `\n`,
/// `\t`, `\r`, `\0`, `\'`, `\u{…}` escapes) from the start of `text`.
fn parse_debug_str(text: &str) -> Option<String> {
    let mut chars = text.strip_prefix('"')?.chars();
    let mut out = String::new();
    loop {
        match chars.next()? {
            '"' => return Some(out),
            '\\' => match chars.next()? {
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                '0' => out.push('\0'),
                'u' => {
                    if chars.next()? != '{' {
                        return None;
                    }
                    let hex: String = chars.by_ref().take_while(|c| *c != '}').collect();
                    out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                }
                other => out.push(other),
            },
            c => out.push(c),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_rg13_gitignore_line_gives_the_rule_and_its_file() {
        let line = r#"DEBUG|ignore::walk|/usr/share/cargo/registry/ignore-0.4.18/src/walk.rs:1741: ignoring ./target: Ignore(IgnoreMatch(Gitignore(Glob { from: Some("./.gitignore"), original: "target/", actual: "**/target", is_whitelist: false, is_only_dir: true })))"#;
        assert_eq!(
            parse_line(line),
            Some(Decision {
                path: "./target".into(),
                ignored: true,
                matcher: Matcher::IgnoreFile {
                    from: Some("./.gitignore".into()),
                    original: "target/".into(),
                    whitelist: false
                }
            })
        );
    }

    #[test]
    fn an_rg15_whitelist_line_with_escapes_and_a_colon_in_the_path_is_read() {
        let line = r#"rg: DEBUG|ignore::walk|/x/ignore-0.4.29/src/walk.rs:2014: whitelisting ./a: b/k "q".log: Whitelist(IgnoreMatch(Gitignore(Glob { from: Some("./.gitignore"), original: "!k \"q\"\\.log\u{e9}", actual: "**/k", is_whitelist: true, is_only_dir: false })))"#;
        let decision = parse_line(line).unwrap();
        assert_eq!(decision.path, r#"./a: b/k "q".log"#);
        assert!(!decision.ignored);
        assert_eq!(
            decision.matcher,
            Matcher::IgnoreFile {
                from: Some("./.gitignore".into()),
                original: "!k \"q\"\\.log\u{e9}".into(),
                whitelist: true
            }
        );
    }

    #[test]
    fn hidden_and_override_lines_name_their_matcher() {
        let hidden = "DEBUG|ignore::walk|w.rs:1: ignoring ./.git: Ignore(IgnoreMatch(Hidden))";
        assert_eq!(parse_line(hidden).unwrap().matcher, Matcher::Hidden);
        let unmatched = "DEBUG|ignore::walk|w.rs:1: ignoring ./x.log: Ignore(IgnoreMatch(Override(Glob(UnmatchedIgnore))))";
        assert_eq!(
            parse_line(unmatched).unwrap().matcher,
            Matcher::OverrideUnmatched
        );
        let vcs = r#"DEBUG|ignore::walk|w.rs:1: ignoring ./.git: Ignore(IgnoreMatch(Override(Glob(Matched(Glob { from: None, original: "!**/.git", actual: "**/.git", is_whitelist: true, is_only_dir: false })))))"#;
        assert_eq!(
            parse_line(vcs).unwrap().matcher,
            Matcher::OverrideMatched {
                original: "!**/.git".into(),
                whitelist: true
            }
        );
    }

    #[test]
    fn other_debug_lines_are_not_decisions() {
        assert_eq!(
            parse_line("DEBUG|ignore::gitignore|g.rs:393: opened gitignore file: ./.gitignore"),
            None
        );
        assert_eq!(parse_line("rg: ./x: Permission denied (os error 13)"), None);
    }
}

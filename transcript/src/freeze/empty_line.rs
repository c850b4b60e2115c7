//! Whether a recorded grep can match a line `workbench freeze` empties:
//! a minimal fixture tree keeps a grep-matched file's matched lines at
//! their line numbers and replaces the others by a filler line (`""`, or
//! `" "`, `"#"`, … where a pattern matches the empty line), which changes
//! no page only when no recorded pattern reaching the file matches it. The pattern is
//! tested with `regex-automata` (the Rust regex syntax rg's default
//! engine reads), under the rg config lines the calls ran with: `-F`
//! makes it a literal; a line that changes what a line match is (`-v`,
//! `-U`, context, `--pcre2`, …) or that this module does not know makes
//! every answer "may match", so the whole file is kept.

use regex_automata::meta::Regex;
use regex_automata::util::syntax;

/// rg config lines that change nothing about which lines a pattern
/// matches (order, walk, case, output limits the engine does not read).
const LINE_NEUTRAL: [&str; 16] = [
    "--sort",
    "--sortr",
    "--no-ignore",
    "--ignore",
    "--hidden",
    "--no-hidden",
    "--follow",
    "-L",
    "-i",
    "--ignore-case",
    "-S",
    "--smart-case",
    "-s",
    "--case-sensitive",
    "--glob",
    "--max-filesize",
];

/// The rg config's reading of patterns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct PatternReading {
    /// `-F`/`--fixed-strings`: the pattern is a literal.
    fixed: bool,
    /// A config line this module cannot reason about.
    unknown: bool,
}

impl PatternReading {
    /// How rg reads patterns under the config `lines`.
    pub(super) fn of(lines: &[String]) -> Self {
        let mut reading = Self {
            fixed: false,
            unknown: false,
        };
        for line in lines {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if line == "-F" || line == "--fixed-strings" {
                reading.fixed = true;
            } else if line == "--no-fixed-strings" {
                reading.fixed = false;
            } else if !LINE_NEUTRAL.iter().any(|flag| {
                line == *flag
                    || line.starts_with(&format!("{flag}="))
                    || line.starts_with(&format!("{flag}-"))
            }) {
                reading.unknown = true;
            }
        }
        reading
    }

    /// Whether `pattern` can match an empty line (true when unsure: a
    /// pattern this engine does not compile may still be one rg reads).
    #[cfg(test)]
    pub(super) fn may_match_empty_line(self, pattern: &str) -> bool {
        self.may_match_line(pattern, "")
    }

    /// Whether `pattern` can match the line `line`, in either case (the
    /// config's case flags aside); true when unsure.
    pub(super) fn may_match_line(self, pattern: &str, line: &str) -> bool {
        if self.unknown {
            return true;
        }
        if self.fixed {
            return line.to_lowercase().contains(&pattern.to_lowercase());
        }
        [false, true].into_iter().any(|case_insensitive| {
            let built = Regex::builder()
                .syntax(
                    syntax::Config::new()
                        .multi_line(true)
                        .unicode(true)
                        .case_insensitive(case_insensitive),
                )
                .build(pattern);
            match built {
                Ok(regex) => regex.is_match(line),
                Err(_) => true,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> PatternReading {
        PatternReading::of(&[])
    }

    #[test]
    fn patterns_that_match_the_empty_line_are_told_from_those_that_cannot() {
        for pattern in ["", "^$", "x*", "^", "$", "a|", "(?:needle)?", "\\s*"] {
            assert!(plain().may_match_empty_line(pattern), "{pattern}");
        }
        for pattern in ["needle", "^a", "\\d+", "[a-z]", "x+?", "\\bfoo\\b"] {
            assert!(!plain().may_match_empty_line(pattern), "{pattern}");
        }
    }

    #[test]
    fn fixed_strings_match_the_empty_line_only_when_empty() {
        let fixed = PatternReading::of(&["--fixed-strings".to_owned()]);
        assert!(!fixed.may_match_empty_line("x*"));
        assert!(fixed.may_match_empty_line(""));
    }

    #[test]
    fn an_unknown_or_line_changing_config_line_keeps_every_line() {
        for line in ["--invert-match", "-U", "--context=2", "--pcre2"] {
            let reading = PatternReading::of(&[line.to_owned()]);
            assert!(reading.may_match_empty_line("needle"), "{line}");
        }
        let neutral = PatternReading::of(&[
            "--sort=path".to_owned(),
            "--no-ignore-parent".to_owned(),
            "--smart-case".to_owned(),
        ]);
        assert!(!neutral.may_match_empty_line("needle"));
    }

    #[test]
    fn a_pattern_this_engine_cannot_compile_counts_as_matching() {
        assert!(plain().may_match_empty_line("(unclosed"));
    }
}

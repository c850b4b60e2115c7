//! The fixed ripgrep command lines (CONTRACT §5.2, §6.2), built once as
//! words: the seed's shell command string quotes each model value with
//! [`single_quote`]; the argv (0.1.0-rc.8's spawn, and the direct
//! executor's) holds the same words unquoted.

pub(crate) mod quote;

use std::borrow::Cow;

use crate::command::quote::single_quote;
use crate::request::args::{GlobArgs, GrepArgs};

/// VCS metadata directories glob never lists, in command order.
pub const GLOB_VCS_EXCLUDES: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// 0.1.0-rc.8's first argument: no rg config file reaches its spawn.
pub(crate) const NO_CONFIG: &str = "--no-config";

/// One word of a command: fixed text, or a flag prefix with a value (a
/// model's, or an exclusion glob), which only the shell string quotes.
enum Word<'a> {
    Fixed(&'static str),
    Value(&'static str, Cow<'a, str>),
}

/// A fixed rg command: its words, in order, `rg` first.
pub(crate) struct RgCommand<'a> {
    words: Vec<Word<'a>>,
}

impl RgCommand<'_> {
    /// The shell command string bash runs (the seed's).
    pub(crate) fn to_shell(&self) -> String {
        let words: Vec<String> = self
            .words
            .iter()
            .map(|word| match word {
                Word::Fixed(text) => (*text).to_owned(),
                Word::Value(prefix, value) => format!("{prefix}{}", single_quote(value)),
            })
            .collect();
        words.join(" ")
    }

    /// The same words unquoted: what bash would hand to `exec`.
    pub(crate) fn to_argv(&self) -> Vec<String> {
        self.words
            .iter()
            .map(|word| match word {
                Word::Fixed(text) => (*text).to_owned(),
                Word::Value(prefix, value) => format!("{prefix}{value}"),
            })
            .collect()
    }

    /// 0.1.0-rc.8's argv: `rg --no-config`, then the rest.
    pub(crate) fn to_rc8_argv(&self) -> Vec<String> {
        let mut argv = self.to_argv();
        argv.insert(1, NO_CONFIG.to_owned());
        argv
    }
}

/// `rg --files …` for a glob call.
pub fn build_glob_command(args: &GlobArgs) -> String {
    glob_words(args, true).to_shell()
}

/// The glob command without `--sort=modified` (rg lists in parallel, in no
/// fixed order), as the engine-side sort opt-in runs it.
#[cfg(test)]
fn build_unsorted_glob_command(args: &GlobArgs) -> String {
    glob_words(args, false).to_shell()
}

/// The glob command's words; `sorted`: with `--sort=modified`.
pub(crate) fn glob_words(args: &GlobArgs, sorted: bool) -> RgCommand<'_> {
    let mut words = vec![
        Word::Fixed("rg"),
        Word::Fixed("--files"),
        Word::Value("--glob=", args.pattern.as_str().into()),
    ];
    if sorted {
        words.push(Word::Fixed("--sort=modified"));
    }
    words.extend([Word::Fixed("--no-ignore"), Word::Fixed("--hidden")]);
    for name in GLOB_VCS_EXCLUDES {
        words.push(Word::Value("--glob=", format!("!**/{name}").into()));
        words.push(Word::Value("--glob=", format!("!**/{name}/**").into()));
    }
    if let Some(path) = &args.path {
        words.extend([Word::Fixed("--"), Word::Value("", path.as_str().into())]);
    }
    RgCommand { words }
}

/// `rg --json …` for a grep call.
pub fn build_grep_command(args: &GrepArgs) -> String {
    grep_words(args).to_shell()
}

/// The grep command's words.
pub(crate) fn grep_words(args: &GrepArgs) -> RgCommand<'_> {
    let mut words = vec![
        Word::Fixed("rg"),
        Word::Fixed("--json"),
        Word::Value("--regexp=", args.pattern.as_str().into()),
    ];
    if let Some(include) = &args.include {
        words.push(Word::Value("--glob=", include.as_str().into()));
    }
    if let Some(path) = &args.path {
        words.extend([Word::Fixed("--"), Word::Value("", path.as_str().into())]);
    }
    RgCommand { words }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grep(pattern: &str) -> String {
        build_grep_command(&GrepArgs {
            pattern: pattern.into(),
            ..GrepArgs::default()
        })
    }

    /// CONTRACT §10.3 #16
    #[test]
    fn glob_fixed_template_with_quoted_pattern_and_paired_vcs_excludes() {
        let command = build_glob_command(&GlobArgs {
            pattern: "**/*.ts".into(),
            path: None,
        });
        assert_eq!(
            command,
            "rg --files --glob='**/*.ts' --sort=modified --no-ignore --hidden --glob='!**/.git' --glob='!**/.git/**' --glob='!**/.svn' --glob='!**/.svn/**' --glob='!**/.hg' --glob='!**/.hg/**' --glob='!**/.bzr' --glob='!**/.bzr/**' --glob='!**/.jj' --glob='!**/.jj/**' --glob='!**/.sl' --glob='!**/.sl/**'"
        );
    }

    #[test]
    fn the_unsorted_glob_command_only_drops_the_sort_flag() {
        let args = GlobArgs {
            pattern: "*.rs".into(),
            path: Some("src".into()),
        };
        assert_eq!(
            build_unsorted_glob_command(&args),
            build_glob_command(&args).replace(" --sort=modified", "")
        );
    }

    /// CONTRACT §10.3 #17
    #[test]
    fn glob_search_root_rides_behind_double_dash_and_is_quoted() {
        let command = build_glob_command(&GlobArgs {
            pattern: "**/*.ts".into(),
            path: Some("docs dir".into()),
        });
        assert!(command.ends_with("--glob='!**/.sl/**' -- 'docs dir'"));
    }

    /// CONTRACT §10.3 #18
    #[test]
    fn grep_fixed_template_with_pattern_in_regexp_form() {
        assert_eq!(grep("foo.*bar"), "rg --json --regexp='foo.*bar'");
    }

    /// CONTRACT §10.3 #19
    #[test]
    fn grep_include_and_path_are_quoted() {
        let command = build_grep_command(&GrepArgs {
            pattern: "x".into(),
            path: Some("-leading-dash".into()),
            include: Some("*.{ts,tsx}".into()),
        });
        assert_eq!(
            command,
            "rg --json --regexp='x' --glob='*.{ts,tsx}' -- '-leading-dash'"
        );
    }

    /// CONTRACT §10.3 #20–26
    #[test]
    fn quotes_hostile_values_into_one_inert_shell_word() {
        for (raw, quoted) in [
            ("$(rm -rf /)", "'$(rm -rf /)'"),
            ("`touch pwned`", "'`touch pwned`'"),
            ("say \"hi there\"", "'say \"hi there\"'"),
            ("it's", "'it'\\''s'"),
            ("a\nb", "'a\nb'"),
            ("--flag", "'--flag'"),
            ("*?[a-z]{x,y}", "'*?[a-z]{x,y}'"),
        ] {
            assert_eq!(grep(raw), format!("rg --json --regexp={quoted}"), "{raw}");
        }
    }

    #[test]
    fn the_argv_holds_the_shell_words_unquoted() {
        let args = GrepArgs {
            pattern: "it's $(x)".into(),
            path: Some("-leading dash".into()),
            include: Some("*.{ts,tsx}".into()),
        };
        assert_eq!(
            grep_words(&args).to_argv(),
            [
                "rg",
                "--json",
                "--regexp=it's $(x)",
                "--glob=*.{ts,tsx}",
                "--",
                "-leading dash"
            ]
        );
        assert_eq!(
            build_grep_command(&args),
            "rg --json --regexp='it'\\''s $(x)' --glob='*.{ts,tsx}' -- '-leading dash'"
        );
    }

    /// rc.8's exact argv (its tools.spec.ts): `--no-config` right after
    /// the binary, every other word as the seed's, unquoted.
    #[test]
    fn rc8_argv_puts_no_config_first() {
        let glob = GlobArgs {
            pattern: "**/*.ts".into(),
            path: Some("src".into()),
        };
        let mut expected = vec!["rg", "--no-config", "--files", "--glob=**/*.ts"];
        expected.extend(["--sort=modified", "--no-ignore", "--hidden"]);
        let excludes: Vec<String> = GLOB_VCS_EXCLUDES
            .iter()
            .flat_map(|name| {
                [
                    format!("--glob=!**/{name}"),
                    format!("--glob=!**/{name}/**"),
                ]
            })
            .collect();
        expected.extend(excludes.iter().map(String::as_str));
        expected.extend(["--", "src"]);
        assert_eq!(glob_words(&glob, true).to_rc8_argv(), expected);
        let grep = GrepArgs {
            pattern: "a b".into(),
            ..GrepArgs::default()
        };
        assert_eq!(
            grep_words(&grep).to_rc8_argv(),
            ["rg", "--no-config", "--json", "--regexp=a b"]
        );
    }
}

//! The fixed ripgrep command lines (CONTRACT §5.2, §6.2). Model values
//! enter only through [`single_quote`].

pub(crate) mod quote;

use crate::command::quote::single_quote;
use crate::request::args::{GlobArgs, GrepArgs};

/// VCS metadata directories glob never lists, in command order.
pub const GLOB_VCS_EXCLUDES: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// `rg --files …` for a glob call.
pub fn build_glob_command(args: &GlobArgs) -> String {
    glob_command(args, "--sort=modified --no-ignore --hidden")
}

/// The glob command without `--sort=modified` (rg lists in parallel, in no
/// fixed order), for the engine-side sort opt-in.
pub(crate) fn build_unsorted_glob_command(args: &GlobArgs) -> String {
    glob_command(args, "--no-ignore --hidden")
}

fn glob_command(args: &GlobArgs, flags: &str) -> String {
    let mut parts = vec![
        "rg --files".to_owned(),
        format!("--glob={}", single_quote(&args.pattern)),
        flags.to_owned(),
    ];
    for name in GLOB_VCS_EXCLUDES {
        parts.push(format!("--glob={}", single_quote(&format!("!**/{name}"))));
        parts.push(format!(
            "--glob={}",
            single_quote(&format!("!**/{name}/**"))
        ));
    }
    if let Some(path) = &args.path {
        parts.push("--".to_owned());
        parts.push(single_quote(path));
    }
    parts.join(" ")
}

/// `rg --json …` for a grep call.
pub fn build_grep_command(args: &GrepArgs) -> String {
    let mut parts = vec![
        "rg --json".to_owned(),
        format!("--regexp={}", single_quote(&args.pattern)),
    ];
    if let Some(include) = &args.include {
        parts.push(format!("--glob={}", single_quote(include)));
    }
    if let Some(path) = &args.path {
        parts.push("--".to_owned());
        parts.push(single_quote(path));
    }
    parts.join(" ")
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
}

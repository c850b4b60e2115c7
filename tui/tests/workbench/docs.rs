//! The examples of program output in README.md and docs/ are what the
//! program prints: every ```` ```console ```` block is run (its `$ `
//! commands with the built `workbench` first on `PATH`, in a fresh
//! directory that holds a link to this repository's `fixtures/`) and its
//! output compared line for line; a `$ workbench` session shown in any
//! other block fails the suite; the TUI's 80x24 capture is the screen test's
//! snapshot; the README's test command is the one `.ci/run` runs; and
//! every relative link between the pages resolves.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// README.md and every page under docs/, as (relative path, text).
fn pages() -> Vec<(String, String)> {
    let root = repo();
    let mut paths = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).unwrap();
            let name = path.strip_prefix(&root).unwrap().display().to_string();
            (name, text)
        })
        .collect()
}

/// A fenced block: its info string, its first line's number and its lines.
struct Block {
    info: String,
    line: usize,
    lines: Vec<String>,
}

/// The fenced blocks of a Markdown page (```` ``` ```` fences only).
fn blocks(text: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut open: Option<Block> = None;
    for (i, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_owned(),
                    line: i + 2,
                    lines: Vec::new(),
                });
            }
            (Some(_), Some("")) => out.extend(open.take()),
            (Some(block), _) => block.lines.push(line.to_owned()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "an unclosed fence");
    out
}

/// One `$ ` command of a console block and the output shown after it.
struct Step {
    command: String,
    expected: String,
}

/// A console block's commands: a command goes on over the next line when
/// it ends with `\` or `|`; the lines up to the next `$ ` are its output.
fn steps(block: &Block) -> Vec<Step> {
    let mut out: Vec<Step> = Vec::new();
    let mut lines = block.lines.iter().peekable();
    while let Some(line) = lines.next() {
        if let Some(command) = line.strip_prefix("$ ") {
            let mut command = command.to_owned();
            while command.ends_with('\\') || command.ends_with('|') {
                let Some(next) = lines.next() else { break };
                command.push('\n');
                command.push_str(next);
            }
            out.push(Step {
                command,
                expected: String::new(),
            });
        } else {
            let step = out
                .last_mut()
                .unwrap_or_else(|| panic!("line {}: output before any `$ ` command", block.line));
            step.expected.push_str(line);
            step.expected.push('\n');
        }
    }
    out
}

/// Runs one console block's commands in a fresh directory; returns a
/// description of each command whose output or status differs.
fn run_console_block(page: &str, block: &Block) -> Vec<String> {
    let scratch = tempfile::tempdir().unwrap();
    let cwd = scratch.path().join("work");
    let tmp = scratch.path().join("tmp");
    std::fs::create_dir(&cwd).unwrap();
    std::fs::create_dir(&tmp).unwrap();
    std::os::unix::fs::symlink(repo().join("fixtures"), cwd.join("fixtures")).unwrap();
    let bin_dir = Path::new(env!("CARGO_BIN_EXE_workbench")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut differences = Vec::new();
    for step in steps(block) {
        let output = Command::new("bash")
            .arg("-c")
            .arg(format!("{{\n{}\n}} 2>&1", step.command))
            .current_dir(&cwd)
            .env("PATH", &path)
            .env_remove("GITHUB_ACTIONS")
            .env("TMPDIR", &tmp)
            .env("XDG_STATE_HOME", scratch.path().join("state"))
            .env("XDG_CACHE_HOME", scratch.path().join("cache"))
            .output()
            .unwrap();
        let actual = String::from_utf8_lossy(&output.stdout);
        // The fence cannot show whether the last line ends with a newline.
        let (actual, expected) = (actual.trim_end_matches('\n'), step.expected.trim_end());
        if actual != expected || !output.status.success() {
            differences.push(format!(
                "{page}:{}: `{}` ({}) printed:\n{actual}\n--- the page shows:\n{expected}",
                block.line, step.command, output.status
            ));
        }
    }
    differences
}

#[test]
fn every_console_block_in_the_readme_and_docs_prints_what_it_shows() {
    let mut checked = Vec::new();
    let mut differences = Vec::new();
    for (page, text) in pages() {
        for block in blocks(&text).iter().filter(|b| b.info == "console") {
            assert!(
                !steps(block).is_empty(),
                "{page}:{}: a console block without a `$ ` command",
                block.line
            );
            differences.extend(run_console_block(&page, block));
            checked.push(page.clone());
        }
    }
    // The pages that show output: a lost fence would otherwise pass.
    for page in ["README.md", "docs/cli.md", "docs/transcripts.md"] {
        assert!(
            checked.iter().any(|p| p == page),
            "{page} has no console block"
        );
    }
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
}

/// Output shown after a `$ workbench` command anywhere but in a console
/// block would not be checked; commands without output go in `sh` blocks
/// without the prompt.
#[test]
fn a_workbench_session_is_shown_only_in_a_console_block() {
    let mut unchecked = Vec::new();
    for (page, text) in pages() {
        for block in blocks(&text).iter().filter(|b| b.info != "console") {
            let prompts = block
                .lines
                .iter()
                .any(|l| l.trim_start().starts_with("$ ") && l.contains("workbench"));
            if prompts {
                unchecked.push(format!("{page}:{}", block.line));
            }
        }
    }
    assert!(
        unchecked.is_empty(),
        "`$ workbench` sessions outside console blocks: {unchecked:?}"
    );
}

/// The 80x24 capture in docs/workbench.md is the screen the screen test
/// `layout_80x24_with_a_spilled_grep` pins (tui/src/interactive/snapshots/), with
/// what the snapshot redacts shown as values of the same width: the temp
/// dir's random name, the spill file's random prefix, the rg version.
#[test]
fn docs_workbench_md_shows_the_80x24_screen_the_screen_test_pins() {
    let snapshot =
        std::fs::read_to_string(repo().join("tui/src/interactive/snapshots/layout_80x24.snap"))
            .unwrap();
    // The insta header is the text up to the second `---` line.
    let pinned = snapshot.splitn(3, "---\n").nth(2).unwrap();
    let expected = pinned
        .replace("fswb-RANDOM", "fswb-q3ZtW8")
        .replace("[RANDOM]-", "5d1e0c9a3b7f-")
        .replace("· rg N.N.N", "· rg 13.0.0");
    let doc = std::fs::read_to_string(repo().join("docs/workbench.md")).unwrap();
    let marker = "<!-- screen: tui/src/interactive/snapshots/layout_80x24.snap -->";
    let at = doc
        .find(marker)
        .expect("docs/workbench.md marks its capture");
    let shown = blocks(&doc[at..]).into_iter().next().unwrap();
    let shown: String = shown.lines.iter().map(|l| format!("{l}\n")).collect();
    assert_eq!(
        shown.trim_end(),
        expected.trim_end(),
        "docs/workbench.md's capture is not the pinned screen; it should be:\n{expected}"
    );
}

/// `.ci/run` runs "exactly the README's test command": each of its runs
/// calls `bash .ci/test`, which the README gives on a line of its own and
/// CONTRIBUTING.md lists among CI's steps.
#[test]
fn the_readme_gives_the_test_command_ci_runs() {
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    let command = "bash .ci/test";
    assert!(
        ci.lines().any(|l| l.trim() == format!("{command} \\")),
        ".ci/run does not run the tests with `{command}`"
    );
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(
        readme.lines().any(|l| l == command),
        "README.md does not give `{command}` on a line of its own"
    );
    let contributing = std::fs::read_to_string(repo().join("CONTRIBUTING.md")).unwrap();
    assert!(
        contributing.lines().any(|l| l.starts_with(command)),
        "CONTRIBUTING.md does not give `{command}`"
    );
}

/// The lines of a page outside its fenced blocks.
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            out.push(line);
        }
    }
    out
}

/// A heading's anchor as GitHub makes it: lower case, punctuation but `-`
/// and `_` dropped, spaces to `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// A newcomer follows the links between the pages: every relative link in
/// README.md and docs/ names a file that exists and, in a page, a heading
/// it has.
#[test]
fn every_relative_link_in_the_readme_and_docs_resolves() {
    let root = repo();
    let pages = pages();
    let anchors = |page: &str| -> Vec<String> {
        let text = pages
            .iter()
            .find(|(name, _)| name == page)
            .map(|(_, text)| text.as_str())
            .unwrap_or_default();
        prose(text)
            .into_iter()
            .filter_map(|l| {
                l.trim_start_matches('#')
                    .strip_prefix(' ')
                    .filter(|_| l.starts_with('#'))
            })
            .map(anchor)
            .collect()
    };
    let mut broken = Vec::new();
    let mut links = 0;
    for (page, text) in &pages {
        for line in prose(text) {
            for part in line.split("](").skip(1) {
                let Some(link) = part.split(')').next() else {
                    continue;
                };
                if link.contains("://") || link.contains(' ') {
                    continue;
                }
                links += 1;
                let (file, fragment) = link.split_once('#').unwrap_or((link, ""));
                let dir = Path::new(page).parent().unwrap();
                let target = if file.is_empty() {
                    PathBuf::from(page)
                } else {
                    dir.join(file)
                };
                // `docs/../README.md` → `README.md`, as the pages are named.
                let target: PathBuf = target.components().fold(PathBuf::new(), |mut p, c| {
                    match c {
                        std::path::Component::ParentDir => {
                            p.pop();
                        }
                        other => p.push(other),
                    }
                    p
                });
                if !root.join(&target).exists() {
                    broken.push(format!("{page}: {link} (no such file)"));
                } else if !fragment.is_empty()
                    && !anchors(&target.display().to_string())
                        .iter()
                        .any(|a| a == fragment)
                {
                    broken.push(format!("{page}: {link} (no such heading)"));
                }
            }
        }
    }
    assert!(links > 20, "only {links} links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// The synopsis lines of `command` in `page`'s first plain ```` ``` ````
/// block that has them: each `workbench COMMAND …` line with the
/// indented lines that go on from it.
fn synopsis(page: &str, command: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo().join(page)).unwrap();
    let start = format!("workbench {command} ");
    let block = blocks(&text)
        .into_iter()
        .find(|b| b.info.is_empty() && b.lines.iter().any(|l| l.starts_with(&start)))
        .unwrap_or_else(|| panic!("{page}: no synopsis of {command}"));
    let mut out: Vec<String> = Vec::new();
    let mut inside = false;
    for line in &block.lines {
        if line.starts_with("workbench ") {
            inside = line.starts_with(&start);
            if inside {
                out.push(line.clone());
            }
        } else if inside && line.starts_with(' ') {
            let last = out.last_mut().unwrap();
            last.push(' ');
            last.push_str(line.trim());
        }
    }
    out
}

/// The flags (`--name`) a synopsis line names.
fn flags(line: &str) -> Vec<&str> {
    line.split(|c: char| c.is_whitespace() || "[]|()".contains(c))
        .filter(|word| word.starts_with("--"))
        .collect()
}

#[test]
fn the_synopses_of_cli_md_and_explain_md_agree_with_each_other_and_with_help() {
    let cli = synopsis("docs/cli.md", "explain");
    assert_eq!(cli, synopsis("docs/explain.md", "explain"));
    for command in ["call", "explain", "surface"] {
        let help = Command::new(env!("CARGO_BIN_EXE_workbench"))
            .args([command, "--help"])
            .output()
            .unwrap();
        let help = String::from_utf8(help.stdout).unwrap();
        for line in synopsis("docs/cli.md", command) {
            for flag in flags(&line) {
                assert!(help.contains(flag), "{command}: {flag} of `{line}`\n{help}");
            }
            // The value names are --help's.
            for (flag, value) in [("--args", "JSON|@FILE"), ("--config", "JSON|@FILE")] {
                if line.contains(&format!("{flag} ")) && command != "surface" {
                    assert!(line.contains(&format!("{flag} {value}")), "{line}");
                    assert!(help.contains(&format!("{flag} <{value}>")), "{help}");
                }
            }
        }
    }
}

/// The `--help` of `workbench` (no `command`) or of `workbench COMMAND`.
fn help_of(command: Option<&str>) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_workbench"))
        .args(command.into_iter().chain(["--help"]))
        .output()
        .unwrap();
    assert!(output.status.success(), "{command:?} --help failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The long flags `--help` lists as options (its option lines start with
/// `-` at most six columns in; descriptions are indented further, or
/// follow on the same line after two spaces), less `--help` and
/// `--version`, which every command has.
fn help_flags(help: &str) -> std::collections::BTreeSet<String> {
    help.lines()
        .filter(|line| {
            let indent = line.len() - line.trim_start().len();
            (1..=6).contains(&indent) && line.trim_start().starts_with('-')
        })
        .flat_map(|line| {
            let option = line.trim_start();
            let option = option.split_once("  ").map_or(option, |(option, _)| option);
            option
                .split_whitespace()
                .map(|word| word.trim_end_matches(','))
                .filter(|word| word.starts_with("--"))
                .map(|word| word.split(['<', '=', '[']).next().unwrap().to_owned())
                .collect::<Vec<_>>()
        })
        .filter(|flag| flag != "--help" && flag != "--version")
        .collect()
}

/// The subcommands `workbench --help` lists (less `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| *line != "Commands:")
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The flags docs/cli.md's synopsis block (the one under `## Synopsis`)
/// names for `command` (`None`: the TUI's `workbench [...]` lines), each
/// `workbench …` line with the indented lines that go on from it.
fn synopsis_flags(command: Option<&str>) -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    let after = text.split_once("## Synopsis").unwrap().1;
    let block = blocks(after).into_iter().next().unwrap();
    let mut out = std::collections::BTreeSet::new();
    let mut inside = false;
    for line in &block.lines {
        if let Some(rest) = line.strip_prefix("workbench ") {
            let first = rest.split_whitespace().next().unwrap_or("");
            inside = match command {
                Some(command) => first == command,
                None => first.starts_with('['),
            };
        } else if !line.starts_with(' ') {
            inside = false;
        }
        if inside {
            out.extend(flags(line).into_iter().map(str::to_owned));
        }
    }
    out
}

#[test]
fn cli_md_s_synopsis_names_every_flag_of_every_command_s_help_and_no_other() {
    let top = help_of(None);
    let commands = subcommands(&top);
    assert!(commands.len() >= 9, "{commands:?}");
    let mut wrong = Vec::new();
    for command in std::iter::once(None).chain(commands.iter().map(|c| Some(c.as_str()))) {
        let help = help_flags(&help_of(command));
        let docs = synopsis_flags(command);
        let name = command.unwrap_or("(the TUI)");
        assert!(
            !help.is_empty() && !docs.is_empty(),
            "{name}: {help:?} {docs:?}"
        );
        for flag in help.difference(&docs) {
            wrong.push(format!(
                "{name}: {flag} is in --help, not in docs/cli.md's synopsis"
            ));
        }
        for flag in docs.difference(&help) {
            wrong.push(format!(
                "{name}: {flag} is in docs/cli.md's synopsis, not in --help"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_help_and_synopsis_readers_find_flags_as_written() {
    let help = "Usage: workbench x [OPTIONS]\n\nOptions:\n      --workdir <WORKDIR>\n          \
                Uses --json too\n  -s, --set <K=V>  Sets (see --list)\n  -h, --help\n          Print help\n";
    let flags: Vec<String> = help_flags(help).into_iter().collect();
    assert_eq!(flags, ["--set", "--workdir"]);
    let top = "Commands:\n  call     Run\n  help     Print\n\nOptions:\n";
    assert_eq!(subcommands(top), ["call"]);
}

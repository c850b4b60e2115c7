//! Classification of a ripgrep exit outside {0, 1} (CONTRACT §7.3).

use crate::bash::CollectedOutput;
use crate::error::{SearchCode, SearchError};
use crate::support::text::ecma_trim;

/// The stderr excerpt: trimmed, with ` [stderr truncated]` when the
/// executor dropped bytes; empty when stderr is blank.
pub(crate) fn stderr_excerpt(stderr: &CollectedOutput) -> String {
    let trimmed = ecma_trim(&stderr.text);
    if trimmed.is_empty() {
        String::new()
    } else if stderr.truncated {
        format!("{trimmed} [stderr truncated]")
    } else {
        trimmed.to_owned()
    }
}

fn with_excerpt(message: String, excerpt: &str) -> String {
    if excerpt.is_empty() {
        message
    } else {
        format!("{message}: {excerpt}")
    }
}

/// The pattern error ripgrep's stderr names, if it names one.
fn pattern_rejected(tool: &str, excerpt: &str, lower: &str) -> Option<SearchError> {
    (lower.contains("regex parse error") || lower.contains("error parsing glob")).then(|| {
        SearchError::new(
            SearchCode::InvalidPattern,
            format!("{tool} pattern rejected by ripgrep: {excerpt}"),
        )
    })
}

/// The error for a non-0/1 exit of `tool`'s command.
pub(crate) fn classify_exit(tool: &str, exit_code: i32, stderr: &CollectedOutput) -> SearchError {
    let excerpt = stderr_excerpt(stderr);
    let lower = excerpt.to_lowercase();
    if let Some(rejected) = pattern_rejected(tool, &excerpt, &lower) {
        return rejected;
    }
    if exit_code == 127 || lower.contains("command not found") {
        return SearchError::new(
            SearchCode::Failed,
            with_excerpt(
                format!("{tool} requires ripgrep (rg) on the bash executor's PATH"),
                &excerpt,
            ),
        );
    }
    SearchError::new(
        SearchCode::Failed,
        with_excerpt(format!("{tool} search failed (exit {exit_code})"), &excerpt),
    )
}

/// 0.1.0-rc.8's classification: no shell, so no "command not found" (a
/// missing rg fails to launch instead). A pattern error is recognised
/// from the stderr tail kept; a tail cut short of rg's words is an
/// ordinary failure.
pub(crate) fn classify_rc8_exit(
    tool: &str,
    exit_code: i32,
    stderr: &CollectedOutput,
) -> SearchError {
    let excerpt = stderr_excerpt(stderr);
    let lower = excerpt.to_lowercase();
    if let Some(rejected) = pattern_rejected(tool, &excerpt, &lower) {
        return rejected;
    }
    SearchError::new(
        SearchCode::Failed,
        with_excerpt(format!("{tool} search failed (exit {exit_code})"), &excerpt),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stderr(text: &str) -> CollectedOutput {
        CollectedOutput::complete(text)
    }

    fn classify(tool: &str, exit: i32, err: &CollectedOutput) -> (SearchCode, String) {
        let e = classify_exit(tool, exit, err);
        (e.code, e.message)
    }

    /// CONTRACT §10.5 #36, #37
    #[test]
    fn parse_errors_are_invalid_patterns() {
        let (code, message) = classify(
            "grep",
            2,
            &stderr("rg: regex parse error:\n    (\nerror: unclosed group\n"),
        );
        assert_eq!(code, SearchCode::InvalidPattern);
        assert_eq!(
            message,
            "grep pattern rejected by ripgrep: rg: regex parse error:\n    (\nerror: unclosed group"
        );
        let (code, _) = classify(
            "glob",
            2,
            &stderr("rg: error parsing glob '[': unclosed character class"),
        );
        assert_eq!(code, SearchCode::InvalidPattern);
        // The parse diagnostic wins over exit 127.
        assert_eq!(
            classify("grep", 127, &stderr("Regex Parse Error")).0,
            SearchCode::InvalidPattern
        );
    }

    /// CONTRACT §10.5 #38
    #[test]
    fn a_missing_rg_names_ripgrep() {
        assert_eq!(
            classify("glob", 127, &stderr("")).1,
            "glob requires ripgrep (rg) on the bash executor's PATH"
        );
        assert_eq!(
            classify("glob", 127, &stderr("bash: line 1: rg: command not found")).1,
            "glob requires ripgrep (rg) on the bash executor's PATH: bash: line 1: rg: command not found"
        );
        assert_eq!(
            classify("grep", 2, &stderr("sh: rg: command not found")).1,
            "grep requires ripgrep (rg) on the bash executor's PATH: sh: rg: command not found"
        );
    }

    /// CONTRACT §10.5 #39, #40, #41
    #[test]
    fn other_exits_carry_the_code_and_excerpt() {
        assert_eq!(
            classify(
                "grep",
                2,
                &stderr("rg: missing.dir: IO error: no such file or directory")
            ),
            (
                SearchCode::Failed,
                "grep search failed (exit 2): rg: missing.dir: IO error: no such file or directory"
                    .into()
            )
        );
        assert_eq!(
            classify("glob", 3, &stderr(" \n")).1,
            "glob search failed (exit 3)"
        );
        let truncated = CollectedOutput {
            text: "tail of diagnostics".into(),
            truncated: true,
            spill_path: Some("/nonexistent/spill.log".into()),
        };
        assert_eq!(
            classify("grep", 2, &truncated).1,
            "grep search failed (exit 2): tail of diagnostics [stderr truncated]"
        );
    }

    /// rc.8 has no shell: exit 127 and "command not found" are ordinary
    /// failures, and a pattern error cut from the tail is one too.
    #[test]
    fn rc8_knows_no_missing_shell_command_and_needs_the_words_in_the_tail() {
        let e = classify_rc8_exit("grep", 127, &stderr("rg: command not found"));
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                SearchCode::Failed,
                "grep search failed (exit 127): rg: command not found"
            )
        );
        let whole = stderr("rg: regex parse error:\n    (\nerror: unclosed group\n");
        assert_eq!(
            classify_rc8_exit("grep", 2, &whole).code,
            SearchCode::InvalidPattern
        );
        let cut = CollectedOutput {
            text: "error: unclosed group\n".into(),
            truncated: true,
            spill_path: None,
        };
        let e = classify_rc8_exit("grep", 2, &cut);
        assert_eq!(
            (e.code, e.message.as_str()),
            (
                SearchCode::Failed,
                "grep search failed (exit 2): error: unclosed group [stderr truncated]"
            )
        );
    }
}

//! What the model sees before any call: tool descriptions, parameter
//! schemas, output schemas and system-prompt sections (CONTRACT §4.1–§4.4).

use serde::Serialize;
use serde_json::{Value, json};

use std::borrow::Cow;

use crate::request::config::{Config, ConfigNumber};

/// The plugin name.
pub const PLUGIN_NAME: &str = "tool-fs-search";
/// Host services the plugin requires, in order.
pub const INJECT: [&str; 3] = ["tools", "systemPrompt", "bash"];

/// One system-prompt section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PromptSection {
    /// The section's name.
    pub name: String,
    /// Where it goes in the prompt (ascending).
    pub order: u32,
    /// The text the model reads.
    pub text: String,
}

/// One model-facing tool definition (`timeoutMs` is not sent to the model).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDefinition {
    /// The tool name.
    pub name: String,
    /// The description the model reads.
    pub description: String,
    /// The JSON Schema of the arguments.
    pub parameters: Value,
    /// The declared cooperative timeout (a JavaScript number).
    pub timeout_ms: crate::request::config::ConfigNumber,
}

pub(crate) fn glob_description(config: &Config) -> String {
    let n = config.glob_max_results;
    let overcap = if let Some(depth) = config.recursive_glob_sample_depth() {
        format!(
            "a larger result instead returns {n} paths sampled across top-level entries {}",
            level_sampling_phrase(depth)
        )
    } else if config.sample_over_cap_glob_results {
        format!("a larger result instead returns {n} paths sampled across top-level entries")
    } else {
        format!("a larger result returns the first {n} paths in modification-time order")
    };
    format!(
        "Find files whose paths match a glob pattern. Returns matching file paths \u{2014} never directories \u{2014} including hidden and ignored files (VCS metadata directories are excluded). Up to {n} paths come back in modification-time order; {overcap}, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries."
    )
}

pub(crate) fn grep_description(config: &Config) -> String {
    format!(
        "Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by file. Returns the first {} matches inline; a capped result reports where the complete match list was saved. Use read on a matched file for surrounding context.",
        config.grep_max_matches
    )
}

pub(crate) fn glob_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Glob pattern to match file paths against (e.g. \"**/*.ts\", \"src/**/*.test.js\"). A pattern with no \"/\" matches the basename at any depth, so \"*\" and \"*.ts\" both search the whole tree; include a separator to anchor the depth."
            },
            "path": {
                "type": "string",
                "description": "Directory to search in. Defaults to the session workspace; a relative path resolves against it."
            }
        },
        "required": ["pattern"]
    })
}

pub(crate) fn grep_parameters() -> Value {
    json!({
        "type": "object",
        "properties": {
            "pattern": {
                "type": "string",
                "description": "Regular expression to search for (ripgrep syntax)."
            },
            "path": {
                "type": "string",
                "description": "File or directory to search. Defaults to the session workspace; a relative path resolves against it."
            },
            "include": {
                "type": "string",
                "description": "One glob filter for which files to search (e.g. \"*.ts\", \"*.{js,jsx}\"). Not a list; negation is not supported."
            }
        },
        "required": ["pattern"]
    })
}

pub(crate) fn glob_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "root": { "type": "string" },
            "paths": { "type": "array", "items": { "type": "string" } }
        },
        "required": ["root", "paths"]
    })
}

pub(crate) fn grep_output_schema() -> Value {
    json!({
        "type": "object",
        "additionalProperties": false,
        "properties": {
            "matches": {
                "type": "array",
                "items": {
                    "type": "object",
                    "additionalProperties": false,
                    "properties": {
                        "path": { "type": "string" },
                        "lineNumber": { "type": "integer" },
                        "line": { "type": "string" }
                    },
                    "required": ["path", "lineNumber", "line"]
                }
            }
        },
        "required": ["matches"]
    })
}

/// How the `globSampleDepth` opt-in (above 1) extends the contract's
/// "sampled across top-level entries" in the glob description and prompt
/// section (beyond the contract; docs/contract.md §0.6).
fn level_sampling_phrase(depth: ConfigNumber) -> String {
    format!("and, level by level, across the entries below them down to {depth} levels deep")
}

pub(crate) fn glob_prompt_text(config: &Config) -> String {
    let tail = if let Some(depth) = config.recursive_glob_sample_depth() {
        Cow::Owned(format!(
            "while a larger one is sampled across top-level entries {}, so it spans the tree instead of one subtree.",
            level_sampling_phrase(depth)
        ))
    } else if config.sample_over_cap_glob_results {
        Cow::Borrowed(
            "while a larger one is sampled across top-level entries, so it spans the tree instead of one subtree.",
        )
    } else {
        Cow::Borrowed("while a larger one keeps the modification-time-ordered head.")
    };
    format!(
        "Use the glob tool \u{2014} not shell find \u{2014} to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, {tail}"
    )
}

/// The grep prompt section's text.
pub const GREP_PROMPT_TEXT: &str = "Use the grep tool \u{2014} not shell grep or rg \u{2014} to search file contents. Use read on a matched file when you need surrounding context.";

/// The two prompt sections (glob's, then grep's), in registration order.
pub fn prompt_sections(config: &Config) -> [PromptSection; 2] {
    [
        PromptSection {
            name: "tool:glob".to_owned(),
            order: 103,
            text: glob_prompt_text(config),
        },
        PromptSection {
            name: "tool:grep".to_owned(),
            order: 104,
            text: GREP_PROMPT_TEXT.to_owned(),
        },
    ]
}

/// The two tool definitions, in registration order.
pub fn tool_definitions(config: &Config) -> Vec<ToolDefinition> {
    vec![
        ToolDefinition {
            name: "glob".to_owned(),
            description: glob_description(config),
            parameters: glob_parameters(),
            timeout_ms: config.timeout_ms,
        },
        ToolDefinition {
            name: "grep".to_owned(),
            description: grep_description(config),
            parameters: grep_parameters(),
            timeout_ms: config.timeout_ms,
        },
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_description_has_both_exact_variants() {
        assert_eq!(
            glob_description(&Config::with_sampling(true)),
            "Find files whose paths match a glob pattern. Returns matching file paths — never directories — including hidden and ignored files (VCS metadata directories are excluded). Up to 100 paths come back in modification-time order; a larger result instead returns 100 paths sampled across top-level entries, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries."
        );
        assert_eq!(
            glob_description(&Config::with_sampling(false)),
            "Find files whose paths match a glob pattern. Returns matching file paths — never directories — including hidden and ignored files (VCS metadata directories are excluded). Up to 100 paths come back in modification-time order; a larger result returns the first 100 paths in modification-time order, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries."
        );
    }

    #[test]
    fn prompt_sections_are_exact() {
        let sections = prompt_sections(&Config::with_sampling(true));
        assert_eq!(sections[0].name, "tool:glob");
        assert_eq!(sections[0].order, 103);
        assert_eq!(
            sections[0].text,
            "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, while a larger one is sampled across top-level entries, so it spans the tree instead of one subtree."
        );
        assert_eq!(
            glob_prompt_text(&Config::with_sampling(false)),
            "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, while a larger one keeps the modification-time-ordered head."
        );
        assert_eq!(
            (sections[1].name.as_str(), sections[1].order),
            ("tool:grep", 104)
        );
        assert_eq!(
            sections[1].text,
            "Use the grep tool — not shell grep or rg — to search file contents. Use read on a matched file when you need surrounding context."
        );
    }

    fn with_depth(sampling: bool, depth: u64) -> Config {
        Config {
            glob_sample_depth: Some(ConfigNumber::new(depth)),
            ..Config::with_sampling(sampling)
        }
    }

    #[test]
    fn the_sample_depth_opt_in_says_how_a_page_is_sampled_and_depth_one_is_the_contract() {
        let three = with_depth(true, 3);
        assert_eq!(
            glob_description(&three),
            "Find files whose paths match a glob pattern. Returns matching file paths — never directories — including hidden and ignored files (VCS metadata directories are excluded). Up to 100 paths come back in modification-time order; a larger result instead returns 100 paths sampled across top-level entries and, level by level, across the entries below them down to 3 levels deep, says so, and reports where the complete sorted list was saved. This tool does not enumerate directory entries."
        );
        assert_eq!(
            glob_prompt_text(&three),
            "Use the glob tool — not shell find — to discover files by path pattern. A pattern with no \"/\" matches basenames at any depth, so \"*\" matches every file in the tree rather than its top level. Results are files only, never directories, and include hidden and ignored files: a result that fits comes back in modification-time order, while a larger one is sampled across top-level entries and, level by level, across the entries below them down to 3 levels deep, so it spans the tree instead of one subtree."
        );
        for contract in [with_depth(true, 1), with_depth(false, 3)] {
            let plain = Config::with_sampling(contract.sample_over_cap_glob_results);
            assert_eq!(glob_description(&contract), glob_description(&plain));
            assert_eq!(prompt_sections(&contract), prompt_sections(&plain));
        }
    }

    #[test]
    fn grep_description_and_schemas_keep_their_key_order() {
        assert_eq!(
            grep_description(&Config::with_sampling(true)),
            "Search file contents with a ripgrep regular expression. Returns matching lines with line numbers, grouped by file. Returns the first 250 matches inline; a capped result reports where the complete match list was saved. Use read on a matched file for surrounding context."
        );
        let text = serde_json::to_string(&grep_parameters()).unwrap();
        assert!(text.starts_with("{\"type\":\"object\",\"properties\":{\"pattern\":"));
        assert!(text.ends_with("},\"required\":[\"pattern\"]}"));
        assert!(!text.contains("additionalProperties"));
    }
}

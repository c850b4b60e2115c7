//! Tool arguments: the registry's schema check (exact `ToolArgsError`
//! violation texts) and the package's own validation rules (§5.1, §6.1).

use serde_json::{Map, Value};

use crate::error::ToolError;
use crate::support::text::is_blank;

/// Arguments of `glob`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GlobArgs {
    /// The glob pattern (`--glob`).
    pub pattern: String,
    /// The directory to search; the session workspace when absent.
    pub path: Option<String>,
}

/// Arguments of `grep`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GrepArgs {
    /// The regex to search for.
    pub pattern: String,
    /// The file or directory to search; the session workspace when absent.
    pub path: Option<String>,
    /// A glob limiting which files are searched.
    pub include: Option<String>,
}

impl GlobArgs {
    /// The arguments object a model would send.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("pattern".to_owned(), Value::String(self.pattern.clone()));
        if let Some(path) = &self.path {
            object.insert("path".to_owned(), Value::String(path.clone()));
        }
        Value::Object(object)
    }
}

impl GrepArgs {
    /// The arguments object a model would send.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("pattern".to_owned(), Value::String(self.pattern.clone()));
        for (key, value) in [("path", &self.path), ("include", &self.include)] {
            if let Some(value) = value {
                object.insert(key.to_owned(), Value::String(value.clone()));
            }
        }
        Value::Object(object)
    }
}

/// Checks `args` against a parameter schema with one required string
/// property `pattern` and the given optional string properties, in
/// declaration order. The root is open: unknown keys are ignored.
fn check_schema<'a>(
    args: &'a Value,
    optional: &[&str],
) -> Result<&'a Map<String, Value>, ToolError> {
    let Some(object) = args.as_object() else {
        return Err(ToolError::InvalidArgs(vec![
            "\"arguments\" must be an object".to_owned(),
        ]));
    };
    let mut violations = Vec::new();
    if !object.contains_key("pattern") {
        violations.push("missing required property \"pattern\"".to_owned());
    }
    for key in std::iter::once(&"pattern").chain(optional) {
        if let Some(value) = object.get(*key)
            && !value.is_string()
        {
            violations.push(format!("\"{key}\" must be a string"));
        }
    }
    if violations.is_empty() {
        Ok(object)
    } else {
        Err(ToolError::InvalidArgs(violations))
    }
}

fn string_field(object: &Map<String, Value>, key: &str) -> Option<String> {
    object.get(key).and_then(Value::as_str).map(str::to_owned)
}

fn plain(message: &str) -> ToolError {
    ToolError::Plain(message.to_owned())
}

fn check_path(path: Option<&String>) -> Result<(), ToolError> {
    match path {
        Some(p) if is_blank(p) => Err(plain("path must be a non-empty string when given")),
        _ => Ok(()),
    }
}

/// The schema check alone (what presenters re-validate logged args with).
pub(crate) fn glob_args_from_schema(args: &Value) -> Result<GlobArgs, ToolError> {
    let object = check_schema(args, &["path"])?;
    Ok(GlobArgs {
        pattern: string_field(object, "pattern").unwrap_or_default(),
        path: string_field(object, "path"),
    })
}

/// Schema check, then §5.1.
pub fn parse_glob_args(args: &Value) -> Result<GlobArgs, ToolError> {
    let parsed = glob_args_from_schema(args)?;
    if is_blank(&parsed.pattern) {
        return Err(plain("pattern must be a non-empty string"));
    }
    check_path(parsed.path.as_ref())?;
    Ok(parsed)
}

/// The schema check alone (what presenters re-validate logged args with).
pub(crate) fn grep_args_from_schema(args: &Value) -> Result<GrepArgs, ToolError> {
    let object = check_schema(args, &["path", "include"])?;
    Ok(GrepArgs {
        pattern: string_field(object, "pattern").unwrap_or_default(),
        path: string_field(object, "path"),
        include: string_field(object, "include"),
    })
}

/// Schema check, then §6.1.
pub fn parse_grep_args(args: &Value) -> Result<GrepArgs, ToolError> {
    let parsed = grep_args_from_schema(args)?;
    if parsed.pattern.is_empty() {
        return Err(plain("pattern must be a non-empty string"));
    }
    check_path(parsed.path.as_ref())?;
    if let Some(include) = &parsed.include {
        check_include(include)?;
    }
    Ok(parsed)
}

fn check_include(include: &str) -> Result<(), ToolError> {
    if is_blank(include) {
        return Err(plain("include must be a non-empty glob when given"));
    }
    if include.starts_with('!') {
        return Err(plain(
            "include must be a positive glob filter; negated patterns (\"!\u{2026}\") are not supported",
        ));
    }
    let mut depth = 0usize;
    for c in include.chars() {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                return Err(plain(
                    "include must be one glob, not a comma-separated list (use {a,b} alternation instead)",
                ));
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn glob_err(args: Value) -> String {
        parse_glob_args(&args).unwrap_err().model_text()
    }

    fn grep_err(args: Value) -> String {
        parse_grep_args(&args).unwrap_err().model_text()
    }

    #[test]
    fn schema_violations_list_required_first_then_types_in_declaration_order() {
        assert_eq!(
            glob_err(json!({})),
            "Error: invalid arguments: missing required property \"pattern\""
        );
        assert_eq!(
            grep_err(json!({"include": 1, "path": 2})),
            "Error: invalid arguments: missing required property \"pattern\"; \"path\" must be a string; \"include\" must be a string"
        );
        assert_eq!(
            glob_err(json!({"pattern": 1, "path": null})),
            "Error: invalid arguments: \"pattern\" must be a string; \"path\" must be a string"
        );
        assert_eq!(
            glob_err(json!([1])),
            "Error: invalid arguments: \"arguments\" must be an object"
        );
        assert_eq!(
            parse_glob_args(&json!({}))
                .unwrap_err()
                .info()
                .map(crate::error::ErrorCode::code),
            Some("INVALID_ARGS")
        );
    }

    #[test]
    fn the_root_is_open_so_extra_keys_are_ignored() {
        let args = parse_glob_args(&json!({"pattern": "*", "include": 5})).unwrap();
        assert_eq!(args.pattern, "*");
    }

    /// CONTRACT §10.8 #58 (argument half)
    #[test]
    fn glob_rejects_blank_pattern_and_blank_path() {
        assert_eq!(
            glob_err(json!({"pattern": "  "})),
            "Error: pattern must be a non-empty string"
        );
        assert_eq!(
            glob_err(json!({"pattern": "*", "path": " "})),
            "Error: path must be a non-empty string when given"
        );
        assert!(
            parse_glob_args(&json!({"pattern": "  "}))
                .unwrap_err()
                .info()
                .is_none()
        );
    }

    /// CONTRACT §10.9 #84 (argument half)
    #[test]
    fn grep_rejects_empty_pattern_blank_path_and_bad_include() {
        assert_eq!(
            grep_err(json!({"pattern": ""})),
            "Error: pattern must be a non-empty string"
        );
        assert_eq!(
            grep_err(json!({"pattern": "x", "path": "  "})),
            "Error: path must be a non-empty string when given"
        );
        assert_eq!(
            grep_err(json!({"pattern": "x", "include": "  "})),
            "Error: include must be a non-empty glob when given"
        );
        assert_eq!(
            grep_err(json!({"pattern": "x", "include": "!*.ts"})),
            "Error: include must be a positive glob filter; negated patterns (\"!…\") are not supported"
        );
        assert_eq!(
            grep_err(json!({"pattern": "x", "include": "*.ts,*.js"})),
            "Error: include must be one glob, not a comma-separated list (use {a,b} alternation instead)"
        );
    }

    /// CONTRACT §10.9 #85 (argument half)
    #[test]
    fn grep_accepts_whitespace_pattern_and_brace_alternation() {
        let args = parse_grep_args(&json!({"pattern": "  ", "include": "*.{ts,tsx}"})).unwrap();
        assert_eq!(args.include.as_deref(), Some("*.{ts,tsx}"));
        // Unbalanced closing braces never go negative; a leading space
        // defeats the negation check.
        assert!(parse_grep_args(&json!({"pattern": "x", "include": "}}{a,b}"})).is_ok());
        assert!(parse_grep_args(&json!({"pattern": "x", "include": " !a"})).is_ok());
        assert!(parse_grep_args(&json!({"pattern": "x", "include": "}a,b"})).is_err());
    }
}

//! The call editor's state: the tool choice, the pattern/path/include fields
//! (tui-input), and the raw JSON arguments actually sent — generated from
//! the fields, or edited by hand so missing, extra or mistyped arguments
//! reach the registry exactly as a model might send them.

use serde_json::{Map, Value};
use tui_input::Input;

/// The tool being called: the engine's own tool kinds (one source for
/// their names).
pub(crate) type Tool = fs_search_engine::registry::ToolKind;

/// The tools the editor offers, in the order shown and toggled.
pub(crate) const TOOLS: [Tool; 2] = Tool::ALL;

/// The tool after `tool` in [`TOOLS`] (the `t` key).
fn toggled(tool: Tool) -> Tool {
    let i = TOOLS.iter().position(|t| *t == tool).unwrap_or(0);
    TOOLS[(i + 1) % TOOLS.len()]
}

/// The editable fields, in Tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Pattern,
    Path,
    Include,
    Args,
}

impl Field {
    pub const ALL: [Field; 4] = [Self::Pattern, Self::Path, Self::Include, Self::Args];

    pub fn label(self) -> &'static str {
        match self {
            Self::Pattern => "pattern",
            Self::Path => "path",
            Self::Include => "include",
            Self::Args => "args",
        }
    }

    pub fn next(self) -> Self {
        let i = Self::ALL.iter().position(|f| *f == self).unwrap_or(0);
        Self::ALL[(i + 1) % Self::ALL.len()]
    }

    pub fn prev(self) -> Self {
        let i = Self::ALL.iter().position(|f| *f == self).unwrap_or(0);
        Self::ALL[(i + Self::ALL.len() - 1) % Self::ALL.len()]
    }
}

/// The editor's state.
#[derive(Debug, Clone)]
pub struct CallEditor {
    pub tool: Tool,
    pub pattern: Input,
    pub path: Input,
    pub include: Input,
    /// The raw JSON arguments text.
    pub raw: Input,
    /// `raw` was edited by hand and no longer follows the fields.
    pub raw_edited: bool,
}

impl Default for CallEditor {
    fn default() -> Self {
        let mut editor = Self {
            tool: Tool::Glob,
            pattern: Input::default(),
            path: Input::default(),
            include: Input::default(),
            raw: Input::default(),
            raw_edited: false,
        };
        editor.sync_raw();
        editor
    }
}

impl CallEditor {
    pub fn input_mut(&mut self, field: Field) -> &mut Input {
        match field {
            Field::Pattern => &mut self.pattern,
            Field::Path => &mut self.path,
            Field::Include => &mut self.include,
            Field::Args => &mut self.raw,
        }
    }

    /// The arguments the fields describe: `pattern` always (an empty one
    /// too: the tool rejects it as it would a model's), `path` and
    /// (grep only) `include` when non-empty.
    pub fn field_args(&self) -> Value {
        let mut args = Map::new();
        args.insert("pattern".into(), self.pattern.value().into());
        if !self.path.value().is_empty() {
            args.insert("path".into(), self.path.value().into());
        }
        if self.tool == Tool::Grep && !self.include.value().is_empty() {
            args.insert("include".into(), self.include.value().into());
        }
        Value::Object(args)
    }

    /// Rewrites the raw text from the fields and drops the hand edit.
    pub fn sync_raw(&mut self) {
        let text = serde_json::to_string(&self.field_args()).unwrap_or_default();
        self.raw = Input::new(text);
        self.raw_edited = false;
    }

    /// Records that `field` changed: a field edit regenerates the raw
    /// arguments; a raw edit detaches them from the fields.
    pub fn changed(&mut self, field: Field) {
        match field {
            Field::Args => self.raw_edited = true,
            _ => self.sync_raw(),
        }
    }

    pub fn toggle_tool(&mut self) {
        self.tool = toggled(self.tool);
        if !self.raw_edited {
            self.sync_raw();
        }
    }

    /// The arguments to send: the raw text parsed as JSON (any JSON value
    /// goes through unchanged), or why it cannot be sent.
    pub fn args_to_send(&self) -> Result<Value, String> {
        fs_search_engine::json::parse(self.raw.value())
            .map_err(|e| format!("args are not valid JSON ({e}); nothing was sent"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use tui_input::InputRequest;

    fn type_into(editor: &mut CallEditor, field: Field, text: &str) {
        for c in text.chars() {
            editor.input_mut(field).handle(InputRequest::InsertChar(c));
        }
        editor.changed(field);
    }

    #[test]
    fn fields_generate_the_raw_arguments_in_schema_order() {
        let mut e = CallEditor::default();
        assert_eq!(e.raw.value(), r#"{"pattern":""}"#);
        type_into(&mut e, Field::Pattern, "fn main");
        type_into(&mut e, Field::Include, "*.rs");
        // include is grep's only
        assert_eq!(e.args_to_send().unwrap(), json!({"pattern": "fn main"}));
        e.toggle_tool();
        type_into(&mut e, Field::Path, "src");
        assert_eq!(
            e.raw.value(),
            r#"{"pattern":"fn main","path":"src","include":"*.rs"}"#
        );
    }

    #[test]
    fn hand_edited_raw_arguments_are_sent_as_typed() {
        let mut e = CallEditor {
            raw: Input::new(r#"{"pattern":7,"extra":true}"#.into()),
            ..CallEditor::default()
        };
        e.changed(Field::Args);
        e.toggle_tool();
        assert!(e.raw_edited);
        assert_eq!(
            e.args_to_send().unwrap(),
            json!({"pattern": 7, "extra": true})
        );
        // a field edit takes the fields back
        type_into(&mut e, Field::Pattern, "x");
        assert!(!e.raw_edited);
        assert_eq!(e.args_to_send().unwrap(), json!({"pattern": "x"}));
    }

    #[test]
    fn invalid_raw_json_is_refused_with_a_reason() {
        let mut e = CallEditor {
            raw: Input::new("{pattern:".into()),
            ..CallEditor::default()
        };
        e.changed(Field::Args);
        let err = e.args_to_send().unwrap_err();
        assert!(err.starts_with("args are not valid JSON"), "{err}");
    }

    #[test]
    fn fields_cycle_in_tab_order() {
        assert_eq!(Field::Pattern.next(), Field::Path);
        assert_eq!(Field::Args.next(), Field::Pattern);
        assert_eq!(Field::Pattern.prev(), Field::Args);
    }
}

//! The Config tab's state, a form: `sampleOverCapGlobResults` and every
//! cap as a JSON literal the developer can edit (empty = key absent, so
//! the engine's default applies), then the engine's opt-in switches
//! beyond the contract, plus any other keys the starting config carried.
//! The keys, their defaults and descriptions are the engine's
//! ([`CONFIG_KEYS`]).
//! Applying builds the config object exactly as typed; the engine's load
//! validates it, so an invalid value shows the contract's own error.

use fs_search_engine::request::{CONFIG_KEYS, ConfigKind};
use serde_json::{Map, Value};
use tui_input::Input;

/// One editable key.
#[derive(Debug, Clone)]
pub struct ConfigField {
    pub key: &'static str,
    /// The JSON literal as typed; empty means the key is absent.
    pub input: Input,
    /// What the engine uses when the key is absent, if anything.
    pub default: Option<String>,
    /// A true/false switch (Space flips it).
    pub boolean: bool,
    /// An engine opt-in beyond the contract.
    pub opt_in: bool,
    /// What the key changes, in one line (the engine's words).
    pub description: &'static str,
}

/// The Config tab's form: one field per engine key.
#[derive(Debug, Clone)]
pub struct ConfigForm {
    pub fields: Vec<ConfigField>,
    /// Keys of the starting config the form does not edit (sent as is).
    pub extra: Map<String, Value>,
    /// A starting config that was not an object, sent as is until a
    /// field is edited.
    pub non_object: Option<Value>,
    pub selected: usize,
}

fn literal(value: Option<&Value>) -> String {
    value
        .map(|v| serde_json::to_string(v).unwrap_or_default())
        .unwrap_or_default()
}

impl ConfigForm {
    /// The form showing `config` (typically `--config`).
    pub fn from_value(config: &Value) -> Self {
        let object = config.as_object();
        let get = |key: &str| object.and_then(|o| o.get(key));
        let fields: Vec<ConfigField> = CONFIG_KEYS
            .iter()
            .map(|key| {
                let (default, boolean) = match key.kind {
                    ConfigKind::RequiredBoolean => (None, true),
                    ConfigKind::PositiveInteger { default } => (Some(default.to_string()), false),
                    ConfigKind::OptIn => (Some("false".to_owned()), true),
                    ConfigKind::OptInPositiveInteger => (Some("off".to_owned()), false),
                };
                ConfigField {
                    key: key.name,
                    input: Input::new(literal(get(key.name))),
                    default,
                    boolean,
                    opt_in: matches!(
                        key.kind,
                        ConfigKind::OptIn | ConfigKind::OptInPositiveInteger
                    ),
                    description: key.description,
                }
            })
            .collect();
        let extra = object
            .map(|o| {
                o.iter()
                    .filter(|(k, _)| fields.iter().all(|f| f.key != k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        Self {
            fields,
            extra,
            non_object: (!config.is_object()).then(|| config.clone()),
            selected: 0,
        }
    }

    /// The config object to load, or why a field is not JSON.
    pub fn to_config(&self) -> Result<Value, String> {
        if let Some(value) = &self.non_object {
            return Ok(value.clone());
        }
        let mut object = Map::new();
        for field in &self.fields {
            let text = field.input.value().trim();
            if text.is_empty() {
                continue;
            }
            let value: Value = serde_json::from_str(text).map_err(|e| {
                format!(
                    "{}: {text} is not a JSON value ({e}); type \"{text}\" with quotes to send a string",
                    field.key
                )
            })?;
            object.insert(field.key.to_owned(), value);
        }
        for (k, v) in &self.extra {
            object.insert(k.clone(), v.clone());
        }
        Ok(Value::Object(object))
    }

    pub fn select_next(&mut self) {
        self.selected = (self.selected + 1).min(self.fields.len().saturating_sub(1));
    }

    pub fn select_prev(&mut self) {
        self.selected = self.selected.saturating_sub(1);
    }

    pub fn selected_input_mut(&mut self) -> Option<&mut Input> {
        self.non_object = None;
        self.fields.get_mut(self.selected).map(|f| &mut f.input)
    }

    /// Flips the selected switch (absent or not a boolean becomes
    /// `true`); `false` when the selected key is not a switch.
    pub fn toggle_selected(&mut self) -> bool {
        let is_switch = self.fields.get(self.selected).is_some_and(|f| f.boolean);
        if is_switch {
            self.toggle(self.selected);
        }
        is_switch
    }

    fn toggle(&mut self, index: usize) {
        self.non_object = None;
        if let Some(field) = self.fields.get_mut(index) {
            let next = if field.input.value().trim() == "true" {
                "false"
            } else {
                "true"
            };
            field.input = Input::new(next.to_owned());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn flip_sampling(panel: &mut ConfigForm) {
        let selected = std::mem::replace(&mut panel.selected, 0);
        assert!(panel.toggle_selected());
        panel.selected = selected;
    }

    #[test]
    fn round_trips_the_starting_config_with_extra_keys() {
        let start = json!({"sampleOverCapGlobResults": true, "grepMaxMatches": 2, "other": [1]});
        let panel = ConfigForm::from_value(&start);
        assert_eq!(panel.fields.len(), 10);
        assert_eq!(panel.fields[2].input.value(), "2");
        assert_eq!(panel.fields[1].input.value(), "");
        assert_eq!(panel.to_config().unwrap(), start);
    }

    #[test]
    fn values_are_sent_exactly_as_typed_json() {
        let mut panel = ConfigForm::from_value(&json!({}));
        panel.selected = 1;
        if let Some(input) = panel.selected_input_mut() {
            *input = Input::new("0".into());
        }
        flip_sampling(&mut panel);
        assert_eq!(
            panel.to_config().unwrap(),
            json!({"sampleOverCapGlobResults": true, "globMaxResults": 0})
        );
        flip_sampling(&mut panel);
        assert_eq!(
            panel.to_config().unwrap()["sampleOverCapGlobResults"],
            json!(false)
        );
        panel.selected = 6;
        if let Some(input) = panel.selected_input_mut() {
            *input = Input::new("\"soon\"".into());
        }
        assert_eq!(panel.to_config().unwrap()["timeoutMs"], json!("soon"));
    }

    #[test]
    fn space_flips_only_switches() {
        let mut panel = ConfigForm::from_value(&json!({"sampleOverCapGlobResults": true}));
        panel.selected = 7;
        assert_eq!(panel.fields[7].key, "globSortInEngine");
        assert!(panel.toggle_selected());
        assert_eq!(panel.to_config().unwrap()["globSortInEngine"], json!(true));
        panel.selected = 1;
        assert!(!panel.toggle_selected());
        assert_eq!(
            panel.to_config().unwrap(),
            json!({"sampleOverCapGlobResults": true, "globSortInEngine": true})
        );
    }

    #[test]
    fn text_that_is_not_json_is_refused_with_a_hint() {
        let mut panel = ConfigForm::from_value(&json!({}));
        panel.selected = 3;
        if let Some(input) = panel.selected_input_mut() {
            *input = Input::new("lots".into());
        }
        let err = panel.to_config().unwrap_err();
        assert!(
            err.starts_with("grepMaxLineBytes: lots is not a JSON value"),
            "{err}"
        );
    }

    #[test]
    fn a_non_object_config_is_sent_until_a_field_is_edited() {
        let mut panel = ConfigForm::from_value(&json!([1]));
        assert_eq!(panel.to_config().unwrap(), json!([1]));
        flip_sampling(&mut panel);
        assert_eq!(
            panel.to_config().unwrap(),
            json!({"sampleOverCapGlobResults": true})
        );
    }
}

//! The Config tab's state, a form: `sampleOverCapGlobResults` and every
//! cap as a JSON literal the developer can edit (empty = key absent, so
//! the engine's default applies), then the engine's opt-in switches
//! beyond the contract, plus any other keys the starting config carried.
//! The keys and their defaults come from one place, [`engine_keys`].
//! Applying builds the config object exactly as typed; the engine's load
//! validates it, so an invalid value shows the contract's own error.

use fs_search_engine::config::{GLOB_SORT_IN_ENGINE, NUMERIC_KEYS, STOP_AT_RAW_OUTPUT_CAP};
use serde_json::{Map, Value};
use tui_input::Input;

/// The sampling key, listed first.
pub const SAMPLING_KEY: &str = "sampleOverCapGlobResults";

/// The engine's opt-in switches beyond the contract (absent = `false`).
const OPT_IN_KEYS: [&str; 2] = [GLOB_SORT_IN_ENGINE, STOP_AT_RAW_OUTPUT_CAP];

/// The engine defaults of the numeric keys, for display.
const DEFAULTS: [u64; 6] = [
    fs_search_engine::config::GLOB_MAX_RESULTS,
    fs_search_engine::config::GREP_MAX_MATCHES,
    fs_search_engine::config::GREP_MAX_LINE_BYTES,
    fs_search_engine::config::SEARCH_META_MAX_BYTES,
    fs_search_engine::config::RAW_OUTPUT_MAX_BYTES,
    fs_search_engine::config::SEARCH_TIMEOUT_MS,
];

/// One key of the engine's config as the form shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySpec {
    pub key: &'static str,
    /// What the engine uses when the key is absent, if anything.
    pub default: Option<String>,
    /// A true/false switch (Space flips it).
    pub boolean: bool,
    /// An engine opt-in beyond the contract.
    pub opt_in: bool,
}

/// The keys the form edits, in display order: the sampling key, every
/// cap, then the opt-ins. The one place that knows the engine's keys and
/// defaults.
pub fn engine_keys() -> Vec<KeySpec> {
    let sampling = KeySpec {
        key: SAMPLING_KEY,
        default: None,
        boolean: true,
        opt_in: false,
    };
    let caps = NUMERIC_KEYS
        .iter()
        .zip(DEFAULTS)
        .map(|(key, default)| KeySpec {
            key,
            default: Some(default.to_string()),
            boolean: false,
            opt_in: false,
        });
    let opt_ins = OPT_IN_KEYS.into_iter().map(|key| KeySpec {
        key,
        default: Some("false".to_owned()),
        boolean: true,
        opt_in: true,
    });
    std::iter::once(sampling)
        .chain(caps)
        .chain(opt_ins)
        .collect()
}

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
}

/// The panel's state.
#[derive(Debug, Clone)]
pub struct ConfigPanel {
    pub fields: Vec<ConfigField>,
    /// Keys of the starting config the panel does not edit (sent as is).
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

impl ConfigPanel {
    /// The panel showing `config` (typically `--config`).
    pub fn from_value(config: &Value) -> Self {
        let object = config.as_object();
        let get = |key: &str| object.and_then(|o| o.get(key));
        let fields: Vec<ConfigField> = engine_keys()
            .into_iter()
            .map(|spec| ConfigField {
                key: spec.key,
                input: Input::new(literal(get(spec.key))),
                default: spec.default,
                boolean: spec.boolean,
                opt_in: spec.opt_in,
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

    fn flip_sampling(panel: &mut ConfigPanel) {
        let selected = std::mem::replace(&mut panel.selected, 0);
        assert!(panel.toggle_selected());
        panel.selected = selected;
    }

    #[test]
    fn round_trips_the_starting_config_with_extra_keys() {
        let start = json!({"sampleOverCapGlobResults": true, "grepMaxMatches": 2, "other": [1]});
        let panel = ConfigPanel::from_value(&start);
        assert_eq!(panel.fields.len(), 9);
        assert_eq!(panel.fields[2].input.value(), "2");
        assert_eq!(panel.fields[1].input.value(), "");
        assert_eq!(panel.to_config().unwrap(), start);
    }

    #[test]
    fn values_are_sent_exactly_as_typed_json() {
        let mut panel = ConfigPanel::from_value(&json!({}));
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
        assert_eq!(panel.to_config().unwrap()[SAMPLING_KEY], json!(false));
        panel.selected = 6;
        if let Some(input) = panel.selected_input_mut() {
            *input = Input::new("\"soon\"".into());
        }
        assert_eq!(panel.to_config().unwrap()["timeoutMs"], json!("soon"));
    }

    #[test]
    fn space_flips_only_switches() {
        let mut panel = ConfigPanel::from_value(&json!({"sampleOverCapGlobResults": true}));
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
        let mut panel = ConfigPanel::from_value(&json!({}));
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
        let mut panel = ConfigPanel::from_value(&json!([1]));
        assert_eq!(panel.to_config().unwrap(), json!([1]));
        flip_sampling(&mut panel);
        assert_eq!(
            panel.to_config().unwrap(),
            json!({"sampleOverCapGlobResults": true})
        );
    }
}

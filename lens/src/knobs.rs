//! A lens's knobs: their specs (name as the host names it, kind, default)
//! and the values `--set KNOB=VALUE` gives them.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::{Lens, LensError};

/// The kind of value a knob takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnobKind {
    /// A non-negative integer.
    Count,
    /// A non-negative decimal number.
    Number,
    /// `true` or `false`.
    Flag,
    /// Any text.
    Text,
}

/// A knob's value.
#[derive(Debug, Clone, PartialEq)]
pub enum KnobValue {
    Count(u64),
    Number(f64),
    Flag(bool),
    Text(String),
}

impl KnobValue {
    pub fn to_json(&self) -> Value {
        match self {
            KnobValue::Count(n) => json!(n),
            KnobValue::Number(n) => json!(n),
            KnobValue::Flag(b) => json!(b),
            KnobValue::Text(t) => json!(t),
        }
    }
}

/// One knob of a lens.
#[derive(Debug, Clone, Copy)]
pub struct KnobSpec {
    /// As the host names it (config key, environment variable, constant).
    pub name: &'static str,
    pub kind: KnobKind,
    /// The host's default as text (parsed as `kind`); empty when the host
    /// derives it (then `help` says how).
    pub default: &'static str,
    pub help: &'static str,
}

/// The knobs a user set, by name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Knobs(BTreeMap<String, KnobValue>);

impl Knobs {
    /// Parses `KNOB=VALUE` settings against `lens`'s knobs.
    pub fn parse(lens: &Lens, settings: &[String]) -> Result<Self, LensError> {
        let mut knobs = Self::default();
        for setting in settings {
            let (name, raw) = setting
                .split_once('=')
                .ok_or_else(|| LensError::SetSyntax(setting.clone()))?;
            let spec = lens.knobs.iter().find(|k| k.name == name).ok_or_else(|| {
                LensError::UnknownKnob {
                    lens: lens.name(),
                    knob: name.to_owned(),
                    known: lens
                        .knobs
                        .iter()
                        .map(|k| k.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                }
            })?;
            knobs.0.insert(name.to_owned(), parse_value(spec, raw)?);
        }
        Ok(knobs)
    }

    /// Sets `name` (used by callers that know the value, e.g. a call's
    /// duration).
    pub fn set(&mut self, name: &str, value: KnobValue) {
        self.0.insert(name.to_owned(), value);
    }

    pub fn is_set(&self, name: &str) -> bool {
        self.0.contains_key(name)
    }

    fn value(&self, name: &str, spec: &[KnobSpec]) -> Option<KnobValue> {
        if let Some(value) = self.0.get(name) {
            return Some(value.clone());
        }
        let spec = spec.iter().find(|k| k.name == name)?;
        if spec.default.is_empty() {
            return None;
        }
        parse_value(spec, spec.default).ok()
    }

    /// The count `name` is set to, or its default.
    pub fn count(&self, name: &str, spec: &[KnobSpec]) -> Option<u64> {
        match self.value(name, spec)? {
            KnobValue::Count(n) => Some(n),
            _ => None,
        }
    }

    /// The number `name` is set to, or its default.
    pub fn number(&self, name: &str, spec: &[KnobSpec]) -> Option<f64> {
        match self.value(name, spec)? {
            KnobValue::Number(n) => Some(n),
            KnobValue::Count(n) => Some(n as f64),
            _ => None,
        }
    }

    /// The flag `name` is set to, or its default.
    pub fn flag(&self, name: &str, spec: &[KnobSpec]) -> Option<bool> {
        match self.value(name, spec)? {
            KnobValue::Flag(b) => Some(b),
            _ => None,
        }
    }

    /// The text `name` is set to, or its default.
    pub fn text(&self, name: &str, spec: &[KnobSpec]) -> Option<String> {
        match self.value(name, spec)? {
            KnobValue::Text(t) => Some(t),
            _ => None,
        }
    }

    /// Every knob of `spec` with its effective value (null: the host
    /// derives it), as JSON.
    pub fn effective(&self, spec: &[KnobSpec]) -> Value {
        let mut map = serde_json::Map::new();
        for knob in spec {
            let value = self
                .value(knob.name, spec)
                .map_or(Value::Null, |v| v.to_json());
            map.insert(knob.name.to_owned(), value);
        }
        Value::Object(map)
    }
}

fn parse_value(spec: &KnobSpec, raw: &str) -> Result<KnobValue, LensError> {
    let bad = |expected| LensError::KnobValue {
        knob: spec.name.to_owned(),
        value: raw.to_owned(),
        expected,
    };
    match spec.kind {
        KnobKind::Count => raw
            .replace('_', "")
            .parse()
            .map(KnobValue::Count)
            .map_err(|_| bad("a non-negative integer")),
        KnobKind::Number => match raw.parse::<f64>() {
            Ok(n) if n.is_finite() && n >= 0.0 => Ok(KnobValue::Number(n)),
            _ => Err(bad("a non-negative number")),
        },
        KnobKind::Flag => match raw {
            "true" => Ok(KnobValue::Flag(true)),
            "false" => Ok(KnobValue::Flag(false)),
            _ => Err(bad("true or false")),
        },
        KnobKind::Text => Ok(KnobValue::Text(raw.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve;

    #[test]
    fn settings_parse_by_the_knob_s_kind() {
        let lens = resolve("opencode").unwrap();
        let knobs = Knobs::parse(lens, &["tool_output.max_bytes=100".to_owned()]).unwrap();
        assert_eq!(knobs.count("tool_output.max_bytes", lens.knobs), Some(100));
        assert_eq!(knobs.count("tool_output.max_lines", lens.knobs), Some(2000));
    }

    #[test]
    fn bad_settings_are_refused_with_the_knob_named() {
        let lens = resolve("opencode").unwrap();
        let err = Knobs::parse(lens, &["max=1".to_owned()]).unwrap_err();
        assert!(matches!(err, LensError::UnknownKnob { .. }), "{err}");
        let err = Knobs::parse(lens, &["tool_output.max_bytes=-1".to_owned()]).unwrap_err();
        assert!(matches!(err, LensError::KnobValue { .. }), "{err}");
        let err = Knobs::parse(lens, &["tool_output.max_bytes".to_owned()]).unwrap_err();
        assert_eq!(
            err,
            LensError::SetSyntax("tool_output.max_bytes".to_owned())
        );
    }
}

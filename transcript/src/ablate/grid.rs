//! The variants of an ablation: `--set KEY=V1,V2,…` parsed against the
//! config keys of either release (0.1.0-rc.8's `graceMs` and
//! `stderrMaxBytes` too: an input run as 0.0.1 ignores them), and every combination of their values (the
//! baseline, the recorded config, comes first and is not one of them).

use fs_search_engine::release::Release;
use fs_search_engine::request::CONFIG_KEYS;
use serde_json::{Map, Value};
use thiserror::Error;

/// The most combinations of `--set` values one run accepts.
pub(crate) const MAX_COMBINATIONS: usize = 64;

/// One `--set KEY=V1,V2,…`: a config key and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    pub key: String,
    pub values: Vec<Value>,
}

/// A `--set` that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum GridError {
    #[error("--set {0}: expected KEY=V1,V2,… (e.g. grepMaxMatches=50,100,250)")]
    NoEquals(String),
    /// `hint`: the nearest key and all of them, rc.8's included
    /// ([`fs_search_process::config_key_hint_as`]).
    #[error("--set {key}: not a config key ({hint})")]
    UnknownKey { key: String, hint: String },
    #[error("--set {key}: value {value:?} is not JSON (a number, true, false or null)")]
    NotJson { key: String, value: String },
    #[error("--set {0}: the key is set twice; give all its values in one --set")]
    Repeated(String),
    #[error(
        "--set gives {count} combinations of values; at most {max} are ablated in one run (drop values or keys)",
        max = MAX_COMBINATIONS
    )]
    TooMany { count: String },
    #[error("no --set given: name at least one config key and its values")]
    Empty,
}

/// Parses one `KEY=V1,V2,…` (each value JSON: `50`, `true`, `null`).
pub fn parse_setting(raw: &str) -> Result<Setting, GridError> {
    let (key, values) = raw
        .split_once('=')
        .ok_or_else(|| GridError::NoEquals(raw.to_owned()))?;
    let known = CONFIG_KEYS.iter().any(|k| k.name == key)
        || fs_search_process::RC8_CONFIG_KEYS.contains(&key);
    if !known {
        return Err(GridError::UnknownKey {
            key: key.to_owned(),
            hint: fs_search_process::config_key_hint_as(key, Release::Rc8),
        });
    }
    let values = values
        .split(',')
        .map(|value| {
            serde_json::from_str::<Value>(value.trim()).map_err(|_| GridError::NotJson {
                key: key.to_owned(),
                value: value.to_owned(),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Setting {
        key: key.to_owned(),
        values,
    })
}

/// Every combination of the settings' values, as config overrides, the
/// first setting varying slowest; refused past `MAX_COMBINATIONS`.
pub fn combinations(settings: &[Setting]) -> Result<Vec<Map<String, Value>>, GridError> {
    if settings.is_empty() {
        return Err(GridError::Empty);
    }
    for (i, setting) in settings.iter().enumerate() {
        if settings[..i].iter().any(|s| s.key == setting.key) {
            return Err(GridError::Repeated(setting.key.clone()));
        }
    }
    let count = settings
        .iter()
        .try_fold(1usize, |n, s| n.checked_mul(s.values.len()));
    match count {
        Some(n) if n <= MAX_COMBINATIONS => {}
        Some(n) => {
            return Err(GridError::TooMany {
                count: n.to_string(),
            });
        }
        None => {
            return Err(GridError::TooMany {
                count: "more than 2^64".to_owned(),
            });
        }
    }
    let mut grid = vec![Map::new()];
    for setting in settings {
        grid = grid
            .into_iter()
            .flat_map(|overrides| {
                setting.values.iter().map(move |value| {
                    let mut next = overrides.clone();
                    next.insert(setting.key.clone(), value.clone());
                    next
                })
            })
            .collect();
    }
    Ok(grid)
}

/// `KEY=V KEY=V` of `overrides`, for a table's variant column.
pub fn label(overrides: &Map<String, Value>) -> String {
    if overrides.is_empty() {
        return "baseline".to_owned();
    }
    overrides
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_setting_is_a_known_key_and_json_values() {
        let s = parse_setting("grepMaxMatches=50,100, 250").unwrap();
        assert_eq!(s.key, "grepMaxMatches");
        assert_eq!(s.values, vec![json!(50), json!(100), json!(250)]);
        let s = parse_setting("sampleOverCapGlobResults=true,false").unwrap();
        assert_eq!(s.values, vec![json!(true), json!(false)]);
    }

    #[test]
    fn a_malformed_setting_is_refused_with_what_was_wrong() {
        assert_eq!(
            parse_setting("grepMaxMatches").unwrap_err(),
            GridError::NoEquals("grepMaxMatches".into())
        );
        let err = parse_setting("grepMax=1").unwrap_err().to_string();
        assert!(err.starts_with("--set grepMax: not a config key (the keys are sampleOverCapGlobResults, globMaxResults"), "{err}");
        let err = parse_setting("grepMaxMatch=1").unwrap_err().to_string();
        assert!(
            err.starts_with(
                "--set grepMaxMatch: not a config key (did you mean grepMaxMatches? the keys are sampleOverCapGlobResults,"
            ),
            "{err}"
        );
        assert_eq!(
            parse_setting("grepMaxMatches=5,abc").unwrap_err(),
            GridError::NotJson {
                key: "grepMaxMatches".into(),
                value: "abc".into()
            }
        );
    }

    #[test]
    fn combinations_vary_the_first_key_slowest() {
        let grid = combinations(&[
            parse_setting("grepMaxMatches=50,100").unwrap(),
            parse_setting("sampleOverCapGlobResults=true,false").unwrap(),
        ])
        .unwrap();
        let labels: Vec<String> = grid.iter().map(label).collect();
        assert_eq!(
            labels,
            [
                "grepMaxMatches=50 sampleOverCapGlobResults=true",
                "grepMaxMatches=50 sampleOverCapGlobResults=false",
                "grepMaxMatches=100 sampleOverCapGlobResults=true",
                "grepMaxMatches=100 sampleOverCapGlobResults=false",
            ]
        );
    }

    #[test]
    fn more_than_64_combinations_are_refused() {
        let eight = "1,2,3,4,5,6,7,8";
        let ok = [
            parse_setting(&format!("globMaxResults={eight}")).unwrap(),
            parse_setting(&format!("grepMaxMatches={eight}")).unwrap(),
        ];
        assert_eq!(combinations(&ok).unwrap().len(), 64);
        let too_many = [
            ok[0].clone(),
            ok[1].clone(),
            parse_setting("sampleOverCapGlobResults=true,false").unwrap(),
        ];
        assert_eq!(
            combinations(&too_many).unwrap_err().to_string(),
            "--set gives 128 combinations of values; at most 64 are ablated in one run (drop values or keys)"
        );
        let repeated = [ok[0].clone(), ok[0].clone()];
        assert_eq!(
            combinations(&repeated).unwrap_err(),
            GridError::Repeated("globMaxResults".into())
        );
        assert_eq!(combinations(&[]).unwrap_err(), GridError::Empty);
    }
}

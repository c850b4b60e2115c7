//! Plugin config (CONTRACT §3): layer 1 (shape and types) and layer 2
//! (positive integers, checked in a fixed order at apply).

use serde_json::Value;
use thiserror::Error;

/// Numeric keys in the order layer 2 validates them.
pub const NUMERIC_KEYS: [&str; 6] = [
    "globMaxResults",
    "grepMaxMatches",
    "grepMaxLineBytes",
    "searchMetaMaxBytes",
    "rawOutputMaxBytes",
    "timeoutMs",
];

pub const GLOB_MAX_RESULTS: u64 = 100;
pub const GREP_MAX_MATCHES: u64 = 250;
pub const GREP_MAX_LINE_BYTES: u64 = 2000;
pub const SEARCH_META_MAX_BYTES: u64 = 65536;
pub const RAW_OUTPUT_MAX_BYTES: u64 = 20_000_000;
pub const SEARCH_TIMEOUT_MS: u64 = 30000;

const DEFAULTS: [u64; 6] = [
    GLOB_MAX_RESULTS,
    GREP_MAX_MATCHES,
    GREP_MAX_LINE_BYTES,
    SEARCH_META_MAX_BYTES,
    RAW_OUTPUT_MAX_BYTES,
    SEARCH_TIMEOUT_MS,
];

#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    #[error("tool-fs-search: config must be an object")]
    NotAnObject,
    #[error("tool-fs-search: config.sampleOverCapGlobResults is required (true or false)")]
    MissingSampling,
    #[error("tool-fs-search: config.sampleOverCapGlobResults must be a boolean")]
    SamplingNotBoolean,
    #[error("tool-fs-search: config.{0} must be a number")]
    NotANumber(&'static str),
    #[error("tool-fs-search: {0} must be a positive integer")]
    NotPositiveInteger(&'static str),
    #[error("tool-fs-search: config.{0} must be a boolean")]
    OptInNotBoolean(&'static str),
}

/// Opt-in key beyond the contract (the original ignores unknown keys):
/// `true` lists glob results with rg unsorted and sorts them in the engine
/// by modification time, oldest first, ties by path, across the whole
/// result. Absent or `false`: exactly the contract's `--sort=modified`.
pub const GLOB_SORT_IN_ENGINE: &str = "globSortInEngine";

/// Opt-in key beyond the contract: `true` ends rg as soon as its stdout
/// outgrows `rawOutputMaxBytes` and reports the overflow of a truncated
/// stdout at once. The contract instead lets rg finish, so an exit outside
/// {0, 1} or an executor timeout that comes later is reported instead of
/// the overflow; absent or `false` keeps exactly that.
pub const STOP_AT_RAW_OUTPUT_CAP: &str = "stopAtRawOutputCap";

/// An opt-in boolean: absent or `null` is `false`.
fn opt_in(object: &serde_json::Map<String, Value>, key: &'static str) -> Result<bool, ConfigError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(ConfigError::OptInNotBoolean(key)),
    }
}

/// Config after layer 1: types checked, defaults applied, numbers unchecked.
#[derive(Debug, Clone, PartialEq)]
pub struct RawConfig {
    pub sample_over_cap_glob_results: bool,
    /// The [`GLOB_SORT_IN_ENGINE`] opt-in.
    pub glob_sort_in_engine: bool,
    /// The [`STOP_AT_RAW_OUTPUT_CAP`] opt-in.
    pub stop_at_raw_output_cap: bool,
    /// Values of [`NUMERIC_KEYS`], in that order.
    pub numbers: [f64; 6],
}

/// A validated config.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Config {
    pub sample_over_cap_glob_results: bool,
    pub glob_max_results: u64,
    pub grep_max_matches: u64,
    pub grep_max_line_bytes: u64,
    pub search_meta_max_bytes: u64,
    pub raw_output_max_bytes: u64,
    pub timeout_ms: u64,
    /// The [`GLOB_SORT_IN_ENGINE`] opt-in (not serialised when off).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub glob_sort_in_engine: bool,
    /// The [`STOP_AT_RAW_OUTPUT_CAP`] opt-in (not serialised when off).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stop_at_raw_output_cap: bool,
}

impl RawConfig {
    /// Layer 1: the config schema.
    pub fn parse(value: &Value) -> Result<Self, ConfigError> {
        let object = value.as_object().ok_or(ConfigError::NotAnObject)?;
        let sample_over_cap_glob_results = match object.get("sampleOverCapGlobResults") {
            None | Some(Value::Null) => return Err(ConfigError::MissingSampling),
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(ConfigError::SamplingNotBoolean),
        };
        let mut numbers = [0.0; 6];
        for (i, key) in NUMERIC_KEYS.iter().enumerate() {
            numbers[i] = match object.get(*key) {
                None | Some(Value::Null) => DEFAULTS[i] as f64,
                Some(Value::Number(n)) => n.as_f64().ok_or(ConfigError::NotANumber(key))?,
                Some(_) => return Err(ConfigError::NotANumber(key)),
            };
        }
        Ok(Self {
            sample_over_cap_glob_results,
            glob_sort_in_engine: opt_in(object, GLOB_SORT_IN_ENGINE)?,
            stop_at_raw_output_cap: opt_in(object, STOP_AT_RAW_OUTPUT_CAP)?,
            numbers,
        })
    }

    /// Layer 2: every numeric key is an integer ≥ 1 (first failure wins).
    pub fn validate(&self) -> Result<Config, ConfigError> {
        let mut out = [0u64; 6];
        for (i, key) in NUMERIC_KEYS.iter().enumerate() {
            let n = self.numbers[i];
            if !(n.is_finite() && n.fract() == 0.0 && n >= 1.0) {
                return Err(ConfigError::NotPositiveInteger(key));
            }
            // Saturating: there is no upper bound in the contract.
            out[i] = n as u64;
        }
        Ok(Config {
            sample_over_cap_glob_results: self.sample_over_cap_glob_results,
            glob_max_results: out[0],
            grep_max_matches: out[1],
            grep_max_line_bytes: out[2],
            search_meta_max_bytes: out[3],
            raw_output_max_bytes: out[4],
            timeout_ms: out[5],
            glob_sort_in_engine: self.glob_sort_in_engine,
            stop_at_raw_output_cap: self.stop_at_raw_output_cap,
        })
    }
}

impl Config {
    /// Both layers, as a load applies them.
    pub fn from_json(value: &Value) -> Result<Self, ConfigError> {
        RawConfig::parse(value)?.validate()
    }

    /// The defaults with the required sampling choice.
    pub fn with_sampling(sample_over_cap_glob_results: bool) -> Self {
        Self {
            sample_over_cap_glob_results,
            glob_max_results: GLOB_MAX_RESULTS,
            grep_max_matches: GREP_MAX_MATCHES,
            grep_max_line_bytes: GREP_MAX_LINE_BYTES,
            search_meta_max_bytes: SEARCH_META_MAX_BYTES,
            raw_output_max_bytes: RAW_OUTPUT_MAX_BYTES,
            timeout_ms: SEARCH_TIMEOUT_MS,
            glob_sort_in_engine: false,
            stop_at_raw_output_cap: false,
        }
    }

    pub(crate) fn glob_cap(&self) -> usize {
        usize::try_from(self.glob_max_results).unwrap_or(usize::MAX)
    }

    pub(crate) fn grep_cap(&self) -> usize {
        usize::try_from(self.grep_max_matches).unwrap_or(usize::MAX)
    }

    /// What the executor does with stdout past `rawOutputMaxBytes`.
    pub(crate) fn over_cap(&self) -> crate::bash::OverCap {
        if self.stop_at_raw_output_cap {
            crate::bash::OverCap::Stop
        } else {
            crate::bash::OverCap::Drain
        }
    }

    pub(crate) fn line_budget(&self) -> usize {
        usize::try_from(self.grep_max_line_bytes).unwrap_or(usize::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// CONTRACT §10.2 #10
    #[test]
    fn requires_an_explicit_over_cap_glob_sampling_choice() {
        let err = RawConfig::parse(&json!({})).unwrap_err();
        assert!(err.to_string().contains("sampleOverCapGlobResults"));
        let config = Config::from_json(&json!({"sampleOverCapGlobResults": false})).unwrap();
        assert!(!config.sample_over_cap_glob_results);
        assert_eq!(config.glob_max_results, 100);
        assert_eq!(config, Config::with_sampling(false));
    }

    /// CONTRACT §10.2 #11–15 (the config half; the load half is in plugin.rs)
    #[test]
    fn rejects_non_positive_or_fractional_values_with_the_exact_message() {
        for (key, value) in [
            ("globMaxResults", json!(0)),
            ("grepMaxMatches", json!(-1)),
            ("grepMaxLineBytes", json!(1.5)),
            ("rawOutputMaxBytes", json!(0)),
            ("timeoutMs", json!(-100)),
            ("searchMetaMaxBytes", json!(0)),
        ] {
            let config = json!({"sampleOverCapGlobResults": true, key: value});
            assert_eq!(
                Config::from_json(&config).unwrap_err().to_string(),
                format!("tool-fs-search: {key} must be a positive integer")
            );
        }
    }

    #[test]
    fn validates_in_the_contract_order_and_accepts_integral_floats() {
        let config = json!({"sampleOverCapGlobResults": true, "timeoutMs": 0, "globMaxResults": 0});
        assert_eq!(
            Config::from_json(&config).unwrap_err(),
            ConfigError::NotPositiveInteger("globMaxResults")
        );
        let config = json!({"sampleOverCapGlobResults": true, "globMaxResults": 3.0, "extra": 1});
        assert_eq!(Config::from_json(&config).unwrap().glob_max_results, 3);
    }

    #[test]
    fn opt_ins_are_off_unless_set_to_true() {
        let off = Config::from_json(&json!({"sampleOverCapGlobResults": true})).unwrap();
        assert!(!off.glob_sort_in_engine && !off.stop_at_raw_output_cap);
        assert_eq!(off, Config::with_sampling(true));
        let serialised = serde_json::to_string(&off).unwrap();
        assert!(!serialised.contains("globSortInEngine") && !serialised.contains("stopAt"));
        let on = json!({"sampleOverCapGlobResults": true, "globSortInEngine": true,
            "stopAtRawOutputCap": true});
        let on = Config::from_json(&on).unwrap();
        assert!(on.glob_sort_in_engine && on.stop_at_raw_output_cap);
        for key in ["globSortInEngine", "stopAtRawOutputCap"] {
            let bad = json!({"sampleOverCapGlobResults": true, key: 1});
            assert_eq!(
                Config::from_json(&bad).unwrap_err().to_string(),
                format!("tool-fs-search: config.{key} must be a boolean")
            );
        }
    }

    #[test]
    fn rejects_mistyped_values_naming_the_key() {
        let config = json!({"sampleOverCapGlobResults": true, "grepMaxMatches": "10"});
        assert_eq!(
            Config::from_json(&config).unwrap_err(),
            ConfigError::NotANumber("grepMaxMatches")
        );
        let config = json!({"sampleOverCapGlobResults": "yes"});
        assert!(
            Config::from_json(&config)
                .unwrap_err()
                .to_string()
                .contains("sampleOverCapGlobResults")
        );
        let config = json!({"sampleOverCapGlobResults": true, "timeoutMs": null});
        assert_eq!(Config::from_json(&config).unwrap().timeout_ms, 30000);
    }
}

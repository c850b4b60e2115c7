//! Plugin config (CONTRACT §3): the keys with their defaults and
//! meanings ([`CONFIG_KEYS`]), layer 1 (shape and types) and layer 2
//! (positive integers, checked in a fixed order at apply).
//!
//! A numeric value is kept as the JavaScript number it was configured as
//! ([`ConfigNumber`]): any positive integer up to `1.79e308` is valid,
//! prints as JavaScript prints it (`1e+308`, `100000000000000000000`) in
//! every model-visible text, and saturates where it is used as a size.

use serde_json::Value;
use thiserror::Error;

use crate::release::Release;

/// Default of `globMaxResults`.
pub const GLOB_MAX_RESULTS: u64 = 100;
/// Default of `grepMaxMatches`.
pub const GREP_MAX_MATCHES: u64 = 250;
/// Default of `grepMaxLineBytes`.
pub const GREP_MAX_LINE_BYTES: u64 = 2000;
/// Default of `searchMetaMaxBytes`.
pub const SEARCH_META_MAX_BYTES: u64 = 65536;
/// Default of `rawOutputMaxBytes`.
pub const RAW_OUTPUT_MAX_BYTES: u64 = 20_000_000;
/// Default of `timeoutMs`.
pub const SEARCH_TIMEOUT_MS: u64 = 30000;
/// Default of `graceMs` (0.1.0-rc.8 only).
pub const SEARCH_GRACE_MS: u64 = 3000;
/// Default of `stderrMaxBytes` (0.1.0-rc.8 only).
pub const SEARCH_STDERR_MAX_BYTES: u64 = 65_536;
/// The largest `graceMs` (0.1.0-rc.8): the largest delay its timers take.
pub const MAX_GRACE_MS: u64 = 2_147_483_647;

/// A validated numeric config value: a positive integer as a JavaScript
/// number (an `f64`, finite, integral, ≥ 1). [`Display`](std::fmt::Display)
/// formats it exactly as JavaScript's `Number.prototype.toString`;
/// arithmetic uses the saturating conversions.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
pub struct ConfigNumber(f64);

// Validated values are never NaN, so equality is total.
impl Eq for ConfigNumber {}

impl ConfigNumber {
    /// A value from an integer (≥ 1 where it is configured).
    pub const fn new(n: u64) -> Self {
        Self(n as f64)
    }

    /// A positive integer, or `None` for anything else (layer 2).
    pub fn from_f64(n: f64) -> Option<Self> {
        (n.is_finite() && n.fract() == 0.0 && n >= 1.0).then_some(Self(n))
    }

    /// The number as configured.
    pub fn get(self) -> f64 {
        self.0
    }

    /// The value as a `u64`, `u64::MAX` when larger.
    pub fn as_u64_saturating(self) -> u64 {
        // `as` saturates float-to-int conversions.
        self.0 as u64
    }

    /// The value as a `usize`, `usize::MAX` when larger.
    pub fn as_usize_saturating(self) -> usize {
        self.0 as usize
    }
}

impl From<u64> for ConfigNumber {
    fn from(n: u64) -> Self {
        Self::new(n)
    }
}

impl PartialEq<u64> for ConfigNumber {
    fn eq(&self, other: &u64) -> bool {
        self.0 == *other as f64 && self.as_u64_saturating() == *other
    }
}

impl std::fmt::Display for ConfigNumber {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&js_number_to_string(self.0))
    }
}

impl serde::Serialize for ConfigNumber {
    /// An integer below 2^64 as a JSON integer; a larger one as
    /// `JSON.stringify` writes it (`100000000000000000000`, `1e+308`): a
    /// raw JSON number in JavaScript's own form.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.0 < 18_446_744_073_709_551_616.0 {
            return serializer.serialize_u64(self.as_u64_saturating());
        }
        match serde_json::value::RawValue::from_string(self.to_string()) {
            Ok(raw) => raw.serialize(serializer),
            Err(_) => serializer.serialize_f64(self.0),
        }
    }
}

/// `n` formatted as JavaScript's `Number.prototype.toString` formats a
/// finite number: the shortest round-trip digits, in full decimal from
/// 1e-7 up to (not including) 1e21, else `d.ddde±x`.
pub(crate) fn js_number_to_string(n: f64) -> String {
    if n == 0.0 {
        return "0".to_owned();
    }
    if !n.is_finite() {
        return if n.is_nan() {
            "NaN".to_owned()
        } else if n > 0.0 {
            "Infinity".to_owned()
        } else {
            "-Infinity".to_owned()
        };
    }
    let sign = if n < 0.0 { "-" } else { "" };
    // Rust's `{:e}` gives the shortest round-trip digits: `d.ddde±x`.
    let sci = format!("{:e}", n.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let k = i32::try_from(digits.len()).unwrap_or(i32::MAX);
    // JavaScript's n: the decimal point sits after n digits.
    let point = exponent + 1;
    let body = if k <= point && point <= 21 {
        let zeros = usize::try_from(point - k).unwrap_or(0);
        format!("{digits}{}", "0".repeat(zeros))
    } else if 0 < point && point <= 21 {
        let split = usize::try_from(point).unwrap_or(0);
        format!("{}.{}", &digits[..split], &digits[split..])
    } else if -6 < point && point <= 0 {
        let zeros = usize::try_from(-point).unwrap_or(0);
        format!("0.{}{digits}", "0".repeat(zeros))
    } else {
        let e = point - 1;
        let e = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        if digits.len() == 1 {
            format!("{digits}e{e}")
        } else {
            format!("{}.{}e{e}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// The value a config key takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigKind {
    /// A boolean the config must carry (no default).
    RequiredBoolean,
    /// An integer ≥ 1, with its default when absent or null.
    PositiveInteger {
        /// The value used when the key is absent or null.
        default: u64,
    },
    /// An opt-in switch beyond the contract: absent or null is `false`.
    OptIn,
    /// An opt-in integer ≥ 1 beyond the contract: absent or null is off
    /// (the contract's behaviour).
    OptInPositiveInteger,
}

/// One key of the plugin config.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConfigKey {
    /// The key as written in the config object.
    pub name: &'static str,
    /// The value it takes.
    pub kind: ConfigKind,
    /// What it changes, in one line.
    pub description: &'static str,
}

const fn positive(name: &'static str, default: u64, description: &'static str) -> ConfigKey {
    ConfigKey {
        name,
        kind: ConfigKind::PositiveInteger { default },
        description,
    }
}

/// Every key the engine reads, in the contract's order, then the opt-ins.
pub const CONFIG_KEYS: [ConfigKey; 10] = [
    ConfigKey {
        name: "sampleOverCapGlobResults",
        kind: ConfigKind::RequiredBoolean,
        description: "sample an over-cap glob page across top-level entries (false: the oldest-first head)",
    },
    positive(
        "globMaxResults",
        GLOB_MAX_RESULTS,
        "max paths shown inline by one glob call",
    ),
    positive(
        "grepMaxMatches",
        GREP_MAX_MATCHES,
        "max matches shown inline by one grep call",
    ),
    positive(
        "grepMaxLineBytes",
        GREP_MAX_LINE_BYTES,
        "max bytes of one matched-line preview",
    ),
    positive(
        "searchMetaMaxBytes",
        SEARCH_META_MAX_BYTES,
        "max bytes of one result's serialised UI card",
    ),
    positive(
        "rawOutputMaxBytes",
        RAW_OUTPUT_MAX_BYTES,
        "stdout budget asked of bash and max raw rg output parsed",
    ),
    positive(
        "timeoutMs",
        SEARCH_TIMEOUT_MS,
        "cooperative timeout of one call, declared on both tools",
    ),
    ConfigKey {
        name: GLOB_SORT_IN_ENGINE,
        kind: ConfigKind::OptIn,
        description: "opt-in: one global modification-time order for glob instead of rg's per-directory one",
    },
    ConfigKey {
        name: STOP_AT_RAW_OUTPUT_CAP,
        kind: ConfigKind::OptIn,
        description: "opt-in: end rg as soon as its stdout outgrows rawOutputMaxBytes",
    },
    ConfigKey {
        name: GLOB_SAMPLE_DEPTH,
        kind: ConfigKind::OptInPositiveInteger,
        description: "opt-in: with sampling on, balance an over-cap glob page this many levels down (1: the contract's top level)",
    },
];

/// How many keys of [`CONFIG_KEYS`] are positive integers.
const NUMERIC_COUNT: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < CONFIG_KEYS.len() {
        if let ConfigKind::PositiveInteger { .. } = CONFIG_KEYS[i].kind {
            count += 1;
        }
        i += 1;
    }
    count
};

/// The positive-integer keys of [`CONFIG_KEYS`] with their defaults, in
/// the table's order, which is the order layer 2 validates them in.
const NUMERIC_KEYS: [(&str, u64); NUMERIC_COUNT] = {
    let mut keys = [("", 0); NUMERIC_COUNT];
    let mut next = 0;
    let mut i = 0;
    while i < CONFIG_KEYS.len() {
        if let ConfigKind::PositiveInteger { default } = CONFIG_KEYS[i].kind {
            keys[next] = (CONFIG_KEYS[i].name, default);
            next += 1;
        }
        i += 1;
    }
    keys
};

/// A config the load rejects (nothing is registered).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ConfigError {
    /// The config is not a JSON object.
    #[error("tool-fs-search: config must be an object")]
    NotAnObject,
    /// `sampleOverCapGlobResults` is absent or null.
    #[error("tool-fs-search: config.sampleOverCapGlobResults is required (true or false)")]
    MissingSampling,
    /// `sampleOverCapGlobResults` is not a boolean.
    #[error("tool-fs-search: config.sampleOverCapGlobResults must be a boolean")]
    SamplingNotBoolean,
    /// A numeric key holds something other than a number (layer 1).
    #[error("tool-fs-search: config.{0} must be a number")]
    NotANumber(&'static str),
    /// A numeric key is not an integer ≥ 1 (layer 2).
    #[error("tool-fs-search: {0} must be a positive integer")]
    NotPositiveInteger(&'static str),
    /// A typed config could not be turned into its JSON object.
    #[error("tool-fs-search: config could not be serialised: {0}")]
    Unserialisable(String),
    /// An opt-in key holds something other than a boolean.
    #[error("tool-fs-search: config.{0} must be a boolean")]
    OptInNotBoolean(&'static str),
    /// A number past its upper bound (0.1.0-rc.8's `graceMs`).
    #[error("tool-fs-search: {0} must be no greater than {1}")]
    TooLarge(&'static str, u64),
}

/// Opt-in key beyond the contract (the original ignores unknown keys):
/// `true` lists glob results with rg unsorted and sorts them in the engine
/// by modification time, oldest first, ties by path, across the whole
/// result. Absent or `false`: exactly the contract's `--sort=modified`.
pub(crate) const GLOB_SORT_IN_ENGINE: &str = "globSortInEngine";

/// Opt-in key beyond the contract: `true` ends rg as soon as its stdout
/// outgrows `rawOutputMaxBytes` and reports the overflow of a truncated
/// stdout at once. The contract instead lets rg finish, so an exit outside
/// {0, 1} or an executor timeout that comes later is reported instead of
/// the overflow; absent or `false` keeps exactly that.
pub(crate) const STOP_AT_RAW_OUTPUT_CAP: &str = "stopAtRawOutputCap";

/// Opt-in key beyond the contract: a positive integer `D` that, with
/// `sampleOverCapGlobResults: true`, samples an over-cap glob page level
/// by level down to `D` levels below the search root (docs/contract.md
/// §5.7's round-robin at every level). `1` is exactly the contract's
/// top-level sampling, texts included; absent or `null` keeps the
/// contract's behaviour.
pub(crate) const GLOB_SAMPLE_DEPTH: &str = "globSampleDepth";

const GRACE_MS: &str = "graceMs";

const STDERR_MAX_BYTES: &str = "stderrMaxBytes";

/// An opt-in positive integer: absent or `null` is `None` (layer 1 checks
/// it is a number, layer 2 that it is an integer ≥ 1).
fn opt_in_number(
    object: &serde_json::Map<String, Value>,
    key: &'static str,
) -> Result<Option<f64>, ConfigError> {
    match object.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or(ConfigError::NotANumber(key)),
        Some(_) => Err(ConfigError::NotANumber(key)),
    }
}

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
pub(crate) struct RawConfig {
    pub sample_over_cap_glob_results: bool,
    /// The [`GLOB_SORT_IN_ENGINE`] opt-in.
    pub glob_sort_in_engine: bool,
    /// The [`STOP_AT_RAW_OUTPUT_CAP`] opt-in.
    pub stop_at_raw_output_cap: bool,
    /// The [`GLOB_SAMPLE_DEPTH`] opt-in, unchecked.
    pub glob_sample_depth: Option<f64>,
    /// Values of [`NUMERIC_KEYS`], in that order.
    pub numbers: [f64; NUMERIC_COUNT],
    /// `graceMs` and `stderrMaxBytes`, read only for 0.1.0-rc.8.
    pub subprocess: Option<[f64; 2]>,
}

/// A validated config. It serialises to the config object it stands for
/// and deserialises through both validation layers, so a typed config is
/// always one the load accepts.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", try_from = "Value")]
pub struct Config {
    /// `sampleOverCapGlobResults`.
    pub sample_over_cap_glob_results: bool,
    /// `globMaxResults`.
    pub glob_max_results: ConfigNumber,
    /// `grepMaxMatches`.
    pub grep_max_matches: ConfigNumber,
    /// `grepMaxLineBytes`.
    pub grep_max_line_bytes: ConfigNumber,
    /// `searchMetaMaxBytes`.
    pub search_meta_max_bytes: ConfigNumber,
    /// `rawOutputMaxBytes`.
    pub raw_output_max_bytes: ConfigNumber,
    /// `timeoutMs`.
    pub timeout_ms: ConfigNumber,
    /// The `globSortInEngine` opt-in (not serialised when off).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub glob_sort_in_engine: bool,
    /// The `stopAtRawOutputCap` opt-in (not serialised when off).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub stop_at_raw_output_cap: bool,
    /// The `globSampleDepth` opt-in (not serialised when absent).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub glob_sample_depth: Option<ConfigNumber>,
    /// The keys only 0.1.0-rc.8 knows: present exactly when the config
    /// was validated for that release ([`Config::release`]).
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub subprocess: Option<SubprocessKeys>,
}

/// The config keys of 0.1.0-rc.8's subprocess seam.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubprocessKeys {
    /// `graceMs`: SIGTERM to SIGKILL of an aborted rg, and the bound on
    /// draining its pipes after exit (at most [`MAX_GRACE_MS`]).
    pub grace_ms: ConfigNumber,
    /// `stderrMaxBytes`: how much of rg's stderr tail is kept.
    pub stderr_max_bytes: ConfigNumber,
}

impl Default for SubprocessKeys {
    fn default() -> Self {
        Self {
            grace_ms: ConfigNumber::new(SEARCH_GRACE_MS),
            stderr_max_bytes: ConfigNumber::new(SEARCH_STDERR_MAX_BYTES),
        }
    }
}

impl RawConfig {
    /// Layer 1, the config schema, as `release` reads it: 0.1.0-rc.8 also reads
    /// `graceMs` and `stderrMaxBytes`, declared before `timeoutMs`.
    pub(crate) fn parse_as(value: &Value, release: Release) -> Result<Self, ConfigError> {
        let object = value.as_object().ok_or(ConfigError::NotAnObject)?;
        let sample_over_cap_glob_results = match object.get("sampleOverCapGlobResults") {
            None | Some(Value::Null) => return Err(ConfigError::MissingSampling),
            Some(Value::Bool(b)) => *b,
            Some(_) => return Err(ConfigError::SamplingNotBoolean),
        };
        let number = |key: &'static str, default: u64| match object.get(key) {
            None | Some(Value::Null) => Ok(default as f64),
            Some(Value::Number(n)) => n.as_f64().ok_or(ConfigError::NotANumber(key)),
            Some(_) => Err(ConfigError::NotANumber(key)),
        };
        let mut numbers = [0.0; NUMERIC_COUNT];
        let mut subprocess = None;
        for (value, (key, default)) in numbers.iter_mut().zip(NUMERIC_KEYS) {
            if key == "timeoutMs" && release == Release::Rc8 {
                subprocess = Some([
                    number(GRACE_MS, SEARCH_GRACE_MS)?,
                    number(STDERR_MAX_BYTES, SEARCH_STDERR_MAX_BYTES)?,
                ]);
            }
            *value = number(key, default)?;
        }
        Ok(Self {
            sample_over_cap_glob_results,
            glob_sort_in_engine: opt_in(object, GLOB_SORT_IN_ENGINE)?,
            stop_at_raw_output_cap: opt_in(object, STOP_AT_RAW_OUTPUT_CAP)?,
            glob_sample_depth: opt_in_number(object, GLOB_SAMPLE_DEPTH)?,
            numbers,
            subprocess,
        })
    }

    /// Layer 2: every numeric key is an integer ≥ 1 (first failure wins).
    pub(crate) fn validate(&self) -> Result<Config, ConfigError> {
        let positive = |key, number| {
            ConfigNumber::from_f64(number).ok_or(ConfigError::NotPositiveInteger(key))
        };
        let mut out = [ConfigNumber::new(1); NUMERIC_COUNT];
        let mut subprocess = None;
        for ((valid, number), (key, _)) in out.iter_mut().zip(self.numbers).zip(NUMERIC_KEYS) {
            // 0.1.0-rc.8 checks its two keys after rawOutputMaxBytes.
            if let (Some([grace, stderr]), "timeoutMs") = (self.subprocess, key) {
                let grace_ms = positive(GRACE_MS, grace)?;
                if grace_ms.get() > MAX_GRACE_MS as f64 {
                    return Err(ConfigError::TooLarge(GRACE_MS, MAX_GRACE_MS));
                }
                let stderr_max_bytes = positive(STDERR_MAX_BYTES, stderr)?;
                subprocess = Some(SubprocessKeys {
                    grace_ms,
                    stderr_max_bytes,
                });
            }
            // No upper bound in the contract: the number is kept as is.
            *valid = positive(key, number)?;
        }
        // The fields in the table's order (the round-trip test proves
        // each lands under its own key).
        let [
            glob_max_results,
            grep_max_matches,
            grep_max_line_bytes,
            search_meta_max_bytes,
            raw_output_max_bytes,
            timeout_ms,
        ] = out;
        // The opt-in is checked after the contract's keys, so a config
        // with a contract error fails with the contract's message.
        let glob_sample_depth = match self.glob_sample_depth {
            None => None,
            Some(depth) => Some(
                ConfigNumber::from_f64(depth)
                    .ok_or(ConfigError::NotPositiveInteger(GLOB_SAMPLE_DEPTH))?,
            ),
        };
        Ok(Config {
            sample_over_cap_glob_results: self.sample_over_cap_glob_results,
            glob_max_results,
            grep_max_matches,
            grep_max_line_bytes,
            search_meta_max_bytes,
            raw_output_max_bytes,
            timeout_ms,
            glob_sort_in_engine: self.glob_sort_in_engine,
            stop_at_raw_output_cap: self.stop_at_raw_output_cap,
            glob_sample_depth,
            subprocess,
        })
    }
}

impl TryFrom<Value> for Config {
    type Error = ConfigError;

    fn try_from(value: Value) -> Result<Self, ConfigError> {
        Self::from_json(&value)
    }
}

impl Config {
    /// Both layers, as a load of the seed's release applies them.
    pub fn from_json(value: &Value) -> Result<Self, ConfigError> {
        Self::from_json_as(value, Release::Seed)
    }

    /// Both layers, as a load of `release` applies them.
    pub fn from_json_as(value: &Value, release: Release) -> Result<Self, ConfigError> {
        RawConfig::parse_as(value, release)?.validate()
    }

    /// The release this config was validated for.
    pub fn release(&self) -> Release {
        match self.subprocess {
            Some(_) => Release::Rc8,
            None => Release::Seed,
        }
    }

    /// The defaults with the required sampling choice.
    pub fn with_sampling(sample_over_cap_glob_results: bool) -> Self {
        Self {
            sample_over_cap_glob_results,
            glob_max_results: ConfigNumber::new(GLOB_MAX_RESULTS),
            grep_max_matches: ConfigNumber::new(GREP_MAX_MATCHES),
            grep_max_line_bytes: ConfigNumber::new(GREP_MAX_LINE_BYTES),
            search_meta_max_bytes: ConfigNumber::new(SEARCH_META_MAX_BYTES),
            raw_output_max_bytes: ConfigNumber::new(RAW_OUTPUT_MAX_BYTES),
            timeout_ms: ConfigNumber::new(SEARCH_TIMEOUT_MS),
            glob_sort_in_engine: false,
            stop_at_raw_output_cap: false,
            glob_sample_depth: None,
            subprocess: None,
        }
    }

    pub(crate) fn glob_cap(&self) -> usize {
        self.glob_max_results.as_usize_saturating()
    }

    /// The `globSampleDepth` opt-in when it asks for more than the
    /// contract's top level (only then do the model-visible texts change).
    pub(crate) fn recursive_glob_sample_depth(&self) -> Option<ConfigNumber> {
        self.glob_sample_depth
            .filter(|depth| self.sample_over_cap_glob_results && depth.get() > 1.0)
    }

    pub(crate) fn grep_cap(&self) -> usize {
        self.grep_max_matches.as_usize_saturating()
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
        self.grep_max_line_bytes.as_usize_saturating()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// CONTRACT §10.2 #10
    #[test]
    fn requires_an_explicit_over_cap_glob_sampling_choice() {
        let err = RawConfig::parse_as(&json!({}), Release::Seed).unwrap_err();
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
    fn the_sample_depth_opt_in_is_a_positive_integer_checked_after_the_contracts_keys() {
        let off =
            Config::from_json(&json!({"sampleOverCapGlobResults": true, "globSampleDepth": null}));
        assert_eq!(off.unwrap(), Config::with_sampling(true));
        let on = json!({"sampleOverCapGlobResults": true, "globSampleDepth": 3});
        let on = Config::from_json(&on).unwrap();
        assert_eq!(on.glob_sample_depth, Some(ConfigNumber::new(3)));
        assert_eq!(on.recursive_glob_sample_depth(), Some(ConfigNumber::new(3)));
        assert_eq!(
            serde_json::to_value(&on).unwrap()["globSampleDepth"],
            json!(3)
        );
        for (value, message) in [
            (
                json!(0),
                "tool-fs-search: globSampleDepth must be a positive integer",
            ),
            (
                json!(-2),
                "tool-fs-search: globSampleDepth must be a positive integer",
            ),
            (
                json!(1.5),
                "tool-fs-search: globSampleDepth must be a positive integer",
            ),
            (
                json!("2"),
                "tool-fs-search: config.globSampleDepth must be a number",
            ),
            (
                json!(true),
                "tool-fs-search: config.globSampleDepth must be a number",
            ),
        ] {
            let bad = json!({"sampleOverCapGlobResults": true, "globSampleDepth": value});
            assert_eq!(Config::from_json(&bad).unwrap_err().to_string(), message);
        }
        let both = json!({"sampleOverCapGlobResults": true, "globSampleDepth": 0, "timeoutMs": 0});
        assert_eq!(
            Config::from_json(&both).unwrap_err(),
            ConfigError::NotPositiveInteger("timeoutMs")
        );
        let sampling_off = json!({"sampleOverCapGlobResults": false, "globSampleDepth": 2});
        let sampling_off = Config::from_json(&sampling_off).unwrap();
        assert_eq!(sampling_off.recursive_glob_sample_depth(), None);
        let one = json!({"sampleOverCapGlobResults": true, "globSampleDepth": 1});
        assert_eq!(
            Config::from_json(&one)
                .unwrap()
                .recursive_glob_sample_depth(),
            None
        );
    }

    #[test]
    fn the_key_table_matches_the_parser_and_a_typed_config_round_trips() {
        let mut object = serde_json::Map::new();
        for key in CONFIG_KEYS {
            let value = match key.kind {
                ConfigKind::RequiredBoolean | ConfigKind::OptIn => json!(true),
                ConfigKind::PositiveInteger { default } => json!(default + 1),
                ConfigKind::OptInPositiveInteger => json!(3),
            };
            object.insert(key.name.to_owned(), value);
        }
        let config = Config::from_json(&Value::Object(object.clone())).unwrap();
        assert_eq!(
            serde_json::to_value(&config).unwrap(),
            Value::Object(object)
        );
        let typed: Config = serde_json::from_value(serde_json::to_value(&config).unwrap()).unwrap();
        assert_eq!(typed, config);
        let defaults = Config::from_json(&json!({"sampleOverCapGlobResults": true})).unwrap();
        assert_eq!(defaults, Config::with_sampling(true));
        let defaults = serde_json::to_value(&defaults).unwrap();
        for key in CONFIG_KEYS {
            if let ConfigKind::PositiveInteger { default } = key.kind {
                assert_eq!(defaults[key.name], json!(default), "{}", key.name);
            }
        }
        let bad = serde_json::from_value::<Config>(
            json!({"sampleOverCapGlobResults": true, "timeoutMs": 0}),
        );
        assert_eq!(
            bad.unwrap_err().to_string(),
            "tool-fs-search: timeoutMs must be a positive integer"
        );
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        for (n, js) in [
            (1.0, "1"),
            (100.0, "100"),
            (1e20, "100000000000000000000"),
            (18446744073709551616.0, "18446744073709552000"),
            (123456789012345680000.0, "123456789012345680000"),
            (1e21, "1e+21"),
            (1.5e300, "1.5e+300"),
            (1e308, "1e+308"),
            (f64::MAX, "1.7976931348623157e+308"),
            (2147483648.0, "2147483648"),
            (0.5, "0.5"),
            (1.25e-7, "1.25e-7"),
            (0.000001, "0.000001"),
            (-3.0, "-3"),
        ] {
            assert_eq!(js_number_to_string(n), js, "{n}");
        }
        let config = json!({"sampleOverCapGlobResults": true, "globMaxResults": 1e308});
        let config = Config::from_json(&config).unwrap();
        assert_eq!(config.glob_max_results.to_string(), "1e+308");
        assert_eq!(config.glob_max_results.as_u64_saturating(), u64::MAX);
        assert_eq!(config.glob_cap(), usize::MAX);
    }

    #[test]
    fn numbers_serialise_as_json_stringify_writes_them() {
        let config = json!({
            "sampleOverCapGlobResults": true,
            "globMaxResults": 1e308,
            "timeoutMs": 1e20,
            "grepMaxMatches": 18446744073709551615u64,
            "grepMaxLineBytes": 4294967296u64,
        });
        let config = Config::from_json(&config).unwrap();
        let text = serde_json::to_string(&config).unwrap();
        for expected in [
            r#""globMaxResults":1e+308"#,
            r#""timeoutMs":100000000000000000000"#,
            // JavaScript reads 2^64 - 1 as 2^64, and writes that so.
            r#""grepMaxMatches":18446744073709552000"#,
            r#""grepMaxLineBytes":4294967296"#,
        ] {
            assert!(text.contains(expected), "{expected} in {text}");
        }
        // And it reads back as the same configuration.
        let back: Config = serde_json::from_str(&text).unwrap();
        assert_eq!(back, config);
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

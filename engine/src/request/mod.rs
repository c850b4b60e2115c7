//! What a call brings: the model's arguments and their checks
//! (`args`) and their raw JSON text read as `JSON.parse` reads it
//! ([`json`]), the plugin config (`config`), and the call's execution
//! context (`exec`).
//!
//! Public for their types: [`GlobArgs`], [`GrepArgs`], [`Config`] with its
//! keys ([`CONFIG_KEYS`], [`ConfigKey`], [`ConfigKind`], [`ConfigNumber`];
//! 0.1.0-rc.8's [`SubprocessKeys`]) and [`ConfigError`], [`ExecContext`] with its [`SessionHeader`].

pub(crate) mod args;
pub(crate) mod config;
pub(crate) mod exec;
pub mod json;

pub use args::{GlobArgs, GrepArgs};
pub use config::{
    CONFIG_KEYS, Config, ConfigError, ConfigKey, ConfigKind, ConfigNumber, MAX_GRACE_MS,
    SubprocessKeys,
};
pub use exec::{ExecContext, SessionHeader};

//! What a call brings: the model's arguments and their checks
//! ([`args`]) and their raw JSON text read as `JSON.parse` reads it
//! ([`json`]), the plugin config ([`config`]), and the call's execution
//! context ([`exec`]).

pub(crate) mod args;
pub(crate) mod config;
pub(crate) mod exec;
pub mod json;

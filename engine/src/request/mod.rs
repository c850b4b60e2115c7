//! What a call brings: the model's arguments and their checks
//! ([`args`]), the plugin config ([`config`]), and the call's execution
//! context ([`exec`]).

pub(crate) mod args;
pub(crate) mod config;
pub(crate) mod exec;

//! Helpers shared by several stages and owned by none: random
//! identifiers ([`ids`]), the ECMAScript string rules the contract pins
//! ([`text`]), and work split over threads ([`parallel`]).

pub(crate) mod ids;
pub(crate) mod parallel;
pub(crate) mod text;

//! Shared helpers for the end-to-end tests.
pub mod alone;
pub mod reliability;
pub mod tree;

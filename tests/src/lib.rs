//! Shared helpers for the end-to-end tests.
pub mod reliability;
pub mod tree;

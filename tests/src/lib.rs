//! Shared helpers for the end-to-end tests.
pub mod own_process;
pub mod reliability;
pub mod rg_texts;
pub mod tree;

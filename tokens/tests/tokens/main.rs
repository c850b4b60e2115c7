//! The tokenizer crate's tests: golden ids from Hugging Face's Python
//! `tokenizers`, the two encoding routes agreeing, the KV-prefix
//! comparison, and load errors. One test binary, one module per theme.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod errors;
mod golden;
mod prefix;
mod routes;

//! The end-to-end tests of the engine: real bash, real rg, real temp trees
//! (fake rg scripts only where a fault is injected, and the test names say
//! so). One test binary, one module per theme.

// Test code: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used, clippy::expect_used)]
// Tests print their measurements (`--nocapture`).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod appendix_a;
mod architecture;
mod direct_executor;
mod docs_contract;
mod integration;
mod process_hygiene;
mod rc8_integration;
mod reliability_cancellation;
mod reliability_config_args;
mod reliability_flood_memory;
mod reliability_injection;
mod reliability_load;
mod reliability_non_utf8;
mod reliability_output_bounds;
mod reliability_rg_faults;
mod reliability_spill_faults;
mod sandbox_confinement;
mod sandbox_kill_path;
mod shell_quote;

//! The workbench's exit statuses, for every subcommand (the headless
//! interface docs/design.md documents): scripts and CI branch on them.

/// Success: the call ran (a tool error is a result, not a failure), the
/// transcripts replayed unchanged.
pub const SUCCESS: u8 = 0;
/// A replay found changes, or a result went over `--max-tokens`.
pub const CHANGED: u8 = 1;
/// Usage, config, setup or load failure; an unusable file.
pub const ERROR: u8 = 2;

/// The status of a command stopped by signal `number`: 128 + `number`, as
/// a shell reports it.
pub fn signalled(number: i32) -> u8 {
    u8::try_from(128 + number).unwrap_or(u8::MAX)
}

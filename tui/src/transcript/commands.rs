//! `workbench replay FILE... [--update]` and `workbench record --tree DIR
//! --config JSON|@FILE --out FILE < calls.jsonl`: the headless front of
//! the transcript library. Exit status: replay 0 when every record
//! matches (or was updated), 1 when any record changed (a unified diff per
//! changed record on stdout), 2 when a file cannot be read, parsed or set
//! up (a message naming the file and line on stderr). Record: 0 or 2.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use super::error::TranscriptError;
use super::record::{parse_calls, record as record_calls, save};
use super::replay::replay_file;

/// Exit status of a replay with changes.
pub const EXIT_CHANGED: u8 = 1;
/// Exit status of an unusable file or setup.
pub const EXIT_ERROR: u8 = 2;

pub(crate) fn out(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}

/// Replays `files`; with `update`, rewrites each changed file instead of
/// failing. Returns the exit status.
pub async fn replay(files: &[PathBuf], update: bool) -> u8 {
    let mut status = 0;
    let temp = std::env::temp_dir();
    for file in files {
        match replay_one(file, update, &temp).await {
            Ok(code) => status = status.max(code),
            Err(e) => {
                eprintln!("workbench replay: {e}");
                status = EXIT_ERROR;
            }
        }
    }
    status
}

async fn replay_one(file: &Path, update: bool, temp: &Path) -> Result<u8, TranscriptError> {
    let replay = replay_file(file, temp).await?;
    let total = replay.checks.len();
    let changed = replay.changed().count();
    if replay.transcript.header.env.rg != replay.rg_now {
        eprintln!(
            "workbench replay: note: {} was recorded with {}, this is {}",
            replay.file, replay.transcript.header.env.rg, replay.rg_now
        );
    }
    if changed == 0 {
        out(&format!("ok {}: {total} records match\n", replay.file));
        return Ok(0);
    }
    if update {
        save(file, &replay.updated())?;
        out(&format!(
            "updated {}: {changed} of {total} records rewritten\n",
            replay.file
        ));
        return Ok(0);
    }
    out(&replay.diffs());
    out(&format!(
        "CHANGED {}: {changed} of {total} records differ (run `workbench replay --update {}` to accept)\n",
        replay.file, replay.file
    ));
    Ok(EXIT_CHANGED)
}

/// Records the calls on stdin. Returns the exit status.
pub async fn record(tree: &Path, config: Option<&str>, out_file: &Path) -> u8 {
    match record_inner(tree, config, out_file).await {
        Ok(count) => {
            out(&format!(
                "recorded {count} calls to {}\n",
                out_file.display()
            ));
            0
        }
        Err(e) => {
            eprintln!("workbench record: {e}");
            EXIT_ERROR
        }
    }
}

async fn record_inner(
    tree: &Path,
    config: Option<&str>,
    out_file: &Path,
) -> Result<usize, TranscriptError> {
    let config =
        crate::setup::read_config(config).map_err(|e| TranscriptError::Other(e.to_string()))?;
    let mut input = String::new();
    std::io::stdin()
        .read_to_string(&mut input)
        .map_err(|e| TranscriptError::io("<stdin>", e))?;
    let calls = parse_calls("<stdin>", &input)?;
    let transcript = record_calls(tree, config, calls, "<stdin>", out_file).await?;
    save(out_file, &transcript)?;
    Ok(transcript.records.len())
}

//! `workbench replay FILE... [--update] [--max-tokens N]` and `workbench record --tree DIR
//! --config JSON|@FILE --out FILE < calls.jsonl`: the headless front of
//! the transcript library. Exit status: replay 0 when every record
//! matches (or was updated), 1 when any record changed (a unified diff per
//! changed record on stdout), 2 when a file cannot be read, parsed or set
//! up (a message naming the file and line on stderr). With `--max-tokens
//! N`, 1 also when any result's text is more than N tokens (each such
//! record named on stdout). Records carry their text's token count; replay
//! counts (loading the tokenizer) only when a record carries one, or with
//! `--update` or `--max-tokens`. Record: 0 or 2.
//! `workbench freeze RECORDING [--workdir DIR] --out TRANSCRIPT --tree-out
//! DIR` makes a live recording self-contained and replays it: 0, 1 or 2
//! likewise. Every file these commands rewrite (`--update`, `--out`,
//! the manifest) is replaced at once: a failed write leaves the old one.

use std::path::Path;

use super::print;
use crate::cli::ReplayArgs;
use crate::console::stderr_line;
use crate::executor::ExecutorKind;
use crate::exit;
use crate::tokens::Tokenizer;
use crate::transcript::error::TranscriptError;
use crate::transcript::freeze::freeze as freeze_recording;
use crate::transcript::record::{parse_calls, record as record_calls, save};
use crate::transcript::replay::{Difference, Replay, replay_file};

/// Replays `args.files`; with `update`, rewrites each changed file
/// instead of failing. Returns the exit status.
pub async fn replay(args: &ReplayArgs) -> u8 {
    crate::signals::install();
    let mut status = exit::SUCCESS;
    let temp = std::env::temp_dir();
    let mut tokens = Tokens::new(args.tokenizer.file());
    for file in &args.files {
        match replay_one(file, args, &mut tokens, &temp).await {
            Ok(code) => status = status.max(code),
            Err(TranscriptError::Stopped(signal)) => return stopped("replay", signal),
            Err(e) => {
                stderr_line!("workbench replay: {e}");
                status = exit::ERROR;
            }
        }
    }
    status
}

/// The tokenizer, loaded the first time a replay needs it.
struct Tokens<'a> {
    file: Option<&'a Path>,
    loaded: Option<Tokenizer>,
}

impl<'a> Tokens<'a> {
    fn new(file: Option<&'a Path>) -> Self {
        Self { file, loaded: None }
    }

    async fn get(&mut self) -> Result<&Tokenizer, TranscriptError> {
        if self.loaded.is_none() {
            let handle = crate::tokens::load_in_background(self.file);
            let tokenizer = crate::tokens::join(handle)
                .await
                .map_err(|e| TranscriptError::Other(format!("--tokenizer: {e}")))?;
            self.loaded = Some(tokenizer);
        }
        self.loaded
            .as_ref()
            .ok_or_else(|| TranscriptError::Other("the tokenizer did not load".into()))
    }
}

async fn replay_one(
    file: &Path,
    args: &ReplayArgs,
    tokens: &mut Tokens<'_>,
    temp: &Path,
) -> Result<u8, TranscriptError> {
    let update = args.update;
    let mut replay = replay_file(file, temp, args.sandbox.kind()).await?;
    if update || args.max_tokens.is_some() || replay.carries_tokens() {
        replay.count_tokens(tokens.get().await?);
    }
    let over = over_budget(&replay, args.max_tokens);
    let total = replay.checks.len();
    let changed = replay.changed().count();
    if replay.transcript.header.env.rg != replay.rg_now {
        stderr_line!(
            "workbench replay: note: {} was recorded with {}, this is {}",
            replay.file,
            replay.transcript.header.env.rg,
            replay.rg_now
        );
    }
    if changed == 0 {
        print(&format!(
            "ok {}: {total} records match\n{over}",
            replay.file
        ));
        return Ok(budget_status(&over));
    }
    if update {
        save(file, &replay.updated())?;
        print(&format!(
            "updated {}: {changed} of {total} records rewritten\n{over}",
            replay.file
        ));
        return Ok(budget_status(&over));
    }
    print(&replay.diffs());
    print(&format!(
        "CHANGED {}: {changed} of {total} records differ (run `workbench replay --update {}` to accept)\n{}",
        replay.file,
        replay.file,
        difference_kinds(&replay)
    ));
    print(&over);
    Ok(exit::CHANGED)
}

/// The changed records by kind of difference: only in rg's own text
/// (its stderr, glob's file order; `--update` then adds this rg's
/// variant), or in the engine's text.
fn difference_kinds(replay: &Replay) -> String {
    let names = |kind| {
        replay
            .changed_by(kind)
            .map(|c| format!("\"{}\"", c.record.call.name))
            .collect::<Vec<_>>()
    };
    let rg_text = names(Difference::RgText);
    let engine = names(Difference::Engine);
    let mut out = String::new();
    if !rg_text.is_empty() {
        out.push_str(&format!(
            "  {} only in rg's own text (its stderr, its file order; recorded with {}, this is {}): {}\n",
            rg_text.len(),
            replay.transcript.header.env.rg,
            replay.rg_now,
            rg_text.join(", ")
        ));
    }
    if !engine.is_empty() {
        out.push_str(&format!(
            "  {} in the engine's text or the kind of result: {}\n",
            engine.len(),
            engine.join(", ")
        ));
    }
    out
}

/// One line per result whose current text is more than `max` tokens.
fn over_budget(replay: &Replay, max: Option<u64>) -> String {
    let Some(max) = max else {
        return String::new();
    };
    replay
        .checks
        .iter()
        .filter_map(|check| {
            let tokens = check.current.tokens?;
            (tokens > max).then(|| {
                format!(
                    "OVER BUDGET {}:{} record \"{}\": {tokens} tokens > --max-tokens {max}\n",
                    replay.file, check.record.line, check.record.call.name
                )
            })
        })
        .collect()
}

fn budget_status(over: &str) -> u8 {
    if over.is_empty() { 0 } else { exit::CHANGED }
}

/// The exit status of a command stopped by `signal` (its temp trees are
/// gone by now: they were dropped as the command unwound).
fn stopped(command: &str, signal: i32) -> u8 {
    stderr_line!("workbench {command}: stopped by signal {signal}");
    exit::signalled(signal)
}

/// Records the calls on stdin, each result with its text's token count
/// (`tokenizer`: a `tokenizer.json`, else the embedded one). Returns the
/// exit status.
pub async fn record(
    tree: &Path,
    config: Option<&str>,
    out_file: &Path,
    tokenizer: Option<&Path>,
) -> u8 {
    crate::signals::install();
    match record_inner(tree, config, out_file, tokenizer).await {
        Ok(count) => {
            print(&format!(
                "recorded {count} calls to {}\n",
                out_file.display()
            ));
            0
        }
        Err(TranscriptError::Stopped(signal)) => stopped("record", signal),
        Err(e) => {
            stderr_line!("workbench record: {e}");
            exit::ERROR
        }
    }
}

async fn record_inner(
    tree: &Path,
    config: Option<&str>,
    out_file: &Path,
    tokenizer: Option<&Path>,
) -> Result<usize, TranscriptError> {
    let tokenizer = crate::tokens::load_in_background(tokenizer);
    let config =
        crate::setup::read_config(config).map_err(|e| TranscriptError::Other(e.to_string()))?;
    // Blocking, on its own thread, so that a signal is not left waiting.
    let reading = tokio::task::spawn_blocking(|| {
        crate::bounded::read_stream(std::io::stdin(), crate::bounded::TRANSCRIPT_MAX_BYTES)
    });
    let stop = crate::signals::install();
    let read = tokio::select! {
        read = reading => read.map_err(|e| std::io::Error::other(e.to_string())).and_then(|r| r),
        signal = stop.wait() => return Err(TranscriptError::Stopped(signal)),
    };
    let input = read
        .and_then(|bytes| {
            String::from_utf8(bytes).map_err(|_| {
                std::io::Error::new(std::io::ErrorKind::InvalidData, "not valid UTF-8")
            })
        })
        .map_err(|e| TranscriptError::io("<stdin>", e))?;
    let calls = parse_calls("<stdin>", &input)?;
    let mut transcript = record_calls(tree, config, calls, "<stdin>", out_file).await?;
    let tokenizer = crate::tokens::join(tokenizer)
        .await
        .map_err(|e| TranscriptError::Other(format!("--tokenizer: {e}")))?;
    for record in &mut transcript.records {
        record.outcome.tokens = Some(tokenizer.count(&record.outcome.text) as u64);
    }
    save(out_file, &transcript)?;
    Ok(transcript.records.len())
}

/// `workbench freeze`: the exit status (0 frozen and replaying with no
/// differences, 1 frozen but differing, 2 error).
pub async fn freeze(
    recording: &Path,
    workdir: Option<&Path>,
    out_file: &Path,
    tree_out: &Path,
) -> u8 {
    crate::signals::install();
    let frozen = match freeze_recording(recording, workdir, out_file, tree_out) {
        Ok(frozen) => frozen,
        Err(e) => {
            stderr_line!("workbench freeze: {e}");
            return exit::ERROR;
        }
    };
    for renamed in &frozen.renamed {
        stderr_line!("workbench freeze: note: {renamed}");
    }
    for skipped in &frozen.skipped {
        stderr_line!("workbench freeze: note: skipped {skipped} (not a file or directory)");
    }
    let temp = std::env::temp_dir();
    let replay = match replay_file(out_file, &temp, ExecutorKind::Local).await {
        Ok(replay) => replay,
        Err(TranscriptError::Stopped(signal)) => return stopped("freeze", signal),
        Err(e) => {
            stderr_line!("workbench freeze: the frozen transcript does not replay: {e}");
            return exit::ERROR;
        }
    };
    let summary = format!(
        "froze {} records to {} (tree {}: {} files, {} bytes)",
        frozen.records,
        out_file.display(),
        frozen.manifest.display(),
        frozen.files,
        frozen.bytes
    );
    if replay.all_match() {
        print(&format!("{summary}; they replay with no differences\n"));
        return exit::SUCCESS;
    }
    print(&replay.diffs());
    print(&format!(
        "{summary}; but {} of them differ on the frozen tree (changed since recorded?)\n",
        replay.changed().count()
    ));
    exit::CHANGED
}

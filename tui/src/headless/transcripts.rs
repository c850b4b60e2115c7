//! `workbench replay FILE... [--update | --add-variant] [--max-tokens N] [--junit FILE]
//! [--format human|github] [--jobs N] [--shard K/N] [--contract RELEASE]` (as
//! RELEASE instead of each header's; `--update` refuses a file of
//! another release, exit 2) and `workbench record --tree DIR
//! --config JSON|@FILE --out FILE < calls.jsonl`: the headless front of
//! the transcript library. Exit status: replay 0 when every record
//! matches (or was updated), 1 when any record changed (a unified diff per
//! changed record on stdout), 2 when a file cannot be read, parsed or set
//! up (a message naming the file and line on stderr). With `--max-tokens
//! N`, 1 also when any result's text is more than N tokens (each such
//! record named on stdout). Records carry their text's token count; replay
//! counts (loading the tokenizer) only when a record carries one, or with
//! `--update` or `--max-tokens`. `--host HOST|auto` names each record
//! whose current result that host's lens would cut (`auto`: each record's
//! lens from the MCP client its recording names, see
//! [`fs_search_lens::lens_for_client_version`]); with `--fail-on-cut`
//! such a record makes the status 1. `--jobs` and `--shard` choose how many
//! records run at once and which ([`fs_search_transcript::replay_files`]);
//! `--junit` and `--format github` add reports
//! ([`fs_search_transcript::junit_report`],
//! [`fs_search_transcript::github_annotations`]); none of them changes the exit status
//! (but a report file that cannot be written is 2).
//! Record: 0 or 2.
//! `workbench freeze RECORDING [--workdir DIR] --out TRANSCRIPT --tree-out
//! DIR [--also-rg DIR]...` makes a live recording self-contained (with
//! each `--also-rg`'s variants, [`super::rg_variants`]) and replays it
//! under every rg named: 0, 1 or 2 likewise (1 also for a recording with no calls, nothing written). Every file these commands rewrite (`--update`, `--out`,
//! the manifest) is replaced at once: a failed write leaves the old one.

use std::path::Path;
use std::process::ExitCode;

use super::print;
use super::rg_variants::AlsoRgOutcome;
use crate::cli::{FreezeArgs, RecordArgs, ReplayArgs, ReplayFormat};
use crate::error::Error;
use fs_search_engine::release::Release;
use fs_search_process::ExecutorKind;
use fs_search_process::exit;
use fs_search_process::stderr_line;
use fs_search_transcript::OtherRg;
use fs_search_transcript::TranscriptError;
use fs_search_transcript::{BatchOptions, FileResult, default_jobs, replay_files};
use fs_search_transcript::{FileReport, ReportOptions, other_release_note, other_rg_note};
use fs_search_transcript::{Frozen, Prepared, prepare_freeze};
use fs_search_transcript::{Replay, replay_file};
use fs_search_transcript::{github_annotations, github_summary, human_text, junit_report};
use fs_search_transcript::{over_budget_text, replay_fails};
use fs_search_transcript::{parse_calls, record_calls, save_transcript};

/// Replays `args.files` (`--jobs` at once, `--shard`'s share); with
/// `update`, rewrites each changed file instead of failing. Reports on
/// stdout as `--format` says, and to `--junit`'s file. Returns the exit
/// status, or the failure that stopped it before any file was replayed
/// or by a signal (the files' own errors are reported as they come, 2).
pub(crate) async fn replay(args: &ReplayArgs) -> Result<ExitCode, Error> {
    fs_search_process::install_signals();
    let format =
        ReplayFormat::resolve(args.format, std::env::var("GITHUB_ACTIONS").ok().as_deref());
    let options = BatchOptions {
        jobs: args
            .jobs
            .map_or_else(default_jobs, |n| usize::try_from(n).unwrap_or(1)),
        shard: args.shard,
        temp_parent: std::env::temp_dir(),
        count_tokens: args.update || args.add_variant || args.max_tokens.is_some(),
        tokenizer: args.tokenizer.file().map(Path::to_path_buf),
        executor: args.sandbox.kind(),
        release: args.contract,
    };
    if args.update
        && let Some(release) = args.contract
        && let Some(line) = update_refusal(&args.files, release)
    {
        stderr_line!("workbench replay: {line}");
        return Ok(ExitCode::from(exit::ERROR));
    }
    let report_options = ReportOptions {
        max_tokens: args.max_tokens,
        shard: args.shard,
    };
    let lens = match args.host.as_deref().map(HostChoice::parse) {
        Some(Ok(lens)) => Some(lens),
        Some(Err(source)) => {
            return Err(Error::Host {
                command: "replay",
                source,
            });
        }
        None => None,
    };
    let mut status = exit::SUCCESS;
    let mut reports = Vec::new();
    let run = replay_files(&args.files, &options, |file, result| {
        let report = report_file(file, result, args, lens, &report_options, &mut status);
        if format == ReplayFormat::Github {
            print(&github_annotations(&report, &report_options));
        }
        reports.push(report);
    })
    .await;
    if let Err(source @ TranscriptError::Stopped(_)) = run {
        return Err(Error::Transcript {
            command: "replay",
            source,
        });
    }
    if let Err(e) = run {
        stderr_line!("workbench replay: {e}");
        status = exit::ERROR;
    }
    if let Some(junit_file) = &args.junit {
        let xml = junit_report(&reports, &report_options);
        if let Err(e) = fs_search_process::replace_file(junit_file, xml.as_bytes()) {
            stderr_line!("workbench replay: --junit {}: {e}", junit_file.display());
            status = exit::ERROR;
        }
    }
    if format == ReplayFormat::Github
        && let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|s| !s.is_empty())
        && let Err(e) = append(
            Path::new(&summary),
            &github_summary(&reports, &report_options),
        )
    {
        stderr_line!(
            "workbench replay: $GITHUB_STEP_SUMMARY {}: {e}",
            Path::new(&summary).display()
        );
        status = exit::ERROR;
    }
    Ok(ExitCode::from(status))
}

/// Why `--update --contract RELEASE` refuses `files`: the first whose
/// header names another release (its results are that release's; a
/// release's own variant is added with `--add-variant`). Files that
/// cannot be read are left to the replay to report.
fn update_refusal(files: &[std::path::PathBuf], release: Release) -> Option<String> {
    files.iter().find_map(|file| {
        let header = fs_search_transcript::read_transcript(file).ok()?.header;
        (header.contract != release).then(|| {
            format!(
                "--update --contract {release}: {} was recorded as {} (its header), and --update rewrites only its own release's results; add {release}'s variant with `workbench replay --add-variant --contract {release} {}`",
                file.display(),
                header.contract,
                file.display()
            )
        })
    })
}

/// Reports one file's replay as a person reads it (stdout; errors and the
/// other-rg note on stderr), rewrites it with `--update`, and raises
/// `status` to what it found.
fn report_file(
    file: &Path,
    result: FileResult,
    args: &ReplayArgs,
    lens: Option<HostChoice>,
    options: &ReportOptions,
    status: &mut u8,
) -> FileReport {
    let label = file.display().to_string();
    let done = match result {
        Ok(done) => done,
        Err(e) => {
            stderr_line!("workbench replay: {e}");
            *status = exit::ERROR;
            return FileReport {
                file: label,
                result: Err(e),
                updated: false,
            };
        }
    };
    let replay = &done.replay;
    if let Some(note) = other_rg_note(replay) {
        stderr_line!("workbench replay: note: {note}");
    }
    if let Some(note) = other_release_note(replay) {
        stderr_line!("workbench replay: note: {note}");
    }
    let mut updated = false;
    if args.update && !replay.all_match() {
        if let Err(e) = save_transcript(file, &replay.updated()) {
            stderr_line!("workbench replay: {e}");
            *status = exit::ERROR;
            return FileReport {
                file: label,
                result: Err(e),
                updated: false,
            };
        }
        updated = true;
    }
    if args.add_variant && !replay.all_match() {
        match super::rg_variants::add_variant(file, replay) {
            Ok(line) => {
                print(&line);
                print(&over_budget_text(replay, options.max_tokens));
                updated = true;
            }
            Err(e) => {
                print(&human_text(replay, options, false));
                stderr_line!("workbench replay: --add-variant: {e}");
                *status = exit::ERROR;
                return FileReport {
                    file: label,
                    result: Err(e),
                    updated: false,
                };
            }
        }
    }
    if !(args.add_variant && updated) {
        print(&human_text(replay, options, updated));
    }
    if replay_fails(replay, options, updated) {
        *status = (*status).max(exit::CHANGED);
    }
    if let Some(lens) = lens {
        let cuts = cut_by(replay, lens);
        print(&cuts.lines);
        if cuts.unchecked > 0 {
            stderr_line!(
                "workbench replay: note: {}: {} of {} records name no client a lens is known for: not checked (--host auto)",
                replay.file,
                cuts.unchecked,
                replay.checks.len()
            );
        }
        if args.fail_on_cut && !cuts.lines.is_empty() {
            *status = (*status).max(exit::CHANGED);
        }
    }
    FileReport {
        file: label,
        result: Ok(done),
        updated,
    }
}

/// The lens `--host` names: one for every record, or (`auto`) each
/// record's own, from the MCP client its recording names.
#[derive(Debug, Clone, Copy)]
enum HostChoice {
    One(&'static fs_search_lens::Lens),
    Auto,
}

impl HostChoice {
    fn parse(spec: &str) -> Result<Self, fs_search_lens::LensError> {
        if spec == "auto" {
            return Ok(Self::Auto);
        }
        fs_search_lens::resolve(spec).map(Self::One)
    }

    /// The lens for `record`, and the client it was picked by (`auto`).
    fn lens_for(
        self,
        record: &fs_search_transcript::Record,
    ) -> Option<(&'static fs_search_lens::Lens, Option<String>)> {
        match self {
            Self::One(lens) => Some((lens, None)),
            Self::Auto => {
                let client = record.call.options.client.as_ref()?;
                let lens = fs_search_lens::lens_for_client_version(
                    &client.name,
                    client.version.as_deref(),
                )?;
                let label = match &client.version {
                    Some(version) => format!("{} {version}", client.name),
                    None => client.name.clone(),
                };
                Some((lens, Some(label)))
            }
        }
    }
}

/// What `--host` found in one file.
struct Cuts {
    /// One line per record whose current result its lens would cut.
    lines: String,
    /// Records `auto` found no lens for.
    unchecked: usize,
}

/// One line per record whose current result its lens would cut: what it
/// removes and hides (the page's footer and locator found in its text);
/// with `auto`, the client the lens was picked by.
fn cut_by(replay: &Replay, choice: HostChoice) -> Cuts {
    let mut cuts = Cuts {
        lines: String::new(),
        unchecked: 0,
    };
    for check in &replay.checks {
        let Some((lens, client)) = choice.lens_for(&check.record) else {
            cuts.unchecked += 1;
            continue;
        };
        let input = fs_search_lens::ToolResultInput {
            tool: check.record.call.tool.clone(),
            args: check.record.call.args.clone(),
            text: check.current.text.clone(),
            is_error: check.current.is_error,
            duration_secs: None,
        };
        let parts = fs_search_lens::detect_parts(&input.text);
        let report = crate::host_report::HostReport::new(lens, &input, &parts);
        if report.lensed.cut == fs_search_lens::Cut::None {
            continue;
        }
        let client = client.map(|c| format!(" (client {c})")).unwrap_or_default();
        cuts.lines.push_str(&format!(
            "CUT {}:{} record \"{}\"{client}: {}\n",
            replay.file,
            check.record.line,
            check.record.call.name,
            report.summary()
        ));
    }
    cuts
}

/// Appends `text` to the file at `path` (created if missing).
fn append(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    file.write_all(text.as_bytes())
}

/// Records the calls on stdin, each result with its text's token count
/// (`tokenizer`: a `tokenizer.json`, else the embedded one). Returns the
/// exit status, or its failure (a stop by a signal included: its temp
/// trees are gone by then, dropped as the command unwound).
pub(crate) async fn record(args: &RecordArgs) -> Result<ExitCode, Error> {
    fs_search_process::install_signals();
    let out_file = &args.out;
    let count = record_inner(
        &args.tree,
        args.config.raw(),
        out_file,
        args.tokenizer.file(),
    )
    .await
    .map_err(|source| Error::Transcript {
        command: "record",
        source,
    })?;
    print(&format!(
        "recorded {count} calls to {}\n",
        out_file.display()
    ));
    Ok(ExitCode::SUCCESS)
}

async fn record_inner(
    tree: &Path,
    config: Option<&str>,
    out_file: &Path,
    tokenizer: Option<&Path>,
) -> Result<usize, TranscriptError> {
    let tokenizer = fs_search_process::load_tokenizer_in_background(tokenizer);
    let config = fs_search_process::read_config(config, Default::default())
        .map_err(|e| TranscriptError::Other(e.to_string()))?;
    // Blocking, on its own thread, so that a signal is not left waiting.
    let reading = tokio::task::spawn_blocking(|| {
        fs_search_process::read_stream(std::io::stdin(), fs_search_process::TRANSCRIPT_MAX_BYTES)
    });
    let stop = fs_search_process::install_signals();
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
    let tokenizer = fs_search_process::join_tokenizer(tokenizer)
        .await
        .map_err(|e| TranscriptError::Other(format!("--tokenizer: {e}")))?;
    for record in &mut transcript.records {
        record.outcome.tokens = Some(tokenizer.count(&record.outcome.text) as u64);
    }
    save_transcript(out_file, &transcript)?;
    Ok(transcript.records.len())
}

/// `workbench freeze`: the exit status (0 frozen and replaying with no
/// difference, the live results kept up to order; 1 when a record's
/// content differs on the frozen tree, each named with its cause, or the
/// recording holds no calls (nothing written); 2 on errors). `--out`'s
/// directory is created if missing, as `--tree-out` is.
pub(crate) async fn freeze(args: &FreezeArgs) -> Result<ExitCode, Error> {
    let failed = |source| Error::Transcript {
        command: "freeze",
        source,
    };
    let (recording, out_file, tree_out) = (&args.recording, &args.out, &args.tree_out);
    fs_search_process::install_signals();
    let temp = std::env::temp_dir();
    let also_rg = super::rg_variants::resolve_also_rg(&args.also_rg, &temp).map_err(failed)?;
    let prepared = prepare_freeze(
        recording,
        args.workdir.as_deref(),
        args.whole_tree,
        out_file,
        tree_out,
    )
    .map_err(failed)?;
    if prepared.records() == 0 {
        stderr_line!(
            "workbench freeze: warning: {} holds no calls: nothing to freeze (was anything called while it recorded?)",
            recording.display()
        );
        return Ok(ExitCode::from(exit::CHANGED));
    }
    if let Some(parent) = out_file.parent().filter(|p| !p.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(parent)
    {
        let message = format!("--out {}: {e}", parent.display());
        return Err(failed(TranscriptError::Other(message)));
    }
    let (frozen, also_rg_outcomes) = freeze_steps(prepared, out_file, tree_out, &temp, &also_rg)
        .await
        .map_err(failed)?;
    for renamed in &frozen.renamed {
        stderr_line!("workbench freeze: note: {renamed}");
    }
    for note in &frozen.notes {
        stderr_line!("workbench freeze: note: {note}");
    }
    for skipped in &frozen.skipped {
        stderr_line!("workbench freeze: note: skipped {skipped} (not a file or directory)");
    }
    let out_label = out_file.display();
    for record in &frozen.drifts {
        if let Some(note) = record.drift.note() {
            stderr_line!(
                "workbench freeze: note: {out_label}:{} record \"{}\": {note}",
                record.line,
                record.name
            );
        }
    }
    for outcome in &also_rg_outcomes {
        stderr_line!("workbench freeze: note: {}", outcome.note(out_file));
    }
    let replay = match replay_file(out_file, &temp, ExecutorKind::Local).await {
        Ok(replay) => replay,
        Err(source @ TranscriptError::Stopped(_)) => return Err(failed(source)),
        Err(e) => {
            let message = format!("the frozen transcript does not replay: {e}");
            return Err(failed(TranscriptError::Other(message)));
        }
    };
    let also_replays =
        match super::rg_variants::proof_replays(out_file, &temp, &also_rg, &also_rg_outcomes).await
        {
            Ok(replays) => replays,
            Err(source @ TranscriptError::Stopped(_)) => return Err(failed(source)),
            Err(e) => {
                let message = format!("the frozen transcript does not replay: {e}");
                return Err(failed(TranscriptError::Other(message)));
            }
        };
    let under = if also_replays.is_empty() {
        String::new()
    } else {
        let versions: Vec<&str> = std::iter::once(&replay)
            .chain(&also_replays)
            .map(|r| r.rg_now.as_str())
            .collect();
        format!(" under {}", versions.join(", "))
    };
    let summary = format!(
        "froze {} records to {} (tree {}: {} files, {} bytes of content, a manifest of {} bytes)",
        frozen.records,
        out_file.display(),
        frozen.manifest.display(),
        frozen.files,
        frozen.bytes,
        frozen.manifest_bytes
    );
    let order_only = frozen
        .drifts
        .iter()
        .filter(|d| d.drift.is_order_only())
        .count();
    let order_note = match order_only {
        0 => String::new(),
        n => format!(" ({n} of them in another order than the live session showed, noted above)"),
    };
    let content = frozen.content_changed().count();
    let all_match = replay.all_match() && also_replays.iter().all(Replay::all_match);
    if all_match && content == 0 {
        print(&format!(
            "{summary}; they replay with no differences{under}{order_note}\n"
        ));
        return Ok(ExitCode::SUCCESS);
    }
    print(&replay.diffs());
    for other in &also_replays {
        print(&other.diffs());
    }
    if content == 0 {
        // Re-derived on the same tree yet not replaying: the tree itself
        // does not pin the result (say, a record that depends on time).
        print(&format!(
            "{summary}; but {} of them differ between two runs on the frozen tree\n",
            replay.changed().count()
        ));
    } else {
        print(&format!(
            "{summary}; but {content} of them differ in content from what the model saw live (the live result is kept; the causes are noted above)\n"
        ));
    }
    Ok(ExitCode::from(exit::CHANGED))
}

/// Re-derives every record of `prepared` on the frozen tree (counting
/// tokens with the embedded tokenizer when the recording carries counts)
/// and writes the fixture.
async fn freeze_steps(
    prepared: Prepared,
    out_file: &Path,
    tree_out: &Path,
    temp: &Path,
    also_rg: &[OtherRg],
) -> Result<(Frozen, Vec<AlsoRgOutcome>), TranscriptError> {
    let mut derived = prepared.derive(temp).await?;
    let mut tokenizer = None;
    if derived.carries_tokens() {
        let loaded = fs_search_process::join_tokenizer(
            fs_search_process::load_tokenizer_in_background(None),
        )
        .await
        .map_err(|e| TranscriptError::Other(format!("the tokenizer: {e}")))?;
        derived.count_tokens(&loaded);
        tokenizer = Some(loaded);
    }
    let mut frozen = prepared.write(derived, out_file, tree_out)?;
    if also_rg.is_empty() {
        return Ok((frozen, Vec::new()));
    }
    let (outcomes, lines) =
        super::rg_variants::add_also_rg_variants(out_file, temp, also_rg, tokenizer.as_ref())
            .await?;
    // Variants move the records after them: the notes name the new lines.
    for (drift, line) in frozen.drifts.iter_mut().zip(lines) {
        drift.line = line;
    }
    Ok((frozen, outcomes))
}

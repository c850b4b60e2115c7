//! `workbench freeze RECORDING [--workdir DIR] [--whole-tree] --out
//! TRANSCRIPT --tree-out DIR`: turns a live recording (its header names a
//! live workdir, as `workbench mcp --record` and the TUI's `R` write them)
//! into a self-contained fixture that replays the same on every run and
//! machine:
//!
//! 0. the header's tree is read only when it lies inside the recording's
//!    own directory, or when `--workdir` names it (canonically): a
//!    recording from someone else must not pull `/etc/ssl` or
//!    `../secret` into a committed fixture unconfirmed; a recording made
//!    over `--executor ssh://HOST` is refused with what to run instead
//!    (its tree is on that host); one made `--sandbox` runs again in the
//!    sandbox;
//! 1. every recorded call runs again on the live tree, as it ran live
//!    (the session's own rg config, its executor): its complete result
//!    (every glob path, every grep match, not only the page's) is what
//!    the fixture must reproduce;
//! 2. the fixture tree (`DIR/manifest.json`, the format of
//!    [`super::tree`]) keeps only what those complete results depend on
//!    (`minimal.rs`): globbed names with their mtimes, grepped files' lines
//!    at their line numbers, the paths calls named, ignore files and VCS
//!    directories; `--whole-tree` walks every file instead. The live tree
//!    has no bound; the fixture has [`FixtureBound`]. Entries that share
//!    a modification time (files copied within one second) are made
//!    distinct by nanoseconds, in path order, so glob's modification-time
//!    order has no ties for rg to break by its directory reads;
//! 3. a call's absolute `path` into the workdir (agents send them) is
//!    written `<TREE>/…`, which replays rooted at the fixture tree; the
//!    header's rg config pins rg's order as the project's own fixtures do
//!    ([`pinned_ripgrep_config`]); a grep whose complete result lies in
//!    at most one file has no order to pin, and where the pin changes
//!    rg's own text (rg 13 words a missing path otherwise under
//!    `--sort=path`) it replays without it (`ripgrepConfig: false`);
//! 4. every record runs on the fixture tree and is compared with what the
//!    model saw live (`drift.rs`, by complete results): where they
//!    agree, or differ only by order, the frozen expectation is the
//!    fixture's (noted per record); where the content differs, the live
//!    result is kept, so the fixture fails until the user looks, and the
//!    facts that explain it are named;
//! 5. the recording is written to TRANSCRIPT with its header's tree
//!    pointing at DIR (relative to TRANSCRIPT's directory), duplicate
//!    record names (from servers that shared the recording before names
//!    were kept unique) renamed `NAME-2`, … with a note; both files are
//!    written at once (temp file, sync, rename; see
//!    `fs_search_process`'s `atomic_file`), so a failure (a full disk) leaves an
//!    earlier fixture as it was. The headless command then replays the
//!    written fixture on a fresh materialisation as the proof.
//!
//! VCS metadata directories (`.git`, `.svn`, `.hg`, `.bzr`, `.jj`, `.sl`)
//! are kept as empty directories (their presence decides whether rg reads
//! `.gitignore`; the tools never list their contents); symlinks are
//! skipped with a note, since a manifest holds only files and directories.

mod empty_line;
mod minimal;

pub(crate) use minimal::FixtureBound;

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::drift::{Complete, Drift, LOST_BY_THE_FIXTURE, classify};
use super::error::TranscriptError;
use super::fixture_engine::DEFAULT_RIPGREP_CONFIG;
use super::fixture_engine::{FixtureEngine, outcome_of};
use super::format::Call;
use super::format::Transcript;
use super::format::tree_path;
use super::normalise::{path_arg_on_root, path_arg_to_placeholder};
use super::parse::{self, DuplicateName};
use super::record::relative_path;
use super::replay::{Replay, replay_transcript};
use super::tree::{MANIFEST_FILE, MANIFEST_NAME, MANIFEST_VERSION, is_fixture_tree};
use empty_line::PatternReading;
use fs_search_engine::ToolResult;
use fs_search_exec::Runner;
use fs_search_process::ExecutorKind;
use fs_search_process::Staged;
use minimal::Reach;

/// Directories kept empty (the same names glob excludes).
const VCS_DIRS: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// What lies above the live tree that shaped its results: the root of
/// the git repository it lies in (when the tree is not that root), and
/// the ignore files of its ancestors that rg read live (a frozen fixture
/// replays with `--no-ignore-parent` and has no ancestors).
#[derive(Debug, Default)]
struct Above {
    repo_root: Option<PathBuf>,
    ignore_files: Vec<PathBuf>,
}

/// The ignore files rg reads in a directory.
const IGNORE_FILES: [&str; 3] = [".gitignore", ".ignore", ".rgignore"];

/// Looks above `tree` (canonically) for its git repository and the
/// ignore files rg read live: `.gitignore` up to the repository's root,
/// `.ignore` and `.rgignore` in every ancestor.
fn above(tree: &Path) -> Above {
    let mut found = Above::default();
    let Ok(tree) = tree.canonicalize() else {
        return found;
    };
    if tree.join(".git").exists() {
        return found;
    }
    for dir in tree.ancestors().skip(1) {
        for name in IGNORE_FILES {
            let file = dir.join(name);
            let in_repo = name != ".gitignore" || found.repo_root.is_none();
            if in_repo && file.is_file() {
                found.ignore_files.push(file);
            }
        }
        if found.repo_root.is_none() && dir.join(".git").exists() {
            found.repo_root = Some(dir.to_path_buf());
        }
    }
    found
}

/// One walked entry: the path relative to the root as bytes (empty for
/// the root), its content (None: a directory) and its mtime since the
/// epoch.
struct Walked {
    path: Vec<u8>,
    content: Option<Vec<u8>>,
    mtime: Duration,
}

/// What a walk found.
struct Walk {
    entries: Vec<Walked>,
    files: usize,
    bytes: u64,
    skipped: Vec<String>,
    /// The fixture's own files found in the tree, left out.
    left_out: Vec<String>,
}

/// Where `path` (which may not exist yet) lies below the canonical
/// `root`, as the walk names it; `None` when it lies elsewhere.
fn inside(root: &Path, path: &Path) -> Option<Vec<u8>> {
    let name = path.file_name()?;
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let full = parent.canonicalize().ok()?.join(name);
    let relative = full.strip_prefix(root).ok()?;
    let bytes = relative.as_os_str().as_bytes();
    (!bytes.is_empty()).then(|| bytes.to_vec())
}

fn mtime_of(meta: &std::fs::Metadata) -> Duration {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .unwrap_or_default()
}

/// Makes every mtime distinct, keeping their order: entries are taken in
/// (mtime, path) order and each is moved, when it ties with or falls
/// behind the one before, to one nanosecond after it. Ties thus break by
/// path (the earlier path is the older), on every machine alike.
fn distinct_mtimes(entries: &mut [Walked]) {
    let mut order: Vec<usize> = (0..entries.len()).collect();
    order.sort_by(|a, b| {
        (entries[*a].mtime, &entries[*a].path).cmp(&(entries[*b].mtime, &entries[*b].path))
    });
    let mut previous: Option<Duration> = None;
    for i in order {
        if let Some(before) = previous
            && entries[i].mtime <= before
        {
            entries[i].mtime = before + Duration::from_nanos(1);
        }
        previous = Some(entries[i].mtime);
    }
}

/// The rg config lines a frozen fixture replays with: the live session's
/// own lines (from its `RIPGREP_CONFIG_PATH`), then each of the project's
/// pinning lines they lack ([`DEFAULT_RIPGREP_CONFIG`]); a live config
/// that sorts already keeps its own sort.
pub(crate) fn pinned_ripgrep_config(live: &[String]) -> Vec<String> {
    let sorts = live
        .iter()
        .any(|l| l.starts_with("--sort") || l.starts_with("--sortr"));
    let mut lines = live.to_vec();
    for pin in DEFAULT_RIPGREP_CONFIG {
        let present = lines.iter().any(|l| l == pin) || (pin.starts_with("--sort") && sorts);
        if !present {
            lines.push(pin.to_owned());
        }
    }
    lines
}

fn join(base: &[u8], name: &[u8]) -> Vec<u8> {
    if base.is_empty() {
        name.to_vec()
    } else {
        [base, b"/", name].concat()
    }
}

/// Walks `root` depth first in name order, every file whole
/// (`--whole-tree`), within `bound`.
fn walk(root: &Path, leave_out: &[Vec<u8>], bound: FixtureBound) -> Result<Walk, TranscriptError> {
    let meta = std::fs::metadata(root).map_err(|e| TranscriptError::io(root, e))?;
    let mut walk = Walk {
        entries: vec![Walked {
            path: Vec::new(),
            content: None,
            mtime: mtime_of(&meta),
        }],
        files: 0,
        bytes: 0,
        skipped: Vec::new(),
        left_out: Vec::new(),
    };
    let mut stack = vec![Vec::<u8>::new()];
    while let Some(dir) = stack.pop() {
        let full = root.join(OsStr::from_bytes(&dir));
        let mut children: Vec<_> = std::fs::read_dir(&full)
            .map_err(|e| TranscriptError::io(&full, e))?
            .collect::<Result<_, _>>()
            .map_err(|e| TranscriptError::io(&full, e))?;
        children.sort_by_key(std::fs::DirEntry::file_name);
        let mut subdirs = Vec::new();
        for child in children {
            let name = child.file_name();
            let path = join(&dir, name.as_bytes());
            if leave_out.contains(&path) {
                walk.left_out
                    .push(String::from_utf8_lossy(&path).into_owned());
                continue;
            }
            let child_path = child.path();
            let meta = std::fs::symlink_metadata(&child_path)
                .map_err(|e| TranscriptError::io(&child_path, e))?;
            let kind = meta.file_type();
            if kind.is_dir() {
                walk.entries.push(Walked {
                    path: path.clone(),
                    content: None,
                    mtime: mtime_of(&meta),
                });
                if !VCS_DIRS.iter().any(|v| OsStr::new(v) == name) {
                    subdirs.push(path);
                }
            } else if kind.is_file() {
                walk.files += 1;
                walk.bytes += meta.len();
                if walk.entries.len() + 1 > bound.entries {
                    let what = format!("more than {} entries", bound.entries);
                    return Err(bound.exceeded(root, &what, true));
                }
                if walk.bytes > bound.bytes {
                    let what = format!("more than {} bytes of file content", bound.bytes);
                    return Err(bound.exceeded(root, &what, true));
                }
                let content =
                    std::fs::read(&child_path).map_err(|e| TranscriptError::io(&child_path, e))?;
                walk.entries.push(Walked {
                    path,
                    content: Some(content),
                    mtime: mtime_of(&meta),
                });
            } else {
                walk.skipped
                    .push(String::from_utf8_lossy(&path).into_owned());
            }
        }
        // Popped last-in first-out: push in reverse for name order.
        stack.extend(subdirs.into_iter().rev());
    }
    Ok(walk)
}

/// One manifest entry as JSON.
fn entry_value(entry: &Walked) -> Value {
    let mut map = Map::new();
    let is_dir = entry.content.is_none();
    match (entry.path.is_empty(), std::str::from_utf8(&entry.path)) {
        (true, _) => {
            map.insert("dir".into(), json!("."));
        }
        (false, Ok(name)) => {
            map.insert((if is_dir { "dir" } else { "file" }).into(), json!(name));
        }
        (false, Err(_)) => {
            map.insert(
                (if is_dir { "dirBase64" } else { "fileBase64" }).into(),
                json!(STANDARD.encode(&entry.path)),
            );
        }
    }
    map.insert("mtime".into(), json!(entry.mtime.as_secs()));
    if entry.mtime.subsec_nanos() != 0 {
        map.insert("mtimeNs".into(), json!(entry.mtime.subsec_nanos()));
    }
    if let Some(content) = &entry.content {
        match std::str::from_utf8(content) {
            Ok("") => {}
            Ok(text) => match repeated_line_parts(text) {
                Some(parts) => {
                    map.insert("content".into(), Value::Array(parts));
                }
                None => {
                    map.insert("text".into(), json!(text));
                }
            },
            Err(_) => {
                map.insert(
                    "content".into(),
                    json!([{"base64": STANDARD.encode(content)}]),
                );
            }
        }
    }
    Value::Object(map)
}

/// `text` as manifest content parts where it holds runs of one short
/// line (a minimal tree's emptied lines, `"\n"` or `" \n"`), each run a
/// `{"repeat", "times"}` part; `None` when it holds no such run.
fn repeated_line_parts(text: &str) -> Option<Vec<Value>> {
    const MIN_RUN: usize = 8;
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut parts = Vec::new();
    let mut plain = String::new();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        let run = lines[i..].iter().take_while(|l| **l == line).count();
        if line.len() <= 2 && line.ends_with('\n') && run >= MIN_RUN {
            if !plain.is_empty() {
                parts.push(json!(std::mem::take(&mut plain)));
            }
            parts.push(json!({"repeat": line, "times": run}));
        } else {
            plain.push_str(&line.repeat(run));
        }
        i += run;
    }
    if parts.is_empty() {
        return None;
    }
    if !plain.is_empty() {
        parts.push(json!(plain));
    }
    Some(parts)
}

/// The manifest text: one entry per line, so a review reads it top down.
fn manifest_text(description: &str, entries: &[Walked]) -> String {
    let mut text = format!(
        "{{\"manifest\": {}, \"version\": {MANIFEST_VERSION}, \"description\": {},\n \"entries\": [\n",
        json!(MANIFEST_NAME),
        json!(description)
    );
    for (i, entry) in entries.iter().enumerate() {
        let sep = if i + 1 == entries.len() { "" } else { "," };
        let _ = writeln!(text, "  {}{sep}", entry_value(entry));
    }
    text.push_str(" ]}\n");
    text
}

/// What a freeze wrote.
pub struct Frozen {
    pub records: usize,
    pub files: usize,
    pub bytes: u64,
    /// The manifest's own size (what a commit of the fixture tree adds).
    pub manifest_bytes: u64,
    pub manifest: PathBuf,
    pub skipped: Vec<String>,
    /// One note per duplicate record name renamed.
    pub renamed: Vec<String>,
    /// What freeze changed about the tree (an empty `.git` at its root).
    pub notes: Vec<String>,
    /// How each record's frozen expectation relates to the live result.
    pub drifts: Vec<RecordDrift>,
}

/// One record's `Drift`, with where it is in the written transcript.
pub struct RecordDrift {
    pub line: usize,
    pub name: String,
    pub drift: Drift,
}

impl Frozen {
    /// The records whose frozen result differs from the live one in
    /// content (their live result was kept).
    pub fn content_changed(&self) -> impl Iterator<Item = &RecordDrift> {
        self.drifts
            .iter()
            .filter(|d| matches!(d.drift, Drift::Content { .. }))
    }
}

/// Renames each duplicate record name to the first free `NAME-K` (K ≥ 2);
/// one note per rename.
fn rename_duplicates(
    label: &str,
    transcript: &mut Transcript,
    duplicates: &[DuplicateName],
) -> Vec<String> {
    let mut taken: std::collections::HashSet<String> = transcript
        .records
        .iter()
        .map(|r| r.call.name.clone())
        .collect();
    let mut notes = Vec::new();
    for duplicate in duplicates {
        let Some(record) = transcript
            .records
            .iter_mut()
            .find(|r| r.line == duplicate.line)
        else {
            continue;
        };
        let mut k = 2;
        let renamed = loop {
            let candidate = format!("{}-{k}", duplicate.name);
            if !taken.contains(&candidate) {
                break candidate;
            }
            k += 1;
        };
        taken.insert(renamed.clone());
        notes.push(format!(
            "{label}:{}: duplicate record name \"{}\" renamed to \"{renamed}\"",
            duplicate.line, duplicate.name
        ));
        record.call.name = renamed;
    }
    notes
}

/// Refuses to walk a header tree that is absolute or lies outside the
/// recording's directory unless `workdir` names it; `workdir`, when
/// given, must name the tree in any case.
fn confirm_tree(
    recording: &Path,
    header_tree: &str,
    tree: &Path,
    workdir: Option<&Path>,
) -> Result<(), TranscriptError> {
    let canonical = |p: &Path| p.canonicalize().map_err(|e| TranscriptError::io(p, e));
    let tree = canonical(tree)?;
    if let Some(workdir) = workdir {
        let workdir = canonical(workdir)?;
        if workdir != tree {
            return Err(TranscriptError::Other(format!(
                "--workdir {} does not name the tree of {} (its header's tree \"{header_tree}\" is {})",
                workdir.display(),
                recording.display(),
                tree.display()
            )));
        }
        return Ok(());
    }
    let recording_dir = canonical(
        recording
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new(".")),
    )?;
    if !Path::new(header_tree).is_absolute() && tree.starts_with(&recording_dir) {
        return Ok(());
    }
    Err(TranscriptError::Other(format!(
        "{}: its header's tree \"{header_tree}\" is {}, outside the recording's directory {}; \
         freeze copies every file of that tree into the fixture. If it is the workdir the \
         recording was made on, confirm it with --workdir {}",
        recording.display(),
        tree.display(),
        recording_dir.display(),
        tree.display()
    )))
}

/// A recording read and its tree confirmed, ready to be derived and written.
pub struct Prepared {
    recording: PathBuf,
    /// The recording with duplicate names renamed and its rg config
    /// pinned; its header's tree is still the live one.
    transcript: Transcript,
    /// The rg config lines the session ran with (before the pins).
    live_ripgrep_config: Vec<String>,
    /// The live tree, and canonically.
    tree: PathBuf,
    canonical_tree: PathBuf,
    /// The fixture's own files inside the tree, relative to it.
    leave_out: Vec<Vec<u8>>,
    /// Copy every file (`--whole-tree`) instead of the minimal tree.
    whole_tree: bool,
    /// The executor the calls ran under live.
    executor: ExecutorKind,
    /// Whether the tree lies below the root of a git repository.
    in_repository: bool,
    renamed: Vec<String>,
    /// What freeze changed about the tree, said to the user.
    notes: Vec<String>,
    /// Ignore files above the live tree (their rules applied live only).
    above_ignore_files: Vec<PathBuf>,
}

/// The executor a recording's calls ran under, from its header: the
/// sandbox runs again, by the runner the recording names; an ssh host's tree is not here, so the error says
/// what to run instead.
fn live_executor(
    recording: &Path,
    transcript: &Transcript,
) -> Result<ExecutorKind, TranscriptError> {
    match transcript.header.env.executor.as_deref() {
        None | Some("local") => Ok(ExecutorKind::Local),
        Some("direct") => Ok(ExecutorKind::Direct),
        Some("sandbox") => Ok(ExecutorKind::Sandbox(Runner::Auto)),
        Some("sandbox-bwrap") => Ok(ExecutorKind::Sandbox(Runner::Bwrap)),
        Some("sandbox-landlock") => Ok(ExecutorKind::Sandbox(Runner::Landlock)),
        Some(host) => Err(TranscriptError::Other(format!(
            "{}: recorded over --executor {host}, so its tree {} is on that host: run `workbench freeze` there (copy the recording to the host, freeze it with --workdir {}, and copy the transcript and the tree directory back)",
            recording.display(),
            transcript.header.tree,
            transcript.header.tree
        ))),
    }
}

/// Reads `recording` and confirms its tree; a header tree outside the
/// recording's directory is read only when `workdir` names it. The
/// fixture's own files (`out`, `tree_out`), when they lie in the tree
/// (freezing into the repository the session searched), are left out of
/// it: a re-freeze must not hold the fixture it replaces.
pub fn prepare(
    recording: &Path,
    workdir: Option<&Path>,
    whole_tree: bool,
    out: &Path,
    tree_out: &Path,
) -> Result<Prepared, TranscriptError> {
    let text = fs_search_process::read_text(recording, fs_search_process::TRANSCRIPT_MAX_BYTES)
        .map_err(|e| TranscriptError::io(recording, e))?;
    let label = recording.display().to_string();
    let (mut transcript, duplicates) = parse::parse_keeping_duplicates(&label, &text)?;
    let renamed = rename_duplicates(&label, &mut transcript, &duplicates);
    let executor = live_executor(recording, &transcript)?;
    let tree = tree_path(recording, &transcript.header.tree);
    if is_fixture_tree(&tree) {
        return Err(TranscriptError::Other(format!(
            "{}: its tree {} is already a fixture tree; nothing to freeze",
            recording.display(),
            tree.display()
        )));
    }
    if !tree.is_dir() {
        return Err(TranscriptError::Other(format!(
            "{}: its tree {} is not a directory (was it recorded on this machine?)",
            recording.display(),
            tree.display()
        )));
    }
    confirm_tree(recording, &transcript.header.tree, &tree, workdir)?;
    for record in &mut transcript.records {
        if let Some(args) = path_arg_to_placeholder(&record.call.args, &tree) {
            record.call.args = args;
        }
    }
    let canonical_tree = tree
        .canonicalize()
        .map_err(|e| TranscriptError::io(&tree, e))?;
    let leave_out: Vec<Vec<u8>> = [out, tree_out]
        .iter()
        .filter_map(|p| inside(&canonical_tree, p))
        .collect();
    let above = above(&tree);
    let mut notes = Vec::new();
    if let Some(repo) = &above.repo_root {
        notes.push(format!(
            "the workdir lies in the git repository {}: the fixture tree gets an empty .git at its root, so its .gitignore files apply as they did live",
            repo.display()
        ));
    }
    let live_ripgrep_config = transcript.header.env.ripgrep_config.clone();
    transcript.header.env.ripgrep_config = pinned_ripgrep_config(&live_ripgrep_config);
    Ok(Prepared {
        recording: recording.to_path_buf(),
        transcript,
        live_ripgrep_config,
        tree,
        canonical_tree,
        leave_out,
        whole_tree,
        executor,
        in_repository: above.repo_root.is_some(),
        renamed,
        notes,
        above_ignore_files: above.ignore_files,
    })
}

/// What [`Prepared::derive`] found: the fixture tree, every record's
/// complete result on the live tree and on the fixture, and the replay
/// of the fixture (its pages are the frozen expectations).
pub struct Derived {
    /// The fixture tree's entries and counts.
    walked: Walk,
    manifest_text: String,
    live: Vec<Complete>,
    frozen: Vec<Complete>,
    /// The records that replay without the pinning rg config.
    unpinned: Vec<bool>,
    /// The fixture replayed as written.
    pub replay: Replay,
}

impl Derived {
    /// Whether the recording carries token counts (then the headless
    /// command counts the frozen pages' tokens).
    pub fn carries_tokens(&self) -> bool {
        self.replay.carries_tokens()
    }

    /// Counts each frozen page's tokens.
    pub fn count_tokens(&mut self, tokenizer: &fs_search_tokens::Tokenizer) {
        self.replay.count_tokens(tokenizer);
    }
}

/// A call's display path (absolute, or relative to its working
/// directory `workdir`) as a path on the live tree.
fn on_tree(workdir: &Path, path: &str) -> PathBuf {
    let path = Path::new(path);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        workdir.join(path)
    }
}

/// What one call's complete result on the live tree reached.
fn reach_of(call: &Call, complete: &Complete, root: &Path, workdir: &Path) -> Reach {
    let rooted = path_arg_on_root(&call.args, root);
    let args = rooted.as_ref().unwrap_or(&call.args);
    let target = args
        .get("path")
        .and_then(Value::as_str)
        .map(|p| on_tree(workdir, p));
    let mut reach = Reach {
        scope: target.clone().unwrap_or_else(|| workdir.to_path_buf()),
        target,
        ..Reach::default()
    };
    if complete.outcome.is_error {
        return reach;
    }
    if call.tool == "glob" {
        reach.globbed = complete.items.iter().map(|p| on_tree(workdir, p)).collect();
    } else {
        reach.grepped = complete
            .grep_lines()
            .into_iter()
            .map(|(path, lines)| (on_tree(workdir, path), lines))
            .collect();
        let pattern = args.get("pattern").and_then(Value::as_str).unwrap_or("");
        reach.pattern = Some(pattern.to_owned());
    }
    reach
}

/// The complete result of `result` for `call` run by `engine`: the text
/// it spilled (read before the engine's spill store goes), else its value.
fn complete_of(engine: &FixtureEngine, call: &Call, result: &ToolResult) -> Complete {
    let config =
        fs_search_engine::Config::from_json_as(&engine.call_config(call), engine.release())
            .unwrap_or_else(|_| fs_search_engine::Config::with_sampling(false));
    let spilled = result
        .spill
        .as_ref()
        .and_then(|s| std::fs::read_to_string(&s.locator).ok());
    Complete::of(
        &call.tool,
        outcome_of(result, engine.normaliser()),
        result.value.as_ref(),
        spilled.as_deref(),
        &config,
    )
}

impl Prepared {
    /// How many records the recording holds.
    pub fn records(&self) -> usize {
        self.transcript.records.len()
    }

    /// Runs every record again on the live tree, builds the fixture tree
    /// from their complete results (or the whole tree), runs them on it,
    /// choosing per grep whether rg's order needs pinning, and replays the
    /// fixture: what [`Self::write`] needs.
    pub async fn derive(&self, temp_parent: &Path) -> Result<Derived, TranscriptError> {
        let label = self.recording.display().to_string();
        let setup = |record: &super::format::Record, source| TranscriptError::Setup {
            file: label.clone(),
            line: record.line,
            name: record.call.name.clone(),
            source,
        };
        let bound = FixtureBound::from_env()?;
        let mut live_engine = FixtureEngine::new_in(
            &self.tree,
            self.transcript.header.config.clone(),
            &self.live_ripgrep_config,
            temp_parent,
        )?
        .with_executor(self.executor.clone())
        .with_release(self.transcript.header.contract);
        let reading = PatternReading::of(&self.live_ripgrep_config);
        let mut live: Vec<Complete> = Vec::with_capacity(self.records());
        let mut reaches = Vec::with_capacity(self.records());
        for record in &self.transcript.records {
            TranscriptError::check_stopped()?;
            let result = live_engine
                .run_raw(&record.call)
                .await
                .map_err(|e| setup(record, e))?;
            let workdir = live_engine.call_workdir(&record.call);
            let mut complete = complete_of(&live_engine, &record.call, &result);
            if complete.items.is_empty() && result.spill.is_none() && !result.is_error {
                // A page over its cap with no spill store keeps no complete
                // result: the same call with a store gives it.
                let mut stored = record.call.clone();
                stored.options.spill = super::format::SpillMode::Store;
                let again = live_engine
                    .run_raw(&stored)
                    .await
                    .map_err(|e| setup(record, e))?;
                complete.items = complete_of(&live_engine, &stored, &again).items;
            }
            reaches.push(reach_of(
                &record.call,
                &complete,
                live_engine.root(),
                &workdir,
            ));
            live.push(complete);
        }
        drop(live_engine);
        let mut walked = if self.whole_tree {
            walk(&self.tree, &self.leave_out, bound)?
        } else {
            minimal::minimal_tree(
                &self.canonical_tree,
                &reaches,
                reading,
                &self.leave_out,
                bound,
            )?
        };
        walked.left_out = self
            .leave_out
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        if self.in_repository {
            // rg honours the tree's .gitignore files only inside a
            // repository; the fixture's root marks one, as the live tree
            // lay in one.
            let root_mtime = walked.entries.first().map(|e| e.mtime).unwrap_or_default();
            if !walked.entries.iter().any(|e| e.path == b".git") {
                walked.entries.insert(
                    1,
                    Walked {
                        path: b".git".to_vec(),
                        content: None,
                        mtime: root_mtime,
                    },
                );
            }
        }
        distinct_mtimes(&mut walked.entries);
        let description = format!(
            "frozen by `workbench freeze` from {}",
            self.recording
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        );
        let manifest_text = manifest_text(&description, &walked.entries);

        let staging = tempfile::Builder::new()
            .prefix("fs-search-freeze-")
            .tempdir_in(temp_parent)
            .map_err(|e| TranscriptError::io(temp_parent, e))?;
        let manifest = staging.path().join(MANIFEST_FILE);
        std::fs::write(&manifest, &manifest_text).map_err(|e| TranscriptError::io(&manifest, e))?;
        let mut frozen_engine = FixtureEngine::new_in(
            staging.path(),
            self.transcript.header.config.clone(),
            &self.transcript.header.env.ripgrep_config,
            temp_parent,
        )?
        .with_release(self.transcript.header.contract);
        let mut frozen = Vec::with_capacity(self.records());
        let mut unpinned = Vec::with_capacity(self.records());
        for record in &self.transcript.records {
            TranscriptError::check_stopped()?;
            let result = frozen_engine
                .run_raw(&record.call)
                .await
                .map_err(|e| setup(record, e))?;
            let pinned = complete_of(&frozen_engine, &record.call, &result);
            // A grep whose complete result lies in at most one file has no
            // file order for the pin to fix; where the pin changes rg's
            // own text, it replays as it ran live, without it.
            let orderless = record.call.tool == "grep"
                && self.live_ripgrep_config.is_empty()
                && record.call.options.ripgrep_config
                && pinned.files() <= 1;
            let mut chosen = (pinned, false);
            if orderless {
                let mut call = record.call.clone();
                call.options.ripgrep_config = false;
                let result = frozen_engine
                    .run_raw(&call)
                    .await
                    .map_err(|e| setup(record, e))?;
                let bare = complete_of(&frozen_engine, &call, &result);
                if bare.outcome != chosen.0.outcome {
                    chosen = (bare, true);
                }
            }
            frozen.push(chosen.0);
            unpinned.push(chosen.1);
        }
        drop(frozen_engine);
        self.without_the_fixture(&mut live, &frozen);
        let mut transcript = self.transcript.clone();
        for (record, bare) in transcript.records.iter_mut().zip(&unpinned) {
            if *bare {
                record.call.options.ripgrep_config = false;
            }
        }
        transcript.header.tree = staging.path().to_string_lossy().into_owned();
        let replay = replay_transcript(
            &self.recording,
            transcript,
            temp_parent,
            ExecutorKind::Local,
        )
        .await?;
        Ok(Derived {
            walked,
            manifest_text,
            live,
            frozen,
            unpinned,
            replay,
        })
    }

    /// A re-freeze into the searched tree finds the fixture's own files
    /// (`--out`, `--tree-out`) when it runs the calls again live: they are
    /// not what the model searched. A live result that holds them is taken
    /// without them: as the fixture's result where that is the same.
    fn without_the_fixture(&self, live: &mut [Complete], frozen: &[Complete]) {
        if self.leave_out.is_empty() {
            return;
        }
        for (live, frozen) in live.iter_mut().zip(frozen) {
            let before = live.items.len();
            live.items.retain(|item| {
                let path = item.split('\n').next().unwrap_or("");
                !minimal::is_left_out(path.as_bytes(), &self.leave_out)
            });
            if live.items.len() != before && live.items == frozen.items {
                *live = frozen.clone();
            }
        }
    }

    /// Writes the fixture: each record's expectation is the fixture's
    /// page from `derived` where it shows what the model saw live up to
    /// order, else the live result.
    pub fn write(
        mut self,
        derived: Derived,
        out: &Path,
        tree_out: &Path,
    ) -> Result<Frozen, TranscriptError> {
        let Derived {
            walked,
            manifest_text,
            live,
            frozen,
            unpinned,
            replay,
        } = derived;
        let mut drifts = Vec::with_capacity(replay.checks.len());
        let records = self.transcript.records.iter_mut();
        for ((((record, check), live), frozen), bare) in records
            .zip(&replay.checks)
            .zip(&live)
            .zip(&frozen)
            .zip(&unpinned)
        {
            let mut found = classify(&record.call.tool, &record.outcome, live, frozen, &self.tree);
            if let Drift::Content { causes } = &mut found
                && !self.whole_tree
                && causes.iter().any(|c| c.starts_with(LOST_BY_THE_FIXTURE))
            {
                causes.push("freeze with --whole-tree to copy every file".to_owned());
            }
            if let Drift::Content { causes } = &mut found
                && !self.above_ignore_files.is_empty()
            {
                let files: Vec<String> = self
                    .above_ignore_files
                    .iter()
                    .map(|f| f.display().to_string())
                    .collect();
                causes.push(format!(
                    "ignore files above the workdir applied live and are not part of the frozen tree: {}",
                    files.join(", ")
                ));
            }
            if *bare {
                record.call.options.ripgrep_config = false;
            }
            if !matches!(found, Drift::Content { .. }) {
                record.outcome = check.current.clone();
            }
            drifts.push(RecordDrift {
                line: record.line,
                name: record.call.name.clone(),
                drift: found,
            });
        }
        let mut notes: Vec<String> = walked
            .left_out
            .iter()
            .map(|p| format!("left {p} out of the fixture tree: it is the fixture being written"))
            .collect();
        notes.append(&mut self.notes);
        let created = !tree_out.exists();
        std::fs::create_dir_all(tree_out).map_err(|e| TranscriptError::io(tree_out, e))?;
        let written = write_fixture(&manifest_text, &mut self.transcript, out, tree_out);
        if written.is_err() && created {
            // Only the directory this freeze made, and only while empty.
            let _ = std::fs::remove_dir(tree_out);
        }
        let manifest = written?;
        // The written transcript numbers its lines anew.
        let lines = super::format::record_lines(&self.transcript);
        for (drift, line) in drifts.iter_mut().zip(lines) {
            drift.line = line;
        }
        Ok(Frozen {
            records: self.transcript.records.len(),
            files: walked.files,
            bytes: walked.bytes,
            manifest_bytes: manifest_text.len() as u64,
            manifest,
            skipped: walked.skipped,
            renamed: self.renamed,
            notes,
            drifts,
        })
    }
}

/// Writes the manifest and the transcript (its tree pointing at the
/// manifest), both staged before either replaces its old file.
fn write_fixture(
    manifest_text: &str,
    transcript: &mut Transcript,
    out: &Path,
    tree_out: &Path,
) -> Result<PathBuf, TranscriptError> {
    let manifest = tree_out.join(MANIFEST_FILE);
    let staged_manifest = Staged::write(&manifest, manifest_text.as_bytes())
        .map_err(|e| TranscriptError::io(&manifest, e))?;
    let out_dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    transcript.header.tree = relative_path(out_dir, tree_out);
    let staged_out = Staged::write(out, super::format::write(transcript).as_bytes())
        .map_err(|e| TranscriptError::io(out, e))?;
    staged_manifest
        .commit()
        .map_err(|e| TranscriptError::io(&manifest, e))?;
    staged_out
        .commit()
        .map_err(|e| TranscriptError::io(out, e))?;
    Ok(manifest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{Manifest, MaterialisedTree};
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_walked_tree_round_trips_through_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("sub/.git/objects")).unwrap();
        std::fs::write(root.join("sub/.git/objects/blob"), "hidden").unwrap();
        std::fs::write(root.join("sub/a.txt"), "a\r\n").unwrap();
        std::fs::write(root.join(OsStr::from_bytes(b"latin\xe9.bin")), b"\xff\x00x").unwrap();
        std::fs::write(root.join("empty"), "").unwrap();
        std::os::unix::fs::symlink("sub/a.txt", root.join("link")).unwrap();
        let walked = walk(root, &[], FixtureBound::from_env().unwrap()).unwrap();
        assert_eq!(walked.files, 3);
        assert_eq!(walked.skipped, vec!["link".to_owned()]);
        let text = manifest_text("test", &walked.entries);
        let manifest = Manifest::parse("m.json", &text).unwrap();
        let built = MaterialisedTree::new(&manifest).unwrap();
        let copy = built.root();
        assert_eq!(std::fs::read(copy.join("sub/a.txt")).unwrap(), b"a\r\n");
        assert_eq!(
            std::fs::read(copy.join(OsStr::from_bytes(b"latin\xe9.bin"))).unwrap(),
            b"\xff\x00x"
        );
        assert!(copy.join("sub/.git").is_dir());
        assert!(!copy.join("sub/.git/objects").exists());
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().mtime();
        assert_eq!(
            mtime(&copy.join("sub/a.txt")),
            mtime(&root.join("sub/a.txt"))
        );
        assert_eq!(mtime(copy), mtime(root));
        let nanos = |p: &Path| std::fs::metadata(p).unwrap().mtime_nsec();
        assert_eq!(
            nanos(&copy.join("sub/a.txt")),
            nanos(&root.join("sub/a.txt"))
        );
    }

    fn walked(path: &str, mtime: Duration) -> Walked {
        Walked {
            path: path.as_bytes().to_vec(),
            content: None,
            mtime,
        }
    }

    #[test]
    fn tied_mtimes_become_distinct_in_path_order_keeping_the_order_of_the_rest() {
        let second = Duration::from_secs(1_700_000_000);
        let mut entries = vec![
            walked("b", second),
            walked("a", second),
            walked("c", second + Duration::from_nanos(1)),
            walked("z", second - Duration::from_secs(5)),
            walked("d", second + Duration::from_millis(500)),
        ];
        distinct_mtimes(&mut entries);
        let at = |name: &str| {
            entries
                .iter()
                .find(|e| e.path == name.as_bytes())
                .unwrap()
                .mtime
        };
        assert_eq!(at("z"), second - Duration::from_secs(5));
        assert_eq!(at("a"), second);
        assert_eq!(at("b"), second + Duration::from_nanos(1));
        assert_eq!(at("c"), second + Duration::from_nanos(2));
        assert_eq!(at("d"), second + Duration::from_millis(500));
    }

    #[test]
    fn the_pinned_config_adds_the_missing_pins_and_keeps_a_live_sort() {
        assert_eq!(pinned_ripgrep_config(&[]), DEFAULT_RIPGREP_CONFIG);
        let live = vec!["--sortr=path".to_owned(), "--no-ignore-parent".to_owned()];
        assert_eq!(
            pinned_ripgrep_config(&live),
            ["--sortr=path", "--no-ignore-parent", "--no-ignore-global"]
        );
    }
}

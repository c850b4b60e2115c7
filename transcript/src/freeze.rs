//! `workbench freeze RECORDING [--workdir DIR] --out TRANSCRIPT --tree-out
//! DIR`: turns a live recording (its header names a live workdir, as
//! `workbench mcp --record` and the TUI's `R` write them) into a
//! self-contained fixture that replays the same on every run and machine:
//!
//! 0. the header's tree is walked only when it lies inside the recording's
//!    own directory, or when `--workdir` names it (canonically): a
//!    recording from someone else must not pull `/etc/ssl` or
//!    `../secret` into a committed fixture unconfirmed;
//! 1. the workdir is walked into a fixture tree manifest
//!    (`DIR/manifest.json`, the format of [`super::tree`]) with every
//!    file's content and every file's and directory's mtime to the
//!    nanosecond, refusing above [`MAX_FILES`] files or [`MAX_BYTES`]
//!    bytes of content. Entries that share a modification time (files
//!    copied within one second, a file system that keeps whole seconds)
//!    are made distinct by nanoseconds, in path order, so glob's
//!    modification-time order has no ties for rg to break by the order
//!    its directory reads happen to return;
//! 2. a call's absolute `path` into the workdir (agents send them) is
//!    written `<TREE>/…`, which replays root at the fixture tree; the
//!    header's rg config pins rg's order as the project's own
//!    fixtures do ([`pinned_ripgrep_config`]: `--sort=path` for grep's file
//!    order, and no ignore files from outside the tree);
//! 3. every record is re-run on that tree ([`Prepared::derive`]) and
//!    compared with what the model saw live (`super::drift`): where they
//!    agree, or differ only by order, the frozen expectation is the
//!    re-derived one (noted per record); where the content differs, the
//!    live result is kept, so the fixture fails until the user looks, and
//!    the facts that explain it are named;
//! 4. the recording is written to TRANSCRIPT with its header's tree
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

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::drift::{Drift, drift};
use super::error::TranscriptError;
use super::fixture_engine::DEFAULT_RIPGREP_CONFIG;
use super::format::Transcript;
use super::normalise::path_arg_to_placeholder;
use super::parse::{self, DuplicateName};
use super::record::relative_path;
use super::replay::{Replay, replay_transcript, tree_path};
use super::tree::{MANIFEST_FILE, MANIFEST_NAME, MANIFEST_VERSION, is_fixture_tree};
use fs_search_process::ExecutorKind;
use fs_search_process::Staged;

/// The most files a frozen tree may hold.
pub const MAX_FILES: usize = 5_000;
/// The most bytes of file content a frozen tree may hold.
pub const MAX_BYTES: u64 = 20 * 1024 * 1024;

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
pub fn pinned_ripgrep_config(live: &[String]) -> Vec<String> {
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

fn too_big(root: &Path, what: &str) -> TranscriptError {
    TranscriptError::Other(format!(
        "{}: {what}; a frozen tree holds at most {MAX_FILES} files and {} MB. \
         Narrow it: copy only the files the calls need into a new directory, run \
         `workbench mcp --workdir NEW_DIR --record FILE` there, and freeze that recording",
        root.display(),
        MAX_BYTES / (1024 * 1024)
    ))
}

fn join(base: &[u8], name: &[u8]) -> Vec<u8> {
    if base.is_empty() {
        name.to_vec()
    } else {
        [base, b"/", name].concat()
    }
}

/// Walks `root` depth first in name order, within the limits.
fn walk(root: &Path, leave_out: &[Vec<u8>]) -> Result<Walk, TranscriptError> {
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
                if walk.files > MAX_FILES {
                    return Err(too_big(root, &format!("more than {MAX_FILES} files")));
                }
                if walk.bytes > MAX_BYTES {
                    return Err(too_big(root, "more than 20 MB of file content"));
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
            Ok(text) => {
                map.insert("text".into(), json!(text));
            }
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

/// A recording read, its tree walked, ready to be re-derived and written.
pub struct Prepared {
    recording: PathBuf,
    /// The recording with duplicate names renamed and its rg config
    /// pinned; its header's tree is still the live one.
    transcript: Transcript,
    /// The live tree.
    tree: PathBuf,
    walked: Walk,
    manifest_text: String,
    renamed: Vec<String>,
    /// What freeze changed about the tree, said to the user.
    notes: Vec<String>,
    /// Ignore files above the live tree (their rules applied live only).
    above_ignore_files: Vec<PathBuf>,
}

/// Reads `recording` and walks its tree; a header tree outside the
/// recording's directory is walked only when `workdir` names it. The
/// fixture's own files (`out`, `tree_out`), when they lie in the tree
/// (freezing into the repository the session searched), are left out of
/// it: a re-freeze must not hold the fixture it replaces.
pub fn prepare(
    recording: &Path,
    workdir: Option<&Path>,
    out: &Path,
    tree_out: &Path,
) -> Result<Prepared, TranscriptError> {
    let text = fs_search_process::read_text(recording, fs_search_process::TRANSCRIPT_MAX_BYTES)
        .map_err(|e| TranscriptError::io(recording, e))?;
    let label = recording.display().to_string();
    let (mut transcript, duplicates) = parse::parse_keeping_duplicates(&label, &text)?;
    let renamed = rename_duplicates(&label, &mut transcript, &duplicates);
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
    let mut walked = walk(&tree, &leave_out)?;
    let above = above(&tree);
    let mut notes: Vec<String> = walked
        .left_out
        .iter()
        .map(|p| format!("left {p} out of the fixture tree: it is the fixture being written"))
        .collect();
    if let Some(repo) = &above.repo_root {
        // rg honours the tree's .gitignore files only inside a repository;
        // the fixture's root marks one, as the live tree lay in one.
        let root_mtime = walked.entries.first().map(|e| e.mtime).unwrap_or_default();
        walked.entries.insert(
            1,
            Walked {
                path: b".git".to_vec(),
                content: None,
                mtime: root_mtime,
            },
        );
        notes.push(format!(
            "the workdir lies in the git repository {}: the fixture tree gets an empty .git at its root, so its .gitignore files apply as they did live",
            repo.display()
        ));
    }
    distinct_mtimes(&mut walked.entries);
    transcript.header.env.ripgrep_config =
        pinned_ripgrep_config(&transcript.header.env.ripgrep_config);
    let description = format!(
        "frozen by `workbench freeze` from {}",
        recording
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    let manifest_text = manifest_text(&description, &walked.entries);
    Ok(Prepared {
        recording: recording.to_path_buf(),
        transcript,
        tree,
        walked,
        manifest_text,
        renamed,
        notes,
        above_ignore_files: above.ignore_files,
    })
}

impl Prepared {
    /// How many records the recording holds.
    pub fn records(&self) -> usize {
        self.transcript.records.len()
    }

    /// Re-runs every record on the frozen tree (its manifest materialised
    /// under `temp_parent`), with the pinned rg config: the results a
    /// replay of the fixture will give.
    pub async fn derive(&self, temp_parent: &Path) -> Result<Replay, TranscriptError> {
        let staging = tempfile::Builder::new()
            .prefix("fs-search-freeze-")
            .tempdir_in(temp_parent)
            .map_err(|e| TranscriptError::io(temp_parent, e))?;
        let manifest = staging.path().join(MANIFEST_FILE);
        std::fs::write(&manifest, &self.manifest_text)
            .map_err(|e| TranscriptError::io(&manifest, e))?;
        let mut transcript = self.transcript.clone();
        transcript.header.tree = staging.path().to_string_lossy().into_owned();
        replay_transcript(
            &self.recording,
            transcript,
            temp_parent,
            ExecutorKind::Local,
        )
        .await
    }

    /// Writes the fixture: each record's expectation is the re-derived
    /// one of `derived` (from [`Self::derive`]) where it shows the live
    /// result up to order, else the live result.
    pub fn write(
        mut self,
        derived: &Replay,
        out: &Path,
        tree_out: &Path,
    ) -> Result<Frozen, TranscriptError> {
        let mut drifts = Vec::with_capacity(derived.checks.len());
        for (record, check) in self.transcript.records.iter_mut().zip(&derived.checks) {
            let mut found = drift(
                &record.call.tool,
                &record.outcome,
                &check.current,
                &self.tree,
            );
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
            if !matches!(found, Drift::Content { .. }) {
                record.outcome = check.current.clone();
            }
            drifts.push(RecordDrift {
                line: record.line,
                name: record.call.name.clone(),
                drift: found,
            });
        }
        let created = !tree_out.exists();
        std::fs::create_dir_all(tree_out).map_err(|e| TranscriptError::io(tree_out, e))?;
        let written = write_fixture(&self.manifest_text, &mut self.transcript, out, tree_out);
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
            files: self.walked.files,
            bytes: self.walked.bytes,
            manifest,
            skipped: self.walked.skipped,
            renamed: self.renamed,
            notes: self.notes,
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
        let walked = walk(root, &[]).unwrap();
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

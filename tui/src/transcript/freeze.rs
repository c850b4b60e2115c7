//! `workbench freeze RECORDING --out TRANSCRIPT --tree-out DIR`: turns a
//! live recording (its header names a live workdir, as `workbench mcp
//! --record` and the TUI's `R` write them) into a self-contained fixture:
//!
//! 1. the workdir is walked into a fixture tree manifest
//!    (`DIR/manifest.json`, the format of [`super::tree`]) with every
//!    file's content and every file's and directory's mtime, refusing
//!    above [`MAX_FILES`] files or [`MAX_BYTES`] bytes of content;
//! 2. the recording is written to TRANSCRIPT with its header's tree
//!    pointing at DIR (relative to TRANSCRIPT's directory), records as
//!    recorded;
//! 3. TRANSCRIPT is replayed on the materialised manifest in a fresh temp
//!    dir: exit 0 when every record matches, 1 with the diffs otherwise
//!    (say, files changed since the recording, or mtimes within one second
//!    that whole-second manifest mtimes cannot order), 2 on errors.
//!
//! VCS metadata directories (`.git`, `.svn`, `.hg`, `.bzr`, `.jj`, `.sl`)
//! are kept as empty directories (their presence decides whether rg reads
//! `.gitignore`; the tools never list their contents); symlinks are
//! skipped with a note, since a manifest holds only files and directories.

use std::ffi::OsStr;
use std::fmt::Write as _;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::error::TranscriptError;
use super::parse;
use super::record::{relative_path, save};
use super::replay::tree_path;
use super::tree::{MANIFEST_FILE, MANIFEST_NAME, MANIFEST_VERSION, is_fixture_tree};

/// The most files a frozen tree may hold.
pub const MAX_FILES: usize = 5_000;
/// The most bytes of file content a frozen tree may hold.
pub const MAX_BYTES: u64 = 20 * 1024 * 1024;

/// Directories kept empty (the same names glob excludes).
const VCS_DIRS: [&str; 6] = [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"];

/// One walked entry: the path relative to the root as bytes (empty for
/// the root), its content (None: a directory) and its mtime in seconds.
struct Walked {
    path: Vec<u8>,
    content: Option<Vec<u8>>,
    mtime: u64,
}

/// What a walk found.
struct Walk {
    entries: Vec<Walked>,
    files: usize,
    bytes: u64,
    skipped: Vec<String>,
}

fn mtime_of(meta: &std::fs::Metadata) -> u64 {
    meta.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_secs())
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
fn walk(root: &Path) -> Result<Walk, TranscriptError> {
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
    map.insert("mtime".into(), json!(entry.mtime));
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
}

/// Freezes `recording` into `out` and `tree_out/manifest.json`.
pub fn freeze(recording: &Path, out: &Path, tree_out: &Path) -> Result<Frozen, TranscriptError> {
    let text = crate::bounded::read_text(recording, crate::bounded::TRANSCRIPT_MAX_BYTES)
        .map_err(|e| TranscriptError::io(recording, e))?;
    let mut transcript = parse::parse(&recording.display().to_string(), &text)?;
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
    let walked = walk(&tree)?;
    std::fs::create_dir_all(tree_out).map_err(|e| TranscriptError::io(tree_out, e))?;
    let manifest = tree_out.join(MANIFEST_FILE);
    let description = format!(
        "frozen by `workbench freeze` from {}",
        recording
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
    );
    crate::bounded::write_file(
        &manifest,
        manifest_text(&description, &walked.entries).as_bytes(),
    )
    .map_err(|e| TranscriptError::io(&manifest, e))?;
    let out_dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    transcript.header.tree = relative_path(out_dir, tree_out);
    save(out, &transcript)?;
    Ok(Frozen {
        records: transcript.records.len(),
        files: walked.files,
        bytes: walked.bytes,
        manifest,
        skipped: walked.skipped,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transcript::tree::{Manifest, MaterialisedTree};
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
        let walked = walk(root).unwrap();
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
    }
}

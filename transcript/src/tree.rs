//! Fixture trees: a manifest that describes every directory and file of a
//! tree, with its mtime pinned, and the materialiser that builds it in a
//! fresh temp dir (git keeps neither mtimes nor `.git` directories, and
//! names that are not UTF-8 do not travel well, so the manifest is the
//! tree).
//!
//! `fixtures/trees/NAME/manifest.json`:
//!
//! ```text
//! {"manifest": "fs-search-fixture-tree", "version": 1, "description": "…",
//!  "entries": [
//!   {"dir": ".", "mtime": 1700000000},
//!   {"dir": "src", "mtime": 1700000100},
//!   {"file": "src/a.ts", "mtime": 1700000001, "text": "const a = 1\n"},
//!   {"fileBase64": "bGF0aW4x6S50eHQ=", "mtime": 1700000002, "text": "x\n"},
//!   {"file": "mixed.txt", "mtime": 1700000003,
//!    "content": ["caf", {"base64": "6Q=="}, " needle\n", {"repeat": "ab", "times": 3}]}
//!  ]}
//! ```
//!
//! - A name is `file`/`dir` (UTF-8, `/`-separated, relative, no `.`/`..`
//!   segments except the root `.`) or `fileBase64`/`dirBase64` (raw bytes).
//! - `mtime` is whole seconds since the epoch, and the optional `mtimeNs`
//!   (0 to 999,999,999) the nanoseconds past it (`workbench freeze` keeps
//!   them, so files copied within one second keep their order); every
//!   directory, the root `.` included, must have an entry, so every mtime
//!   is pinned.
//! - Contents: `text` (a string), or `content` (parts: strings, raw bytes
//!   as `{"base64"}`, `{"repeat": S, "times": N}`), or nothing (empty).
//! - Limits ([`TreeLimits`]), checked while parsing, before anything is
//!   built or even held in memory: 256 MiB of file content and 100,000
//!   entries per tree by default; `WORKBENCH_TREE_LIMITS=BYTES,ENTRIES`
//!   raises them. A manifest over them is refused naming its file and the
//!   line of the entry that crossed them.

use std::collections::{BTreeMap, HashSet};
use std::ffi::OsStr;
use std::fs::{File, FileTimes, OpenOptions};
use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

use super::error::TranscriptError;

/// The manifest's format name and version.
pub(crate) const MANIFEST_NAME: &str = "fs-search-fixture-tree";
pub(crate) const MANIFEST_VERSION: u64 = 1;
/// The manifest's file name inside a tree directory.
pub(crate) const MANIFEST_FILE: &str = "manifest.json";

/// One directory or file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative path as raw bytes; empty for the root.
    pub path: Vec<u8>,
    /// `None` for a directory.
    pub content: Option<Vec<u8>>,
    /// Time since the epoch (whole seconds unless `mtimeNs` is given).
    pub mtime: Duration,
}

/// A parsed manifest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Manifest {
    pub entries: Vec<Entry>,
}

/// The manifest file of a tree given as its directory or the file itself.
pub(crate) fn manifest_path(tree: &Path) -> PathBuf {
    if tree.is_dir() {
        tree.join(MANIFEST_FILE)
    } else {
        tree.to_path_buf()
    }
}

/// Whether `tree` is a fixture tree (has a manifest).
pub(crate) fn is_fixture_tree(tree: &Path) -> bool {
    manifest_path(tree).is_file()
}

/// The environment variable that raises the [`TreeLimits`].
pub(crate) const TREE_LIMITS_VAR: &str = "WORKBENCH_TREE_LIMITS";

/// The most a manifest may describe: bytes of file content and entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TreeLimits {
    pub bytes: u64,
    pub entries: usize,
}

impl Default for TreeLimits {
    fn default() -> Self {
        Self {
            bytes: 256 * 1024 * 1024,
            entries: 100_000,
        }
    }
}

impl TreeLimits {
    /// The defaults, or `WORKBENCH_TREE_LIMITS=BYTES,ENTRIES` when set.
    pub fn from_env() -> Result<Self, TranscriptError> {
        let Some(raw) = std::env::var_os(TREE_LIMITS_VAR) else {
            return Ok(Self::default());
        };
        let raw = raw.to_string_lossy();
        let parsed = raw
            .split_once(',')
            .and_then(|(b, e)| Some((b.trim().parse().ok()?, e.trim().parse().ok()?)));
        match parsed {
            Some((bytes, entries)) => Ok(Self { bytes, entries }),
            None => Err(TranscriptError::Other(format!(
                "{TREE_LIMITS_VAR}={raw:?}: expected BYTES,ENTRIES (two whole numbers)"
            ))),
        }
    }
}

struct Ctx<'a> {
    file: &'a str,
    /// The manifest's text, to find an entry's line.
    text: &'a str,
    /// Each entry's byte offset in `text`, where known.
    offsets: Vec<usize>,
    limits: TreeLimits,
    /// File content so far.
    bytes: std::cell::Cell<u64>,
}

impl Ctx<'_> {
    fn err(&self, message: impl Into<String>) -> TranscriptError {
        TranscriptError::Manifest {
            file: self.file.to_owned(),
            message: message.into(),
        }
    }

    /// An error at entry `index`, naming the file and the entry's line.
    fn err_at(&self, index: usize, message: impl Into<String>) -> TranscriptError {
        let file = match self.offsets.get(index) {
            Some(&offset) => {
                let line = 1 + self.text.as_bytes()[..offset.min(self.text.len())]
                    .iter()
                    .filter(|b| **b == b'\n')
                    .count();
                format!("{}:{line}", self.file)
            }
            None => self.file.to_owned(),
        };
        TranscriptError::Manifest {
            file,
            message: message.into(),
        }
    }

    /// Counts `more` bytes of content, refusing them past the limit.
    fn add_bytes(&self, index: usize, at: &str, more: Option<u64>) -> Result<(), TranscriptError> {
        let total = more.and_then(|m| m.checked_add(self.bytes.get()));
        match total {
            Some(total) if total <= self.limits.bytes => {
                self.bytes.set(total);
                Ok(())
            }
            _ => Err(self.err_at(
                index,
                format!(
                    "{at}: the tree's file content would exceed {} bytes; \
                     set {TREE_LIMITS_VAR}=BYTES,ENTRIES to allow more",
                    self.limits.bytes
                ),
            )),
        }
    }
}

/// The byte offset of every element of the manifest's `entries` array.
fn entry_offsets(text: &str) -> Vec<usize> {
    #[derive(serde::Deserialize)]
    struct Entries<'a> {
        #[serde(borrow)]
        entries: Vec<&'a serde_json::value::RawValue>,
    }
    let start = text.as_ptr() as usize;
    serde_json::from_str::<Entries<'_>>(text)
        .map(|e| {
            e.entries
                .iter()
                .map(|raw| (raw.get().as_ptr() as usize).saturating_sub(start))
                .collect()
        })
        .unwrap_or_default()
}

fn parse_name(ctx: &Ctx<'_>, at: &str, raw: &[u8]) -> Result<Vec<u8>, TranscriptError> {
    if raw == b"." {
        return Ok(Vec::new());
    }
    if raw.is_empty() || raw.starts_with(b"/") {
        return Err(ctx.err(format!("{at}: a name must be relative and non-empty")));
    }
    for segment in raw.split(|b| *b == b'/') {
        if segment.is_empty() || segment == b"." || segment == b".." || segment.contains(&0) {
            return Err(ctx.err(format!(
                "{at}: empty, `.`, `..` or NUL segments are not allowed"
            )));
        }
    }
    Ok(raw.to_vec())
}

fn parse_content(
    ctx: &Ctx<'_>,
    index: usize,
    at: &str,
    map: &Map<String, Value>,
) -> Result<Vec<u8>, TranscriptError> {
    match (map.get("text"), map.get("content")) {
        (Some(_), Some(_)) => Err(ctx.err(format!("{at}: give `text` or `content`, not both"))),
        (Some(Value::String(text)), None) => {
            ctx.add_bytes(index, at, Some(text.len() as u64))?;
            Ok(text.as_bytes().to_vec())
        }
        (Some(_), None) => Err(ctx.err(format!("{at}: `text` must be a string"))),
        (None, None) => Ok(Vec::new()),
        (None, Some(Value::Array(parts))) => {
            let mut out = Vec::new();
            for part in parts {
                match part {
                    Value::String(s) => {
                        ctx.add_bytes(index, at, Some(s.len() as u64))?;
                        out.extend_from_slice(s.as_bytes());
                    }
                    Value::Object(p) if p.len() == 1 && p.contains_key("base64") => {
                        let raw = p["base64"].as_str().unwrap_or_default();
                        let bytes = STANDARD
                            .decode(raw)
                            .map_err(|e| ctx.err(format!("{at}: bad base64 part: {e}")))?;
                        ctx.add_bytes(index, at, Some(bytes.len() as u64))?;
                        out.extend(bytes);
                    }
                    Value::Object(p)
                        if p.len() == 2 && p.contains_key("repeat") && p.contains_key("times") =>
                    {
                        let (Some(s), Some(n)) = (p["repeat"].as_str(), p["times"].as_u64()) else {
                            return Err(ctx.err(format!(
                                "{at}: a repeat part is {{\"repeat\": STRING, \"times\": N}}"
                            )));
                        };
                        // Checked before a byte is made: `times` may be huge.
                        ctx.add_bytes(index, at, (s.len() as u64).checked_mul(n))?;
                        let n = usize::try_from(n).map_err(|_| {
                            ctx.err_at(index, format!("{at}: `times` is too large"))
                        })?;
                        out.extend(s.repeat(n).into_bytes());
                    }
                    _ => {
                        return Err(ctx.err(format!(
                            "{at}: a content part is a string, {{\"base64\"}} or {{\"repeat\",\"times\"}}"
                        )));
                    }
                }
            }
            Ok(out)
        }
        (None, Some(_)) => Err(ctx.err(format!("{at}: `content` must be an array of parts"))),
    }
}

fn parse_entry(ctx: &Ctx<'_>, index: usize, value: &Value) -> Result<Entry, TranscriptError> {
    let at = format!("entry {index}");
    let Value::Object(map) = value else {
        return Err(ctx.err(format!("{at}: an entry is an object")));
    };
    let allowed = [
        "dir",
        "dirBase64",
        "file",
        "fileBase64",
        "mtime",
        "mtimeNs",
        "text",
        "content",
    ];
    if let Some(key) = map.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(ctx.err(format!("{at}: unknown key \"{key}\"")));
    }
    let names: Vec<(&str, &Value)> = ["dir", "dirBase64", "file", "fileBase64"]
        .iter()
        .filter_map(|k| map.get(*k).map(|v| (*k, v)))
        .collect();
    let [(key, name)] = names.as_slice() else {
        return Err(ctx.err(format!(
            "{at}: exactly one of dir, dirBase64, file, fileBase64"
        )));
    };
    let Some(name) = name.as_str() else {
        return Err(ctx.err(format!("{at}: `{key}` must be a string")));
    };
    let raw = if key.ends_with("Base64") {
        STANDARD
            .decode(name)
            .map_err(|e| ctx.err(format!("{at}: bad base64 name: {e}")))?
    } else {
        name.as_bytes().to_vec()
    };
    let at = format!("{at} ({:?})", String::from_utf8_lossy(&raw));
    let path = parse_name(ctx, &at, &raw)?;
    let mtime = map
        .get("mtime")
        .and_then(Value::as_u64)
        .ok_or_else(|| ctx.err(format!("{at}: `mtime` (whole seconds) is required")))?;
    let nanos = match map.get("mtimeNs") {
        None => 0,
        Some(value) => value
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n < 1_000_000_000)
            .ok_or_else(|| {
                ctx.err(format!(
                    "{at}: `mtimeNs` must be a whole number of nanoseconds below 1000000000"
                ))
            })?,
    };
    let mtime = Duration::new(mtime, nanos);
    let is_dir = key.starts_with("dir");
    if is_dir && (map.contains_key("text") || map.contains_key("content")) {
        return Err(ctx.err(format!("{at}: a directory has no content")));
    }
    if !is_dir && path.is_empty() {
        return Err(ctx.err(format!("{at}: the root is a directory")));
    }
    let content = if is_dir {
        None
    } else {
        Some(parse_content(ctx, index, &at, map)?)
    };
    Ok(Entry {
        path,
        content,
        mtime,
    })
}

fn parent(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|b| *b == b'/') {
        Some(i) => &path[..i],
        None => b"",
    }
}

impl Manifest {
    /// Parses and checks a manifest; `file` names it in errors.
    pub fn parse(file: &str, text: &str) -> Result<Self, TranscriptError> {
        Self::parse_within(file, text, TreeLimits::default())
    }

    /// As [`Manifest::parse`], within `limits`.
    pub fn parse_within(
        file: &str,
        text: &str,
        limits: TreeLimits,
    ) -> Result<Self, TranscriptError> {
        let ctx = Ctx {
            file,
            text,
            offsets: entry_offsets(text),
            limits,
            bytes: std::cell::Cell::new(0),
        };
        let root: Value =
            serde_json::from_str(text).map_err(|e| ctx.err(format!("not valid JSON: {e}")))?;
        let Value::Object(root) = root else {
            return Err(ctx.err("a manifest is a JSON object"));
        };
        if root.get("manifest").and_then(Value::as_str) != Some(MANIFEST_NAME) {
            return Err(ctx.err(format!(
                "not a fixture tree manifest (\"manifest\": \"{MANIFEST_NAME}\")"
            )));
        }
        match root.get("version").and_then(Value::as_u64) {
            Some(MANIFEST_VERSION) => {}
            other => {
                return Err(ctx.err(format!(
                    "unsupported manifest version {} (this workbench reads version {MANIFEST_VERSION})",
                    other.map_or_else(|| "(none)".to_owned(), |v| v.to_string())
                )));
            }
        }
        if let Some(key) = root
            .keys()
            .find(|k| !["manifest", "version", "description", "entries"].contains(&k.as_str()))
        {
            return Err(ctx.err(format!("unknown key \"{key}\"")));
        }
        let Some(Value::Array(raw)) = root.get("entries") else {
            return Err(ctx.err("`entries` must be an array"));
        };
        if raw.len() > limits.entries {
            return Err(ctx.err_at(
                limits.entries,
                format!(
                    "more than {} entries; set {TREE_LIMITS_VAR}=BYTES,ENTRIES to allow more",
                    limits.entries
                ),
            ));
        }
        let entries = raw
            .iter()
            .enumerate()
            .map(|(i, v)| parse_entry(&ctx, i, v))
            .collect::<Result<Vec<_>, _>>()?;
        let mut dirs = HashSet::new();
        let mut seen = HashSet::new();
        for entry in &entries {
            if !seen.insert(entry.path.clone()) {
                return Err(ctx.err(format!(
                    "{:?} is listed twice",
                    String::from_utf8_lossy(&entry.path)
                )));
            }
            if entry.content.is_none() {
                dirs.insert(entry.path.clone());
            }
        }
        if !dirs.contains(&Vec::new()) {
            return Err(ctx.err("the root directory \".\" has no entry (its mtime must be pinned)"));
        }
        for entry in entries.iter().filter(|e| !e.path.is_empty()) {
            let up = parent(&entry.path);
            if !dirs.contains(up) {
                return Err(ctx.err(format!(
                    "directory {:?} (parent of {:?}) has no entry; every directory's mtime must be pinned",
                    String::from_utf8_lossy(up),
                    String::from_utf8_lossy(&entry.path)
                )));
            }
        }
        Ok(Self { entries })
    }

    /// Reads the manifest of `tree` (its directory or the file).
    pub fn load(tree: &Path) -> Result<Self, TranscriptError> {
        let path = manifest_path(tree);
        let text = fs_search_process::read_text(&path, fs_search_process::TRANSCRIPT_MAX_BYTES)
            .map_err(|e| TranscriptError::io(&path, e))?;
        Self::parse_within(&path.display().to_string(), &text, TreeLimits::from_env()?)
    }

    /// Builds the tree under the existing empty directory `root`, pinning
    /// every mtime (and atime) last, deepest directories first.
    pub fn materialise_into(&self, root: &Path) -> Result<(), TranscriptError> {
        let full = |p: &[u8]| -> PathBuf {
            if p.is_empty() {
                root.to_path_buf()
            } else {
                root.join(OsStr::from_bytes(p))
            }
        };
        let mut dirs: BTreeMap<(usize, Vec<u8>), Duration> = BTreeMap::new();
        for entry in &self.entries {
            if entry.content.is_none() {
                let depth = entry.path.split(|b| *b == b'/').count();
                dirs.insert((depth, entry.path.clone()), entry.mtime);
            }
        }
        for (_, path) in dirs.keys() {
            let dir = full(path);
            std::fs::create_dir_all(&dir).map_err(|e| TranscriptError::io(&dir, e))?;
        }
        for entry in &self.entries {
            let Some(content) = &entry.content else {
                continue;
            };
            let path = full(&entry.path);
            let mut file = OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&path)
                .map_err(|e| TranscriptError::io(&path, e))?;
            file.write_all(content)
                .and_then(|()| file.set_times(times(entry.mtime)))
                .map_err(|e| TranscriptError::io(&path, e))?;
        }
        for ((_, path), mtime) in dirs.iter().rev() {
            let dir = full(path);
            File::open(&dir)
                .and_then(|d| d.set_times(times(*mtime)))
                .map_err(|e| TranscriptError::io(&dir, e))?;
        }
        Ok(())
    }
}

fn times(mtime: Duration) -> FileTimes {
    let at: SystemTime = UNIX_EPOCH + mtime;
    FileTimes::new().set_accessed(at).set_modified(at)
}

/// A tree materialised in its own temp dir, removed on drop.
#[derive(Debug)]
pub struct MaterialisedTree {
    dir: tempfile::TempDir,
}

impl MaterialisedTree {
    /// Builds `manifest` in a fresh `<tmp>/fs-search-tree-XXXXXX`.
    pub fn new(manifest: &Manifest) -> Result<Self, TranscriptError> {
        Self::new_in(manifest, &std::env::temp_dir())
    }

    /// Builds `manifest` in a fresh directory under `parent`.
    pub fn new_in(manifest: &Manifest, parent: &Path) -> Result<Self, TranscriptError> {
        let dir = tempfile::Builder::new()
            .prefix("fs-search-tree-")
            .tempdir_in(parent)
            .map_err(|e| TranscriptError::io(parent, e))?;
        manifest.materialise_into(dir.path())?;
        Ok(Self { dir })
    }

    pub fn root(&self) -> &Path {
        self.dir.path()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    const GOOD: &str = r#"{"manifest":"fs-search-fixture-tree","version":1,"entries":[
        {"dir":".","mtime":1000},
        {"dir":"sub","mtime":2000},
        {"file":"sub/a.txt","mtime":1500,"text":"a\r\n"},
        {"fileBase64":"bGF0aW4x6S50eHQ=","mtime":1600,"content":["caf",{"base64":"6Q=="},{"repeat":"ab","times":3}]}
    ]}"#;

    #[test]
    fn materialises_names_contents_and_pins_every_mtime() {
        let manifest = Manifest::parse("m.json", GOOD).unwrap();
        let tree = MaterialisedTree::new(&manifest).unwrap();
        let root = tree.root();
        assert_eq!(std::fs::read(root.join("sub/a.txt")).unwrap(), b"a\r\n");
        let latin = root.join(OsStr::from_bytes(b"latin1\xe9.txt"));
        assert_eq!(std::fs::read(&latin).unwrap(), b"caf\xe9ababab");
        let mtime = |p: &Path| std::fs::metadata(p).unwrap().mtime();
        assert_eq!(mtime(root), 1000);
        assert_eq!(mtime(&root.join("sub")), 2000);
        assert_eq!(mtime(&root.join("sub/a.txt")), 1500);
        assert_eq!(mtime(&latin), 1600);
    }

    #[test]
    fn pins_sub_second_mtimes_of_files_and_directories() {
        let text = r#"{"manifest":"fs-search-fixture-tree","version":1,"entries":[
            {"dir":".","mtime":1000,"mtimeNs":999999999},
            {"dir":"d","mtime":1000,"mtimeNs":7},
            {"file":"d/a","mtime":1000,"mtimeNs":1},
            {"file":"d/b","mtime":1000,"mtimeNs":2},
            {"file":"c","mtime":1000}
        ]}"#;
        let manifest = Manifest::parse("m.json", text).unwrap();
        let tree = MaterialisedTree::new(&manifest).unwrap();
        let root = tree.root();
        let at = |p: &Path| {
            let m = std::fs::metadata(p).unwrap();
            (m.mtime(), m.mtime_nsec())
        };
        assert_eq!(at(root), (1000, 999_999_999));
        assert_eq!(at(&root.join("d")), (1000, 7));
        assert_eq!(at(&root.join("d/a")), (1000, 1));
        assert_eq!(at(&root.join("d/b")), (1000, 2));
        assert_eq!(at(&root.join("c")), (1000, 0));
    }

    #[test]
    fn every_directory_must_be_pinned() {
        let text = r#"{"manifest":"fs-search-fixture-tree","version":1,"entries":[
            {"dir":".","mtime":1},{"file":"x/y.txt","mtime":2}]}"#;
        let err = Manifest::parse("m.json", text).unwrap_err().to_string();
        assert!(err.starts_with("m.json: directory \"x\""), "{err}");
        let text = r#"{"manifest":"fs-search-fixture-tree","version":1,"entries":[{"file":"y","mtime":2}]}"#;
        let err = Manifest::parse("m.json", text).unwrap_err().to_string();
        assert!(err.contains("root directory"), "{err}");
    }

    #[test]
    fn rejects_escaping_names_duplicates_and_wrong_versions() {
        for (entries, needle) in [
            (r#"{"file":"../x","mtime":1}"#, "segments"),
            (r#"{"file":"/abs","mtime":1}"#, "relative"),
            (r#"{"dir":".","mtime":1}"#, "listed twice"),
            (
                r#"{"file":"a","mtime":1,"text":1}"#,
                "`text` must be a string",
            ),
            (r#"{"file":"a"}"#, "`mtime`"),
            (
                r#"{"file":"a","mtime":1,"mtimeNs":1000000000}"#,
                "`mtimeNs` must be",
            ),
            (
                r#"{"file":"a","mtime":1,"mtimeNs":-1}"#,
                "`mtimeNs` must be",
            ),
        ] {
            let text = format!(
                r#"{{"manifest":"fs-search-fixture-tree","version":1,"entries":[{{"dir":".","mtime":1}},{entries}]}}"#
            );
            let err = Manifest::parse("m.json", &text).unwrap_err().to_string();
            assert!(err.contains(needle), "{entries}: {err}");
        }
        let err = Manifest::parse(
            "m.json",
            r#"{"manifest":"fs-search-fixture-tree","version":2,"entries":[]}"#,
        )
        .unwrap_err()
        .to_string();
        assert_eq!(
            err,
            "m.json: unsupported manifest version 2 (this workbench reads version 1)"
        );
    }
}

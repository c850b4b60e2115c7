//! Recording: run calls on a tree and write the transcript, headlessly
//! (`workbench record`) or from the TUI's session ([`Recorder`]).

use std::path::{Component, Path, PathBuf};

use fs_search_engine::ToolResult;
use serde_json::Value;

use super::error::TranscriptError;
use super::fixture_engine::{FixtureEngine, default_ripgrep_config, outcome_of, rg_version};
use super::format::{self, Call, Header, Record, Transcript, TranscriptEnv};
use super::normalise::{Normaliser, TREE};
use super::parse;

/// `target` relative to the directory `base` (both made absolute first),
/// with `/` separators; falls back to the absolute target.
pub fn relative_path(base: &Path, target: &Path) -> String {
    let absolute = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let (base, target) = (absolute(base), absolute(target));
    let b: Vec<Component<'_>> = base.components().collect();
    let t: Vec<Component<'_>> = target.components().collect();
    if b.first() != t.first() {
        return target.to_string_lossy().into_owned();
    }
    let common = b.iter().zip(&t).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = std::iter::repeat_n("..".to_owned(), b.len() - common).collect();
    parts.extend(
        t[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    if parts.is_empty() {
        ".".to_owned()
    } else {
        parts.join("/")
    }
}

/// A call read from a calls file, with its line number.
pub(crate) type NumberedCall = (usize, Call);

/// Parses a calls file: one call object per line (blank lines skipped).
pub fn parse_calls(file: &str, text: &str) -> Result<Vec<NumberedCall>, TranscriptError> {
    let mut names = std::collections::HashSet::new();
    let mut calls = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        if raw.trim().is_empty() {
            continue;
        }
        let call = parse::parse_call_line(file, i + 1, raw)?;
        if !names.insert(call.name.clone()) {
            return Err(TranscriptError::Parse {
                file: file.to_owned(),
                line: i + 1,
                message: format!("duplicate record name \"{}\"", call.name),
            });
        }
        calls.push((i + 1, call));
    }
    Ok(calls)
}

/// Runs `calls` (read from `calls_file`) on `tree` with `config` and
/// returns the transcript that will live at `out` (its header names the
/// tree relative to `out`'s directory).
pub async fn record(
    tree: &Path,
    config: Value,
    calls: Vec<NumberedCall>,
    calls_file: &str,
    out: &Path,
) -> Result<Transcript, TranscriptError> {
    let ripgrep_config = default_ripgrep_config();
    let mut engine = FixtureEngine::new(tree, config.clone(), &ripgrep_config)?;
    let out_dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    let header = Header {
        contract: fs_search_engine::release::Release::Seed,
        tree: relative_path(out_dir, tree),
        config,
        env: TranscriptEnv {
            rg: rg_version(),
            ripgrep_config,
            executor: None,
        },
    };
    let mut records = Vec::with_capacity(calls.len());
    for (line, call) in calls {
        TranscriptError::check_stopped()?;
        let outcome = engine
            .run(&call)
            .await
            .map_err(|source| TranscriptError::Setup {
                file: calls_file.to_owned(),
                line,
                name: call.name.clone(),
                source,
            })?;
        TranscriptError::check_stopped()?;
        records.push(Record {
            line: 0,
            call,
            outcome,
            variants: Default::default(),
            releases: Default::default(),
        });
    }
    let transcript = Transcript { header, records };
    // Number the records as the written file will.
    let text = format::write(&transcript);
    parse::parse(&out.display().to_string(), &text)
}

/// Writes `transcript` to `path` at once: a failed write leaves the
/// file that was there (see `fs_search_process`'s `atomic_file`).
pub fn save(path: &Path, transcript: &Transcript) -> Result<(), TranscriptError> {
    fs_search_process::replace_file(path, format::write(transcript).as_bytes())
        .map_err(|e| TranscriptError::io(path, e))
}

/// Records the calls of a live session (the TUI): each result is pushed
/// as it comes, normalised against the session's workdir and spill root.
#[derive(Debug, Clone)]
pub struct Recorder {
    workdir: PathBuf,
    config: Value,
    /// The release the session's calls run as, named by the header.
    contract: fs_search_engine::release::Release,
    records: Vec<Record>,
    normaliser: Normaliser,
}

impl Recorder {
    /// Starts a recording of calls on `workdir` with plugin `config`, run
    /// as the seed's release.
    pub fn new(workdir: &Path, config: Value) -> Self {
        Self {
            workdir: workdir.to_path_buf(),
            config,
            contract: fs_search_engine::release::Release::Seed,
            records: Vec::new(),
            normaliser: Normaliser::new().with_root(workdir, TREE),
        }
    }

    /// The recording's calls run as `release` (its header names it).
    pub fn with_release(mut self, release: fs_search_engine::release::Release) -> Self {
        self.contract = release;
        self
    }

    /// Adds one call and its result; a name is made unique if needed.
    pub fn push(&mut self, mut call: Call, result: &ToolResult) {
        let base = call.name.clone();
        let mut n = 1;
        while self.records.iter().any(|r| r.call.name == call.name) {
            n += 1;
            call.name = format!("{base}-{n}");
        }
        let outcome = outcome_of(result, &self.normaliser);
        self.records.push(Record {
            line: 0,
            call,
            outcome,
            variants: Default::default(),
            releases: Default::default(),
        });
    }

    pub fn len(&self) -> usize {
        self.records.len()
    }

    pub fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// The transcript as it would be saved at `out`. A live session
    /// does not pin rg's order, so its env lists no rg config lines.
    pub fn transcript(&self, out: &Path) -> Transcript {
        let out_dir = out
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or_else(|| Path::new("."));
        Transcript {
            header: Header {
                contract: self.contract,
                tree: relative_path(out_dir, &self.workdir),
                config: self.config.clone(),
                env: TranscriptEnv {
                    rg: rg_version(),
                    ripgrep_config: Vec::new(),
                    executor: None,
                },
            },
            records: self.records.clone(),
        }
    }

    /// Saves the recording to `out`.
    pub fn save(&self, out: &Path) -> Result<(), TranscriptError> {
        save(out, &self.transcript(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_walk_up_and_down() {
        assert_eq!(
            relative_path(Path::new("/a/b/c"), Path::new("/a/d")),
            "../../d"
        );
        assert_eq!(relative_path(Path::new("/a"), Path::new("/a")), ".");
        assert_eq!(relative_path(Path::new("/a"), Path::new("/a/x/y")), "x/y");
    }
}

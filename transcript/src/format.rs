//! The transcript file format, version 1 (docs/design.md §3).
//!
//! A transcript is JSON Lines: every line is one JSON object, and the kind
//! of a line is told by its first key, so a reviewer can read it top down
//! and a diff shows one changed line of model-visible text as one line:
//!
//! ```text
//! {"transcript":"fs-search","version":1,"tree":"../trees/mixed","config":{…},"env":{…}}
//! {"call":"glob-over-cap","tool":"glob","args":{"pattern":"*"},"options":{…}}
//! {"result":"glob-over-cap","isError":false,"error":null,"spill":{…},"warnings":[]}
//! {"text":"src/app.ts"}
//! {"text":""}
//! {"text":"(Showing 5 of 31 paths, …)"}
//! ```
//!
//! - The header (line 1) names the format and its version, the package
//!   release the calls ran as when it is not the seed's 0.0.1
//!   (`"contract":"0.1.0-rc.8"`, after `version`; absent means 0.0.1, so
//!   every file written before releases existed reads as it was), the fixture
//!   tree (a path relative to the transcript's own directory), the plugin
//!   config every call starts from, and the environment that shapes the
//!   output: the rg version and the lines of the rg config file given to
//!   rg through `RIPGREP_CONFIG_PATH` (which pins grep's file order);
//!   a recording adds `executor` (`local`, `sandbox-bwrap` or `sandbox-landlock`, `sandbox` before the runners, or `ssh://HOST`: the bash executor
//!   its calls ran under), an optional key older files lack.
//! - Each record is a `call` line (a name unique in the file, the tool
//!   name and the raw arguments exactly as a model would send them, and
//!   the per-call [`CallOptions`]), then a `result` line (isError, error
//!   name and code, the spill locator normalised, the warnings logged,
//!   and optionally `tokens`: the text's token count),
//!   then one `text` line per line of the model-visible text (the text is
//!   the lines joined by `\n`; it never ends in a newline of its own).
//! - Call options (all optional; written out in full except the rare
//!   ones): `config` (keys merged over the header's config), `spill`
//!   (`store` | `none` | `unwritable`), `session` (`{"id","cwd"}` with
//!   `cwd` relative to the tree, or null for a call without agent),
//!   `nested`, `cancel` (`beforeDispatch` | `{"afterMs": N}`),
//!   `executorTimeoutMs`, `ripgrepConfig` (false: rg runs without the
//!   header's config file), `client` (`{"name","version"}`: the MCP
//!   client that made the call, from its `clientInfo`; written by
//!   `workbench mcp --record`, absent in fixture transcripts and older
//!   recordings, and never part of what a replay compares).
//! - Variants (format version 2): a record may carry, after its text
//!   lines, the outcome another rg major version gives, for calls whose
//!   text rg writes itself (its stderr, its file order): a `variant` line
//!   (`{"variant":NAME,"rg":14,…}` with the result line's keys) and its
//!   own text lines. The record's outcome is the one of the header's rg;
//!   a replay under rg 14 compares with the `rg` 14 variant when there is
//!   one. A file without variants is written as version 1, which every
//!   workbench reads; one with variants as version 2.
//! - Release variants: after its rg variants, a record may carry the
//!   outcome another release than the header's gives: a `variant` line
//!   with `contract` (`{"variant":NAME,"contract":"0.1.0-rc.8",…}`, the
//!   result line's keys; optionally `"rg":N` after it, for that release
//!   under rg N only) and its own text lines. A replay as that release
//!   compares with the variant for its rg, else the one without `rg`,
//!   else as under the header's release (the rg variant, else the
//!   outcome). Format version 2 too.
//! - Temp paths are placeholders: `<TREE>` (the materialised tree),
//!   `<SPILL>` (the spill store root), `<RAND>` (the random 12-hex locator
//!   prefix); see [`super::normalise`].
//!
//! Reading is in [`super::parse`]: strict, with errors naming the file and
//! line, never a panic.
//!
//! [`RecordedCall`] is a record as the tools built on transcripts hold
//! it: with its file, its call line and its header, and the one outcome
//! that counts for the rg reading it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use fs_search_engine::release::Release;
use serde_json::{Map, Value, json};

/// The format name in the header's `transcript` key.
pub(crate) const FORMAT_NAME: &str = "fs-search";
/// The version of a transcript without rg-version variants.
pub(crate) const FORMAT_VERSION: u64 = 1;
/// The version of a transcript with rg-version variants (version 1 plus
/// `variant` lines); the newest this build reads and writes.
pub(crate) const FORMAT_VERSION_VARIANTS: u64 = 2;
/// The session id calls use unless their options say otherwise.
pub(crate) const DEFAULT_SESSION_ID: &str = "transcript-session";

/// The environment that shapes the recorded output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptEnv {
    /// `rg --version`'s first line when recorded.
    pub rg: String,
    /// The lines of the rg config file replays pass via `RIPGREP_CONFIG_PATH`.
    pub ripgrep_config: Vec<String>,
    /// The executor the calls ran under (`local`, `sandbox-bwrap`,
    /// `sandbox-landlock`; `sandbox` in older recordings), written by
    /// recordings; absent in fixture transcripts and older recordings.
    pub executor: Option<String>,
}

/// Line 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    /// The release the calls ran as (and a replay runs them as): written
    /// as `contract` unless it is the seed's 0.0.1.
    pub contract: Release,
    /// The fixture tree, relative to the transcript's directory (or absolute).
    pub tree: String,
    /// The plugin config every call starts from.
    pub config: Value,
    pub env: TranscriptEnv,
}

/// Which spill store the call's registry loads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpillMode {
    /// The local store, rooted in a private temp dir (`<SPILL>`).
    Store,
    /// No store loaded (§8.3 "no ctx.spillStore backend").
    None,
    /// A local store rooted where no directory can be created, so every
    /// save fails (§8.3 "saveText failed").
    Unwritable,
}

impl SpillMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Store => "store",
            Self::None => "none",
            Self::Unwritable => "unwritable",
        }
    }

    pub(super) fn parse(raw: &str) -> Option<Self> {
        match raw {
            "store" => Some(Self::Store),
            "none" => Some(Self::None),
            "unwritable" => Some(Self::Unwritable),
            _ => None,
        }
    }
}

/// The calling agent's session header: `None` in [`CallOptions`] means a
/// call without agent (no cwd, no spill owner).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionOption {
    /// The session id (the spill owner); `None`: a header without id.
    pub id: Option<String>,
    /// The session cwd relative to the tree root (`.` is the root);
    /// `None`: no cwd, so the executor uses its default (the tree root).
    pub cwd: Option<String>,
}

impl Default for SessionOption {
    fn default() -> Self {
        Self {
            id: Some(DEFAULT_SESSION_ID.to_owned()),
            cwd: Some(".".to_owned()),
        }
    }
}

/// When the caller's signal is cancelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cancel {
    /// Before dispatch: the registry's `ABORTED_BEFORE_DISPATCH`.
    BeforeDispatch,
    /// This many milliseconds after the call started.
    AfterMs(u64),
}

/// The MCP client that made a recorded call: its `clientInfo` (the 2025
/// revisions' `initialize`, or 2026-07-28's per-request `_meta`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientInfo {
    /// `clientInfo.name` as the client sent it (`codex-mcp-client`, …).
    pub name: String,
    /// `clientInfo.version`; `None` when the client sent none.
    pub version: Option<String>,
}

/// Everything besides tool and args that decides a call's outcome (and
/// the client that made it, which decides nothing).
#[derive(Debug, Clone, PartialEq)]
pub struct CallOptions {
    /// Keys merged over the header's config for this call.
    pub config: Map<String, Value>,
    pub spill: SpillMode,
    pub session: Option<SessionOption>,
    /// A nested Code Mode dispatch (no meta, no spill).
    pub nested: bool,
    pub cancel: Option<Cancel>,
    /// The local executor's own timeout (default 120000 ms).
    pub executor_timeout_ms: Option<u64>,
    /// Whether rg gets the header's config file (pinned file order). A
    /// call that prints no file list can run without it, to show rg's own
    /// text where `--sort` changes it (a missing path's message).
    pub ripgrep_config: bool,
    /// The MCP client that made the call, when it was recorded live.
    pub client: Option<ClientInfo>,
}

impl Default for CallOptions {
    fn default() -> Self {
        Self {
            config: Map::new(),
            spill: SpillMode::Store,
            session: Some(SessionOption::default()),
            nested: false,
            cancel: None,
            executor_timeout_ms: None,
            ripgrep_config: true,
            client: None,
        }
    }
}

/// One call as the model sent it.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// A name unique in the transcript; diffs name the record by it.
    pub name: String,
    pub tool: String,
    /// The raw arguments (any JSON value: schema errors are recorded too).
    pub args: Value,
    pub options: CallOptions,
}

/// `error` of a failed result: `{name, code}`, both null for plain errors.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeError {
    pub name: Option<String>,
    pub code: Option<String>,
}

/// The formatted-result spill behind a footer, normalised.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutcomeSpill {
    pub locator: String,
    pub bytes: u64,
}

/// The result as the model saw it (plus the warnings the host logged,
/// which tell the could-not-save rows of §8.4 apart).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub is_error: bool,
    pub error: Option<OutcomeError>,
    pub spill: Option<OutcomeSpill>,
    pub warnings: Vec<String>,
    pub text: String,
    /// The text's token count, when the record carries one (the optional
    /// `tokens` key of the result line; written by `record` and by
    /// `replay --update`).
    pub tokens: Option<u64>,
}

impl Outcome {
    /// Whether `current` (a replay's outcome) shows what `self` recorded:
    /// every part equal; the token count compared only when both carry one
    /// (a recorded count, and a replay that counted).
    pub fn matches(&self, current: &Outcome) -> bool {
        let tokens_match = match (self.tokens, current.tokens) {
            (Some(recorded), Some(now)) => recorded == now,
            _ => true,
        };
        tokens_match
            && self.is_error == current.is_error
            && self.error == current.error
            && self.spill == current.spill
            && self.warnings == current.warnings
            && self.text == current.text
    }
}

/// Which release variant: another release than the header's, and
/// optionally the rg major version it is for (`None`: any rg).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReleaseKey {
    pub contract: Release,
    pub rg: Option<u32>,
}

impl ReleaseKey {
    /// The order release variants are written in: by release (oldest
    /// first), the one for any rg before those for one rg.
    fn rank(&self) -> (usize, Option<u32>) {
        let release = Release::ALL
            .iter()
            .position(|r| *r == self.contract)
            .unwrap_or(usize::MAX);
        (release, self.rg)
    }

    /// How a report names it: `0.1.0-rc.8` or `0.1.0-rc.8 under rg 15`.
    pub fn label(&self) -> String {
        match self.rg {
            Some(major) => format!("{} under rg {major}", self.contract),
            None => self.contract.name().to_owned(),
        }
    }
}

impl PartialOrd for ReleaseKey {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for ReleaseKey {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank().cmp(&other.rank())
    }
}

/// A call and its recorded outcome; `line` is the call line's number.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub line: usize,
    pub call: Call,
    /// The outcome under the header's rg.
    pub outcome: Outcome,
    /// The outcome under other rg major versions, where it differs.
    pub variants: BTreeMap<u32, Outcome>,
    /// The outcome under other releases than the header's, where it
    /// differs (written after the rg variants).
    pub releases: BTreeMap<ReleaseKey, Outcome>,
}

impl Record {
    /// The outcome recorded for rg major version `major`: its variant,
    /// else the record's own outcome.
    pub fn expected_for(&self, major: Option<u32>) -> &Outcome {
        major
            .and_then(|m| self.variants.get(&m))
            .unwrap_or(&self.outcome)
    }

    /// The release variant compared under `release` and rg `major`: the
    /// one for that rg, else the one for any rg; none under the header's
    /// release (`header`).
    pub fn release_variant(
        &self,
        header: Release,
        release: Release,
        major: Option<u32>,
    ) -> Option<ReleaseKey> {
        if release == header {
            return None;
        }
        let for_rg = major.map(|m| ReleaseKey {
            contract: release,
            rg: Some(m),
        });
        let any = ReleaseKey {
            contract: release,
            rg: None,
        };
        for_rg
            .into_iter()
            .chain([any])
            .find(|key| self.releases.contains_key(key))
    }

    /// The outcome recorded for `release` (the header's is `header`) and
    /// rg major `major`: its release variant, else [`Self::expected_for`].
    pub fn expected_as(&self, header: Release, release: Release, major: Option<u32>) -> &Outcome {
        self.release_variant(header, release, major)
            .and_then(|key| self.releases.get(&key))
            .unwrap_or_else(|| self.expected_for(major))
    }
}

/// A recorded call: one record of a transcript as the tools built on
/// transcripts hold it, with where it is recorded and the header it runs
/// under. `workbench mcp --replay` serves it, the TUI shows a followed
/// recording's calls as it, `explain` runs it again in its tree, and
/// `workbench mcp --record` appends it.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedCall {
    /// The transcript, as named (on the command line, or the path followed
    /// or recorded to).
    pub file: PathBuf,
    /// The number of its call line in the file.
    pub line: usize,
    /// The transcript's header: the tree, the config the call's own keys
    /// go over, and the rg config lines rg reads.
    pub header: Arc<Header>,
    pub call: Call,
    /// What the model saw (of a record with variants: the outcome for the
    /// rg that reads it).
    pub outcome: Outcome,
}

impl RecordedCall {
    /// `record` of the transcript `file` with `header`, with its outcome
    /// for rg major version `rg_major` ([`Record::expected_for`]).
    pub fn of_record(
        file: impl Into<PathBuf>,
        header: Arc<Header>,
        record: &Record,
        rg_major: Option<u32>,
    ) -> Self {
        Self {
            file: file.into(),
            line: record.line,
            header,
            call: record.call.clone(),
            outcome: record.expected_for(rg_major).clone(),
        }
    }

    /// The tree the call runs in: the header's, resolved against the
    /// transcript's directory.
    pub fn tree(&self) -> PathBuf {
        tree_path(&self.file, &self.header.tree)
    }

    /// Its record's lines as a transcript holds them: the call line, the
    /// result line and the text lines.
    pub fn lines(&self) -> String {
        let mut lines = call_line(&self.call);
        lines.push_str(&outcome_lines(&self.call.name, &self.outcome));
        lines
    }
}

/// The tree a header names, resolved against the transcript's directory.
pub fn tree_path(transcript_file: &Path, tree: &str) -> PathBuf {
    let tree = Path::new(tree);
    if tree.is_absolute() {
        return tree.to_path_buf();
    }
    transcript_file
        .parent()
        .unwrap_or_else(|| Path::new("."))
        .join(tree)
}

/// A parsed transcript.
#[derive(Debug, Clone, PartialEq)]
pub struct Transcript {
    pub header: Header,
    pub records: Vec<Record>,
}

// ---------------------------------------------------------------- writing

fn line(value: &Value) -> String {
    // serde_json writes `preserve_order` maps in insertion order.
    let mut out = value.to_string();
    out.push('\n');
    out
}

/// The header line of a version-1 transcript (no variants).
pub fn header_line(header: &Header) -> String {
    versioned_header_line(header, FORMAT_VERSION)
}

/// The header line of a transcript of format `version`.
fn versioned_header_line(header: &Header, version: u64) -> String {
    let mut env = json!({
        "rg": header.env.rg,
        "ripgrepConfig": header.env.ripgrep_config,
    });
    if let Some(executor) = &header.env.executor {
        env["executor"] = json!(executor);
    }
    let mut map = Map::new();
    map.insert("transcript".into(), json!(FORMAT_NAME));
    map.insert("version".into(), json!(version));
    if header.contract != Release::Seed {
        map.insert("contract".into(), json!(header.contract.name()));
    }
    map.insert("tree".into(), json!(header.tree));
    map.insert("config".into(), header.config.clone());
    map.insert("env".into(), env);
    line(&Value::Object(map))
}

fn options_value(options: &CallOptions) -> Value {
    let session = options.session.as_ref().map(|s| {
        json!({
            "id": s.id,
            "cwd": s.cwd,
        })
    });
    let cancel = options.cancel.map(|c| match c {
        Cancel::BeforeDispatch => json!("beforeDispatch"),
        Cancel::AfterMs(ms) => json!({ "afterMs": ms }),
    });
    let mut map = Map::new();
    if !options.config.is_empty() {
        map.insert("config".into(), Value::Object(options.config.clone()));
    }
    map.insert("spill".into(), json!(options.spill.as_str()));
    map.insert("session".into(), session.unwrap_or(Value::Null));
    map.insert("nested".into(), json!(options.nested));
    if let Some(cancel) = cancel {
        map.insert("cancel".into(), cancel);
    }
    if let Some(ms) = options.executor_timeout_ms {
        map.insert("executorTimeoutMs".into(), json!(ms));
    }
    if !options.ripgrep_config {
        map.insert("ripgrepConfig".into(), json!(false));
    }
    if let Some(client) = &options.client {
        map.insert(
            "client".into(),
            json!({"name": client.name, "version": client.version}),
        );
    }
    Value::Object(map)
}

/// The call line of `call`.
pub fn call_line(call: &Call) -> String {
    line(&json!({
        "call": call.name,
        "tool": call.tool,
        "args": call.args,
        "options": options_value(&call.options),
    }))
}

/// The result line and the text lines of `outcome`.
pub fn outcome_lines(name: &str, outcome: &Outcome) -> String {
    outcome_block(("result", name), None, outcome)
}

/// The variant line and the text lines of `outcome` under rg `major`.
pub(crate) fn variant_lines(name: &str, major: u32, outcome: &Outcome) -> String {
    outcome_block(("variant", name), Some(major), outcome)
}

/// The variant line and the text lines of `outcome` under the release
/// variant `key`.
pub(crate) fn release_variant_lines(name: &str, key: ReleaseKey, outcome: &Outcome) -> String {
    outcome_block_as(("variant", name), Some(key.contract), key.rg, outcome)
}

/// A result or variant line (`kind` is its first key and the record's
/// name), then the text lines.
fn outcome_block(kind: (&str, &str), major: Option<u32>, outcome: &Outcome) -> String {
    outcome_block_as(kind, None, major, outcome)
}

/// As `outcome_block`, with a release variant's `contract` after the name.
fn outcome_block_as(
    kind: (&str, &str),
    contract: Option<Release>,
    major: Option<u32>,
    outcome: &Outcome,
) -> String {
    let error = outcome
        .error
        .as_ref()
        .map(|e| json!({ "name": e.name, "code": e.code }));
    let spill = outcome
        .spill
        .as_ref()
        .map(|s| json!({ "locator": s.locator, "bytes": s.bytes }));
    let mut map = Map::new();
    map.insert(kind.0.into(), json!(kind.1));
    if let Some(contract) = contract {
        map.insert("contract".into(), json!(contract.name()));
    }
    if let Some(major) = major {
        map.insert("rg".into(), json!(major));
    }
    map.insert("isError".into(), json!(outcome.is_error));
    map.insert("error".into(), error.unwrap_or(Value::Null));
    map.insert("spill".into(), spill.unwrap_or(Value::Null));
    map.insert("warnings".into(), json!(outcome.warnings));
    if let Some(tokens) = outcome.tokens {
        map.insert("tokens".into(), json!(tokens));
    }
    let mut out = line(&Value::Object(map));
    for text in outcome.text.split('\n') {
        out.push_str(&line(&json!({ "text": text })));
    }
    out
}

/// The whole file: version 1 unless a record carries variants.
pub(crate) fn write(transcript: &Transcript) -> String {
    let has_variants = transcript
        .records
        .iter()
        .any(|r| !r.variants.is_empty() || !r.releases.is_empty());
    let version = if has_variants {
        FORMAT_VERSION_VARIANTS
    } else {
        FORMAT_VERSION
    };
    let mut out = versioned_header_line(&transcript.header, version);
    for record in &transcript.records {
        out.push_str(&call_line(&record.call));
        out.push_str(&outcome_lines(&record.call.name, &record.outcome));
        for (major, outcome) in &record.variants {
            out.push_str(&variant_lines(&record.call.name, *major, outcome));
        }
        for (key, outcome) in &record.releases {
            out.push_str(&release_variant_lines(&record.call.name, *key, outcome));
        }
    }
    out
}

/// The line number (from 1) of each record's call line in `write`'s
/// text, in record order.
pub fn record_lines(transcript: &Transcript) -> Vec<usize> {
    write(transcript)
        .lines()
        .enumerate()
        .filter(|(_, l)| l.starts_with("{\"call\":"))
        .map(|(i, _)| i + 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn sample() -> Transcript {
        let call = |name: &str, options: CallOptions| Call {
            name: name.into(),
            tool: "glob".into(),
            args: json!({"pattern": "*"}),
            options,
        };
        Transcript {
            header: Header {
                contract: Release::Seed,
                tree: "../trees/mixed".into(),
                config: json!({"sampleOverCapGlobResults": true}),
                env: TranscriptEnv {
                    rg: "ripgrep 13.0.0".into(),
                    ripgrep_config: vec!["--sort=path".into()],
                    executor: None,
                },
            },
            records: vec![
                Record {
                    line: 2,
                    call: call("a", CallOptions::default()),
                    outcome: Outcome {
                        is_error: false,
                        error: None,
                        spill: Some(OutcomeSpill {
                            locator: "<SPILL>/session-0123456789ab/<RAND>-glob-results.txt".into(),
                            bytes: 12,
                        }),
                        warnings: vec![],
                        text: "a.ts\n\n(Showing…)\r".into(),
                        tokens: Some(7),
                    },
                    variants: BTreeMap::new(),
                    releases: BTreeMap::new(),
                },
                Record {
                    line: 7,
                    call: call(
                        "b",
                        CallOptions {
                            config: json!({"globMaxResults": 2}).as_object().cloned().unwrap(),
                            spill: SpillMode::Unwritable,
                            session: Some(SessionOption {
                                id: None,
                                cwd: Some("sub".into()),
                            }),
                            nested: true,
                            cancel: Some(Cancel::AfterMs(300)),
                            executor_timeout_ms: Some(250),
                            ripgrep_config: false,
                            client: None,
                        },
                    ),
                    outcome: Outcome {
                        is_error: true,
                        error: Some(OutcomeError {
                            name: None,
                            code: None,
                        }),
                        spill: None,
                        warnings: vec!["w".into()],
                        text: String::new(),
                        tokens: None,
                    },
                    variants: BTreeMap::new(),
                    releases: BTreeMap::new(),
                },
            ],
        }
    }

    /// `sample()` with an rg 15 and an rg 14 variant of record "b".
    fn sample_with_variants() -> Transcript {
        let mut t = sample();
        let b = &mut t.records[1];
        for (major, text) in [(15, "rg: fifteen"), (14, "rg: fourteen\n")] {
            let mut variant = b.outcome.clone();
            variant.text = text.into();
            variant.tokens = Some(3);
            b.variants.insert(major, variant);
        }
        t
    }

    #[test]
    fn writes_and_parses_back_the_same_transcript() {
        let t = sample();
        let text = write(&t);
        assert_eq!(text.lines().count(), 9);
        assert!(
            text.lines()
                .all(|l| serde_json::from_str::<Value>(l).is_ok())
        );
        assert_eq!(parse("t.jsonl", &text).unwrap(), t);
    }

    #[test]
    fn the_seed_s_release_is_not_written_and_rc8_is_named_after_the_version() {
        let seed = write(&sample());
        assert!(!seed.lines().next().unwrap().contains("\"contract\""));
        let mut t = sample();
        t.header.contract = Release::Rc8;
        let text = write(&t);
        assert!(text.starts_with(
            "{\"transcript\":\"fs-search\",\"version\":1,\"contract\":\"0.1.0-rc.8\",\"tree\":"
        ));
        assert_eq!(parse("t.jsonl", &text).unwrap(), t);
        assert_eq!(
            text.lines().skip(1).collect::<Vec<_>>(),
            seed.lines().skip(1).collect::<Vec<_>>()
        );
        let bad = text.replacen("0.1.0-rc.8", "0.1.0", 1);
        assert_eq!(
            error_of(&bad),
            "t.jsonl:1: \"contract\": unknown contract release `0.1.0` (expected 0.0.1 or 0.1.0-rc.8)"
        );
    }

    #[test]
    fn a_transcript_without_variants_is_written_as_version_1() {
        let text = write(&sample());
        assert!(text.starts_with("{\"transcript\":\"fs-search\",\"version\":1,"));
        assert!(!text.contains("\"variant\""));
    }

    #[test]
    fn variants_are_written_as_version_2_after_the_text_in_rg_order_and_parse_back() {
        let t = sample_with_variants();
        let text = write(&t);
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("{\"transcript\":\"fs-search\",\"version\":2,"));
        assert_eq!(
            &lines[9..],
            &[
                "{\"variant\":\"b\",\"rg\":14,\"isError\":true,\"error\":{\"name\":null,\"code\":null},\"spill\":null,\"warnings\":[\"w\"],\"tokens\":3}",
                "{\"text\":\"rg: fourteen\"}",
                "{\"text\":\"\"}",
                "{\"variant\":\"b\",\"rg\":15,\"isError\":true,\"error\":{\"name\":null,\"code\":null},\"spill\":null,\"warnings\":[\"w\"],\"tokens\":3}",
                "{\"text\":\"rg: fifteen\"}",
            ]
        );
        assert_eq!(parse("t.jsonl", &text).unwrap(), t);
        let b = &t.records[1];
        assert_eq!(b.expected_for(Some(14)).text, "rg: fourteen\n");
        assert_eq!(b.expected_for(Some(13)), &b.outcome);
        assert_eq!(b.expected_for(None), &b.outcome);
    }

    #[test]
    fn a_misplaced_variant_line_is_an_error_naming_the_line() {
        let text = write(&sample_with_variants());
        let as_v1 = text.replacen("\"version\":2", "\"version\":1", 1);
        assert_eq!(
            error_of(&as_v1),
            "t.jsonl:10: a variant line needs transcript version 2 (the header says 1)"
        );
        let own = text.replacen("\"rg\":14", "\"rg\":13", 1);
        assert_eq!(
            error_of(&own),
            "t.jsonl:10: a variant for rg 13, the header's own rg: the record's result is that one"
        );
        let twice = text.replacen("\"rg\":15", "\"rg\":14", 1);
        assert_eq!(
            error_of(&twice),
            "t.jsonl:13: duplicate variant for rg 14 of \"b\""
        );
        let other = text.replacen("{\"variant\":\"b\"", "{\"variant\":\"a\"", 1);
        assert_eq!(
            error_of(&other),
            "t.jsonl:10: variant \"a\" does not follow its record (the call above is \"b\")"
        );
        let no_rg = text.replacen("\"rg\":14,", "", 1);
        assert_eq!(
            error_of(&no_rg),
            "t.jsonl:10: a variant has no \"rg\" (the rg major version)"
        );
        let mut lines: Vec<&str> = text.lines().collect();
        lines.truncate(10);
        assert_eq!(
            error_of(&lines.join("\n")),
            "t.jsonl:11: unexpected end of file: call \"b\" has no text"
        );
    }

    /// `sample_with_variants()` with an rc.8 variant of "b" for any rg
    /// and one for rg 15.
    fn sample_with_release_variants() -> Transcript {
        let mut t = sample_with_variants();
        let b = &mut t.records[1];
        for (rg, text) in [(None, "launch failed"), (Some(15), "rg 15 as rc.8")] {
            let mut variant = b.outcome.clone();
            variant.text = text.into();
            let key = ReleaseKey {
                contract: Release::Rc8,
                rg,
            };
            b.releases.insert(key, variant);
        }
        t
    }

    #[test]
    fn release_variants_follow_the_rg_variants_and_parse_back() {
        let t = sample_with_release_variants();
        let text = write(&t);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            &lines[14..],
            &[
                "{\"variant\":\"b\",\"contract\":\"0.1.0-rc.8\",\"isError\":true,\"error\":{\"name\":null,\"code\":null},\"spill\":null,\"warnings\":[\"w\"]}",
                "{\"text\":\"launch failed\"}",
                "{\"variant\":\"b\",\"contract\":\"0.1.0-rc.8\",\"rg\":15,\"isError\":true,\"error\":{\"name\":null,\"code\":null},\"spill\":null,\"warnings\":[\"w\"]}",
                "{\"text\":\"rg 15 as rc.8\"}",
            ]
        );
        assert_eq!(parse("t.jsonl", &text).unwrap(), t);
        let b = &t.records[1];
        let (seed, rc8) = (Release::Seed, Release::Rc8);
        assert_eq!(b.expected_as(seed, rc8, Some(15)).text, "rg 15 as rc.8");
        assert_eq!(b.expected_as(seed, rc8, Some(14)).text, "launch failed");
        assert_eq!(b.expected_as(seed, seed, Some(14)).text, "rg: fourteen\n");
        // A record without one compares as under the header's release.
        let a = &t.records[0];
        assert_eq!(a.expected_as(seed, rc8, Some(14)), &a.outcome);
        // Only release variants: still version 2.
        let mut only = sample();
        only.records[0].releases = b.releases.clone();
        assert!(write(&only).starts_with("{\"transcript\":\"fs-search\",\"version\":2,"));
    }

    #[test]
    fn a_bad_release_variant_is_an_error_naming_the_line() {
        let text = write(&sample_with_release_variants());
        let twice = text.replacen(
            "\"contract\":\"0.1.0-rc.8\",\"rg\":15,",
            "\"contract\":\"0.1.0-rc.8\",",
            1,
        );
        assert_eq!(
            error_of(&twice),
            "t.jsonl:17: duplicate variant for 0.1.0-rc.8 of \"b\""
        );
        let unknown = text.replacen("0.1.0-rc.8", "0.2.0", 1);
        assert_eq!(
            error_of(&unknown),
            "t.jsonl:15: \"contract\": unknown contract release `0.2.0` (expected 0.0.1 or 0.1.0-rc.8)"
        );
        let own = text.replacen(
            "\"contract\":\"0.1.0-rc.8\",\"isError\"",
            "\"contract\":\"0.0.1\",\"isError\"",
            1,
        );
        assert_eq!(
            error_of(&own),
            "t.jsonl:15: a variant for 0.0.1, the header's own release: the record's result is that one"
        );
        let mut lines: Vec<&str> = text.lines().collect();
        lines.swap(14, 16);
        lines.swap(15, 17);
        assert_eq!(
            error_of(&lines.join("\n")),
            "t.jsonl:17: the variant for 0.1.0-rc.8 of \"b\" is out of order (the one for any rg first, then by rg)"
        );
        let mut lines: Vec<&str> = text.lines().collect();
        let rg_15: Vec<&str> = lines.drain(12..14).collect();
        lines.extend(rg_15);
        assert_eq!(
            error_of(&lines.join("\n")),
            "t.jsonl:17: the variant for rg 15 of \"b\" follows a release variant: rg variants come first"
        );
    }

    #[test]
    fn a_recorded_client_is_written_in_the_options_and_parses_back() {
        let mut t = sample();
        t.records[0].call.options.client = Some(ClientInfo {
            name: "codex-mcp-client".into(),
            version: Some("0.120.0".into()),
        });
        t.records[1].call.options.client = Some(ClientInfo {
            name: "opencode".into(),
            version: None,
        });
        let text = write(&t);
        assert!(
            text.contains("\"client\":{\"name\":\"codex-mcp-client\",\"version\":\"0.120.0\"}")
        );
        assert!(text.contains("\"client\":{\"name\":\"opencode\",\"version\":null}"));
        assert_eq!(parse("t.jsonl", &text).unwrap(), t);
    }

    #[test]
    fn a_call_without_a_client_is_written_and_read_as_before() {
        let t = sample();
        let text = write(&t);
        assert!(!text.contains("\"client\""));
        let parsed = parse("t.jsonl", &text).unwrap();
        assert!(
            parsed
                .records
                .iter()
                .all(|r| r.call.options.client.is_none())
        );
        let bad = text.replacen(
            "\"nested\":false",
            "\"nested\":false,\"client\":{\"version\":\"1\"}",
            1,
        );
        assert_eq!(
            error_of(&bad),
            "t.jsonl:2: \"client\" must be {\"name\": STRING, \"version\": STRING|null}"
        );
    }

    #[test]
    fn a_recorded_call_writes_its_record_s_lines_and_takes_the_outcome_for_its_rg() {
        let t = sample_with_variants();
        let header = Arc::new(t.header.clone());
        let text = write(&sample());
        let a = RecordedCall::of_record("dir/t.jsonl", Arc::clone(&header), &t.records[0], None);
        assert_eq!((a.line, a.call.name.as_str()), (2, "a"));
        let a_lines: String = text
            .lines()
            .skip(1)
            .take(5)
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(
            a.lines(),
            a_lines,
            "the record's lines as the file holds them"
        );
        assert_eq!(a.tree(), Path::new("dir/../trees/mixed"));
        let b = &t.records[1];
        let under_14 = RecordedCall::of_record("t.jsonl", Arc::clone(&header), b, Some(14));
        assert_eq!(under_14.outcome.text, "rg: fourteen\n");
        let under_13 = RecordedCall::of_record("t.jsonl", header, b, Some(13));
        assert_eq!(under_13.outcome, b.outcome);
    }

    #[test]
    fn a_tree_path_resolves_against_the_transcript_s_directory_unless_absolute() {
        assert_eq!(tree_path(Path::new("t.jsonl"), "tree"), Path::new("tree"));
        assert_eq!(
            tree_path(Path::new("/a/t.jsonl"), "../w"),
            Path::new("/a/../w")
        );
        assert_eq!(tree_path(Path::new("/a/t.jsonl"), "/w"), Path::new("/w"));
    }

    fn error_of(text: &str) -> String {
        parse("t.jsonl", text).unwrap_err().to_string()
    }

    #[test]
    fn wrong_version_and_corrupt_lines_name_the_file_and_line() {
        let text = write(&sample());
        assert_eq!(
            error_of(&text.replacen("\"version\":1", "\"version\":3", 1)),
            "t.jsonl:1: unsupported transcript version 3 (this workbench reads versions 1 and 2)"
        );
        let mut lines: Vec<&str> = text.lines().collect();
        lines[3] = "{\"text\": unterminated";
        let err = error_of(&lines.join("\n"));
        assert!(err.starts_with("t.jsonl:4: not valid JSON"), "{err}");
        let mut lines: Vec<&str> = text.lines().collect();
        lines.remove(2);
        assert_eq!(
            error_of(&lines.join("\n")),
            "t.jsonl:3: expected the result line of call \"a\" (\"result\":NAME,…)"
        );
        let truncated: Vec<&str> = text.lines().take(8).collect();
        assert_eq!(
            error_of(&truncated.join("\n")),
            "t.jsonl:9: unexpected end of file: call \"b\" has no text"
        );
        assert!(error_of("").starts_with("t.jsonl:1: "));
        assert!(error_of("[1]\n").starts_with("t.jsonl:1: a transcript line must be"));
        assert!(error_of("{\"x\":1}\n").starts_with("t.jsonl:1: not a transcript header"));
        let typo = text.replacen("\"isError\"", "\"isErr\"", 1);
        assert!(error_of(&typo).starts_with("t.jsonl:3: unknown key \"isErr\""));
    }

    #[test]
    fn a_text_line_may_hold_an_empty_text_and_results_must_follow_their_call() {
        let text = write(&sample());
        let swapped = text.replacen("{\"result\":\"a\"", "{\"result\":\"b\"", 1);
        assert_eq!(
            error_of(&swapped),
            "t.jsonl:3: result \"b\" does not follow its call (the call above is \"a\")"
        );
        let dup = text.replacen("{\"call\":\"b\"", "{\"call\":\"a\"", 1);
        assert!(
            error_of(&dup).starts_with("t.jsonl:7: duplicate record name \"a\" (rename it;"),
            "{}",
            error_of(&dup)
        );
    }
}

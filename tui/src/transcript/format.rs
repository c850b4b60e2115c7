//! The transcript file format, version 1 (DESIGN.md §3).
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
//! - The header (line 1) names the format and its version, the fixture
//!   tree (a path relative to the transcript's own directory), the plugin
//!   config every call starts from, and the environment that shapes the
//!   output: the rg version and the lines of the rg config file given to
//!   rg through `RIPGREP_CONFIG_PATH` (which pins grep's file order).
//! - Each record is a `call` line (a name unique in the file, the tool
//!   name and the raw arguments exactly as a model would send them, and
//!   the per-call [`CallOptions`]), then a `result` line (isError, error
//!   name and code, the spill locator normalised, the warnings logged),
//!   then one `text` line per line of the model-visible text (the text is
//!   the lines joined by `\n`; it never ends in a newline of its own).
//! - Call options (all optional; written out in full except the rare
//!   ones): `config` (keys merged over the header's config), `spill`
//!   (`store` | `none` | `unwritable`), `session` (`{"id","cwd"}` with
//!   `cwd` relative to the tree, or null for a call without agent),
//!   `nested`, `cancel` (`beforeDispatch` | `{"afterMs": N}`),
//!   `executorTimeoutMs`, `ripgrepConfig` (false: rg runs without the
//!   header's config file).
//! - Temp paths are placeholders: `<TREE>` (the materialised tree),
//!   `<SPILL>` (the spill store root), `<RAND>` (the random 12-hex locator
//!   prefix); see [`super::normalise`].
//!
//! Parsing is strict (unknown keys, a missing line, a wrong version are
//! errors naming the file and line) and never panics.

use serde_json::{Map, Value, json};

use super::error::TranscriptError;

/// The format name in the header's `transcript` key.
pub const FORMAT_NAME: &str = "fs-search";
/// The only version this build reads and writes.
pub const FORMAT_VERSION: u64 = 1;
/// The session id calls use unless their options say otherwise.
pub const DEFAULT_SESSION_ID: &str = "transcript-session";

/// The environment that shapes the recorded output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptEnv {
    /// `rg --version`'s first line when recorded.
    pub rg: String,
    /// The lines of the rg config file replays pass via `RIPGREP_CONFIG_PATH`.
    pub ripgrep_config: Vec<String>,
}

/// Line 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
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

    fn parse(raw: &str) -> Option<Self> {
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

/// Everything besides tool and args that decides a call's outcome.
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
}

/// A call and its recorded outcome; `line` is the call line's number.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub line: usize,
    pub call: Call,
    pub outcome: Outcome,
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

/// The header line.
pub fn header_line(header: &Header) -> String {
    line(&json!({
        "transcript": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "tree": header.tree,
        "config": header.config,
        "env": {
            "rg": header.env.rg,
            "ripgrepConfig": header.env.ripgrep_config,
        },
    }))
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
    let error = outcome
        .error
        .as_ref()
        .map(|e| json!({ "name": e.name, "code": e.code }));
    let spill = outcome
        .spill
        .as_ref()
        .map(|s| json!({ "locator": s.locator, "bytes": s.bytes }));
    let mut out = line(&json!({
        "result": name,
        "isError": outcome.is_error,
        "error": error,
        "spill": spill,
        "warnings": outcome.warnings,
    }));
    for text in outcome.text.split('\n') {
        out.push_str(&line(&json!({ "text": text })));
    }
    out
}

/// The whole file.
pub fn write(transcript: &Transcript) -> String {
    let mut out = header_line(&transcript.header);
    for record in &transcript.records {
        out.push_str(&call_line(&record.call));
        out.push_str(&outcome_lines(&record.call.name, &record.outcome));
    }
    out
}

// ---------------------------------------------------------------- parsing

/// Parses one line's object, naming the file and line on failure.
struct LineCtx<'a> {
    file: &'a str,
    line: usize,
}

impl LineCtx<'_> {
    fn err(&self, message: impl Into<String>) -> TranscriptError {
        TranscriptError::Parse {
            file: self.file.to_owned(),
            line: self.line,
            message: message.into(),
        }
    }

    fn only_keys(&self, map: &Map<String, Value>, allowed: &[&str]) -> Result<(), TranscriptError> {
        match map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(key) => Err(self.err(format!(
                "unknown key \"{key}\" (expected {})",
                allowed.join(", ")
            ))),
            None => Ok(()),
        }
    }

    fn string(&self, map: &Map<String, Value>, key: &str) -> Result<String, TranscriptError> {
        match map.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(self.err(format!("\"{key}\" must be a string"))),
            None => Err(self.err(format!("missing \"{key}\""))),
        }
    }

    fn opt_string(
        &self,
        map: &Map<String, Value>,
        key: &str,
    ) -> Result<Option<String>, TranscriptError> {
        match map.get(key) {
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(Value::Null) | None => Ok(None),
            Some(_) => Err(self.err(format!("\"{key}\" must be a string or null"))),
        }
    }

    fn bool(&self, map: &Map<String, Value>, key: &str) -> Result<bool, TranscriptError> {
        match map.get(key) {
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.err(format!("\"{key}\" must be true or false"))),
            None => Err(self.err(format!("missing \"{key}\""))),
        }
    }

    fn u64(&self, value: &Value, what: &str) -> Result<u64, TranscriptError> {
        value
            .as_u64()
            .ok_or_else(|| self.err(format!("{what} must be a non-negative integer")))
    }
}

/// Parses one physical line into an object.
fn object(ctx: &LineCtx<'_>, raw: &str) -> Result<Map<String, Value>, TranscriptError> {
    match serde_json::from_str::<Value>(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ctx.err("a transcript line must be a JSON object")),
        Err(e) => Err(ctx.err(format!("not valid JSON: {e}"))),
    }
}

fn parse_header(ctx: &LineCtx<'_>, map: &Map<String, Value>) -> Result<Header, TranscriptError> {
    match map.get("transcript") {
        Some(Value::String(name)) if name == FORMAT_NAME => {}
        _ => {
            return Err(ctx.err(format!(
                "not a transcript header (expected {{\"transcript\":\"{FORMAT_NAME}\",\"version\":{FORMAT_VERSION},…}})"
            )));
        }
    }
    let version = map
        .get("version")
        .ok_or_else(|| ctx.err("the header has no \"version\""))?;
    let version = ctx.u64(version, "\"version\"")?;
    if version != FORMAT_VERSION {
        return Err(ctx.err(format!(
            "unsupported transcript version {version} (this workbench reads version {FORMAT_VERSION})"
        )));
    }
    ctx.only_keys(map, &["transcript", "version", "tree", "config", "env"])?;
    let tree = ctx.string(map, "tree")?;
    let config = match map.get("config") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => return Err(ctx.err("\"config\" must be an object")),
    };
    let env = match map.get("env") {
        Some(Value::Object(env)) => env,
        _ => return Err(ctx.err("\"env\" must be an object")),
    };
    ctx.only_keys(env, &["rg", "ripgrepConfig"])?;
    let rg = ctx.string(env, "rg")?;
    let ripgrep_config = match env.get("ripgrepConfig") {
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ctx.err("\"ripgrepConfig\" must be an array of strings"))
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(ctx.err("\"ripgrepConfig\" must be an array of strings")),
    };
    Ok(Header {
        tree,
        config,
        env: TranscriptEnv { rg, ripgrep_config },
    })
}

fn parse_session(
    ctx: &LineCtx<'_>,
    value: &Value,
) -> Result<Option<SessionOption>, TranscriptError> {
    match value {
        Value::Null => Ok(None),
        Value::Object(map) => {
            ctx.only_keys(map, &["id", "cwd"])?;
            Ok(Some(SessionOption {
                id: ctx.opt_string(map, "id")?,
                cwd: ctx.opt_string(map, "cwd")?,
            }))
        }
        _ => Err(ctx.err("\"session\" must be {\"id\",\"cwd\"} or null")),
    }
}

/// Parses call options; absent keys take their defaults.
fn parse_options(ctx: &LineCtx<'_>, value: Option<&Value>) -> Result<CallOptions, TranscriptError> {
    let mut options = CallOptions::default();
    let map = match value {
        None => return Ok(options),
        Some(Value::Object(map)) => map,
        Some(_) => return Err(ctx.err("\"options\" must be an object")),
    };
    ctx.only_keys(
        map,
        &[
            "config",
            "spill",
            "session",
            "nested",
            "cancel",
            "executorTimeoutMs",
            "ripgrepConfig",
        ],
    )?;
    if let Some(config) = map.get("config") {
        options.config = config
            .as_object()
            .cloned()
            .ok_or_else(|| ctx.err("\"options.config\" must be an object"))?;
    }
    if let Some(spill) = map.get("spill") {
        options.spill = spill
            .as_str()
            .and_then(SpillMode::parse)
            .ok_or_else(|| ctx.err("\"spill\" must be \"store\", \"none\" or \"unwritable\""))?;
    }
    if let Some(session) = map.get("session") {
        options.session = parse_session(ctx, session)?;
    }
    if map.contains_key("nested") {
        options.nested = ctx.bool(map, "nested")?;
    }
    options.cancel = match map.get("cancel") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "beforeDispatch" => Some(Cancel::BeforeDispatch),
        Some(Value::Object(c)) if c.len() == 1 && c.contains_key("afterMs") => Some(
            Cancel::AfterMs(ctx.u64(&c["afterMs"], "\"cancel.afterMs\"")?),
        ),
        Some(_) => {
            return Err(ctx.err("\"cancel\" must be \"beforeDispatch\" or {\"afterMs\": N}"));
        }
    };
    options.executor_timeout_ms = match map.get("executorTimeoutMs") {
        None | Some(Value::Null) => None,
        Some(v) => Some(ctx.u64(v, "\"executorTimeoutMs\"")?).filter(|ms| *ms > 0),
    };
    if map.contains_key("ripgrepConfig") {
        options.ripgrep_config = ctx.bool(map, "ripgrepConfig")?;
    }
    Ok(options)
}

/// Parses a `call` line's object.
fn parse_call(ctx: &LineCtx<'_>, map: &Map<String, Value>) -> Result<Call, TranscriptError> {
    ctx.only_keys(map, &["call", "tool", "args", "options"])?;
    let name = ctx.string(map, "call")?;
    if name.is_empty() {
        return Err(ctx.err("\"call\" (the record's name) must not be empty"));
    }
    Ok(Call {
        name,
        tool: ctx.string(map, "tool")?,
        args: map
            .get("args")
            .cloned()
            .ok_or_else(|| ctx.err("missing \"args\""))?,
        options: parse_options(ctx, map.get("options"))?,
    })
}

/// Parses one line of a calls file (`workbench record`'s input): a `call`
/// object as in a transcript.
pub fn parse_call_line(file: &str, line: usize, raw: &str) -> Result<Call, TranscriptError> {
    let ctx = LineCtx { file, line };
    let map = object(&ctx, raw)?;
    if !map.contains_key("call") {
        return Err(ctx.err("expected a call line: {\"call\":NAME,\"tool\":…,\"args\":…}"));
    }
    parse_call(&ctx, &map)
}

fn parse_result(
    ctx: &LineCtx<'_>,
    map: &Map<String, Value>,
    call: &str,
) -> Result<Outcome, TranscriptError> {
    ctx.only_keys(map, &["result", "isError", "error", "spill", "warnings"])?;
    let name = ctx.string(map, "result")?;
    if name != call {
        return Err(ctx.err(format!(
            "result \"{name}\" does not follow its call (the call above is \"{call}\")"
        )));
    }
    let error = match map.get("error") {
        None | Some(Value::Null) => None,
        Some(Value::Object(e)) => {
            ctx.only_keys(e, &["name", "code"])?;
            Some(OutcomeError {
                name: ctx.opt_string(e, "name")?,
                code: ctx.opt_string(e, "code")?,
            })
        }
        Some(_) => return Err(ctx.err("\"error\" must be {\"name\",\"code\"} or null")),
    };
    let spill = match map.get("spill") {
        None | Some(Value::Null) => None,
        Some(Value::Object(s)) => {
            ctx.only_keys(s, &["locator", "bytes"])?;
            let bytes = s
                .get("bytes")
                .ok_or_else(|| ctx.err("\"spill\" has no \"bytes\""))?;
            Some(OutcomeSpill {
                locator: ctx.string(s, "locator")?,
                bytes: ctx.u64(bytes, "\"spill.bytes\"")?,
            })
        }
        Some(_) => return Err(ctx.err("\"spill\" must be {\"locator\",\"bytes\"} or null")),
    };
    let warnings = match map.get("warnings") {
        None => Vec::new(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or_else(|| ctx.err("\"warnings\" must be an array of strings"))
            })
            .collect::<Result<_, _>>()?,
        Some(_) => return Err(ctx.err("\"warnings\" must be an array of strings")),
    };
    Ok(Outcome {
        is_error: ctx.bool(map, "isError")?,
        error,
        spill,
        warnings,
        text: String::new(),
    })
}

/// Where the parser is inside a record.
enum State {
    /// Expecting a call line (or the end).
    Call,
    /// Expecting the result line of this call.
    Result(Call, usize),
    /// Reading text lines; at least one was read when `lines > 0`.
    Text {
        call: Call,
        line: usize,
        outcome: Outcome,
        lines: Vec<String>,
    },
}

/// Parses a whole transcript. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Transcript, TranscriptError> {
    let mut lines = text.split('\n').enumerate().map(|(i, l)| (i + 1, l));
    // A final newline ends the last line; it does not start an empty one.
    let count = text.split('\n').count() - usize::from(text.ends_with('\n'));
    let first = lines.next().filter(|(_, l)| !l.is_empty());
    let Some((_, raw)) = first else {
        return Err(TranscriptError::Parse {
            file: file.to_owned(),
            line: 1,
            message: "empty file: a transcript starts with its header line".into(),
        });
    };
    let ctx = LineCtx { file, line: 1 };
    let header = parse_header(&ctx, &object(&ctx, raw)?)?;
    let mut records: Vec<Record> = Vec::new();
    let mut state = State::Call;
    let mut finish = |call: Call, line: usize, mut outcome: Outcome, lines: Vec<String>| {
        outcome.text = lines.join("\n");
        records.push(Record {
            line,
            call,
            outcome,
        });
    };
    let mut names = std::collections::HashSet::new();
    for (number, raw) in lines.take(count.saturating_sub(1)) {
        let ctx = LineCtx { file, line: number };
        let map = object(&ctx, raw)?;
        state = match state {
            State::Call => {
                if !map.contains_key("call") {
                    return Err(ctx.err("expected a call line (\"call\":NAME,…)"));
                }
                let call = parse_call(&ctx, &map)?;
                if !names.insert(call.name.clone()) {
                    return Err(ctx.err(format!("duplicate record name \"{}\"", call.name)));
                }
                State::Result(call, number)
            }
            State::Result(call, line) => {
                if !map.contains_key("result") {
                    return Err(ctx.err(format!(
                        "expected the result line of call \"{}\" (\"result\":NAME,…)",
                        call.name
                    )));
                }
                let outcome = parse_result(&ctx, &map, &call.name)?;
                State::Text {
                    call,
                    line,
                    outcome,
                    lines: Vec::new(),
                }
            }
            State::Text {
                call,
                line,
                outcome,
                mut lines,
            } => {
                if map.contains_key("text") {
                    ctx.only_keys(&map, &["text"])?;
                    lines.push(ctx.string(&map, "text")?);
                    State::Text {
                        call,
                        line,
                        outcome,
                        lines,
                    }
                } else if lines.is_empty() {
                    return Err(ctx.err(format!(
                        "expected a text line of call \"{}\" ({{\"text\":…}}); every result has at least one",
                        call.name
                    )));
                } else if map.contains_key("call") {
                    finish(call, line, outcome, lines);
                    let call = parse_call(&ctx, &map)?;
                    if !names.insert(call.name.clone()) {
                        return Err(ctx.err(format!("duplicate record name \"{}\"", call.name)));
                    }
                    State::Result(call, number)
                } else {
                    return Err(ctx.err("expected a text line or the next call line"));
                }
            }
        };
    }
    let end = count + 1;
    match state {
        State::Call => {}
        State::Result(call, _) => {
            return Err(TranscriptError::Parse {
                file: file.to_owned(),
                line: end,
                message: format!(
                    "unexpected end of file: call \"{}\" has no result",
                    call.name
                ),
            });
        }
        State::Text {
            call,
            line,
            outcome,
            lines,
        } => {
            if lines.is_empty() {
                return Err(TranscriptError::Parse {
                    file: file.to_owned(),
                    line: end,
                    message: format!("unexpected end of file: call \"{}\" has no text", call.name),
                });
            }
            finish(call, line, outcome, lines);
        }
    }
    Ok(Transcript { header, records })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Transcript {
        let call = |name: &str, options: CallOptions| Call {
            name: name.into(),
            tool: "glob".into(),
            args: json!({"pattern": "*"}),
            options,
        };
        Transcript {
            header: Header {
                tree: "../trees/mixed".into(),
                config: json!({"sampleOverCapGlobResults": true}),
                env: TranscriptEnv {
                    rg: "ripgrep 13.0.0".into(),
                    ripgrep_config: vec!["--sort=path".into()],
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
                    },
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
                    },
                },
            ],
        }
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

    fn error_of(text: &str) -> String {
        parse("t.jsonl", text).unwrap_err().to_string()
    }

    #[test]
    fn wrong_version_and_corrupt_lines_name_the_file_and_line() {
        let text = write(&sample());
        assert_eq!(
            error_of(&text.replacen("\"version\":1", "\"version\":2", 1)),
            "t.jsonl:1: unsupported transcript version 2 (this workbench reads version 1)"
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
        assert_eq!(error_of(&dup), "t.jsonl:7: duplicate record name \"a\"");
    }
}

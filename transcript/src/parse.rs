//! Reading the transcript format of [`super::format`]: strict (unknown
//! keys, a missing line, a wrong version, a duplicate record name are
//! errors naming the file and line), and never a panic. A recording that
//! already holds duplicate names (servers that shared it before record
//! names were kept unique) is read with [`parse_keeping_duplicates`] by
//! the two that must take it: `workbench mcp --record` appending to it,
//! and `workbench freeze`, which renames them.

use std::collections::BTreeMap;

use fs_search_engine::release::Release;
use serde_json::{Map, Value};

use super::error::TranscriptError;
use super::format::{
    Call, CallOptions, Cancel, ClientInfo, FORMAT_NAME, FORMAT_VERSION, FORMAT_VERSION_VARIANTS,
    Header, Outcome, OutcomeError, OutcomeSpill, Record, ReleaseKey, SessionOption, SpillMode,
    Transcript, TranscriptEnv,
};

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
    // Calls files hold model arguments: parsed as `JSON.parse` would.
    match fs_search_engine::json::parse(raw) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(ctx.err("a transcript line must be a JSON object")),
        Err(e) => Err(ctx.err(format!("not valid JSON: {e}"))),
    }
}

/// The header and the format version it names.
fn parse_header(
    ctx: &LineCtx<'_>,
    map: &Map<String, Value>,
) -> Result<(Header, u64), TranscriptError> {
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
    if version != FORMAT_VERSION && version != FORMAT_VERSION_VARIANTS {
        return Err(ctx.err(format!(
            "unsupported transcript version {version} (this workbench reads versions {FORMAT_VERSION} and {FORMAT_VERSION_VARIANTS})"
        )));
    }
    ctx.only_keys(
        map,
        &["transcript", "version", "contract", "tree", "config", "env"],
    )?;
    // No `contract`: the seed's release, as every file before releases.
    let contract = match map.get("contract") {
        None => Release::Seed,
        Some(Value::String(name)) => name
            .parse::<Release>()
            .map_err(|e| ctx.err(format!("\"contract\": {e}")))?,
        Some(_) => return Err(ctx.err("\"contract\" must be a string")),
    };
    let tree = ctx.string(map, "tree")?;
    let config = match map.get("config") {
        Some(v @ Value::Object(_)) => v.clone(),
        _ => return Err(ctx.err("\"config\" must be an object")),
    };
    let env = match map.get("env") {
        Some(Value::Object(env)) => env,
        _ => return Err(ctx.err("\"env\" must be an object")),
    };
    ctx.only_keys(env, &["rg", "ripgrepConfig", "executor"])?;
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
    let executor = match env.get("executor") {
        None => None,
        Some(Value::String(name))
            if EXECUTORS.contains(&name.as_str()) || name.starts_with("ssh://") =>
        {
            Some(name.clone())
        }
        Some(_) => {
            return Err(ctx.err(
                "\"executor\" must be \"local\", \"sandbox-bwrap\", \"sandbox-landlock\", \"sandbox\" or \"ssh://HOST\"",
            ));
        }
    };
    let header = Header {
        contract,
        tree,
        config,
        env: TranscriptEnv {
            rg,
            ripgrep_config,
            executor,
        },
    };
    Ok((header, version))
}

/// The executors a header may name: the local one, the sandbox by its
/// runner, and `sandbox` as recordings before the runners wrote it.
const EXECUTORS: [&str; 4] = ["local", "sandbox-bwrap", "sandbox-landlock", "sandbox"];

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

/// Parses `options.client`: `{"name": STRING, "version": STRING|null}`.
fn parse_client(ctx: &LineCtx<'_>, value: &Value) -> Result<ClientInfo, TranscriptError> {
    let expected = "\"client\" must be {\"name\": STRING, \"version\": STRING|null}";
    let map = value.as_object().ok_or_else(|| ctx.err(expected))?;
    ctx.only_keys(map, &["name", "version"])?;
    let name = map
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| ctx.err(expected))?;
    let version = match map.get("version") {
        None | Some(Value::Null) => None,
        Some(Value::String(v)) => Some(v.clone()),
        Some(_) => return Err(ctx.err(expected)),
    };
    Ok(ClientInfo {
        name: name.to_owned(),
        version,
    })
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
            "client",
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
    options.client = match map.get("client") {
        None | Some(Value::Null) => None,
        Some(client) => Some(parse_client(ctx, client)?),
    };
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
pub(crate) fn parse_call_line(file: &str, line: usize, raw: &str) -> Result<Call, TranscriptError> {
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
    ctx.only_keys(
        map,
        &["result", "isError", "error", "spill", "warnings", "tokens"],
    )?;
    let name = ctx.string(map, "result")?;
    if name != call {
        return Err(ctx.err(format!(
            "result \"{name}\" does not follow its call (the call above is \"{call}\")"
        )));
    }
    parse_outcome(ctx, map)
}

/// Which outcome a `variant` line holds: rg major version N's
/// (`"rg":N`), or another release's (`"contract":R`, optionally for
/// rg N only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum VariantKey {
    Rg(u32),
    Release(ReleaseKey),
}

/// Parses a `variant` line's object: which variant, and the outcome (its
/// text still empty).
fn parse_variant(
    ctx: &LineCtx<'_>,
    map: &Map<String, Value>,
    call: &str,
) -> Result<(VariantKey, Outcome), TranscriptError> {
    ctx.only_keys(
        map,
        &[
            "variant", "contract", "rg", "isError", "error", "spill", "warnings", "tokens",
        ],
    )?;
    let name = ctx.string(map, "variant")?;
    if name != call {
        return Err(ctx.err(format!(
            "variant \"{name}\" does not follow its record (the call above is \"{call}\")"
        )));
    }
    let major = match map.get("rg") {
        None => None,
        Some(major) => Some(
            u32::try_from(ctx.u64(major, "\"rg\"")?)
                .map_err(|_| ctx.err("\"rg\" must be an rg major version"))?,
        ),
    };
    let key = match map.get("contract") {
        None => VariantKey::Rg(
            major.ok_or_else(|| ctx.err("a variant has no \"rg\" (the rg major version)"))?,
        ),
        Some(Value::String(name)) => VariantKey::Release(ReleaseKey {
            contract: name
                .parse()
                .map_err(|e| ctx.err(format!("\"contract\": {e}")))?,
            rg: major,
        }),
        Some(_) => return Err(ctx.err("\"contract\" must be a string")),
    };
    Ok((key, parse_outcome(ctx, map)?))
}

/// The outcome keys a result and a variant line share.
fn parse_outcome(ctx: &LineCtx<'_>, map: &Map<String, Value>) -> Result<Outcome, TranscriptError> {
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
    let tokens = match map.get("tokens") {
        None => None,
        Some(value) => Some(ctx.u64(value, "\"tokens\"")?),
    };
    Ok(Outcome {
        is_error: ctx.bool(map, "isError")?,
        error,
        spill,
        warnings,
        text: String::new(),
        tokens,
    })
}

/// Where the parser is inside a record.
enum State {
    /// Expecting a call line (or the end).
    Call,
    /// Expecting the result line of this call.
    Result(Call, usize),
    /// Reading text lines of the record's outcome (`variant` None) or of
    /// one of its variants; at least one was read when `lines > 0`.
    Text {
        record: Box<Record>,
        variant: Option<(VariantKey, Outcome)>,
        lines: Vec<String>,
    },
}

/// A record whose name an earlier record of the same file already has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DuplicateName {
    /// The line of its call.
    pub line: usize,
    pub name: String,
}

/// Ends the text block being read: the lines become the text of the
/// record's outcome or of the variant.
fn close_block(record: &mut Record, variant: Option<(VariantKey, Outcome)>, lines: &[String]) {
    let text = lines.join("\n");
    match variant {
        None => record.outcome.text = text,
        Some((VariantKey::Rg(major), mut outcome)) => {
            outcome.text = text;
            record.variants.insert(major, outcome);
        }
        Some((VariantKey::Release(key), mut outcome)) => {
            outcome.text = text;
            record.releases.insert(key, outcome);
        }
    }
}

/// Refuses a variant that cannot follow the ones `record` already holds
/// (a duplicate, the header's own rg or release, an rg variant after a
/// release variant, release variants out of order).
fn check_variant(
    ctx: &LineCtx<'_>,
    record: &Record,
    key: VariantKey,
    header: &Header,
    header_major: Option<u32>,
) -> Result<(), TranscriptError> {
    let name = &record.call.name;
    match key {
        VariantKey::Rg(major) => {
            if Some(major) == header_major {
                return Err(ctx.err(format!(
                    "a variant for rg {major}, the header's own rg: the record's result is that one"
                )));
            }
            if record.variants.contains_key(&major) {
                return Err(ctx.err(format!("duplicate variant for rg {major} of \"{name}\"")));
            }
            if !record.releases.is_empty() {
                return Err(ctx.err(format!(
                    "the variant for rg {major} of \"{name}\" follows a release variant: rg variants come first"
                )));
            }
        }
        VariantKey::Release(key) => {
            if key.contract == header.contract {
                return Err(ctx.err(format!(
                    "a variant for {}, the header's own release: the record's result is that one",
                    key.contract
                )));
            }
            if record.releases.contains_key(&key) {
                return Err(ctx.err(format!(
                    "duplicate variant for {} of \"{name}\"",
                    key.label()
                )));
            }
            if record
                .releases
                .keys()
                .next_back()
                .is_some_and(|last| *last > key)
            {
                return Err(ctx.err(format!(
                    "the variant for {} of \"{name}\" is out of order (the one for any rg first, then by rg)",
                    key.label()
                )));
            }
        }
    }
    Ok(())
}

/// Parses a whole transcript. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Transcript, TranscriptError> {
    parse_with(file, text, Duplicates::Refuse).map(|(transcript, _)| transcript)
}

/// Parses the header line alone (`raw`, without its newline).
pub fn parse_header_line(file: &str, raw: &str) -> Result<Header, TranscriptError> {
    let ctx = LineCtx { file, line: 1 };
    parse_header(&ctx, &object(&ctx, raw)?).map(|(header, _version)| header)
}

/// As [`parse`], but a duplicate record name is not an error: the
/// records are returned as written, with every duplicate (in file order).
pub fn parse_keeping_duplicates(
    file: &str,
    text: &str,
) -> Result<(Transcript, Vec<DuplicateName>), TranscriptError> {
    parse_with(file, text, Duplicates::Keep)
}

/// What a duplicate record name is.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Duplicates {
    /// An error at its line.
    Refuse,
    /// Returned beside the transcript.
    Keep,
}

/// Notes `call`'s name (at `line`), refusing a duplicate or keeping it.
fn note_name(
    ctx: &LineCtx<'_>,
    call: &Call,
    names: &mut std::collections::HashSet<String>,
    duplicates: &mut Vec<DuplicateName>,
    policy: Duplicates,
) -> Result<(), TranscriptError> {
    if names.insert(call.name.clone()) {
        return Ok(());
    }
    if policy == Duplicates::Refuse {
        return Err(ctx.err(format!(
            "duplicate record name \"{}\" (rename it; `workbench freeze` renames the duplicates of a recording)",
            call.name
        )));
    }
    duplicates.push(DuplicateName {
        line: ctx.line,
        name: call.name.clone(),
    });
    Ok(())
}

fn parse_with(
    file: &str,
    text: &str,
    policy: Duplicates,
) -> Result<(Transcript, Vec<DuplicateName>), TranscriptError> {
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
    let (header, version) = parse_header(&ctx, &object(&ctx, raw)?)?;
    let header_major = fs_search_process::major_of_line(&header.env.rg);
    let mut records: Vec<Record> = Vec::new();
    let mut state = State::Call;
    let mut names = std::collections::HashSet::new();
    let mut duplicates = Vec::new();
    for (number, raw) in lines.take(count.saturating_sub(1)) {
        let ctx = LineCtx { file, line: number };
        let map = object(&ctx, raw)?;
        state = match state {
            State::Call => {
                if !map.contains_key("call") {
                    return Err(ctx.err("expected a call line (\"call\":NAME,…)"));
                }
                let call = parse_call(&ctx, &map)?;
                note_name(&ctx, &call, &mut names, &mut duplicates, policy)?;
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
                    record: Box::new(Record {
                        line,
                        call,
                        outcome,
                        variants: BTreeMap::new(),
                        releases: BTreeMap::new(),
                    }),
                    variant: None,
                    lines: Vec::new(),
                }
            }
            State::Text {
                mut record,
                variant,
                mut lines,
            } => {
                if map.contains_key("text") {
                    ctx.only_keys(&map, &["text"])?;
                    lines.push(ctx.string(&map, "text")?);
                    State::Text {
                        record,
                        variant,
                        lines,
                    }
                } else if lines.is_empty() {
                    return Err(ctx.err(format!(
                        "expected a text line of call \"{}\" ({{\"text\":…}}); every result has at least one",
                        record.call.name
                    )));
                } else if map.contains_key("variant") {
                    if version < FORMAT_VERSION_VARIANTS {
                        return Err(ctx.err(format!(
                            "a variant line needs transcript version {FORMAT_VERSION_VARIANTS} (the header says {version})"
                        )));
                    }
                    close_block(&mut record, variant, &lines);
                    let (key, outcome) = parse_variant(&ctx, &map, &record.call.name)?;
                    check_variant(&ctx, &record, key, &header, header_major)?;
                    State::Text {
                        record,
                        variant: Some((key, outcome)),
                        lines: Vec::new(),
                    }
                } else if map.contains_key("call") {
                    close_block(&mut record, variant, &lines);
                    records.push(*record);
                    let call = parse_call(&ctx, &map)?;
                    note_name(&ctx, &call, &mut names, &mut duplicates, policy)?;
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
            mut record,
            variant,
            lines,
        } => {
            if lines.is_empty() {
                return Err(TranscriptError::Parse {
                    file: file.to_owned(),
                    line: end,
                    message: format!(
                        "unexpected end of file: call \"{}\" has no text",
                        record.call.name
                    ),
                });
            }
            close_block(&mut record, variant, &lines);
            records.push(*record);
        }
    }
    Ok((Transcript { header, records }, duplicates))
}

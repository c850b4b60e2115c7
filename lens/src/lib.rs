//! `fs-search-lens`: host lenses, the text an agent host's model receives for a tool result,
//! per host and version era (`docs/hosts.md` has each rule's source).
//!
//! A lens is two steps, each checkable on its own: the **framing** (what
//! the host builds from the MCP `CallToolResult`: serialisation, prefixes,
//! wrappers) and the **cut** (its budget, how it estimates it, where it
//! cuts, the marker and hint texts). Its knobs are named as the host names
//! them, so a user can copy their own configuration. Each lens keeps a map
//! from what reaches the model back to the result, so a page's footer,
//! locator and matches can be said to survive or not (`page`).
//!
//! - `clients`: the MCP `clientInfo` names each host sends, and the lens
//!   each stands for ([`lens_for_client`]);
//! - `codex`, `claude_code`, `opencode`, `gemini_cli`,
//!   `qwen_code`: one host each, its eras as separate lens versions;
//! - `framing`: the framed text and its map back to the result;
//! - `js`: JavaScript's string semantics (UTF-16 lengths) the Node.js
//!   hosts cut with;
//! - `knobs`: knob values, `--set KNOB=VALUE` parsing;
//! - `page`: what a cut hides of a page (footer, locator, grep matches).

#![warn(unreachable_pub)]

mod claude_code;
mod clients;
mod codex;
mod framing;
mod gemini_cli;
mod js;
mod knobs;
mod opencode;
mod page;
mod qwen_code;

use std::ops::Range;

use serde_json::Value;

pub use clients::{
    CLIENT_NAMES, ClientName, host_for_client, lens_for_client, lens_for_client_version,
};
pub use framing::Framed;
pub use knobs::{KnobSpec, KnobValue, Knobs};
pub use page::{Verdict, detect_parts, summary as page_summary, verdict as page_verdict};

/// A tool result as a host receives it from `workbench mcp`: one text
/// content block, its `isError`, the call it answers.
#[derive(Debug, Clone, Default)]
pub struct ToolResultInput {
    /// The tool's name (`grep`, `glob`).
    pub tool: String,
    /// The call's arguments (some hosts repeat them in error texts).
    pub args: Value,
    /// The text of the one content block: the model-visible page.
    pub text: String,
    /// The result's `isError`.
    pub is_error: bool,
    /// How long the call took, for hosts that print it.
    pub duration_secs: Option<f64>,
}

/// The unit a host's budget counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Bytes,
    Chars,
    Tokens,
    Lines,
}

impl Unit {
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::Bytes => "bytes",
            Unit::Chars => "chars",
            Unit::Tokens => "tokens",
            Unit::Lines => "lines",
        }
    }
}

/// A host's budget: its unit and its limit (`None`: no limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    pub unit: Unit,
    pub limit: Option<u64>,
}

/// Where a host's cut falls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cut {
    /// The framed text reaches the model whole.
    None,
    /// Head and tail kept, the middle removed, in equal shares.
    Middle,
    /// Only the start kept.
    Head,
    /// Head and tail kept in unequal shares (Gemini CLI's 20/80, Qwen
    /// Code's 1/5 and 4/5).
    HeadTail,
    /// The result saved to a file; the model gets a message naming it.
    File,
}

impl Cut {
    pub fn as_str(self) -> &'static str {
        match self {
            Cut::None => "none",
            Cut::Middle => "middle",
            Cut::Head => "head",
            Cut::HeadTail => "head-tail",
            Cut::File => "file",
        }
    }
}

/// What a lens makes of one tool result.
#[derive(Debug, Clone)]
pub struct Lensed {
    /// The text after the host's framing, before its cut, with its map
    /// back to the result.
    pub framed: Framed,
    /// Exactly what the host's model receives.
    pub text: String,
    pub budget: Budget,
    pub cut: Cut,
    /// The byte ranges of the framed text that reach the model verbatim
    /// (sorted, disjoint).
    pub kept: Vec<Range<usize>>,
    /// What the lens could not verify or approximated, and what the host
    /// does besides (files it writes).
    pub notes: Vec<String>,
}

impl Lensed {
    /// The framed text reaching the model whole.
    pub fn whole(framed: Framed, budget: Budget) -> Self {
        let kept = std::iter::once(0..framed.text().len()).collect();
        Self {
            text: framed.text().to_owned(),
            framed,
            budget,
            cut: Cut::None,
            kept,
            notes: Vec::new(),
        }
    }

    /// Bytes of the framed text that reach the model.
    pub fn kept_bytes(&self) -> usize {
        self.kept.iter().map(|r| r.end - r.start).sum()
    }

    /// Bytes of the framed text the model never sees.
    pub fn removed_bytes(&self) -> usize {
        self.framed.text().len() - self.kept_bytes()
    }

    /// The byte ranges of the result's text that reach the model whole.
    pub fn original_kept(&self) -> Vec<Range<usize>> {
        self.framed.original_kept(&self.kept)
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

/// One lens: a host and version era, its rule's provenance, its knobs.
#[derive(Debug)]
pub struct Lens {
    /// The host (`codex`, `claude-code`, `opencode`, `gemini-cli`,
    /// `qwen-code`).
    pub host: &'static str,
    /// The era's label (`0.56`, `current`, …).
    pub version: &'static str,
    /// The host versions the rule holds for.
    pub versions: &'static str,
    /// The first host version of the era, as a dotted number (empty when
    /// the era is not numbered): `HOST@X.Y` picks the era it falls in.
    pub since: &'static str,
    /// Where the rule comes from: repository, file and function (and
    /// commit), or document.
    pub source: &'static str,
    /// What the host does, in a sentence or two; says what is unverified.
    pub description: &'static str,
    /// Whether the rule was read from the host's source (false: from its
    /// documentation only).
    pub from_source: bool,
    /// The longest tool description the host passes on, in JavaScript
    /// characters (UTF-16 code units); `None`: no cut is known.
    pub description_max_chars: Option<usize>,
    pub knobs: &'static [KnobSpec],
    apply: fn(&ToolResultInput, &Knobs) -> Lensed,
}

impl Lens {
    /// `host@version`.
    pub fn name(&self) -> String {
        format!("{}@{}", self.host, self.version)
    }

    /// A tool description as the host passes it to its model, and whether
    /// the host cut it (at [`Lens::description_max_chars`], on a UTF-16
    /// boundary as JavaScript slices).
    pub fn tool_description(&self, text: &str) -> (String, bool) {
        let js = js::JsString::new(text);
        match self.description_max_chars {
            Some(max) if js.len() > max => (js.slice(0, max).0, true),
            _ => (text.to_owned(), false),
        }
    }

    /// The lens applied to `input` under `knobs` (unset knobs take the
    /// host's defaults).
    pub fn apply(&self, input: &ToolResultInput, knobs: &Knobs) -> Lensed {
        (self.apply)(input, knobs)
    }
}

/// Every lens, grouped by host, each host's eras oldest first.
pub static LENSES: &[Lens] = &[
    codex::V0_55,
    codex::V0_56,
    codex::V0_59,
    codex::V0_120,
    claude_code::DOCS,
    opencode::CURRENT,
    gemini_cli::V0_29,
    gemini_cli::V0_48,
    qwen_code::CURRENT,
];

/// The hosts, in [`LENSES`] order.
pub fn hosts() -> Vec<&'static str> {
    let mut hosts: Vec<&'static str> = Vec::new();
    for lens in LENSES {
        if !hosts.contains(&lens.host) {
            hosts.push(lens.host);
        }
    }
    hosts
}

/// Why a lens name does not resolve.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LensError {
    #[error("unknown host {host:?} (hosts: {known})")]
    UnknownHost { host: String, known: String },
    #[error("{host} has no lens for version {version:?} (versions: {known})")]
    UnknownVersion {
        host: String,
        version: String,
        known: String,
    },
    #[error("{lens} has no knob {knob:?} (knobs: {known})")]
    UnknownKnob {
        lens: String,
        knob: String,
        known: String,
    },
    #[error("--set {0:?}: expected KNOB=VALUE")]
    SetSyntax(String),
    #[error("{knob}: {value:?} is not {expected}")]
    KnobValue {
        knob: String,
        value: String,
        expected: &'static str,
    },
}

/// The lens `HOST` (its newest era) or `HOST@VERSION`: an era's label, or
/// a dotted version number, which picks the era it falls in.
pub fn resolve(spec: &str) -> Result<&'static Lens, LensError> {
    let (host, version) = match spec.split_once('@') {
        Some((host, version)) => (host, Some(version)),
        None => (spec, None),
    };
    let eras: Vec<&'static Lens> = LENSES.iter().filter(|l| l.host == host).collect();
    let Some(newest) = eras.last() else {
        return Err(LensError::UnknownHost {
            host: host.to_owned(),
            known: hosts().join(", "),
        });
    };
    let Some(version) = version else {
        return Ok(newest);
    };
    if let Some(lens) = eras.iter().find(|l| l.version == version) {
        return Ok(lens);
    }
    let unknown = || LensError::UnknownVersion {
        host: host.to_owned(),
        version: version.to_owned(),
        known: eras
            .iter()
            .map(|l| l.version)
            .collect::<Vec<_>>()
            .join(", "),
    };
    let wanted = dotted(version).ok_or_else(unknown)?;
    eras.iter()
        .rev()
        .find(|l| dotted(l.since).is_some_and(|start| start <= wanted))
        .copied()
        .ok_or_else(unknown)
}

/// `0.56.1` as `[0, 56, 1]`; `None` for a label that is not a number.
fn dotted(version: &str) -> Option<Vec<u64>> {
    if version.is_empty() {
        return None;
    }
    version.split('.').map(|p| p.parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_alone_is_its_newest_era() {
        assert_eq!(resolve("codex").unwrap().name(), "codex@0.120");
        assert_eq!(resolve("gemini-cli").unwrap().name(), "gemini-cli@0.48");
    }

    #[test]
    fn a_version_number_picks_the_era_it_falls_in() {
        assert_eq!(resolve("codex@0.57.0").unwrap().name(), "codex@0.56");
        assert_eq!(resolve("codex@0.56").unwrap().name(), "codex@0.56");
        assert_eq!(resolve("codex@0.40").unwrap().name(), "codex@0.55");
        assert_eq!(
            resolve("gemini-cli@0.50.1").unwrap().name(),
            "gemini-cli@0.48"
        );
    }

    #[test]
    fn unknown_hosts_and_versions_are_named() {
        assert!(matches!(
            resolve("cursor"),
            Err(LensError::UnknownHost { .. })
        ));
        assert!(matches!(
            resolve("gemini-cli@0.10"),
            Err(LensError::UnknownVersion { .. })
        ));
        assert!(matches!(
            resolve("opencode@1.2"),
            Err(LensError::UnknownVersion { .. })
        ));
    }

    #[test]
    fn every_lens_has_a_unique_name_and_a_source() {
        let mut names: Vec<String> = LENSES.iter().map(Lens::name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), LENSES.len());
        assert!(
            LENSES
                .iter()
                .all(|l| !l.source.is_empty() && !l.versions.is_empty())
        );
    }
}

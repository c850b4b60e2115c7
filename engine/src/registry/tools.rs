//! The two tools: execution (arguments → command → run → parse →
//! canonical value) and everything derived from a value (text, card,
//! spill content).

use std::sync::Arc;

use serde_json::Value;

use crate::bash::{BashExecutor, OverCap};
use crate::command::{glob_words, grep_words};
use crate::error::ToolError;
use crate::parse::{parse_glob_paths, parse_grep_matches};
use crate::registry::surface::{glob_output_schema, grep_output_schema};
use crate::render::meta::{SearchMeta, glob_meta_from_page, glob_search_meta, grep_search_meta};
use crate::render::page::Page;
use crate::render::{
    Rendered, glob_page, glob_spill_pieces, grep_spill_pieces, render_glob, render_glob_page,
    render_grep, render_grep_page,
};
use crate::request::args::{parse_glob_args, parse_grep_args};
use crate::request::config::Config;
use crate::request::exec::ExecContext;
use crate::run::pipeline::{Launch, run_ripgrep_into};
use crate::run::stream::{GlobStream, GrepStream};
use crate::spill::{SpillRef, TextPieces};
use crate::value::mtime_sort::sort_by_mtime;
use crate::value::paths::to_workdir_relative;
use crate::value::{GlobValue, GrepValue, ToolValue};

/// Whether rg's stdout is read as it arrives. With `stopAtRawOutputCap`
/// (the opt-in that bounds the work) it is collected first and read only
/// when it stayed within the cap: an over-cap run then costs a copy of
/// the bytes, not the reading of every record before the cap.
fn streams(config: &Config) -> bool {
    config.over_cap() != OverCap::Stop
}

/// The error of a streamed run whose sink cannot be taken back: a write
/// to it panicked, so the paths or matches it read are lost.
fn lost_output() -> ToolError {
    ToolError::Plain("the search output could not be read".to_owned())
}

/// Which of the two tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// `glob`: file discovery by path pattern.
    Glob,
    /// `grep`: content search by regex.
    Grep,
}

impl ToolKind {
    /// Both tools, in registration order.
    pub const ALL: [Self; 2] = [Self::Glob, Self::Grep];

    /// The tool name a model calls.
    pub fn name(self) -> &'static str {
        match self {
            Self::Glob => "glob",
            Self::Grep => "grep",
        }
    }

    /// The JSON Schema of the tool's canonical value (`output.schema`),
    /// which the registry checks a replacement value against.
    pub fn output_schema(self) -> Value {
        match self {
            Self::Glob => glob_output_schema(),
            Self::Grep => grep_output_schema(),
        }
    }

    /// The tool called `name`, if it is one of the two.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "glob" => Some(Self::Glob),
            "grep" => Some(Self::Grep),
            _ => None,
        }
    }

    /// The tool body: validated arguments to canonical value.
    pub async fn execute(
        self,
        config: &Config,
        bash: &Arc<dyn BashExecutor>,
        args: &Value,
        exec: &ExecContext,
    ) -> Result<ToolValue, ToolError> {
        match self {
            Self::Glob => {
                let args = parse_glob_args(args)?;
                let words = glob_words(&args, !config.glob_sort_in_engine);
                let launch = Launch::of(&words, config);
                // Paths are read as rg lists them, unless they must be sorted
                // first, or rg is stopped at the cap (see `streams`).
                let (mut raw, stream) = run_ripgrep_into(
                    "glob",
                    launch,
                    config.raw_output_max_bytes,
                    config.over_cap(),
                    bash.as_ref(),
                    exec,
                    |workdir| {
                        (streams(config) && !config.glob_sort_in_engine)
                            .then(|| GlobStream::new(workdir))
                    },
                )
                .await?;
                let root = match &args.path {
                    None => ".".to_owned(),
                    Some(path) => to_workdir_relative(path, &raw.workdir).into_owned(),
                };
                if config.glob_sort_in_engine && !raw.no_matches {
                    let (stdout, workdir) = (std::mem::take(&mut raw.stdout), raw.workdir.clone());
                    raw.stdout =
                        tokio::task::spawn_blocking(move || sort_by_mtime(&stdout, &workdir))
                            .await
                            .map_err(|e| {
                                ToolError::Plain(format!("glob could not sort its result: {e}"))
                            })?;
                }
                let paths = if raw.no_matches {
                    Vec::new()
                } else if raw.streamed {
                    stream.ok_or_else(lost_output)?.finish()
                } else {
                    parse_glob_paths(&raw.stdout, &raw.workdir)
                };
                Ok(ToolValue::Glob(GlobValue { root, paths }))
            }
            Self::Grep => {
                let args = parse_grep_args(args)?;
                let (raw, stream) = run_ripgrep_into(
                    "grep",
                    Launch::of(&grep_words(&args), config),
                    config.raw_output_max_bytes,
                    config.over_cap(),
                    bash.as_ref(),
                    exec,
                    |workdir| streams(config).then(|| GrepStream::new(workdir)),
                )
                .await?;
                if raw.no_matches {
                    return Ok(ToolValue::Grep(GrepValue {
                        matches: Vec::new(),
                    }));
                }
                let parsed = if raw.streamed {
                    stream.ok_or_else(lost_output)?.finish()?
                } else {
                    parse_grep_matches(&raw.stdout, &raw.workdir)?
                };
                if let Some(violation) = parsed.schema_violation {
                    return Err(ToolError::InvalidOutput {
                        tool: "grep".to_owned(),
                        violations: vec![violation],
                    });
                }
                Ok(ToolValue::Grep(GrepValue {
                    matches: parsed.matches,
                }))
            }
        }
    }

    /// Checks a replacement value against the output schema.
    pub fn validate_value(self, value: &Value) -> Result<ToolValue, ToolError> {
        let invalid = |e: serde_json::Error| ToolError::InvalidOutput {
            tool: self.name().to_owned(),
            violations: vec![e.to_string()],
        };
        match self {
            Self::Glob => serde_json::from_value(value.clone())
                .map(ToolValue::Glob)
                .map_err(invalid),
            Self::Grep => serde_json::from_value(value.clone())
                .map(ToolValue::Grep)
                .map_err(invalid),
        }
    }

    /// The model-visible page of `value`.
    pub fn render(self, value: &ToolValue, config: &Config, spill: Option<&SpillRef>) -> Page {
        match value {
            ToolValue::Glob(v) => render_glob(v, config, spill),
            ToolValue::Grep(v) => render_grep(v, config, spill),
        }
    }

    /// The presentation meta of `value`.
    pub fn meta(self, value: &ToolValue, config: &Config) -> SearchMeta {
        match value {
            ToolValue::Glob(v) => glob_search_meta(v, config),
            ToolValue::Grep(v) => grep_search_meta(v, config),
        }
    }

    /// The page of a fresh result (no spill yet, and the slot that names
    /// one) and, when `with_meta`, its card, from one computation of the
    /// glob page (sampling is the costly part).
    pub(crate) fn render_with_meta(
        self,
        value: &ToolValue,
        config: &Config,
        with_meta: bool,
    ) -> (Rendered, Option<SearchMeta>) {
        match value {
            ToolValue::Glob(v) => {
                let page = glob_page(v, config);
                let rendered = render_glob_page(&page, v.paths.len(), None);
                let meta = with_meta.then(|| glob_meta_from_page(&page, v.paths.len(), config));
                (rendered, meta)
            }
            ToolValue::Grep(v) => (
                render_grep_page(v, config, None),
                with_meta.then(|| self.meta(value, config)),
            ),
        }
    }

    /// The inline cap of this tool.
    pub fn cap(self, config: &Config) -> usize {
        match self {
            Self::Glob => config.glob_cap(),
            Self::Grep => config.grep_cap(),
        }
    }

    /// The suggested spill file name.
    pub fn spill_name(self) -> &'static str {
        match self {
            Self::Glob => "glob-results.txt",
            Self::Grep => "grep-results.txt",
        }
    }

    /// The complete text a spill saves, a piece at a time.
    pub fn spill_pieces<'a>(
        self,
        value: &'a ToolValue,
        config: &Config,
    ) -> Box<dyn TextPieces + 'a> {
        match value {
            ToolValue::Glob(v) => Box::new(glob_spill_pieces(v)),
            ToolValue::Grep(v) => Box::new(grep_spill_pieces(v, config)),
        }
    }
}

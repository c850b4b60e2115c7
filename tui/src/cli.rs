//! The command line: the TUI by default, and the headless subcommands that
//! scripts and CI use (docs/design.md §2). Keep it stable.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};
use fs_search_mcp::McpArgs;
use fs_search_process::{ConfigArg, ContractArgs, SandboxArg, SpillArgs, TokenizerArg};

#[derive(Debug, Parser)]
#[command(
    name = "workbench",
    version,
    about = "See exactly what a model sees from the glob and grep tools"
)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    /// The TUI's options (with no subcommand).
    #[command(flatten)]
    pub(crate) tui: TuiArgs,
}

/// The TUI's options (`workbench` with no subcommand), passed to
/// `interactive::run` whole.
#[derive(Debug, Args)]
pub(crate) struct TuiArgs {
    /// Workspace the TUI searches (defaults to the current directory).
    #[arg(long, global = false)]
    pub workdir: Option<PathBuf>,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Follow a recording (`workbench mcp --record FILE`) while it grows:
    /// each new call shows up in the TUI as it is recorded.
    #[arg(long, value_name = "FILE")]
    pub follow: Option<PathBuf>,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
    /// Where over-cap results are saved.
    #[command(flatten)]
    pub spill: SpillArgs,
    #[command(flatten)]
    pub sandbox: SandboxArg,
    #[command(flatten)]
    pub contract: ContractArgs,
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// Run one tool call and print the model-visible text.
    Call(CallArgs),
    /// Run one call as `call` does and explain why each PATH is (or is
    /// not) on its page; --unsearched summarises what it never searched.
    Explain(ExplainArgs),
    /// Print the prompt sections and tool definitions the model sees.
    Surface(SurfaceArgs),
    /// Re-run recorded transcripts; a unified diff per changed record.
    Replay(ReplayArgs),
    /// Record the calls on stdin (one JSON call per line) to a transcript.
    Record(RecordArgs),
    /// Serve the tools to MCP clients: over stdio (JSON-RPC on stdin/stdout),
    /// or with --listen over Streamable HTTP at /mcp.
    Mcp(McpArgs),
    /// Turn a live recording into a self-contained fixture (tree manifest + transcript).
    Freeze(FreezeArgs),
    /// Replay recordings under config variants: what each budget costs.
    Ablate(AblateArgs),
    /// Show a tool result as an agent host's model receives it (host
    /// lenses: Codex, Claude Code, opencode, Gemini CLI, Qwen Code).
    Lens(LensArgs),
}

/// The call `call` runs and `explain` explains, one definition for both:
/// the tool, the workspace, the model's arguments, the plugin config and
/// where over-cap results are saved.
#[derive(Debug, Args)]
pub(crate) struct ToolCall {
    /// Tool name exactly as a model would send it.
    pub tool: String,
    /// The session workspace (and the executor's working directory).
    #[arg(long)]
    pub workdir: PathBuf,
    /// Raw JSON arguments object, as a model would send it; @FILE reads
    /// it from a file, @- from stdin.
    #[arg(long, value_name = "JSON|@FILE")]
    pub args: String,
    #[command(flatten)]
    pub config: ConfigArg,
    /// Where over-cap results are saved.
    #[command(flatten)]
    pub spill: SpillArgs,
}

#[derive(Debug, Args)]
// `--tokenizer` counts for `--tokens` only.
#[command(mut_arg("tokenizer", |arg| arg.requires("tokens")))]
pub(crate) struct CallArgs {
    #[command(flatten)]
    pub call: ToolCall,
    /// Session id (default: a fresh random id).
    #[arg(long, conflicts_with = "no_session")]
    pub session_id: Option<String>,
    /// Send no session header (no cwd, no spill owner).
    #[arg(long)]
    pub no_session: bool,
    /// Call id (default: a fresh random id).
    #[arg(long)]
    pub call_id: Option<String>,
    /// Mark the call as a nested Code Mode dispatch.
    #[arg(long)]
    pub nested: bool,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
    /// With --json: add `"tokens": {"text": N, "full": N | null}`, the
    /// tokens of the model-visible text and of the spilled full result.
    #[arg(long, requires = "json")]
    pub tokens: bool,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
    /// Then show the result as this host's model receives it
    /// (HOST or HOST@VERSION, or `all`: the newest lens of every host); see
    /// `workbench lens --list`.
    #[arg(long, value_name = "HOST|all")]
    pub host: Option<String>,
    #[command(flatten)]
    pub sandbox: SandboxArg,
    #[command(flatten)]
    pub contract: ContractArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    #[command(flatten)]
    pub call: ToolCall,
    /// Summarise what the call never searched under its search root:
    /// counts by reason, the rules that excluded most files, the largest
    /// excluded directories.
    #[arg(long)]
    pub unsearched: bool,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Paths to explain, relative to the workdir or absolute.
    #[arg(value_name = "PATH", required_unless_present = "unsearched")]
    pub paths: Vec<String>,
    #[command(flatten)]
    pub sandbox: SandboxArg,
    #[command(flatten)]
    pub contract: ContractArgs,
}

#[derive(Debug, Args)]
pub(crate) struct SurfaceArgs {
    #[command(flatten)]
    pub config: ConfigArg,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
    /// Count the tokens of each prompt section and tool definition (and
    /// their total, the fixed cost per request).
    #[arg(long)]
    pub tokens: bool,
    /// Compare the request prefix of --config (A) with this config's (B,
    /// JSON or @FILE): where a cached KV prefix stops being valid.
    #[arg(long, value_name = "JSON|@FILE")]
    pub against: Option<String>,
    /// With --against: exit 1 when B invalidates more than N tokens of A's
    /// cached prefix (A's tokens after the common prefix), a CI gate.
    #[arg(long, value_name = "N", requires = "against")]
    pub max_invalidated_tokens: Option<usize>,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
    /// Show the tool descriptions as this agent host passes them to its
    /// model (HOST or HOST@VERSION, as `workbench lens --list` names them;
    /// Claude Code cuts them at 2,048 characters); token counts follow.
    #[arg(long, value_name = "HOST[@VERSION]")]
    pub host: Option<String>,
    /// Where the load probe runs and whose rg `--json` names (on HOST:
    /// in its root directory).
    #[command(flatten)]
    pub sandbox: SandboxArg,
    /// The release whose surface is printed (`--json`: `contract`) and
    /// the rg it names.
    #[command(flatten)]
    pub contract: ContractArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReplayArgs {
    /// Transcript files (fixtures/transcripts/*.jsonl).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Rewrite changed records with the current results (and their
    /// token counts).
    #[arg(long)]
    pub update: bool,
    /// Add this rg's variant to each record whose page differs under it,
    /// leaving every other record and variant as it is (refused under
    /// the rg major the file was frozen with).
    #[arg(long, conflicts_with_all = ["update", "shard"])]
    pub add_variant: bool,
    /// Exit 1 when any result's text is more than N tokens (a budget check).
    #[arg(long, value_name = "N")]
    pub max_tokens: Option<u64>,
    /// Name each record whose current result this host (HOST or HOST@VERSION,
    /// see `workbench lens --list`) would cut, with what the cut hides;
    /// `auto`: each record's own host, from the MCP client its recording
    /// names (records without a known client are not checked).
    #[arg(long, value_name = "HOST|auto")]
    pub host: Option<String>,
    /// With --host: exit 1 when any record would be cut (a CI gate).
    #[arg(long, requires = "host")]
    pub fail_on_cut: bool,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
    /// Also write a JUnit XML report to FILE: a testsuite per transcript,
    /// a testcase per record.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// What stdout carries: the human report, or it plus GitHub Actions
    /// annotations (and a summary appended to $GITHUB_STEP_SUMMARY).
    /// Default: github when GITHUB_ACTIONS=true, else human.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<ReplayFormat>,
    /// Replay up to N records at once (default: the number of cores);
    /// the output and the exit status do not depend on N.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub jobs: Option<u32>,
    /// Replay only share K of N: the records across all FILES, counted in
    /// order, the i-th (from 0) belonging to share i mod N + 1.
    #[arg(long, value_name = "K/N", conflicts_with = "update")]
    pub shard: Option<fs_search_transcript::Shard>,
    /// Replay under the sandboxed executor (a differential check: every
    /// in-workspace call must give the recorded result).
    #[command(flatten)]
    pub sandbox: SandboxArg,
    /// Replay as this release (0.0.1 or 0.1.0-rc.8) instead of each
    /// header's: records compare with their variant for it; with
    /// --add-variant, adds that variant (--update refuses a file of
    /// another release).
    #[arg(long, value_name = "RELEASE", value_parser = fs_search_process::parse_release)]
    pub contract: Option<fs_search_engine::release::Release>,
}

/// `replay --format`: what stdout carries besides the human report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ReplayFormat {
    /// The report for a person reading a log.
    Human,
    /// The human report plus `::error`/`::notice` workflow commands, and a
    /// Markdown summary appended to $GITHUB_STEP_SUMMARY when it is set.
    Github,
}

impl ReplayFormat {
    /// `--format` as given, else github when `github_actions` (the value
    /// of $GITHUB_ACTIONS) is `true`, else human.
    pub(crate) fn resolve(given: Option<Self>, github_actions: Option<&str>) -> Self {
        match given {
            Some(format) => format,
            None if github_actions == Some("true") => Self::Github,
            None => Self::Human,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct RecordArgs {
    /// The fixture tree (fixtures/trees/NAME) or a directory to search.
    #[arg(long)]
    pub tree: PathBuf,
    #[command(flatten)]
    pub config: ConfigArg,
    /// The transcript to write.
    #[arg(long)]
    pub out: PathBuf,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
}

#[derive(Debug, Args)]
pub(crate) struct FreezeArgs {
    /// A recording made by `workbench mcp --record` (or the TUI's `R`).
    pub recording: PathBuf,
    /// Confirms the recording's tree when its header names one that is
    /// absolute or outside the recording's directory: it must name the
    /// same directory. Freeze copies what the calls' pages depend on.
    #[arg(long, value_name = "DIR")]
    pub workdir: Option<PathBuf>,
    /// Copy every file of the tree whole, instead of only what the
    /// recorded calls' complete results depend on.
    #[arg(long)]
    pub whole_tree: bool,
    /// The self-contained transcript to write.
    #[arg(long)]
    pub out: PathBuf,
    /// The directory to write the tree manifest (manifest.json) into.
    #[arg(long)]
    pub tree_out: PathBuf,
    /// Also run each record under this rg (a directory holding an `rg`,
    /// or the binary) on the frozen tree, and write its variant wherever
    /// its page differs. Repeatable.
    #[arg(long, value_name = "DIR")]
    pub also_rg: Vec<PathBuf>,
}

#[derive(Debug, Args)]
pub(crate) struct AblateArgs {
    /// Recordings (`mcp --record`) or fixture transcripts to replay.
    #[arg(required = true, value_name = "RECORDING|TRANSCRIPT")]
    pub files: Vec<PathBuf>,
    /// A config key and the values to try (JSON each), e.g.
    /// `grepMaxMatches=50,100,250`. Repeatable; every combination of the
    /// values is a variant (at most 64).
    #[arg(long = "set", value_name = "KEY=V1,V2,...", required = true)]
    pub set: Vec<String>,
    /// Search this directory for live recordings instead of the workdir
    /// their header names (fixture transcripts keep their tree).
    #[arg(long)]
    pub workdir: Option<PathBuf>,
    /// Print JSON instead of the Markdown table.
    #[arg(long, conflicts_with = "csv")]
    pub json: bool,
    /// Print CSV instead of the Markdown table.
    #[arg(long)]
    pub csv: bool,
    /// Also say, per variant, what this host (HOST or HOST@VERSION, see
    /// `workbench lens --list`) does to its pages: the calls it cuts, the
    /// grep matches its cut hides, the calls whose spill locator it
    /// removes (after the table, or under `host` with --json).
    #[arg(long, value_name = "HOST", conflicts_with = "csv")]
    pub host: Option<String>,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
    #[command(flatten)]
    pub sandbox: SandboxArg,
    /// `--contract`: every input runs as this release (default: each
    /// input's own, as its header names it).
    #[command(flatten)]
    pub contract: ContractArgs,
}

#[derive(Debug, Args)]
// `--tokenizer` counts for `--json` only.
#[command(mut_arg("tokenizer", |arg| arg.requires("json")))]
pub(crate) struct LensArgs {
    /// The lens: HOST (its newest era) or HOST@VERSION (an era's label, or
    /// a version number, which picks the era it falls in).
    #[arg(value_name = "HOST[@VERSION]", required_unless_present = "list")]
    pub lens: Option<String>,
    /// The tool result: its text, or a recorded result as JSON (`call
    /// --json`'s object or an MCP CallToolResult); `-` or none reads stdin.
    #[arg(value_name = "FILE|-")]
    pub file: Option<PathBuf>,
    /// List the lenses: host, version era, source, knobs.
    #[arg(long, conflicts_with_all = ["lens", "file", "set", "error"])]
    pub list: bool,
    /// Set a knob as the host names it (see --list). Repeatable.
    #[arg(long = "set", value_name = "KNOB=VALUE")]
    pub set: Vec<String>,
    /// Treat the result as an error result (`isError: true`).
    #[arg(long)]
    pub error: bool,
    /// The tool that answered (hosts name it in some texts).
    #[arg(long, default_value = "grep")]
    pub tool: String,
    /// Print one JSON object instead of the text.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tokenizer: TokenizerArg,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser, error::ErrorKind};

    use super::*;

    #[test]
    fn the_command_line_passes_clap_s_own_checks() {
        Cli::command().debug_assert();
    }

    #[test]
    fn the_tui_flags_parse_into_one_tui_args() {
        let cli = Cli::try_parse_from([
            "workbench",
            "--workdir",
            "w",
            "--config",
            "{}",
            "--follow",
            "f.jsonl",
            "--tokenizer",
            "t.json",
        ])
        .unwrap();
        assert!(cli.command.is_none());
        assert_eq!(cli.tui.workdir, Some(PathBuf::from("w")));
        assert_eq!(cli.tui.config.raw(), Some("{}"));
        assert_eq!(cli.tui.follow, Some(PathBuf::from("f.jsonl")));
        assert_eq!(
            cli.tui.tokenizer.file(),
            Some(std::path::Path::new("t.json"))
        );
    }

    #[test]
    fn the_tui_takes_a_release_and_an_rg_binary() {
        let cli = Cli::try_parse_from(["workbench", "--contract", "0.1.0-rc.8", "--rg", "/bin/sh"])
            .unwrap();
        assert_eq!(
            cli.tui.contract.choice(),
            fs_search_process::ContractChoice {
                release: fs_search_engine::release::Release::Rc8,
                rg: Some(PathBuf::from("/bin/sh")),
            }
        );
        let default = Cli::try_parse_from(["workbench"]).unwrap();
        assert_eq!(
            default.tui.contract.choice(),
            fs_search_process::ContractChoice::seed()
        );
    }

    #[test]
    fn call_s_tokenizer_still_requires_tokens() {
        let base = [
            "workbench",
            "call",
            "glob",
            "--workdir",
            ".",
            "--args",
            "{}",
        ];
        let without = [&base[..], &["--tokenizer", "t.json"]].concat();
        let err = Cli::try_parse_from(without).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::MissingRequiredArgument);
        let with = [&base[..], &["--json", "--tokens", "--tokenizer", "t.json"]].concat();
        let Some(Command::Call(args)) = Cli::try_parse_from(with).unwrap().command else {
            panic!("not a call");
        };
        assert_eq!(args.tokenizer.file(), Some(std::path::Path::new("t.json")));
    }

    #[test]
    fn every_subcommand_reads_config_through_the_one_flag() {
        for argv in [
            &["workbench", "surface", "--config", "{}"][..],
            &[
                "workbench",
                "record",
                "--tree",
                "t",
                "--out",
                "o",
                "--config",
                "{}",
            ],
            &["workbench", "mcp", "--workdir", ".", "--config", "{}"],
        ] {
            let cli = Cli::try_parse_from(argv).unwrap();
            let raw = match &cli.command {
                Some(Command::Surface(a)) => a.config.raw(),
                Some(Command::Record(a)) => a.config.raw(),
                Some(Command::Mcp(a)) => a.config.raw(),
                _ => None,
            };
            assert_eq!(raw, Some("{}"), "{argv:?}");
        }
    }
}

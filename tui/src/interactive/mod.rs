//! The interactive workbench (`workbench` with no subcommand): a TUI
//! (ratatui on crossterm) on the engine, loaded like the headless
//! commands: the local executor rooted at the workdir, a local spill
//! store, the timeout policy.
//!
//! It has the Elm shape (state, update, view, effects) and its modules
//! depend on each other in one direction only, from the leaves up:
//!
//! - leaves: [`tabs`] (the one table of tab digits and labels), [`scroll_doc`]
//!   (a scrollable document and its wrap), [`state`] (plain data: the
//!   session, the calls, the call editor, the config form, the Transcript
//!   tab, who has the keyboard, the viewports), [`effects`] (the
//!   [`effects::Effect`]s the app asks for, the [`effects::EffectRunner`]
//!   that carries them out on tokio tasks, their [`effects::AppEvent`]
//!   outcomes), [`completion`] (a typed path's Tab completion), [`command_tap`]
//!   (notes the command lines bash runs for a call),
//!   [`error`], `fs_search_process`'s `logging`;
//! - [`keymap`]: every key binding and its [`keymap::Action`];
//! - [`content`]: the documents the panes show, composed from the state;
//! - [`app`]: the one `impl App`, the update logic: keys and outcomes in,
//!   state changes and effects out (no terminal, no layout);
//! - [`views`]: draw the state, never change it;
//! - [`event_loop`]: ties them to the terminal: events to the app, effects
//!   to the runner, viewports to the app, the state to the views.
//!
//! Extending: a new tab is a [`tabs::Tab`] variant (listed in `Tab::ALL`,
//! titled) plus its arms in `views::pane_title` and `views::draw_pane`
//! (and in [`content::tab_doc`] if it shows a document); prose that names
//! a tab takes its digit and label from the table. A new key is a
//! [`keymap::Action`] variant, a row of [`keymap::BINDINGS`] and its arm
//! in `App::apply` (the key bar and the help follow). A new side effect
//! is an [`effects::Effect`] variant carried out in
//! `EffectRunner::apply` and, for its outcome, an [`effects::AppEvent`]
//! variant handled in `App::on_event`. New state is a field of
//! [`state::State`] (or a leaf module under `state/`), changed only in
//! `app.rs` and drawn by a view that takes it as an argument. The
//! Transcript tab is built this way: [`state::transcript`] (its state),
//! `App::transcript_action` (its keys), `Effect::ReplayTranscript`,
//! [`views::transcript`] (drawing it); following a recording is
//! [`state::follow`], `Effect::Follow` (a task polling the file) and
//! `AppEvent::Followed` (its records become calls of the history).
//! Its ablate mode (`a` on a transcript) is [`state::ablate`],
//! `Effect::Ablate` run by [`ablate_task`] (progress and the result come
//! back as `AppEvent::AblateProgress` and `AppEvent::Ablated`) and
//! [`views::ablate`].

pub(crate) mod ablate_task;
pub(crate) mod app;
pub(crate) mod command_tap;
pub(crate) mod completion;
pub(crate) mod content;
pub(crate) mod effects;
pub(crate) mod error;
pub(crate) mod event_loop;
pub(crate) mod keymap;
pub(crate) mod scroll_doc;
pub(crate) mod state;
pub(crate) mod tabs;
pub(crate) mod views;

#[cfg(test)]
mod screen_tests;

use std::process::ExitCode;

use fs_search_engine::ExecContext;

use self::error::TuiError;
use self::state::session::SessionInfo;
use crate::cli::TuiArgs;
use fs_search_process::{check_workdir, parse_config_flag, spill_root};

/// Checks the options, then opens the terminal and runs the loop
/// (following the recording `--follow`, if given; counting tokens with
/// `--tokenizer`, else the embedded tokenizer) until the user quits.
pub(crate) async fn run(args: TuiArgs) -> Result<ExitCode, TuiError> {
    let started = std::time::Instant::now();
    // Unknown keys are said in the status line once loaded, not on stderr.
    let config = parse_config_flag("--config", args.config.raw())?;
    let contract = args.contract.choice();
    let workdir = match args.workdir {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(TuiError::CurrentDir)?,
    };
    let executor = args.sandbox.kind();
    // A workdir on another machine is checked there, by the build below.
    if !executor.is_remote() {
        check_workdir(&workdir)?;
    }
    let workdir = std::path::absolute(&workdir).map_err(|source| TuiError::Absolute {
        path: workdir.display().to_string(),
        source,
    })?;
    if executor != fs_search_process::ExecutorKind::Local {
        // Fail closed before the terminal opens: the sandbox is probed
        // once here (on HOST, with the workdir there, for a remote
        // executor), and every load builds it the same way.
        fs_search_process::build_executor(
            &executor,
            fs_search_exec::LocalBashConfig {
                cwd: Some(workdir.to_string_lossy().into_owned()),
                rg: contract.rg.clone(),
                ..fs_search_exec::LocalBashConfig::default()
            },
        )
        .map_err(fs_search_process::SetupError::from)?;
    }
    let logging = fs_search_process::init_logging(args.spill.cutoff());
    let spill_root = spill_root(&args.spill)?;
    let session = SessionInfo {
        workdir: workdir.display().to_string(),
        session_id: ExecContext::fresh_id("session"),
        spill_root,
        recordings_dir: fs_search_process::recordings_dir(),
        log_path: logging.as_ref().map(|l| l.path.clone()),
        rg: contract.rg_info(&executor),
        executor: (executor != fs_search_process::ExecutorKind::Local)
            .then(|| executor.as_str().to_owned()),
        contract,
    };
    tracing::info!(workdir = %session.workdir, session = %session.session_id, %config, contract = %session.contract.release, rg = %session.rg.version_line, rg_path = ?session.rg.path, "workbench starting");
    let outcome = event_loop::run(
        session,
        config,
        args.follow,
        args.tokenizer.tokenizer,
        started,
        executor,
    )
    .await;
    if let Err(e) = &outcome {
        tracing::error!(error = %e, "workbench ended with an error");
    }
    // Spilled results stay for the developer to read (pruned after
    // --retention days by a later start).
    drop(logging);
    outcome.map(|()| ExitCode::SUCCESS)
}

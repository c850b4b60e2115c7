//! The interactive workbench (`workbench` with no subcommand): a TUI
//! (ratatui on crossterm) on the engine, loaded like the headless
//! commands: the local executor rooted at the workdir, a local spill
//! store, the timeout policy.
//!
//! State and update live in [`app`] (no terminal), drawing in [`views`],
//! side effects (loads, calls, spill reads on tokio tasks) in [`runner`],
//! the keys in [`keymap`], the tabs in [`tabs`], and the loop that ties
//! them to the terminal in [`event_loop`].
//!
//! Extending: a new tab is a [`tabs::Tab`] variant (listed in
//! `Tab::ALL`, titled) plus its arms in `views::pane_title` and
//! `views::draw_pane` (and in `App::tab_doc` if it shows a document); a
//! new key is a [`keymap::Action`] variant, a row of [`keymap::BINDINGS`]
//! and its arm in `App::apply` (the key bar and the help follow); a new
//! side effect is a [`runner::Effect`] variant and, for its outcome, a
//! [`runner::AppEvent`] variant handled in `App::on_event`. The Transcript
//! tab (`transcript_pane`, `views::transcript`) is built this way.

pub mod app;
pub mod content;
pub mod doc;
pub mod effects;
pub mod error;
pub mod event_loop;
pub mod keymap;
pub mod logging;
pub mod state;
pub mod tabs;
pub mod views;

#[cfg(test)]
mod screen_tests;

use std::path::PathBuf;
use std::process::ExitCode;

use fs_search_engine::random_hex;

use self::error::TuiError;
use self::state::session::SessionInfo;
use crate::setup::read_config;

/// Runs the TUI to completion on `runtime`; the exit code for `main`.
pub fn main(
    runtime: &tokio::runtime::Runtime,
    workdir: Option<PathBuf>,
    config: Option<String>,
) -> ExitCode {
    match runtime.block_on(run(workdir, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("workbench: {e}");
            ExitCode::from(2)
        }
    }
}

/// Checks the options, then opens the terminal and runs the loop.
pub async fn run(workdir: Option<PathBuf>, config: Option<String>) -> Result<(), TuiError> {
    let started = std::time::Instant::now();
    let config = read_config(config.as_deref())?;
    let workdir = match workdir {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    if !workdir.is_dir() {
        return Err(TuiError::Workdir(workdir.display().to_string()));
    }
    let workdir = std::path::absolute(&workdir)?;
    let logging = logging::init();
    let spill_root = tempfile::Builder::new()
        .prefix("dsh-spill-")
        .rand_bytes(6)
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir()
        .map_err(TuiError::SpillRoot)?
        .keep();
    let session = SessionInfo {
        workdir: workdir.display().to_string(),
        session_id: format!("session-{}", random_hex(6)),
        spill_root: Some(spill_root.clone()),
        log_path: logging.as_ref().map(|l| l.path.clone()),
    };
    tracing::info!(workdir = %session.workdir, session = %session.session_id, %config, "workbench starting");
    let outcome = event_loop::run(session, config, started).await;
    if let Err(e) = &outcome {
        tracing::error!(error = %e, "workbench ended with an error");
    }
    // Spilled results stay for the developer to read; a spill root that
    // nothing was saved to goes (remove_dir only removes an empty one).
    let _ = std::fs::remove_dir(&spill_root);
    drop(logging);
    outcome
}

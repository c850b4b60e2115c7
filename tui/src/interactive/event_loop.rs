//! The terminal loop: `ratatui::try_init` (raw mode, alternate screen,
//! and a panic hook that restores the terminal), then `tokio::select!`
//! over crossterm's event stream, the effect runner's outcomes,
//! SIGTERM/SIGHUP (handled like `q`) and a spinner tick while a call
//! runs; each turn updates the app, hands its effects to the
//! [`EffectRunner`] and redraws ([`draw`]: the app first learns the sizes
//! of the scrollable areas, then the views draw its state). The terminal
//! is restored on every exit.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use futures::StreamExt;
use ratatui::backend::Backend;
use ratatui::crossterm::event::EventStream;
use ratatui::layout::Rect;
use ratatui::{DefaultTerminal, Terminal};
use serde_json::Value;
use tokio::signal::unix::{SignalKind, signal};
use tokio::sync::mpsc;

use super::app::App;
use super::effects::{AppEvent, EffectRunner};
use super::error::TuiError;
use super::keymap::Action;
use super::state::session::SessionInfo;
use super::views;

/// How often the spinner and elapsed time move while a call runs.
const TICK: Duration = Duration::from_millis(100);
/// How long quitting waits for a cancelled call to let go of rg.
const QUIT_GRACE: Duration = Duration::from_millis(1500);

/// Draws one frame of `app` on `terminal`: tells the app the sizes of
/// the scrollable areas at the terminal's current size, then draws its
/// state.
pub fn draw<B: Backend>(
    terminal: &mut Terminal<B>,
    app: &mut App,
    now: Instant,
) -> Result<(), B::Error> {
    let size = terminal.size()?;
    app.resize(views::viewports(Rect::from(size), &app.state));
    terminal.draw(|frame| views::draw(frame, &app.state, now))?;
    Ok(())
}

/// Opens the terminal, runs the app (following the recording `follow`,
/// if given), restores the terminal.
pub(crate) async fn run(
    session: SessionInfo,
    config: Value,
    follow: Option<PathBuf>,
    tokenizer: Option<PathBuf>,
    started: Instant,
    executor: fs_search_process::ExecutorKind,
) -> Result<(), TuiError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let workdir = PathBuf::from(&session.workdir);
    let spill_root = session.spill_root.clone();
    let mut runner = EffectRunner::new(workdir, spill_root, session.session_id.clone(), tx)
        .with_executor(executor)
        .with_contract(session.contract.clone());
    let mut app = App::new(session, &config);
    let mut terminal = ratatui::try_init()?;
    let outcome = drive(
        &mut terminal,
        &mut app,
        &mut runner,
        rx,
        (follow, tokenizer),
        started,
    )
    .await;
    let _ = terminal.show_cursor();
    ratatui::restore();
    outcome
}

async fn drive(
    terminal: &mut DefaultTerminal,
    app: &mut App,
    runner: &mut EffectRunner,
    mut rx: mpsc::UnboundedReceiver<AppEvent>,
    (follow, tokenizer): (Option<PathBuf>, Option<PathBuf>),
    started: Instant,
) -> Result<(), TuiError> {
    let mut events = EventStream::new();
    let mut terminate = signal(SignalKind::terminate())?;
    let mut hangup = signal(SignalKind::hangup())?;
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let effects = app.start();
    runner.apply_all(effects);
    // The tokenizer loads in the background: the first frame does not wait.
    let effects = app.start_tokens(tokenizer);
    runner.apply_all(effects);
    if let Some(path) = follow {
        let effects = app.follow(path);
        runner.apply_all(effects);
    }
    draw(terminal, app, Instant::now())?;
    tracing::info!(
        ms = started.elapsed().as_secs_f64() * 1000.0,
        "first frame drawn"
    );
    loop {
        let effects = tokio::select! {
            event = events.next() => match event {
                Some(Ok(event)) => app.handle_event(&event),
                Some(Err(e)) => return Err(e.into()),
                None => break,
            },
            Some(event) = rx.recv() => {
                if matches!(event, AppEvent::Finished { .. } | AppEvent::Lost { .. }) {
                    runner.finished();
                }
                app.on_event(event)
            }
            _ = terminate.recv() => {
                tracing::info!("SIGTERM: quitting");
                app.apply(Action::Quit)
            }
            _ = hangup.recv() => {
                tracing::info!("SIGHUP: quitting");
                app.apply(Action::Quit)
            }
            _ = tick.tick(), if app.state.running.is_some() => Vec::new(),
        };
        runner.apply_all(effects);
        if app.state.should_quit {
            break;
        }
        draw(terminal, app, Instant::now())?;
    }
    if app.state.running.is_some() {
        // The cancel went out with the quit; give the call a moment to
        // kill rg's process group before the runtime is torn down.
        let deadline = tokio::time::sleep(QUIT_GRACE);
        tokio::pin!(deadline);
        loop {
            tokio::select! {
                Some(event) = rx.recv() => {
                    if matches!(event, AppEvent::Finished { .. } | AppEvent::Lost { .. }) {
                        break;
                    }
                }
                () = &mut deadline => break,
            }
        }
    }
    Ok(())
}

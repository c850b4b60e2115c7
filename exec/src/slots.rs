//! The process-wide bound on runs that go through a launcher: each such
//! run (on an agent in a sandbox or an ssh session, or a one-shot
//! sandbox or session) holds one slot from before its sandbox or session
//! is taken or started until it is over and its agent is back or gone.
//!
//! A front end serving many clients sets the bound once
//! ([`bound_launcher_runs`]; `workbench mcp --max-sandboxes N`); without it
//! runs are not bounded. A run that finds every slot taken waits in line,
//! first come first served, at most its own timeout: then it ends as a
//! run that timed out, with no output; an abort while it waits ends it as
//! one aborted before its spawn. The wait does not shorten the run's own
//! timeout once it has a slot.

use std::sync::OnceLock;
use std::time::Duration;

use tokio::sync::{Semaphore, SemaphorePermit};
use tokio_util::sync::CancellationToken;

static SLOTS: OnceLock<Semaphore> = OnceLock::new();

/// Bounds the runs through a launcher that run at once, in this whole
/// process, to `limit` (at least 1). Only the first call sets it; whether
/// this one did.
pub fn bound_launcher_runs(limit: usize) -> bool {
    let limit = limit.clamp(1, Semaphore::MAX_PERMITS);
    SLOTS.set(Semaphore::new(limit)).is_ok()
}

/// How the wait for a slot ended.
pub(super) enum Slot {
    /// The run may go: it holds the slot (`None`: there is no bound).
    Held(Option<SemaphorePermit<'static>>),
    /// `signal` was cancelled first.
    Aborted,
    /// `bound` passed first.
    TimedOut,
}

/// Waits for a slot, at most `bound`, while `signal` is not cancelled.
pub(super) async fn wait_for_slot(signal: &CancellationToken, bound: Duration) -> Slot {
    let Some(slots) = SLOTS.get() else {
        return Slot::Held(None);
    };
    if let Ok(permit) = slots.try_acquire() {
        return Slot::Held(Some(permit));
    }
    tokio::select! {
        biased;
        () = signal.cancelled() => Slot::Aborted,
        permit = slots.acquire() => match permit {
            Ok(permit) => Slot::Held(Some(permit)),
            // The semaphore is never closed.
            Err(_) => Slot::Held(None),
        },
        () = tokio::time::sleep(bound) => Slot::TimedOut,
    }
}

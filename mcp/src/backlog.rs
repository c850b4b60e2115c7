//! The stdio server's backlog: requests read and not yet answered, plus
//! messages queued for stdout and not yet written. The transport stops
//! reading stdin while the backlog is full ([`MAX_BACKLOG`]), so a client
//! that sends without reading holds the server back instead of growing it
//! without bound (the answers wait in the pipe, nothing is lost).

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// Requests in flight plus unwritten messages at which reading pauses.
pub(crate) const MAX_BACKLOG: usize = 64;

#[derive(Default)]
struct State {
    /// Ids (as JSON text) of requests read and not yet answered.
    in_flight: HashSet<String>,
    unwritten: usize,
}

/// The backlog; shared by the reading and the writing side.
#[derive(Default)]
pub(crate) struct Backlog {
    state: Mutex<State>,
    changed: Notify,
}

/// One queued message, counted until dropped (written or discarded).
pub(crate) struct Queued {
    backlog: Arc<Backlog>,
    /// The request this message answers.
    answers: Option<String>,
}

impl Drop for Queued {
    fn drop(&mut self) {
        if let Ok(mut state) = self.backlog.state.lock() {
            state.unwritten = state.unwritten.saturating_sub(1);
            if let Some(id) = &self.answers {
                state.in_flight.remove(id);
            }
        }
        self.backlog.changed.notify_waiters();
    }
}

impl Backlog {
    /// Resolves once the backlog has room. Cancel-safe.
    pub(crate) async fn room(&self) {
        loop {
            let changed = self.changed.notified();
            if self.len() < MAX_BACKLOG {
                return;
            }
            changed.await;
        }
    }

    fn len(&self) -> usize {
        self.state
            .lock()
            .map(|s| s.in_flight.len() + s.unwritten)
            .unwrap_or(0)
    }

    /// Request `id` was read; false when a request with that id is still
    /// in flight (ids must be unique among them).
    pub(crate) fn read_request(&self, id: String) -> bool {
        self.state
            .lock()
            .map(|mut s| s.in_flight.insert(id))
            .unwrap_or(true)
    }

    /// Request `id` was cancelled: it gets no answer.
    pub(crate) fn cancelled(&self, id: &str) {
        if let Ok(mut state) = self.state.lock() {
            state.in_flight.remove(id);
        }
        self.changed.notify_waiters();
    }

    /// A message is queued for stdout (answering request `answers`).
    pub(crate) fn queue(self: &Arc<Self>, answers: Option<String>) -> Queued {
        if let Ok(mut state) = self.state.lock() {
            state.unwritten += 1;
        }
        Queued {
            backlog: self.clone(),
            answers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn reading_waits_while_the_backlog_is_full_and_an_answer_frees_room() {
        let backlog = Arc::new(Backlog::default());
        for id in 0..MAX_BACKLOG {
            assert!(backlog.read_request(id.to_string()));
        }
        assert!(!backlog.read_request("0".to_owned()));
        let waiting = tokio::spawn({
            let backlog = backlog.clone();
            async move { backlog.room().await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        let answer = backlog.queue(Some("0".to_owned()));
        drop(answer);
        waiting.await.unwrap();
    }
}

//! SIGINT, SIGTERM and SIGHUP for the commands that run calls (`call`,
//! `replay`, `record`, `freeze`, `mcp`): one process-wide [`Stop`] whose
//! token is cancelled by the first of them, so the call in flight ends
//! through the engine's caller-abort path (its rg group SIGTERMed, then
//! SIGKILLed after the executor's grace period), temp trees are dropped
//! as the command unwinds, and the process exits 128 + the signal's
//! number (130 for SIGINT).
//!
//! Calls take a child of [`Stop::token`] as their `ExecContext.signal`.
//! Once installed, the signals no longer end the process by themselves:
//! a command that waits on anything else (stdin) must also watch the
//! token.

use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Arc, OnceLock};

use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

/// The stop requested by a signal.
#[derive(Debug, Clone)]
pub struct Stop {
    token: CancellationToken,
    signal: Arc<AtomicI32>,
}

static STOP: OnceLock<Stop> = OnceLock::new();

/// The signals that stop a command, with their numbers.
const SIGNALS: [(fn() -> SignalKind, i32); 3] = [
    (SignalKind::interrupt, 2),
    (SignalKind::terminate, 15),
    (SignalKind::hangup, 1),
];

/// Installs the handlers (once; must run inside the tokio runtime) and
/// returns the process's [`Stop`].
pub fn install() -> &'static Stop {
    STOP.get_or_init(|| {
        let stop = Stop {
            token: CancellationToken::new(),
            signal: Arc::new(AtomicI32::new(0)),
        };
        for (kind, number) in SIGNALS {
            match signal(kind()) {
                Ok(mut stream) => {
                    let stop = stop.clone();
                    tokio::spawn(async move {
                        if stream.recv().await.is_some() {
                            stop.request(number);
                        }
                    });
                }
                Err(e) => tracing::warn!("cannot handle signal {number}: {e}"),
            }
        }
        stop
    })
}

/// The process's [`Stop`], if [`install`] ran.
pub fn installed() -> Option<&'static Stop> {
    STOP.get()
}

/// The number of the signal that stopped the process, if one did.
pub fn stopped_by() -> Option<i32> {
    installed().and_then(Stop::signal)
}

impl Stop {
    fn request(&self, number: i32) {
        // The first signal is the one the exit status reports.
        let _ = self
            .signal
            .compare_exchange(0, number, Ordering::SeqCst, Ordering::SeqCst);
        tracing::info!(signal = number, "stopping on a signal");
        self.token.cancel();
    }

    /// Cancelled by the first signal; calls take a child of it.
    pub fn token(&self) -> &CancellationToken {
        &self.token
    }

    /// The signal's number, once one arrived.
    pub fn signal(&self) -> Option<i32> {
        match self.signal.load(Ordering::SeqCst) {
            0 => None,
            n => Some(n),
        }
    }

    /// Waits for a signal; its number.
    pub async fn wait(&self) -> i32 {
        self.token.cancelled().await;
        self.signal().unwrap_or(0)
    }
}

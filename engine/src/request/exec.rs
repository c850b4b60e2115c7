//! The execution context of one call: its id, cancellation signal, the
//! calling agent's session header, and whether it is a nested dispatch.

use tokio_util::sync::CancellationToken;

/// The calling agent's session header.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionHeader {
    /// Owner of spilled results; `None` means no spill owner.
    pub id: Option<String>,
    /// The session workspace; `None` lets the executor pick its default.
    pub cwd: Option<String>,
}

/// `exec` of the contract.
#[derive(Debug, Clone, Default)]
pub struct ExecContext {
    /// The call's id (`exec.callId`), used in spill file names.
    pub call_id: String,
    /// `exec.signal`: cancelling it aborts the call and kills rg.
    pub signal: CancellationToken,
    /// `exec.parent` is set: a nested Code Mode dispatch (no meta, no spill).
    pub nested: bool,
    /// `exec.agent?.session.header`; `None` for a call without agent.
    pub session: Option<SessionHeader>,
}

impl ExecContext {
    /// A call with id `call_id`, no session, not cancelled, not nested.
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            ..Self::default()
        }
    }

    /// A fresh random id, `{prefix}-` and 12 hex digits, for a host with
    /// no call or session ids of its own.
    pub fn fresh_id(prefix: &str) -> String {
        format!("{prefix}-{}", crate::support::ids::random_hex(6))
    }

    /// Sets the session header: the spill owner `id` and the workspace `cwd`.
    pub fn with_session(mut self, id: Option<&str>, cwd: Option<&str>) -> Self {
        self.session = Some(SessionHeader {
            id: id.map(str::to_owned),
            cwd: cwd.map(str::to_owned),
        });
        self
    }

    /// Uses `signal` as the call's cancellation signal.
    pub fn with_signal(mut self, signal: CancellationToken) -> Self {
        self.signal = signal;
        self
    }

    /// Marks the call as a nested Code Mode dispatch (no card, no spill).
    pub fn nested(mut self) -> Self {
        self.nested = true;
        self
    }

    pub(crate) fn cwd(&self) -> Option<&str> {
        self.session.as_ref()?.cwd.as_deref()
    }

    pub(crate) fn session_id(&self) -> Option<&str> {
        self.session.as_ref()?.id.as_deref()
    }
}

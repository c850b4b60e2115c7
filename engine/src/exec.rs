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
    pub call_id: String,
    /// `exec.signal`: cancelling it aborts the call and kills rg.
    pub signal: CancellationToken,
    /// `exec.parent` is set: a nested Code Mode dispatch (no meta, no spill).
    pub nested: bool,
    /// `exec.agent?.session.header`; `None` for a call without agent.
    pub session: Option<SessionHeader>,
}

impl ExecContext {
    pub fn new(call_id: impl Into<String>) -> Self {
        Self {
            call_id: call_id.into(),
            ..Self::default()
        }
    }

    pub fn with_session(mut self, id: Option<&str>, cwd: Option<&str>) -> Self {
        self.session = Some(SessionHeader {
            id: id.map(str::to_owned),
            cwd: cwd.map(str::to_owned),
        });
        self
    }

    pub fn with_signal(mut self, signal: CancellationToken) -> Self {
        self.signal = signal;
        self
    }

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

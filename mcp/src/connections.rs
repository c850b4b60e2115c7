//! Which TCP connections `workbench mcp --listen` keeps, so idle or slow
//! clients cannot starve one that has the token.
//!
//! A connection is *pending* until one of its requests passes the gate
//! ([`super::auth::Gate`]: Host, Origin, token), then *trusted*.
//!
//! - Pending connections are bounded per peer address and in total; when
//!   a new one would exceed a bound, the oldest pending connection (of that
//!   peer, or overall) is closed to make room, so a flood of idle
//!   connections cannot keep a newcomer out.
//! - A pending connection that gets no request through the gate within
//!   the gate deadline is closed.
//! - Trusted connections are bounded in total (a request that would exceed
//!   the bound gets 503 and its connection is closed); their request
//!   bodies must arrive within the body deadline (see `super::http_post`).
//!
//! The defaults are [`Limits::default`]; `WORKBENCH_MCP_HTTP_LIMITS`
//! (`pending=N,per_peer=N,trusted=N,gate_ms=N,body_ms=N`, any subset)
//! changes them.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use thiserror::Error;
use tokio_util::sync::CancellationToken;

/// The environment variable that changes the limits.
pub(crate) const LIMITS_ENV: &str = "WORKBENCH_MCP_HTTP_LIMITS";

/// The bounds on connections and the deadlines of their requests.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Limits {
    /// Pending connections at once.
    pub pending: usize,
    /// Pending connections of one peer address at once.
    pub per_peer: usize,
    /// Trusted connections at once.
    pub trusted: usize,
    /// How long a pending connection has to get a request through the gate.
    pub gate: Duration,
    /// How long a request body may take to arrive.
    pub body: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            pending: 512,
            per_peer: 64,
            trusted: 1024,
            gate: Duration::from_secs(10),
            body: Duration::from_secs(30),
        }
    }
}

/// A `WORKBENCH_MCP_HTTP_LIMITS` that cannot be read.
#[derive(Debug, Error)]
#[error(
    "${LIMITS_ENV}: {0:?} is not KEY=N (keys: pending, per_peer, trusted, gate_ms, body_ms; N a positive integer)"
)]
pub(crate) struct LimitsError(String);

impl Limits {
    /// The defaults, changed by `$WORKBENCH_MCP_HTTP_LIMITS` when set.
    pub(crate) fn configured() -> Result<Self, LimitsError> {
        match std::env::var(LIMITS_ENV) {
            Ok(spec) if !spec.trim().is_empty() => Self::parse(&spec),
            _ => Ok(Self::default()),
        }
    }

    fn parse(spec: &str) -> Result<Self, LimitsError> {
        let mut limits = Self::default();
        for item in spec.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let bad = || LimitsError(item.to_owned());
            let (key, value) = item.split_once('=').ok_or_else(bad)?;
            let n: u64 = value.trim().parse().map_err(|_| bad())?;
            if n == 0 {
                return Err(bad());
            }
            let count = usize::try_from(n).map_err(|_| bad())?;
            match key.trim() {
                "pending" => limits.pending = count,
                "per_peer" => limits.per_peer = count,
                "trusted" => limits.trusted = count,
                "gate_ms" => limits.gate = Duration::from_millis(n),
                "body_ms" => limits.body = Duration::from_millis(n),
                _ => return Err(bad()),
            }
        }
        Ok(limits)
    }
}

struct Pending {
    peer: IpAddr,
    closed: CancellationToken,
}

#[derive(Default)]
struct Table {
    next: u64,
    /// By arrival: the oldest first.
    pending: BTreeMap<u64, Pending>,
    per_peer: HashMap<IpAddr, usize>,
    trusted: usize,
}

impl Table {
    fn remove_pending(&mut self, number: u64) -> Option<Pending> {
        let pending = self.pending.remove(&number)?;
        if let Some(count) = self.per_peer.get_mut(&pending.peer) {
            *count = count.saturating_sub(1);
            if *count == 0 {
                self.per_peer.remove(&pending.peer);
            }
        }
        Some(pending)
    }

    /// Closes the oldest pending connection (of `peer`, when given).
    fn evict_oldest(&mut self, peer: Option<IpAddr>) {
        let oldest = self
            .pending
            .iter()
            .find(|(_, p)| peer.is_none_or(|peer| p.peer == peer))
            .map(|(number, _)| *number);
        if let Some(pending) = oldest.and_then(|n| self.remove_pending(n)) {
            tracing::info!(peer = %pending.peer, "closed the oldest pending connection to make room");
            pending.closed.cancel();
        }
    }
}

/// Every connection of the server.
pub(crate) struct Connections {
    limits: Limits,
    table: Mutex<Table>,
}

/// One connection's place in [`Connections`]; gives it up when dropped.
pub(crate) struct Slot {
    connections: Arc<Connections>,
    number: u64,
    trusted: AtomicBool,
    closed: CancellationToken,
}

impl Connections {
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            limits,
            table: Mutex::new(Table::default()),
        }
    }

    /// Admits a new connection from `peer` as pending, closing the oldest
    /// pending ones beyond the bounds.
    pub(crate) fn admit(self: &Arc<Self>, peer: IpAddr) -> Slot {
        let closed = CancellationToken::new();
        let mut number = 0;
        if let Ok(mut table) = self.table.lock() {
            number = table.next;
            table.next += 1;
            table.pending.insert(
                number,
                Pending {
                    peer,
                    closed: closed.clone(),
                },
            );
            *table.per_peer.entry(peer).or_default() += 1;
            while table.per_peer.get(&peer).copied().unwrap_or(0) > self.limits.per_peer {
                table.evict_oldest(Some(peer));
            }
            while table.pending.len() > self.limits.pending {
                table.evict_oldest(None);
            }
        }
        Slot {
            connections: self.clone(),
            number,
            trusted: AtomicBool::new(false),
            closed,
        }
    }
}

impl Slot {
    /// Cancelled when the connection is to be closed (evicted).
    pub(crate) fn closed(&self) -> &CancellationToken {
        &self.closed
    }

    /// Whether a request has passed the gate on this connection.
    pub(crate) fn is_trusted(&self) -> bool {
        self.trusted.load(Ordering::Acquire)
    }

    /// A request passed the gate: the connection becomes trusted; false
    /// when the trusted bound is reached (the connection is then closed).
    pub(crate) fn trust(&self) -> bool {
        if self.is_trusted() {
            return true;
        }
        let Ok(mut table) = self.connections.table.lock() else {
            return false;
        };
        table.remove_pending(self.number);
        if table.trusted >= self.connections.limits.trusted {
            drop(table);
            self.closed.cancel();
            return false;
        }
        table.trusted += 1;
        self.trusted.store(true, Ordering::Release);
        true
    }

    /// Resolves when a pending connection's gate deadline has passed.
    pub(crate) async fn gate_deadline(&self) {
        tokio::time::sleep(self.connections.limits.gate).await;
        if self.is_trusted() {
            std::future::pending::<()>().await;
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Ok(mut table) = self.connections.table.lock() {
            if self.is_trusted() {
                table.trusted = table.trusted.saturating_sub(1);
            } else {
                table.remove_pending(self.number);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_read_from_the_environment_form_and_bad_ones_are_named() {
        let limits = Limits::parse("pending=8, per_peer=2,gate_ms=250").unwrap();
        assert_eq!(
            (limits.pending, limits.per_peer, limits.gate),
            (8, 2, Duration::from_millis(250))
        );
        assert_eq!(limits.trusted, Limits::default().trusted);
        for bad in ["pending", "pending=x", "pending=0", "nope=3"] {
            assert!(Limits::parse(bad).is_err(), "{bad}");
        }
    }

    #[tokio::test]
    async fn the_oldest_pending_connection_of_a_peer_makes_room_and_trusted_ones_stay() {
        let limits = Limits {
            per_peer: 2,
            ..Limits::default()
        };
        let connections = Arc::new(Connections::new(limits));
        let peer: IpAddr = "127.0.0.1".parse().unwrap();
        let first = connections.admit(peer);
        let second = connections.admit(peer);
        assert!(second.trust());
        let third = connections.admit(peer);
        let fourth = connections.admit(peer);
        assert!(first.closed().is_cancelled());
        assert!(!second.closed().is_cancelled());
        assert!(!third.closed().is_cancelled() && !fourth.closed().is_cancelled());
        let fifth = connections.admit(peer);
        assert!(third.closed().is_cancelled() && !fifth.closed().is_cancelled());
    }
}

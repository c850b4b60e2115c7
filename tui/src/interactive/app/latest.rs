//! [`Latest`]: the one guard against stale outcomes. Each request the
//! app sends off the UI (a plugin load, a follow, an explanation, an
//! ablation) takes the next number; an outcome that comes back with an
//! older number belongs to a request that was superseded and is ignored.

/// The numbers of one kind of request, and which one is the latest.
#[derive(Debug, Default)]
pub(super) struct Latest(u64);

impl Latest {
    /// A new request: its number, from now on the latest.
    pub(super) fn next(&mut self) -> u64 {
        self.0 += 1;
        self.0
    }

    /// Whether `number` is the latest request's.
    pub(super) fn is(&self, number: u64) -> bool {
        self.0 == number
    }
}

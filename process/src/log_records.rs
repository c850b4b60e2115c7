//! The process's `log` facade: every record goes to `tracing` as
//! tracing-log's `LogTracer` sends it, and a thread may ask for one
//! target's messages for itself ([`capture`]). `explain --unsearched` uses
//! the latter to hear ripgrep's `ignore` crate say, walk by walk, what it
//! ignored and why (the same `ignoring PATH: MATCH` lines `rg --debug`
//! prints, without rg writing each of them in dozens of small writes).

use std::cell::RefCell;
use std::sync::{Mutex, OnceLock};

use log::{LevelFilter, Log, Metadata, Record};
use tracing_log::AsLog;

/// One target's messages, captured on the thread that asked.
struct Capture {
    target: &'static str,
    messages: Vec<String>,
}

thread_local! {
    static CAPTURE: RefCell<Option<Capture>> = const { RefCell::new(None) };
}

/// The installed logger: captures what a thread asked for, forwards the rest.
struct Records {
    forward: tracing_log::LogTracer,
}

impl Records {
    fn captured(record: &Record<'_>) -> bool {
        CAPTURE.with(|cell| {
            let mut cell = cell.borrow_mut();
            match cell.as_mut() {
                Some(capture) if capture.target == record.target() => {
                    capture.messages.push(record.args().to_string());
                    true
                }
                _ => false,
            }
        })
    }
}

impl Log for Records {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        let wanted = CAPTURE.with(|cell| {
            cell.borrow()
                .as_ref()
                .is_some_and(|capture| capture.target == metadata.target())
        });
        wanted || self.forward.enabled(metadata)
    }

    fn log(&self, record: &Record<'_>) {
        if !Self::captured(record) {
            self.forward.log(record);
        }
    }

    fn flush(&self) {
        self.forward.flush();
    }
}

static INSTALLED: OnceLock<bool> = OnceLock::new();

/// The level records are made at: the tracing subscriber's when no
/// capture runs, at least `Debug` while one does. (`log::trace!` is in hot
/// loops of some crates, the tokenizer's normaliser among them: it must
/// stay a disabled level check.)
struct Levels {
    /// The level the tracing subscriber wants, when the logger was installed.
    base: LevelFilter,
    /// Captures in progress, on any thread.
    captures: usize,
}

static LEVELS: Mutex<Levels> = Mutex::new(Levels {
    base: LevelFilter::Off,
    captures: 0,
});

/// Counts a capture in (`+1`) or out (`-1`) and sets the level to match.
fn count_capture(delta: isize) {
    let mut levels = LEVELS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    levels.captures = levels.captures.saturating_add_signed(delta);
    let level = if levels.captures > 0 {
        levels.base.max(LevelFilter::Debug)
    } else {
        levels.base
    };
    log::set_max_level(level);
}

/// Installs the logger once per process (later calls do nothing). `false`
/// when another logger was installed first: then nothing can be captured.
pub fn install() -> bool {
    *INSTALLED.get_or_init(|| {
        let records = Records {
            forward: tracing_log::LogTracer::new(),
        };
        let installed = log::set_boxed_logger(Box::new(records)).is_ok();
        if installed {
            let base = tracing::level_filters::LevelFilter::current().as_log();
            LEVELS
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .base = base;
            count_capture(0);
        }
        installed
    })
}

/// Runs `work` on this thread, collecting the messages logged to `target`
/// meanwhile (by this thread only); `None` when the logger could not be
/// installed, so that the caller can ask another way.
pub fn capture<T>(target: &'static str, work: impl FnOnce() -> T) -> Option<(T, Vec<String>)> {
    if !install() {
        return None;
    }
    let capture = Capture {
        target,
        messages: Vec::new(),
    };
    // Restored however `work` ends, so that a thread of a pool never keeps
    // collecting for a capture that is over.
    let guard = Restore(CAPTURE.with(|cell| cell.borrow_mut().replace(capture)));
    count_capture(1);
    let out = work();
    let captured = CAPTURE.with(|cell| cell.borrow_mut().take());
    drop(guard);
    Some((out, captured.map(|c| c.messages).unwrap_or_default()))
}

/// Puts back the capture that was active before [`capture`] began.
struct Restore(Option<Capture>);

impl Drop for Restore {
    fn drop(&mut self) {
        let previous = self.0.take();
        CAPTURE.with(|cell| *cell.borrow_mut() = previous);
        count_capture(-1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capture_hears_its_own_threads_messages_to_its_target_only() {
        let ((), messages) = capture("explain::test", || {
            log::debug!(target: "explain::test", "one {}", 1);
            log::debug!(target: "elsewhere", "not this");
            std::thread::spawn(|| log::debug!(target: "explain::test", "other thread"))
                .join()
                .unwrap();
        })
        .unwrap();
        assert_eq!(messages, vec!["one 1".to_owned()]);
        // Outside a capture nothing is collected.
        log::debug!(target: "explain::test", "after");
        let ((), again) = capture("explain::test", || ()).unwrap();
        assert!(again.is_empty());
    }

    #[test]
    fn a_capture_that_panics_stops_collecting_on_its_thread() {
        let unwound = std::panic::catch_unwind(|| {
            capture("explain::panics", || panic!("in the walk"));
        });
        assert!(unwound.is_err());
        let active = CAPTURE.with(|cell| cell.borrow().is_some());
        assert!(!active);
    }

    #[test]
    fn trace_records_stay_disabled_outside_and_inside_a_capture() {
        let ((), _) = capture("explain::levels", || {
            assert!(log::log_enabled!(target: "explain::levels", log::Level::Debug));
            assert!(!log::log_enabled!(target: "elsewhere", log::Level::Trace));
        })
        .unwrap();
        assert!(!log::log_enabled!(target: "elsewhere", log::Level::Trace));
    }
}

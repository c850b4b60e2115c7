//! Work split over threads for the CPU-bound steps that run after rg has
//! exited (both cores are free then): the first part runs on the calling
//! thread and every other part on a scoped thread of its own. A part whose
//! thread could not start, or panicked, runs again on the calling thread,
//! so the result never depends on threads being available; each such rerun
//! is logged as a warning, since it hides a fault (a panic, or a machine
//! out of threads) that should not pass unseen.

/// `work` of every part, in the parts' order.
pub(crate) fn map_parts<P: Sync, R: Send>(parts: &[P], work: impl Fn(&P) -> R + Sync) -> Vec<R> {
    let work = &work;
    std::thread::scope(|scope| {
        let workers: Vec<_> = parts
            .iter()
            .skip(1)
            .map(|part| {
                std::thread::Builder::new()
                    .spawn_scoped(scope, move || work(part))
                    .ok()
            })
            .collect();
        let mut results = Vec::with_capacity(parts.len());
        results.extend(parts.first().map(work));
        for (index, (worker, part)) in workers.into_iter().zip(parts.iter().skip(1)).enumerate() {
            let joined = match worker {
                None => {
                    tracing::warn!(
                        part = index + 1,
                        "a worker thread could not start; its part runs on the calling thread"
                    );
                    None
                }
                Some(worker) => match worker.join() {
                    Ok(result) => Some(result),
                    Err(_) => {
                        tracing::warn!(
                            part = index + 1,
                            "a worker thread panicked; its part runs again on the calling thread"
                        );
                        None
                    }
                },
            };
            results.push(joined.unwrap_or_else(|| work(part)));
        }
        results
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_the_order_of_the_parts() {
        let parts: Vec<u64> = (0..9).collect();
        assert_eq!(
            map_parts(&parts, |p| p * 10),
            (0..9).map(|p| p * 10).collect::<Vec<_>>()
        );
        assert_eq!(map_parts(&[] as &[u64], |p| p * 10), Vec::<u64>::new());
    }

    /// A log sink in memory.
    #[derive(Clone, Default)]
    struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Captured {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// One test for both effects, so no other test races this one for the
    /// warning's callsite while its subscriber is set.
    #[test]
    fn a_part_whose_thread_panics_runs_again_on_the_calling_thread_with_a_warning() {
        // The fault is injected: the work panics on the scoped threads and
        // succeeds on the test's own thread. The log is captured in memory.
        let captured = Captured::default();
        let writer = captured.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let calling = std::thread::current().id();
        let results = tracing::subscriber::with_default(subscriber, || {
            map_parts(&[1u64, 2, 3], |&p| {
                if p == 2 && std::thread::current().id() != calling {
                    panic!("injected fault in part {p}");
                }
                p * 10
            })
        });
        assert_eq!(results, vec![10, 20, 30]);
        let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        assert!(
            log.contains("WARN") && log.contains("part=1") && log.contains("panicked"),
            "{log}"
        );
    }
}

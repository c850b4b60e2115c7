//! Work split over threads for the CPU-bound steps that run after rg has
//! exited (both cores are free then): the first part runs on the calling
//! thread and every other part on a scoped thread of its own. A part whose
//! thread could not start, or panicked, runs again on the calling thread,
//! so the result never depends on threads being available.

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
        for (worker, part) in workers.into_iter().zip(parts.iter().skip(1)) {
            let joined = worker.and_then(|worker| worker.join().ok());
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

    #[test]
    fn a_part_whose_thread_panics_runs_again_on_the_calling_thread() {
        // The fault is injected: the work panics on the scoped threads and
        // succeeds on the test's own thread.
        let calling = std::thread::current().id();
        let parts = [1u64, 2, 3];
        let results = map_parts(&parts, |&p| {
            if p == 2 && std::thread::current().id() != calling {
                panic!("injected fault in part {p}");
            }
            p * 10
        });
        assert_eq!(results, vec![10, 20, 30]);
    }
}

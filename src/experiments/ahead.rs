//! Host work done ahead of the GPU's: a suite starts building what its measurement will
//! consume (random chains of up to hundreds of MiB, a tenth of a second each) before it has
//! its turn on the GPU, and goes on building the next while the GPU measures the last. Under
//! `gpubench all` the suite's process starts while the suite before it measures, so its first
//! chains are ready when its turn comes.

use std::sync::mpsc::{Receiver, sync_channel};

/// Results of jobs run in order on a thread of their own.
pub struct Ahead<T> {
    results: Receiver<T>,
}

impl<T: Send + 'static> Ahead<T> {
    /// Runs `jobs` in order on a new thread; at most `waiting` finished results wait to be
    /// taken (each may be large), beside the one being built.
    pub fn start<F>(jobs: Vec<F>, waiting: usize) -> Ahead<T>
    where
        F: FnOnce() -> T + Send + 'static,
    {
        let (send, results) = sync_channel(waiting);
        std::thread::spawn(move || {
            for job in jobs {
                // A consumer that has gone (its measurement failed) wants no more.
                if send.send(job()).is_err() {
                    break;
                }
            }
        });
        Ahead { results }
    }
}

impl<T> Ahead<T> {
    /// The next job's result, in the order given; an error once every job's result has been
    /// taken, or if a job panicked.
    pub fn next(&self) -> anyhow::Result<T> {
        self.results.recv().map_err(|_| {
            anyhow::anyhow!("the host thread building ahead ended without the next result")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[test]
    fn results_come_in_order_and_no_more_than_asked_are_built_ahead() {
        let started = Arc::new(AtomicUsize::new(0));
        let jobs: Vec<_> = (0..5)
            .map(|k| {
                let started = started.clone();
                move || {
                    started.fetch_add(1, Ordering::SeqCst);
                    k * 10
                }
            })
            .collect();
        let ahead = Ahead::start(jobs, 1);
        // One result waiting, the next built and blocked on handing it over.
        let waited = std::time::Instant::now();
        while started.load(Ordering::SeqCst) < 2 {
            assert!(
                waited.elapsed() < Duration::from_secs(10),
                "nothing was built"
            );
            std::thread::sleep(Duration::from_millis(1));
        }
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(started.load(Ordering::SeqCst), 2, "a third was built ahead");
        let taken: Vec<usize> = (0..5).map(|_| ahead.next().unwrap()).collect();
        assert_eq!(taken, [0, 10, 20, 30, 40]);
        assert!(ahead.next().is_err(), "no sixth result");
    }

    #[test]
    fn a_job_that_panics_is_an_error_not_a_hang() {
        let jobs: Vec<Box<dyn FnOnce() -> u32 + Send>> = vec![
            Box::new(|| 1),
            Box::new(|| panic!("no memory")),
            Box::new(|| 3),
        ];
        let ahead = Ahead::start(jobs, 1);
        assert_eq!(ahead.next().unwrap(), 1);
        assert!(ahead.next().is_err());
    }
}

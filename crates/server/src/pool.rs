//! The bounded work pool: CPU-heavy jobs (decode, convert, print) run on tokio's blocking
//! threads, never on the async executor, so a slow conversion cannot stall health checks
//! or other requests.
//!
//! Two semaphores bound it: `admitted` counts jobs running or waiting (workers + queue
//! depth; a job that finds none free is refused at once, the caller answers 503) and
//! `running` counts jobs on a thread (the pool size). A job that exceeds its time limit is
//! abandoned by the request (504), but keeps its worker permit until its thread returns:
//! at most `workers` abandoned jobs exist at once, and their results are dropped as they
//! finish, so timeouts cannot pile up memory or threads.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::Semaphore;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PoolError {
    #[error("the conversion queue is full")]
    QueueFull,
    #[error("the job exceeded its time limit of {0:?}")]
    TimedOut(Duration),
    #[error("the job panicked")]
    Panicked,
}

pub struct Pool {
    admitted: Arc<Semaphore>,
    running: Arc<Semaphore>,
    time_limit: Duration,
    in_flight: Arc<AtomicU64>,
}

impl Pool {
    pub fn new(workers: usize, queue_depth: usize, time_limit: Duration) -> Pool {
        let workers = workers.max(1);
        Pool {
            admitted: Arc::new(Semaphore::new(workers + queue_depth)),
            running: Arc::new(Semaphore::new(workers)),
            time_limit,
            in_flight: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Jobs running on a worker thread now (including abandoned ones still finishing).
    pub fn in_flight(&self) -> u64 {
        self.in_flight.load(Ordering::Relaxed)
    }

    /// Runs `job` on a worker thread: refused when the queue is full, abandoned when it
    /// runs longer than the time limit.
    pub async fn run<T, F>(&self, job: F) -> Result<T, PoolError>
    where
        F: FnOnce() -> T + Send + 'static,
        T: Send + 'static,
    {
        let admitted = self
            .admitted
            .clone()
            .try_acquire_owned()
            .map_err(|_| PoolError::QueueFull)?;
        let running = self
            .running
            .clone()
            .acquire_owned()
            .await
            .expect("the pool's semaphore is never closed");
        let in_flight = self.in_flight.clone();
        in_flight.fetch_add(1, Ordering::Relaxed);
        let handle = tokio::task::spawn_blocking(move || {
            // Both permits live as long as the thread works, even when the request gave up.
            let _permits = (admitted, running);
            let _count = InFlight(in_flight);
            job()
        });
        match tokio::time::timeout(self.time_limit, handle).await {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(_)) => Err(PoolError::Panicked),
            // Dropping the JoinHandle detaches the thread; its result is dropped when done.
            Err(_) => Err(PoolError::TimedOut(self.time_limit)),
        }
    }
}

struct InFlight(Arc<AtomicU64>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn refuses_beyond_the_queue_and_times_out_slow_jobs() {
        let pool = Arc::new(Pool::new(1, 0, Duration::from_millis(50)));
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let p = pool.clone();
        // Occupies the only worker until told to finish.
        let slow = tokio::spawn(async move { p.run(move || rx.recv().is_ok()).await });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(pool.run(|| 1).await, Err(PoolError::QueueFull));
        assert_eq!(
            slow.await.unwrap(),
            Err(PoolError::TimedOut(Duration::from_millis(50)))
        );
        // The abandoned job still holds its worker until it returns.
        assert_eq!(pool.in_flight(), 1);
        assert_eq!(pool.run(|| 1).await, Err(PoolError::QueueFull));
        tx.send(()).unwrap();
        for _ in 0..100 {
            if pool.in_flight() == 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        assert_eq!(pool.in_flight(), 0);
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }
}

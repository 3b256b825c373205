//! Delayed work (`CallOnMainThread` with a delay, `PostWork` with a delay): one thread for
//! all timers of a run, started on first use.

use std::collections::BinaryHeap;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::lock;

type Job = Box<dyn FnOnce() + Send>;

struct Timer {
    at: Instant,
    seq: u64,
    job: Job,
}

impl PartialEq for Timer {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Timer {}
impl PartialOrd for Timer {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Timer {
    // Earliest first (BinaryHeap is a max-heap); equal times in the order they were set.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

#[derive(Default)]
struct Queue {
    heap: BinaryHeap<Timer>,
    seq: u64,
    started: bool,
    stopped: bool,
}

/// The timers of one run.
#[derive(Default, Clone)]
pub struct Timers {
    inner: Arc<(Mutex<Queue>, Condvar)>,
}

impl Timers {
    /// Runs `job` on the timer thread once `delay` has passed (never, once stopped).
    pub fn after(&self, delay: Duration, job: impl FnOnce() + Send + 'static) {
        let (m, cv) = &*self.inner;
        let mut q = lock(m);
        if q.stopped {
            return;
        }
        let seq = q.seq;
        q.seq += 1;
        q.heap.push(Timer {
            at: Instant::now() + delay,
            seq,
            job: Box::new(job),
        });
        if !q.started {
            q.started = true;
            let inner = self.inner.clone();
            let spawned = std::thread::Builder::new()
                .name("pepper timers".into())
                .spawn(move || run(&inner));
            if spawned.is_err() {
                q.started = false;
            }
        }
        cv.notify_all();
    }

    /// Drops every timer and ends the thread.
    pub fn stop(&self) {
        let (m, cv) = &*self.inner;
        let mut q = lock(m);
        q.stopped = true;
        q.heap.clear();
        cv.notify_all();
    }
}

fn run(inner: &(Mutex<Queue>, Condvar)) {
    let (m, cv) = inner;
    let mut q = lock(m);
    loop {
        if q.stopped {
            return;
        }
        let now = Instant::now();
        match q.heap.peek().map(|t| t.at) {
            Some(at) if at <= now => {
                if let Some(t) = q.heap.pop() {
                    drop(q);
                    (t.job)();
                    q = lock(m);
                }
            }
            Some(at) => {
                q = cv
                    .wait_timeout(q, at - now)
                    .unwrap_or_else(|p| p.into_inner())
                    .0
            }
            None => q = cv.wait(q).unwrap_or_else(|p| p.into_inner()),
        }
    }
}

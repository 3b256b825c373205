//! Running host work on the thread that owns a store.
//!
//! A store (and so a module instance) belongs to one OS thread. Another thread that wants
//! something done there (call an export, a function pointer, touch that instance's globals)
//! posts a [`Task`] to the owner's [`Mailbox`]; the owner runs its tasks while it sits in
//! [`run_loop`], typically inside a host import that does not return until the program's
//! event loop ends (Pepper's `ppapi_start`).

use std::collections::VecDeque;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use wasmtime::{AsContextMut, StoreContextMut};

use crate::host::Ctx;

/// Work for a thread's store. An error ends [`run_loop`] with it (and so, unless the host
/// catches it, the thread: a trap in a callback is a trap of the program).
pub type Task = Box<dyn for<'a> FnOnce(StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send>;

/// Why a task could not be posted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PostError {
    /// The thread has ended, or the run is ending.
    #[error("thread {0} has ended")]
    Closed(i32),
    /// No live thread has this id.
    #[error("no thread {0}")]
    NoThread(i32),
}

/// The error [`run_loop`] ends with when the run stops under it; the runner expects it.
#[derive(Debug, thiserror::Error)]
#[error("the program is ending")]
pub struct Stopped;

#[derive(Default)]
struct Slots {
    tasks: VecDeque<Task>,
    quit: bool,
    closed: bool,
}

/// A thread's queue of tasks (see the module documentation).
pub struct Mailbox {
    tid: i32,
    slots: Mutex<Slots>,
    ready: Condvar,
    /// Bumped by every post and close: what a thread about to sleep spins on.
    posts: AtomicUsize,
}

/// How long a thread whose mailbox is empty spins before it sleeps. A message answered at
/// once (a Pepper app's reply to the host) then finds it awake: on an idle machine a
/// thread woken from sleep took 15-20 µs, most of a host → app → host round trip.
const SPIN: Duration = Duration::from_micros(50);

impl Mailbox {
    pub(crate) fn new(tid: i32) -> Mailbox {
        Mailbox {
            tid,
            slots: Mutex::default(),
            ready: Condvar::new(),
            posts: AtomicUsize::new(0),
        }
    }

    /// The thread this mailbox belongs to.
    pub fn tid(&self) -> i32 {
        self.tid
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Slots> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Queues `task` to run on the owning thread, after the tasks already queued. Tasks
    /// wait until the thread is in [`run_loop`]; those still queued when it ends are dropped.
    pub fn post<F>(&self, task: F) -> Result<(), PostError>
    where
        F: for<'a> FnOnce(StoreContextMut<'a, Ctx>) -> wasmtime::Result<()> + Send + 'static,
    {
        let mut slots = self.lock();
        if slots.closed {
            return Err(PostError::Closed(self.tid));
        }
        slots.tasks.push_back(Box::new(task));
        self.posts.fetch_add(1, Ordering::Release);
        self.ready.notify_all();
        Ok(())
    }

    /// Makes the thread's current (or next) [`run_loop`] return `Ok` once the tasks queued
    /// before this call have run.
    pub fn quit(&self) -> Result<(), PostError> {
        self.post(|mut cx| {
            cx.data_mut().mailbox().lock().quit = true;
            Ok(())
        })
    }

    /// No more tasks: the thread ended or the run is ending; a waiting loop returns.
    pub(crate) fn close(&self) {
        let mut slots = self.lock();
        slots.closed = true;
        slots.tasks.clear();
        self.posts.fetch_add(1, Ordering::Release);
        self.ready.notify_all();
    }

    /// The next task, `Ok(None)` to quit, `Err` when closed.
    fn next(&self) -> Result<Option<Task>, Stopped> {
        let mut slots = self.lock();
        let mut spun = false;
        loop {
            if slots.closed {
                return Err(Stopped);
            }
            if std::mem::take(&mut slots.quit) {
                return Ok(None);
            }
            if let Some(t) = slots.tasks.pop_front() {
                return Ok(Some(t));
            }
            if !spun {
                // Nothing yet: spin a little (outside the lock) before sleeping.
                spun = true;
                let seen = self.posts.load(Ordering::Acquire);
                drop(slots);
                let start = Instant::now();
                while self.posts.load(Ordering::Acquire) == seen && start.elapsed() < SPIN {
                    std::hint::spin_loop();
                }
                slots = self.lock();
                continue;
            }
            slots = self.ready.wait(slots).unwrap_or_else(|p| p.into_inner());
        }
    }
}

/// Runs the tasks posted to this store's thread, in order, until [`Mailbox::quit`]
/// (`Ok`), a task fails (its error), or the run ends ([`Stopped`]). Call it from a host
/// import (with its `Caller`) or a host thread's entry (with its store context); it may be
/// entered again later, and tasks may themselves call into the module, which may call
/// imports that enter a nested loop.
pub fn run_loop(mut cx: impl AsContextMut<Data = Ctx>) -> wasmtime::Result<()> {
    let mailbox = cx.as_context().data().mailbox().clone();
    loop {
        match mailbox.next()? {
            Some(task) => task(cx.as_context_mut())?,
            None => return Ok(()),
        }
    }
}

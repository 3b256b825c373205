//! Working buffers lent to rayon jobs.
//!
//! The parallel passes (decoding, verifying, lowering, validating the bodies) split their
//! bodies into jobs of at most a few dozen (`with_max_len`), so that a pass does not end
//! with one thread busy on a long run of bodies while the other waits: rayon only splits a
//! run further when a thread steals it, and a thread that started a long run keeps it.
//! `map_init` builds a job's buffers anew for every job, and buffers grown for one job
//! would be dropped at its end; a [`Pool`] lends a job the buffers an earlier job grew
//! (at most one set per thread is ever in use), so small jobs cost nothing to start.

use std::sync::Mutex;

/// Buffers of type `T` for the jobs of one parallel pass.
pub struct Pool<T>(Mutex<Vec<T>>);

impl<T: Default> Pool<T> {
    pub fn new() -> Self {
        Pool(Mutex::new(Vec::new()))
    }

    /// A set of buffers, grown by an earlier job if one has returned its set.
    pub fn lend(&self) -> Lent<'_, T> {
        let item = self
            .0
            .lock()
            .map(|mut v| v.pop())
            .unwrap_or_default()
            .unwrap_or_default();
        Lent {
            pool: self,
            item: Some(item),
        }
    }
}

impl<T: Default> Default for Pool<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// Buffers lent by a [`Pool`], returned to it when dropped (at the end of the job).
pub struct Lent<'p, T> {
    pool: &'p Pool<T>,
    item: Option<T>,
}

impl<T> std::ops::Deref for Lent<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        self.item.as_ref().expect("present until dropped")
    }
}

impl<T> std::ops::DerefMut for Lent<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        self.item.as_mut().expect("present until dropped")
    }
}

impl<T> Drop for Lent<'_, T> {
    fn drop(&mut self) {
        if let (Some(item), Ok(mut v)) = (self.item.take(), self.pool.0.lock()) {
            v.push(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_returned_set_is_lent_again_with_what_it_grew() {
        let pool: Pool<Vec<u8>> = Pool::new();
        {
            let mut a = pool.lend();
            a.reserve(1000);
            // A second job at the same time gets a set of its own.
            let b = pool.lend();
            assert_eq!(b.capacity(), 0);
        }
        // Both came back; the grown one is among them.
        let c = pool.lend();
        let d = pool.lend();
        assert!(c.capacity() >= 1000 || d.capacity() >= 1000);
        drop((c, d));
        assert_eq!(pool.0.lock().unwrap().len(), 2);
    }
}

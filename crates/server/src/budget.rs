//! The global budget of request-body bytes held in memory (`--max-body-memory`).
//!
//! Every `/v1` upload is charged to one budget before its bytes are read: the declared
//! `Content-Length` at once, a chunked body step by step as its buffer grows. A request
//! the budget cannot hold is refused (503) before its body is read, so body memory is
//! bounded by the budget, not by connections × `--max-body-bytes`. The charge
//! ([`Reservation`]) travels with the bytes (through the conversion queue and the job)
//! and is given back when it is dropped.
//!
//! A plain atomic counter rather than a semaphore: nobody waits for budget (a refusal is
//! immediate), and byte counts need not fit a semaphore's `u32` permits.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("{wanted} more bytes would exceed the body-memory budget of {limit} bytes ({used} in use)")]
pub struct BudgetExhausted {
    pub wanted: usize,
    pub used: usize,
    pub limit: usize,
}

#[derive(Debug)]
pub struct BodyBudget {
    limit: usize,
    used: AtomicUsize,
}

impl BodyBudget {
    pub fn new(limit: usize) -> Arc<BodyBudget> {
        Arc::new(BodyBudget {
            limit,
            used: AtomicUsize::new(0),
        })
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Bytes charged now.
    pub fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }

    /// Charges `bytes`, or refuses at once when they do not fit.
    pub fn try_reserve(self: &Arc<Self>, bytes: usize) -> Result<Reservation, BudgetExhausted> {
        self.charge(bytes)?;
        Ok(Reservation {
            budget: self.clone(),
            bytes,
        })
    }

    fn charge(&self, bytes: usize) -> Result<(), BudgetExhausted> {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .map(|_| ())
            .map_err(|used| BudgetExhausted {
                wanted: bytes,
                used,
                limit: self.limit,
            })
    }
}

/// Bytes charged to a [`BodyBudget`]; given back on drop.
#[derive(Debug)]
pub struct Reservation {
    budget: Arc<BodyBudget>,
    bytes: usize,
}

impl Reservation {
    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// Makes the charge at least `bytes` (never smaller), or refuses without changing it.
    pub fn grow_to(&mut self, bytes: usize) -> Result<(), BudgetExhausted> {
        if bytes > self.bytes {
            self.budget.charge(bytes - self.bytes)?;
            self.bytes = bytes;
        }
        Ok(())
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.budget.used.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_refuses_grows_and_gives_back() {
        let b = BodyBudget::new(100);
        let mut a = b.try_reserve(60).unwrap();
        assert_eq!(
            b.try_reserve(41).unwrap_err(),
            BudgetExhausted {
                wanted: 41,
                used: 60,
                limit: 100
            }
        );
        let c = b.try_reserve(40).unwrap();
        assert_eq!(b.used(), 100);
        // Growing past the limit changes nothing; shrinking is not a thing.
        assert!(a.grow_to(61).is_err());
        a.grow_to(10).unwrap();
        assert_eq!((a.bytes(), b.used()), (60, 100));
        drop(c);
        a.grow_to(90).unwrap();
        assert_eq!(b.used(), 90);
        drop(a);
        assert_eq!(b.used(), 0);
        // Nothing overflows, whatever is asked.
        assert!(b.try_reserve(usize::MAX).is_err());
        assert_eq!(b.used(), 0);
    }
}

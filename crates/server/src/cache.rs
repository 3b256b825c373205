//! The content-addressed result cache: key = SHA-256 of the input + the options that
//! change the output; bounded in bytes; the least recently used entries go first.
//! Hits and misses are counted by the caller (`pexe2wasm_cache_hits_total`, `_misses_total`).

use std::sync::Arc;

/// What identifies one conversion result.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CacheKey {
    pub sha256: [u8; 32],
    /// The options, spelled canonically (e.g. `format=wasm;threads=auto`).
    pub options: String,
}

/// A stored conversion result.
#[derive(Debug)]
pub struct Cached {
    pub body: bytes::Bytes,
    pub content_type: &'static str,
    pub features: Vec<&'static str>,
    pub imports: Vec<(String, String)>,
    /// What the module needs to run (`pexe2wasm::needs`).
    pub needs: pexe2wasm::needs::Needs,
    /// How long the conversion took, in microseconds (reported on hits too).
    pub convert_micros: u64,
}

impl Cached {
    /// Bytes an entry is charged: the body plus a rough size of its metadata.
    fn cost(&self) -> usize {
        self.body.len()
            + 256
            + self
                .imports
                .iter()
                .map(|(m, n)| m.len() + n.len() + 48)
                .sum::<usize>()
    }
}

/// The cache: `moka`'s concurrent cache with a byte weigher and least-recently-used
/// eviction (its default TinyLFU admission could refuse a fresh result that a client is
/// about to ask for again).
pub struct Cache {
    capacity: u64,
    inner: Option<moka::sync::Cache<CacheKey, Arc<Cached>>>,
}

impl Cache {
    /// A cache holding at most `capacity` bytes; 0 disables it.
    pub fn new(capacity: usize) -> Cache {
        let capacity = capacity as u64;
        let inner = (capacity > 0).then(|| {
            moka::sync::Cache::builder()
                .max_capacity(capacity)
                .weigher(|_k: &CacheKey, v: &Arc<Cached>| {
                    u32::try_from(v.cost()).unwrap_or(u32::MAX)
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .build()
        });
        Cache { capacity, inner }
    }

    pub fn get(&self, key: &CacheKey) -> Option<Arc<Cached>> {
        self.inner.as_ref()?.get(key)
    }

    /// Stores `value`, evicting least recently used entries to make room. A value larger
    /// than the whole cache is not stored.
    pub fn insert(&self, key: CacheKey, value: Arc<Cached>) {
        let Some(inner) = &self.inner else { return };
        if value.cost() as u64 > self.capacity {
            return;
        }
        inner.insert(key, value);
        // moka applies evictions in batches; settle them now so the bound holds at every
        // moment (inserts follow a conversion, so this is cheap beside it).
        inner.run_pending_tasks();
    }

    /// Bytes charged by the stored entries.
    pub fn used_bytes(&self) -> u64 {
        self.inner.as_ref().map_or(0, |c| {
            c.run_pending_tasks();
            c.weighted_size()
        })
    }

    pub fn len(&self) -> usize {
        self.inner.as_ref().map_or(0, |c| {
            c.run_pending_tasks();
            c.entry_count() as usize
        })
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(n: u8) -> CacheKey {
        CacheKey {
            sha256: [n; 32],
            options: "format=wasm".into(),
        }
    }

    fn value(len: usize) -> Arc<Cached> {
        Arc::new(Cached {
            body: bytes::Bytes::from(vec![0u8; len]),
            content_type: "application/wasm",
            features: vec![],
            imports: vec![],
            needs: pexe2wasm::needs::needs::<&str, &str>(&[], &[], true),
            convert_micros: 1,
        })
    }

    #[test]
    fn evicts_the_least_recently_used_within_its_byte_bound() {
        // Each entry costs 1000 + 256 bytes; three fit, four do not.
        let cache = Cache::new(4000);
        for n in 1..=3 {
            cache.insert(key(n), value(1000));
        }
        assert_eq!(cache.len(), 3);
        assert!(cache.get(&key(1)).is_some()); // 1 is now the most recent
        cache.insert(key(4), value(1000));
        assert!(cache.get(&key(2)).is_none(), "2 was least recently used");
        assert!(cache.get(&key(1)).is_some());
        assert!(cache.get(&key(3)).is_some());
        assert!(cache.get(&key(4)).is_some());
        assert!(cache.used_bytes() <= 4000);
        // Options are part of the key.
        let mut wat = key(1);
        wat.options = "format=wat".into();
        assert!(cache.get(&wat).is_none());
        // Too big for the whole cache: not stored, nothing evicted.
        cache.insert(key(9), value(5000));
        assert!(cache.get(&key(9)).is_none());
        assert_eq!(cache.len(), 3);
        // Disabled cache stores nothing.
        let off = Cache::new(0);
        off.insert(key(1), value(1));
        assert!(off.is_empty());
    }
}

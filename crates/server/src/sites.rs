//! The sites `POST /v1/site` built, kept so that the upload page can run them
//! (`GET /sites/{sha}/{path}`): by the package's SHA-256, bounded in bytes, the least
//! recently used first out. A site that was evicted is built again by its next upload.

use std::collections::HashMap;
use std::sync::Arc;

use bytes::Bytes;

/// One site's files by their paths.
pub struct SiteFiles {
    pub files: HashMap<String, Bytes>,
    bytes: usize,
}

impl SiteFiles {
    pub fn new(files: HashMap<String, Bytes>) -> SiteFiles {
        let bytes = files.iter().map(|(p, b)| p.len() + b.len() + 64).sum();
        SiteFiles { files, bytes }
    }
}

/// The store.
pub struct SiteStore {
    inner: moka::sync::Cache<String, Arc<SiteFiles>>,
}

impl SiteStore {
    /// A store of at most `capacity` bytes.
    pub fn new(capacity: usize) -> SiteStore {
        SiteStore {
            inner: moka::sync::Cache::builder()
                .max_capacity(capacity as u64)
                .weigher(|_k: &String, v: &Arc<SiteFiles>| {
                    u32::try_from(v.bytes).unwrap_or(u32::MAX)
                })
                .eviction_policy(moka::policy::EvictionPolicy::lru())
                .build(),
        }
    }

    pub fn insert(&self, sha: String, site: SiteFiles) {
        self.inner.insert(sha, Arc::new(site));
    }

    pub fn get(&self, sha: &str) -> Option<Arc<SiteFiles>> {
        self.inner.get(sha)
    }
}

/// The Content-Type of a site file, by its extension.
pub fn content_type(path: &str) -> &'static str {
    let ext = path
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase())
        .unwrap_or_default();
    match ext.as_str() {
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "nmf" => "application/json",
        "wasm" => "application/wasm",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "svg" => "image/svg+xml",
        "ico" => "image/x-icon",
        "webp" => "image/webp",
        "txt" | "md" => "text/plain; charset=utf-8",
        "woff" => "font/woff",
        "woff2" => "font/woff2",
        "ttf" => "font/ttf",
        "mp3" => "audio/mpeg",
        "ogg" => "audio/ogg",
        "wav" => "audio/wav",
        "mp4" => "video/mp4",
        _ => "application/octet-stream",
    }
}

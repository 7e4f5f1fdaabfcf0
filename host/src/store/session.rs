//! One request's view of the stores.
//!
//! On SQLite, a request's reads of a label go through one read snapshot
//! (opened by its first read): they see one state of the store (a key record
//! and its account's patterns from the same moment) and take the file's read
//! lock once. A write to the label, and the end of the request, end the
//! snapshot, so what follows sees the store as it is now, this request's own
//! writes included; a snapshot kept open would serve the next request from
//! an old state (a revoked key still accepted) and hold back the WAL
//! checkpoint. Other backends read directly.

use std::sync::Arc;

use noise_filter_core::StoreLabel;

use super::sqlite::Snapshot;
use super::{Backend, KvResult, Stores};

/// The stores as one request sees them.
#[derive(Debug)]
pub struct Session {
    stores: Arc<Stores>,
    /// Per label (`default`, `rate`): this request's read snapshot, when the
    /// label is on SQLite and has been read and not written since.
    snapshots: [Option<Snapshot>; 2],
}

fn slot(label: StoreLabel) -> usize {
    match label {
        StoreLabel::Default => 0,
        StoreLabel::Rate => 1,
    }
}

impl Session {
    /// A session with nothing read yet.
    pub fn new(stores: Arc<Stores>) -> Session {
        Session {
            stores,
            snapshots: [None, None],
        }
    }

    /// Reads `key` of `label`.
    pub async fn get(&mut self, label: StoreLabel, key: &str) -> KvResult<Option<Vec<u8>>> {
        let backend = self.stores.backend(label);
        let Backend::Sqlite(sqlite) = backend else {
            return backend.get(label, key).await;
        };
        let snapshot = match &mut self.snapshots[slot(label)] {
            Some(snapshot) => snapshot,
            empty @ None => empty.insert(sqlite.snapshot()?),
        };
        snapshot.get(label, key)
    }

    /// Writes a value.
    pub async fn set(&mut self, label: StoreLabel, key: &str, value: &[u8]) -> KvResult<()> {
        self.writer(label).set(label, key, value).await
    }

    /// Deletes a key (absent: fine).
    pub async fn delete(&mut self, label: StoreLabel, key: &str) -> KvResult<()> {
        self.writer(label).delete(label, key).await
    }

    /// Atomically adds `delta` to a counter; returns the new value.
    pub async fn increment(&mut self, label: StoreLabel, key: &str, delta: i64) -> KvResult<i64> {
        self.writer(label).increment(label, key, delta).await
    }

    /// Reads `key` of `label` as stored now, past this request's read
    /// snapshot (which it ends): what a compare-and-swap compares with.
    pub async fn current(&mut self, label: StoreLabel, key: &str) -> KvResult<Option<Vec<u8>>> {
        self.writer(label).get(label, key).await
    }

    /// Writes `new` if `key` holds `expected` (`None`: absent); says whether
    /// it did.
    pub async fn compare_and_swap(
        &mut self,
        label: StoreLabel,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        self.writer(label)
            .compare_and_swap(label, key, expected, new)
            .await
    }

    /// The keys of `label` starting with `prefix`, as stored now.
    pub async fn keys(&mut self, label: StoreLabel, prefix: &str) -> KvResult<Vec<String>> {
        // `&mut`: a session may be sent between threads, not shared (a
        // snapshot's connection is not `Sync`).
        self.stores.backend(label).keys(label, prefix).await
    }

    /// The request is over: ends its read snapshots.
    pub fn end(&mut self) {
        for label in StoreLabel::ALL {
            self.end_snapshot(label);
        }
    }

    fn end_snapshot(&mut self, label: StoreLabel) {
        if let Some(snapshot) = self.snapshots[slot(label)].take()
            && let Backend::Sqlite(sqlite) = self.stores.backend(label)
        {
            sqlite.end_snapshot(snapshot);
        }
    }

    /// The backend of `label`, for a write: the label's snapshot is ended
    /// first.
    fn writer(&mut self, label: StoreLabel) -> &Backend {
        self.end_snapshot(label);
        self.stores.backend(label)
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.end();
    }
}

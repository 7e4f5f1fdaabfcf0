//! A deterministic in-memory store, for tests, benchmarks and the byte-for-byte
//! comparisons between shells. Not used by any server: they have real stores.

use std::collections::BTreeMap;

use crate::exchange::{StoreError, SyncStore};
use crate::store::StoreLabel;

/// Both stores as ordered maps. Counters are kept as Spin's SQLite store keeps
/// them: 8 bytes, little-endian i64.
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    /// `(label, key) → value`.
    pub entries: BTreeMap<(StoreLabel, String), Vec<u8>>,
    /// When set, every call fails (to test store failures).
    pub failing: bool,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// Writes a value.
    pub fn set(&mut self, store: StoreLabel, key: &str, value: Vec<u8>) {
        self.entries.insert((store, key.to_owned()), value);
    }

    /// The keys of `store`, in order.
    pub fn keys(&self, store: StoreLabel) -> Vec<&str> {
        self.entries
            .keys()
            .filter(|(s, _)| *s == store)
            .map(|(_, k)| k.as_str())
            .collect()
    }
}

impl SyncStore for MemoryStore {
    fn get(&mut self, store: StoreLabel, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        Ok(self.entries.get(&(store, key.to_owned())).cloned())
    }

    fn increment(&mut self, store: StoreLabel, key: &str, delta: i64) -> Result<i64, StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        let slot = self
            .entries
            .entry((store, key.to_owned()))
            .or_insert_with(|| vec![0; 8]);
        let old = <[u8; 8]>::try_from(slot.as_slice()).map_or(0, i64::from_le_bytes);
        let new = old + delta;
        *slot = new.to_le_bytes().to_vec();
        Ok(new)
    }

    fn delete(&mut self, store: StoreLabel, key: &str) -> Result<(), StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        self.entries.remove(&(store, key.to_owned()));
        Ok(())
    }
}

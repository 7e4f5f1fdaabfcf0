//! A label kept in this process (lost on exit): the default for rate
//! counters, which only need to outlive a minute.

use std::collections::BTreeMap;
use std::sync::Mutex;

use noise_filter_core::{Counter, StoreLabel};

use super::error::{KvError, KvResult};

/// `(label, key) → value` in this process.
#[derive(Debug, Default)]
pub struct MemoryMap(Mutex<BTreeMap<(StoreLabel, String), Vec<u8>>>);

impl MemoryMap {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<(StoreLabel, String), Vec<u8>>> {
        // A panic while holding the lock cannot leave a half-written entry.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn get(&self, label: StoreLabel, key: &str) -> Option<Vec<u8>> {
        self.map().get(&(label, key.to_owned())).cloned()
    }

    pub fn set(&self, label: StoreLabel, key: &str, value: &[u8]) {
        self.map().insert((label, key.to_owned()), value.to_vec());
    }

    pub fn delete(&self, label: StoreLabel, key: &str) {
        self.map().remove(&(label, key.to_owned()));
    }

    pub fn keys(&self, label: StoreLabel, prefix: &str) -> Vec<String> {
        self.map()
            .keys()
            .filter(|(l, k)| *l == label && k.starts_with(prefix))
            .map(|(_, k)| k.clone())
            .collect()
    }

    pub fn increment(&self, label: StoreLabel, key: &str, delta: i64) -> KvResult<i64> {
        let mut map = self.map();
        let slot = (label, key.to_owned());
        let (new, bytes) = Counter::add(map.get(&slot).map(Vec::as_slice), delta)
            .map_err(|e| KvError(format!("counter {key}: {e}")))?;
        map.insert(slot, bytes.to_vec());
        Ok(new)
    }

    pub fn compare_and_swap(
        &self,
        label: StoreLabel,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> bool {
        let mut map = self.map();
        let slot = (label, key.to_owned());
        if map.get(&slot).map(Vec::as_slice) != expected {
            return false;
        }
        map.insert(slot, new.to_vec());
        true
    }
}

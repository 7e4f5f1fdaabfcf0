//! Store labels as in-memory maps: the native stand-in for Spin's key-value
//! store in the glue's tests. Compiled for the tests only (`lib.rs`), so the
//! component carries no test double.

use std::collections::HashMap;

use noise_filter_core::{Counter, StoreError};

use crate::glue::{Bucket, Buckets};

/// `label → key → value`, shared by every bucket opened from a [`MapBuckets`].
pub(crate) type Labels = std::rc::Rc<std::cell::RefCell<HashMap<String, HashMap<String, Vec<u8>>>>>;

/// Store labels as in-memory maps, counters as Spin keeps them ([`Counter`]):
/// the native stand-in for Spin's store in tests.
#[derive(Debug, Default, Clone)]
pub(crate) struct MapBuckets {
    /// The values, shared by every bucket opened from this.
    pub(crate) labels: Labels,
    /// Labels that may be opened (as `key_value_stores` in `spin.toml`).
    pub(crate) allowed: Vec<String>,
    /// When set, no label can be opened.
    pub(crate) failing: bool,
    /// How many labels were opened, to check that opening is lazy.
    pub(crate) opened: std::rc::Rc<std::cell::Cell<usize>>,
}

impl MapBuckets {
    /// The labels `spin.toml` declares: `default` and `rate`.
    pub(crate) fn spin_toml() -> Self {
        MapBuckets {
            allowed: vec!["default".into(), "rate".into()],
            ..Default::default()
        }
    }

    /// Writes a value directly (as the admin tool would).
    pub(crate) fn set(&self, label: &str, key: &str, value: Vec<u8>) {
        self.labels
            .borrow_mut()
            .entry(label.to_owned())
            .or_default()
            .insert(key.to_owned(), value);
    }

    /// Reads a value directly.
    pub(crate) fn value(&self, label: &str, key: &str) -> Option<Vec<u8>> {
        self.labels
            .borrow()
            .get(label)
            .and_then(|l| l.get(key).cloned())
    }
}

/// One label of a [`MapBuckets`].
#[derive(Debug)]
pub(crate) struct MapBucket {
    labels: Labels,
    name: String,
}

impl Buckets for MapBuckets {
    type Bucket = MapBucket;

    fn open(&mut self, name: &str) -> Result<MapBucket, StoreError> {
        if self.failing || !self.allowed.iter().any(|a| a == name) {
            return Err(StoreError);
        }
        self.opened.set(self.opened.get() + 1);
        Ok(MapBucket {
            labels: self.labels.clone(),
            name: name.to_owned(),
        })
    }
}

impl Bucket for MapBucket {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self
            .labels
            .borrow()
            .get(&self.name)
            .and_then(|l| l.get(key).cloned()))
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        let mut labels = self.labels.borrow_mut();
        let label = labels.entry(self.name.clone()).or_default();
        let (new, bytes) =
            Counter::add(label.get(key).map(Vec::as_slice), delta).map_err(|_| StoreError)?;
        label.insert(key.to_owned(), bytes.to_vec());
        Ok(new)
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        if let Some(label) = self.labels.borrow_mut().get_mut(&self.name) {
            label.remove(key);
        }
        Ok(())
    }

    fn keys(&self) -> Result<Vec<String>, StoreError> {
        Ok(self
            .labels
            .borrow()
            .get(&self.name)
            .map(|l| l.keys().cloned().collect())
            .unwrap_or_default())
    }

    fn swap(&self, key: &str, expected: Option<&[u8]>, value: &[u8]) -> Result<bool, StoreError> {
        let mut labels = self.labels.borrow_mut();
        let label = labels.entry(self.name.clone()).or_default();
        if label.get(key).map(Vec::as_slice) != expected {
            return Ok(false);
        }
        label.insert(key.to_owned(), value.to_vec());
        Ok(true)
    }
}

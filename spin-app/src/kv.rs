//! Spin's key-value store through `wasi:keyvalue` (store + atomics): get,
//! delete and `list-keys` of a bucket, `increment`, and the compare-and-swap
//! of `atomics` (`cas.new`, `cas.current`, `swap`) for the admin API.
//!
//! spin-sdk 5.2 publishes these bindings only under
//! `spin_sdk::wit::wasi::keyvalue` (`#[doc(hidden)]`); this module is the one
//! place that names them, so a move to another SDK touches only this file.

use noise_filter_core::StoreError;
use spin_sdk::wit::wasi::keyvalue::{atomics, store};

use crate::glue::{Bucket, Buckets};

/// Opens labels with `wasi:keyvalue/store.open`.
#[derive(Debug, Default)]
pub(crate) struct WasiBuckets;

/// An open label.
pub(crate) struct WasiBucket(store::Bucket);

impl std::fmt::Debug for WasiBucket {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WasiBucket")
    }
}

fn fail(error: store::Error) -> StoreError {
    // The reason goes to the runtime's log; the request gets the core's 503.
    log!("key-value store error: {error:?}");
    StoreError
}

impl Buckets for WasiBuckets {
    type Bucket = WasiBucket;

    fn open(&mut self, name: &str) -> Result<WasiBucket, StoreError> {
        store::open(name).map(WasiBucket).map_err(fail)
    }
}

impl Bucket for WasiBucket {
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(key).map_err(fail)
    }

    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError> {
        atomics::increment(&self.0, key, delta).map_err(fail)
    }

    fn delete(&self, key: &str) -> Result<(), StoreError> {
        self.0.delete(key).map_err(fail)
    }

    fn keys(&self) -> Result<Vec<String>, StoreError> {
        let mut keys = Vec::new();
        let mut cursor = None;
        loop {
            let page = self.0.list_keys(cursor.as_deref()).map_err(fail)?;
            keys.extend(page.keys);
            match page.cursor {
                Some(next) => cursor = Some(next),
                None => return Ok(keys),
            }
        }
    }

    fn swap(&self, key: &str, expected: Option<&[u8]>, value: &[u8]) -> Result<bool, StoreError> {
        // `current` is what the swap compares against (Spin's SQLite store
        // remembers it there; its Redis store WATCHes the key from there),
        // so it is read even though the core read the value before.
        let cas = atomics::Cas::new(&self.0, key).map_err(fail)?;
        if cas.current().map_err(fail)?.as_deref() != expected {
            return Ok(false);
        }
        match atomics::swap(cas, value) {
            Ok(()) => Ok(true),
            Err(atomics::CasError::CasFailed(_)) => Ok(false),
            Err(atomics::CasError::StoreError(error)) => Err(fail(error)),
        }
    }
}

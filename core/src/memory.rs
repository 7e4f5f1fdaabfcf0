//! A deterministic in-memory store, for tests, benchmarks, examples and the
//! byte-for-byte comparisons between shells. No server uses it: they have
//! real stores. A test double, so it is behind the feature `memory-store`
//! (off by default): the crates that test against it enable it as a
//! dev-dependency, and no shell's build (the Spin component, the npm wasms,
//! the embeddable component, the host binary) compiles it.

use std::collections::BTreeMap;

use crate::admin;
use crate::admin_api::AdminStore;
use crate::auth::ApiKey;
use crate::custom::NewPattern;
use crate::exchange::{StoreError, SyncStore};
use crate::exclusion::NewExclusion;
use crate::rate::UnixMillis;
use crate::store::{Counter, KeyRecord, Listing, RecordKey, StoreLabel};

/// Both store labels as ordered maps, values as the core encodes them
/// (counters as [`Counter`] writes them).
#[derive(Debug, Default, Clone)]
pub struct MemoryStore {
    entries: BTreeMap<(StoreLabel, String), Vec<u8>>,
    /// When set, every call fails (to test store failures).
    pub failing: bool,
}

/// When the records the helpers write were made: a fixed instant, so the
/// same helpers give the same bytes.
const SEEDED_AT: UnixMillis = UnixMillis(1_763_800_000_000);

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// With an active `key` of `account` (labelled `test`).
    ///
    /// # Panics
    /// If `account` is not a valid account name.
    pub fn with_key(mut self, key: &ApiKey, account: &str) -> MemoryStore {
        let new = admin::key_record(key, account, "test", SEEDED_AT)
            .unwrap_or_else(|refusal| panic!("{refusal}"));
        self.set(&new.record, new.value);
        self
    }

    /// With `patterns` added to `account`'s custom patterns.
    ///
    /// # Panics
    /// If the account or a pattern is refused.
    pub fn with_patterns(mut self, account: &str, patterns: Vec<NewPattern>) -> MemoryStore {
        self.add_patterns(account, patterns, SEEDED_AT)
            .unwrap_or_else(|refusal| panic!("{refusal}"));
        self
    }

    /// Adds patterns to an account at `now`, as the admin tool would; returns
    /// their ids.
    pub fn add_patterns(
        &mut self,
        account: &str,
        patterns: Vec<NewPattern>,
        now: UnixMillis,
    ) -> Result<Vec<String>, admin::AdminRefusal> {
        let record = admin::patterns_record(account)?;
        let change = admin::add_patterns(self.value(&record), patterns, now)?;
        self.set(&record, change.value);
        Ok(change.ids)
    }

    /// With `exclusions` added to `account`'s record.
    ///
    /// # Panics
    /// If the account or an exclusion is refused.
    pub fn with_exclusions(mut self, account: &str, exclusions: Vec<NewExclusion>) -> MemoryStore {
        self.add_exclusions(account, exclusions, SEEDED_AT)
            .unwrap_or_else(|refusal| panic!("{refusal}"));
        self
    }

    /// Adds exclusions to an account at `now`, as the admin tool would.
    pub fn add_exclusions(
        &mut self,
        account: &str,
        exclusions: Vec<NewExclusion>,
        now: UnixMillis,
    ) -> Result<(), admin::AdminRefusal> {
        let record = admin::patterns_record(account)?;
        let change = admin::add_exclusions(self.value(&record), exclusions, now)?;
        self.set(&record, change.value);
        Ok(())
    }

    /// Revokes `key` at `now`, as the admin tool would.
    pub fn revoke(&mut self, key: &ApiKey, now: UnixMillis) -> Result<(), admin::AdminRefusal> {
        let record = RecordKey::api_key(&key.hash());
        let revoked = admin::revoke_key(self.value(&record), now)?;
        self.set(&record, revoked.value);
        Ok(())
    }

    /// The key record stored for `key`, if any and readable.
    pub fn key_record(&self, key: &ApiKey) -> Option<KeyRecord> {
        KeyRecord::decode(self.value(&RecordKey::api_key(&key.hash()))?)
    }

    /// Writes a record's bytes.
    pub fn set(&mut self, record: &RecordKey, value: Vec<u8>) {
        self.entries
            .insert((record.label(), record.key().to_owned()), value);
    }

    /// Writes bytes under `key` of `label` as another store holds them (to
    /// copy a real store into this one, for a byte-for-byte comparison).
    pub fn copy_in(&mut self, label: StoreLabel, key: &str, value: Vec<u8>) {
        self.entries.insert((label, key.to_owned()), value);
    }

    /// A record's bytes, if stored.
    pub fn value(&self, record: &RecordKey) -> Option<&[u8]> {
        self.entries
            .get(&(record.label(), record.key().to_owned()))
            .map(Vec::as_slice)
    }

    /// Every record: label, key, bytes, in order.
    pub fn entries(&self) -> impl Iterator<Item = (StoreLabel, &str, &[u8])> {
        self.entries
            .iter()
            .map(|((label, key), value)| (*label, key.as_str(), value.as_slice()))
    }

    /// The keys of `label`, in order.
    pub fn keys(&self, label: StoreLabel) -> Vec<&str> {
        self.entries
            .keys()
            .filter(|(l, _)| *l == label)
            .map(|(_, k)| k.as_str())
            .collect()
    }
}

impl SyncStore for MemoryStore {
    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        Ok(self.value(record).map(<[u8]>::to_vec))
    }

    fn increment(&mut self, record: &RecordKey, delta: i64) -> Result<i64, StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        let (new, bytes) = Counter::add(self.value(record), delta).map_err(|_| StoreError)?;
        self.set(record, bytes.to_vec());
        Ok(new)
    }

    fn delete(&mut self, record: &RecordKey) -> Result<(), StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        self.entries
            .remove(&(record.label(), record.key().to_owned()));
        Ok(())
    }
}

impl AdminStore for MemoryStore {
    fn list(&mut self, listing: &Listing) -> Result<Vec<String>, StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        Ok(self
            .keys(listing.label())
            .into_iter()
            .filter(|k| k.starts_with(listing.prefix()))
            .map(str::to_owned)
            .collect())
    }

    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        if self.failing {
            return Err(StoreError);
        }
        if self.value(record) != expected {
            return Ok(false);
        }
        self.set(record, value.to_vec());
        Ok(true)
    }
}

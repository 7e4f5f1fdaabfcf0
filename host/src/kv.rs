//! The key-value stores behind the component's store labels.
//!
//! Two labels, as `spin-app/spin.toml` declares them: `default` (key records,
//! custom patterns: durable) and `rate` (per-minute counters). Each label is
//! served by one [`Backend`]:
//!
//! | backend | what | counters |
//! |---|---|---|
//! | [`Backend::Sqlite`] | Spin's default store file, same table and encoding | 8-byte LE i64 |
//! | [`Backend::Memory`] | a map in this process (lost on exit) | 8-byte LE i64 |
//! | [`Backend::Redis`] | Redis, keys as given (Spin's Redis store does the same) | `INCRBY`: ASCII decimal |
//!
//! Every operation is one atomic store operation: increment is one SQL
//! statement or one `INCRBY`, compare-and-swap one conditional statement or
//! one Lua script. The admin tool's read-modify-write changes go through
//! [`Backend::update`], a compare-and-swap loop, so a change lands whole or not
//! at all even with the server or another admin running.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use crate::sqlite::SqliteStore;

/// A store failure, as text for the log or the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KvError(pub String);

impl std::fmt::Display for KvError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for KvError {}

/// Result of a store operation.
pub(crate) type KvResult<T> = Result<T, KvError>;

/// Where one label's values live.
#[derive(Debug)]
pub(crate) enum Backend {
    /// Spin's SQLite key-value file.
    Sqlite(SqliteStore),
    /// A map in this process.
    Memory(MemoryStore),
    /// A Redis server.
    Redis(RedisStore),
}

impl Backend {
    /// Reads a value.
    pub(crate) async fn get(&self, label: &str, key: &str) -> KvResult<Option<Vec<u8>>> {
        match self {
            Backend::Sqlite(s) => s.get(label, key),
            Backend::Memory(m) => Ok(m.map().get(&(label.to_owned(), key.to_owned())).cloned()),
            Backend::Redis(r) => r.get(key).await,
        }
    }

    /// Writes a value.
    pub(crate) async fn set(&self, label: &str, key: &str, value: &[u8]) -> KvResult<()> {
        match self {
            Backend::Sqlite(s) => s.set(label, key, value),
            Backend::Memory(m) => {
                m.map()
                    .insert((label.to_owned(), key.to_owned()), value.to_vec());
                Ok(())
            }
            Backend::Redis(r) => r.set(key, value).await,
        }
    }

    /// Deletes a key (absent: fine).
    pub(crate) async fn delete(&self, label: &str, key: &str) -> KvResult<()> {
        match self {
            Backend::Sqlite(s) => s.delete(label, key),
            Backend::Memory(m) => {
                m.map().remove(&(label.to_owned(), key.to_owned()));
                Ok(())
            }
            Backend::Redis(r) => r.delete(key).await,
        }
    }

    /// The keys of `label` starting with `prefix`, sorted.
    pub(crate) async fn keys(&self, label: &str, prefix: &str) -> KvResult<Vec<String>> {
        match self {
            Backend::Sqlite(s) => s.keys(label, prefix),
            Backend::Memory(m) => Ok(m
                .map()
                .keys()
                .filter(|(l, k)| l == label && k.starts_with(prefix))
                .map(|(_, k)| k.clone())
                .collect()),
            Backend::Redis(r) => r.keys(prefix).await,
        }
    }

    /// Atomically adds `delta` to the counter `key` (absent: 0) and returns
    /// the new value.
    pub(crate) async fn increment(&self, label: &str, key: &str, delta: i64) -> KvResult<i64> {
        match self {
            Backend::Sqlite(s) => s.increment(label, key, delta),
            Backend::Memory(m) => {
                let mut map = m.map();
                let slot = map
                    .entry((label.to_owned(), key.to_owned()))
                    .or_insert_with(|| vec![0; 8]);
                let new = decode_i64(slot)?
                    .checked_add(delta)
                    .ok_or_else(|| KvError(format!("counter {key} would overflow")))?;
                *slot = new.to_le_bytes().to_vec();
                Ok(new)
            }
            Backend::Redis(r) => r.increment(key, delta).await,
        }
    }

    /// Writes `new` if the value is still `expected` (`None`: absent);
    /// returns whether it was written.
    pub(crate) async fn compare_and_swap(
        &self,
        label: &str,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        match self {
            Backend::Sqlite(s) => s.compare_and_swap(label, key, expected, new),
            Backend::Memory(m) => {
                let mut map = m.map();
                let slot = (label.to_owned(), key.to_owned());
                if map.get(&slot).map(Vec::as_slice) != expected {
                    return Ok(false);
                }
                map.insert(slot, new.to_vec());
                Ok(true)
            }
            Backend::Redis(r) => r.compare_and_swap(key, expected, new).await,
        }
    }

    /// Read-modify-write of one value: `change` gets the current value and
    /// returns the new one (or an error, and nothing is written). Retried
    /// if another writer got in between; one atomic write when it lands.
    pub(crate) async fn update<E>(
        &self,
        label: &str,
        key: &str,
        mut change: impl FnMut(Option<&[u8]>) -> Result<Vec<u8>, E>,
    ) -> KvResult<Result<Vec<u8>, E>> {
        for _ in 0..64 {
            let current = self.get(label, key).await?;
            let new = match change(current.as_deref()) {
                Ok(new) => new,
                Err(e) => return Ok(Err(e)),
            };
            if self
                .compare_and_swap(label, key, current.as_deref(), &new)
                .await?
            {
                return Ok(Ok(new));
            }
        }
        Err(KvError(format!(
            "{key} kept changing under concurrent writers; nothing written"
        )))
    }
}

/// Reads an 8-byte little-endian counter, as Spin stores atomics.
pub(crate) fn decode_i64(bytes: &[u8]) -> KvResult<i64> {
    <[u8; 8]>::try_from(bytes)
        .map(i64::from_le_bytes)
        .map_err(|_| KvError("value is not an 8-byte counter".into()))
}

/// `(label, key) → value` in this process.
#[derive(Debug, Default)]
pub(crate) struct MemoryStore(Mutex<BTreeMap<(String, String), Vec<u8>>>);

impl MemoryStore {
    fn map(&self) -> std::sync::MutexGuard<'_, BTreeMap<(String, String), Vec<u8>>> {
        // A panic while holding the lock cannot leave a half-written entry.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// A Redis server (one connection, multiplexed, reconnecting).
pub(crate) struct RedisStore {
    url: String,
    connection: redis::aio::ConnectionManager,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

fn redis_error(e: redis::RedisError) -> KvError {
    KvError(format!("redis: {e}"))
}

const CAS_SCRIPT: &str = r"
local current = redis.call('GET', KEYS[1])
if ARGV[1] == '1' then
  if current ~= ARGV[2] then return 0 end
elseif current then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3])
return 1
";

impl RedisStore {
    /// Connects to `url` (`redis://host:port[/db]`).
    pub(crate) async fn connect(url: &str) -> KvResult<RedisStore> {
        let client = redis::Client::open(url).map_err(redis_error)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_number_of_retries(2)
            .set_connection_timeout(std::time::Duration::from_secs(2));
        let connection = redis::aio::ConnectionManager::new_with_config(client, config)
            .await
            .map_err(|e| KvError(format!("cannot connect to {url}: {e}")))?;
        Ok(RedisStore {
            url: url.to_owned(),
            connection,
        })
    }

    async fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        let mut c = self.connection.clone();
        redis::cmd("GET")
            .arg(key)
            .query_async(&mut c)
            .await
            .map_err(redis_error)
    }

    async fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        let mut c = self.connection.clone();
        redis::cmd("SET")
            .arg(key)
            .arg(value)
            .query_async(&mut c)
            .await
            .map_err(redis_error)
    }

    async fn delete(&self, key: &str) -> KvResult<()> {
        let mut c = self.connection.clone();
        redis::cmd("DEL")
            .arg(key)
            .query_async::<i64>(&mut c)
            .await
            .map_err(redis_error)?;
        Ok(())
    }

    async fn increment(&self, key: &str, delta: i64) -> KvResult<i64> {
        let mut c = self.connection.clone();
        redis::cmd("INCRBY")
            .arg(key)
            .arg(delta)
            .query_async(&mut c)
            .await
            .map_err(redis_error)
    }

    async fn keys(&self, prefix: &str) -> KvResult<Vec<String>> {
        let mut c = self.connection.clone();
        let pattern = format!("{}*", escape_glob(prefix));
        let mut cursor: u64 = 0;
        let mut keys = Vec::new();
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut c)
                .await
                .map_err(redis_error)?;
            keys.extend(batch);
            if next == 0 {
                break;
            }
            cursor = next;
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        let mut c = self.connection.clone();
        let written: i64 = redis::Script::new(CAS_SCRIPT)
            .key(key)
            .arg(if expected.is_some() { "1" } else { "0" })
            .arg(expected.unwrap_or_default())
            .arg(new)
            .invoke_async(&mut c)
            .await
            .map_err(redis_error)?;
        Ok(written == 1)
    }
}

fn escape_glob(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if matches!(c, '*' | '?' | '[' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// The two labels the component may open, each on its backend (the two may
/// share one).
#[derive(Debug, Clone)]
pub(crate) struct Stores {
    /// `default`: key records and custom patterns.
    pub(crate) default: Arc<Backend>,
    /// `rate`: counters.
    pub(crate) rate: Arc<Backend>,
}

impl Stores {
    /// The backend of label `name`, if the component may open it.
    pub(crate) fn label(&self, name: &str) -> Option<&Backend> {
        match name {
            "default" => Some(&self.default),
            "rate" => Some(&self.rate),
            _ => None,
        }
    }
}

/// How a label is configured on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreSpec {
    /// Spin's SQLite file in the state directory.
    Sqlite,
    /// In this process.
    Memory,
    /// `redis://…`.
    Redis(String),
}

impl std::str::FromStr for StoreSpec {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "sqlite" => Ok(StoreSpec::Sqlite),
            "memory" => Ok(StoreSpec::Memory),
            url if url.starts_with("redis://") || url.starts_with("rediss://") => {
                Ok(StoreSpec::Redis(url.to_owned()))
            }
            other => Err(format!(
                "{other:?}: expected sqlite, memory or redis://host:port"
            )),
        }
    }
}

impl Stores {
    /// Opens the labels as configured; labels on the same backend share it
    /// (one SQLite connection pool, one Redis connection).
    pub(crate) async fn open(
        default: &StoreSpec,
        rate: &StoreSpec,
        sqlite_path: &std::path::Path,
    ) -> KvResult<Stores> {
        let default_backend = Arc::new(open_backend(default, sqlite_path).await?);
        let rate_backend = if rate == default {
            default_backend.clone()
        } else {
            Arc::new(open_backend(rate, sqlite_path).await?)
        };
        Ok(Stores {
            default: default_backend,
            rate: rate_backend,
        })
    }
}

async fn open_backend(spec: &StoreSpec, sqlite_path: &std::path::Path) -> KvResult<Backend> {
    Ok(match spec {
        StoreSpec::Sqlite => Backend::Sqlite(SqliteStore::open(sqlite_path)?),
        StoreSpec::Memory => Backend::Memory(MemoryStore::default()),
        StoreSpec::Redis(url) => Backend::Redis(RedisStore::connect(url).await?),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    fn block<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(f)
    }

    #[test]
    fn memory_counts_and_swaps() {
        let b = Backend::Memory(MemoryStore::default());
        block(async {
            assert_eq!(b.increment("rate", "c", 1).await, Ok(1));
            assert_eq!(b.increment("rate", "c", 5).await, Ok(6));
            assert_eq!(b.increment("rate", "c", -1).await, Ok(5));
            assert_eq!(
                b.get("rate", "c").await,
                Ok(Some(5i64.to_le_bytes().to_vec()))
            );
            assert_eq!(b.get("default", "c").await, Ok(None), "labels are separate");
            assert_eq!(
                b.compare_and_swap("default", "k", None, b"a").await,
                Ok(true)
            );
            assert_eq!(
                b.compare_and_swap("default", "k", None, b"b").await,
                Ok(false)
            );
            assert_eq!(
                b.compare_and_swap("default", "k", Some(b"a"), b"b").await,
                Ok(true)
            );
            let r = b
                .update::<()>("default", "k", |v| {
                    Ok([v.unwrap_or_default(), b"!"].concat())
                })
                .await;
            assert_eq!(r, Ok(Ok(b"b!".to_vec())));
            assert_eq!(b.keys("default", "k").await, Ok(vec!["k".to_owned()]));
        });
    }

    #[test]
    fn glob_escape() {
        assert_eq!(escape_glob("key/a*b?[c]"), "key/a\\*b\\?\\[c\\]");
    }

    #[test]
    fn store_specs() {
        assert_eq!("sqlite".parse(), Ok(StoreSpec::Sqlite));
        assert_eq!("memory".parse(), Ok(StoreSpec::Memory));
        assert_eq!(
            "redis://127.0.0.1:1".parse(),
            Ok(StoreSpec::Redis("redis://127.0.0.1:1".into()))
        );
        assert!("postgres://x".parse::<StoreSpec>().is_err());
    }
}

//! The key-value stores behind the component's store labels: the host's one
//! interface to them ([`Backend`] for one label, [`Stores`] for both,
//! [`Session`] for one request's reads and writes).
//!
//! Two labels, as `spin-app/spin.toml` declares them (the core's
//! `StoreLabel`): `default` (key records, custom patterns: durable) and
//! `rate` (per-minute counters). Each label is served by one [`Backend`]:
//!
//! | backend | what | counters |
//! |---|---|---|
//! | [`Backend::Sqlite`] | Spin's default store file, same table and encoding (`sqlite.rs`) | the core's `Counter`: 8-byte LE i64 |
//! | [`Backend::Memory`] | a map in this process, lost on exit (`memory.rs`) | the core's `Counter` |
//! | [`Backend::Redis`] | Redis or a Redis Cluster, keys as the core names them, both labels in one keyspace (`redis.rs`) | `INCRBY`: ASCII decimal |
//!
//! Every operation is one atomic store operation: increment is one SQL
//! statement or one `INCRBY`, compare-and-swap one conditional statement or
//! one Lua script. The admin tool's read-modify-write changes go through
//! [`Backend::update`], a compare-and-swap loop, so a change lands whole or
//! not at all even with the server or another admin running.

mod error;
mod memory;
mod redis;
mod session;
mod sqlite;

use std::sync::Arc;

use noise_filter_core::StoreLabel;

pub use self::error::{KvError, KvResult};
use self::memory::MemoryMap;
use self::redis::RedisStore;
pub use self::redis::redacted;
pub use self::session::Session;
pub use self::sqlite::FILE_NAME as SQLITE_FILE_NAME;
use self::sqlite::SqliteStore;

/// Runs a SQLite write, which may wait for the file's write lock (another
/// writer, a checkpoint), without holding up the other requests of this
/// runtime worker: on tokio's multi-threaded runtime the worker's queue
/// moves to another thread meanwhile. Reads (WAL mode: never waiting on a
/// lock) run in place.
fn may_block<T>(write: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) if runtime.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(write)
        }
        _ => write(),
    }
}

/// Where one label's values live.
#[derive(Debug)]
pub enum Backend {
    /// Spin's SQLite key-value file.
    Sqlite(SqliteStore),
    /// A map in this process.
    Memory(MemoryMap),
    /// A Redis server.
    Redis(RedisStore),
}

// The Redis arms below are boxed. A Redis command's future (the client's
// and its deadline's) is several times larger than the SQLite and memory
// arms', and unboxed it would size every call's future, which each store
// call of every request moves; a network round trip dwarfs the allocation.
impl Backend {
    /// Checks that the store answers now (Redis: `PING` within the
    /// deadline; SQLite: a read of the file).
    pub async fn ping(&self) -> KvResult<()> {
        match self {
            Backend::Sqlite(s) => s.get(StoreLabel::Default, "").map(drop),
            Backend::Memory(_) => Ok(()),
            Backend::Redis(r) => r.ping().await,
        }
    }

    /// Reads a value.
    pub async fn get(&self, label: StoreLabel, key: &str) -> KvResult<Option<Vec<u8>>> {
        match self {
            Backend::Sqlite(s) => s.get(label, key),
            Backend::Memory(m) => Ok(m.get(label, key)),
            Backend::Redis(r) => Box::pin(r.get(key)).await,
        }
    }

    /// Writes a value.
    pub async fn set(&self, label: StoreLabel, key: &str, value: &[u8]) -> KvResult<()> {
        match self {
            Backend::Sqlite(s) => may_block(|| s.set(label, key, value)),
            Backend::Memory(m) => {
                m.set(label, key, value);
                Ok(())
            }
            Backend::Redis(r) => Box::pin(r.set(key, value)).await,
        }
    }

    /// Deletes a key (absent: fine).
    pub async fn delete(&self, label: StoreLabel, key: &str) -> KvResult<()> {
        match self {
            Backend::Sqlite(s) => may_block(|| s.delete(label, key)),
            Backend::Memory(m) => {
                m.delete(label, key);
                Ok(())
            }
            Backend::Redis(r) => Box::pin(r.delete(key)).await,
        }
    }

    /// The keys of `label` starting with `prefix`, sorted.
    pub async fn keys(&self, label: StoreLabel, prefix: &str) -> KvResult<Vec<String>> {
        match self {
            Backend::Sqlite(s) => s.keys(label, prefix),
            Backend::Memory(m) => Ok(m.keys(label, prefix)),
            Backend::Redis(r) => r.keys(prefix).await,
        }
    }

    /// Atomically adds `delta` to the counter `key` (absent: 0) and returns
    /// the new value.
    pub async fn increment(&self, label: StoreLabel, key: &str, delta: i64) -> KvResult<i64> {
        match self {
            Backend::Sqlite(s) => may_block(|| s.increment(label, key, delta)),
            Backend::Memory(m) => m.increment(label, key, delta),
            // Redis can expire what the core's cleanup missed (a delete that
            // failed, a key never used again): every record gets its label's
            // lifetime, as the core states it, with each write.
            Backend::Redis(r) => Box::pin(r.increment(key, delta, label.lifetime_ms())).await,
        }
    }

    /// Writes `new` if the value is still `expected` (`None`: absent);
    /// returns whether it was written.
    pub async fn compare_and_swap(
        &self,
        label: StoreLabel,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        match self {
            Backend::Sqlite(s) => may_block(|| s.compare_and_swap(label, key, expected, new)),
            Backend::Memory(m) => Ok(m.compare_and_swap(label, key, expected, new)),
            Backend::Redis(r) => Box::pin(r.compare_and_swap(key, expected, new)).await,
        }
    }

    /// Read-modify-write of one value: `change` gets the current value and
    /// returns the new one (or an error, and nothing is written). Retried
    /// if another writer got in between; one atomic write when it lands.
    pub async fn update<E>(
        &self,
        label: StoreLabel,
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

/// The two labels the component may open, each on its backend (the two may
/// share one).
#[derive(Debug, Clone)]
pub struct Stores {
    /// `default`: key records and custom patterns.
    pub default: Arc<Backend>,
    /// `rate`: counters.
    pub rate: Arc<Backend>,
}

impl Stores {
    /// Keeps the SQLite file's WAL bounded while the server runs: once a
    /// second, a WAL over [`sqlite::WAL_LIMIT`] is checkpointed and
    /// truncated (off the request path, on tokio's blocking threads).
    pub fn spawn_wal_checkpoints(&self) {
        let Backend::Sqlite(_) = *self.rate else {
            // Counters are the only steady writes; keys and patterns
            // change at the admin's pace, which SQLite's own checkpoints
            // keep up with.
            return;
        };
        let backend = self.rate.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let backend = backend.clone();
                let outcome = tokio::task::spawn_blocking(move || match &*backend {
                    Backend::Sqlite(s) => s.checkpoint_if_over(sqlite::WAL_LIMIT),
                    _ => Ok(None),
                })
                .await;
                match outcome {
                    Ok(Ok(Some(size))) => tracing::debug!(wal_bytes = size, "WAL truncated"),
                    Ok(Ok(None)) => {}
                    Ok(Err(e)) => tracing::warn!("{e}"),
                    Err(e) => tracing::warn!("WAL checkpoint task failed: {e}"),
                }
            }
        });
    }

    /// Checks that both labels' stores answer now.
    pub async fn ping(&self) -> KvResult<()> {
        self.default.ping().await?;
        self.rate.ping().await
    }

    /// The backend of `label`.
    pub fn backend(&self, label: StoreLabel) -> &Backend {
        match label {
            StoreLabel::Default => &self.default,
            StoreLabel::Rate => &self.rate,
        }
    }
}

/// How a label is configured on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// Spin's SQLite file in the state directory.
    Sqlite,
    /// In this process.
    Memory,
    /// `redis://…`, or a cluster: `redis+cluster://…`.
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
            url if redis::is_cluster(url) => {
                redis::cluster_nodes(url)?;
                Ok(StoreSpec::Redis(url.to_owned()))
            }
            other => Err(format!(
                "{:?}: expected sqlite, memory, redis://host:port or \
                 redis+cluster://host:port[,host:port…]",
                redacted(other)
            )),
        }
    }
}

/// How networked stores are reached: the deadline of every call, and for
/// `rediss://` the certificate authorities to trust.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// How long one call may take before it is a store failure.
    pub deadline: std::time::Duration,
    /// PEM certificates of the authorities that sign the Redis server's
    /// certificate (`--redis-ca-file`); `None`: the system's trust store.
    pub redis_ca: Option<Vec<u8>>,
}

impl Default for ConnectOptions {
    fn default() -> Self {
        ConnectOptions {
            deadline: DEFAULT_DEADLINE,
            redis_ca: None,
        }
    }
}

/// How long a store call may take by default before it is a store failure
/// (the core's 503): well under a second, so a store that does not answer
/// costs a request half a second, not a hung connection.
pub const DEFAULT_DEADLINE: std::time::Duration = std::time::Duration::from_millis(500);

impl StoreSpec {
    /// How the startup line and errors show it: a Redis password redacted.
    pub fn describe(&self, sqlite_path: &std::path::Path) -> String {
        match self {
            StoreSpec::Sqlite => format!("sqlite {}", sqlite_path.display()),
            StoreSpec::Memory => "memory".to_owned(),
            StoreSpec::Redis(url) => redacted(url),
        }
    }
}

impl Stores {
    /// Opens the labels as configured; labels on the same backend share it
    /// (one SQLite connection pool, one Redis connection). `connect`
    /// bounds every call to a networked store and says whom TLS trusts.
    pub async fn open(
        default: &StoreSpec,
        rate: &StoreSpec,
        sqlite_path: &std::path::Path,
        connect: &ConnectOptions,
    ) -> KvResult<Stores> {
        let default_backend = Arc::new(open_backend(default, sqlite_path, connect).await?);
        let rate_backend = match rate {
            // Counters in a file of their own (`sqlite::RATE_FILE_NAME`
            // beside the store): its WAL can be truncated while requests
            // hold read snapshots of the records (sqlite.rs, "A bounded WAL").
            StoreSpec::Sqlite => {
                Arc::new(open_backend(rate, &rate_file(sqlite_path), connect).await?)
            }
            _ if rate == default => default_backend.clone(),
            _ => Arc::new(open_backend(rate, sqlite_path, connect).await?),
        };
        Ok(Stores {
            default: default_backend,
            rate: rate_backend,
        })
    }
}

/// The rate counters' SQLite file, beside the store's.
pub fn rate_file(sqlite_path: &std::path::Path) -> std::path::PathBuf {
    sqlite_path.with_file_name(sqlite::RATE_FILE_NAME)
}

async fn open_backend(
    spec: &StoreSpec,
    sqlite_path: &std::path::Path,
    connect: &ConnectOptions,
) -> KvResult<Backend> {
    Ok(match spec {
        StoreSpec::Sqlite => Backend::Sqlite(SqliteStore::open(sqlite_path)?),
        StoreSpec::Memory => Backend::Memory(MemoryMap::default()),
        StoreSpec::Redis(url) => Backend::Redis(RedisStore::connect(url, connect).await?),
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
        let b = Backend::Memory(MemoryMap::default());
        block(async {
            assert_eq!(b.increment(StoreLabel::Rate, "c", 1).await, Ok(1));
            assert_eq!(b.increment(StoreLabel::Rate, "c", 5).await, Ok(6));
            assert_eq!(b.increment(StoreLabel::Rate, "c", -1).await, Ok(5));
            assert_eq!(
                b.get(StoreLabel::Rate, "c").await,
                Ok(Some(5i64.to_le_bytes().to_vec()))
            );
            assert_eq!(
                b.get(StoreLabel::Default, "c").await,
                Ok(None),
                "labels are separate"
            );
            assert_eq!(
                b.compare_and_swap(StoreLabel::Default, "k", None, b"a")
                    .await,
                Ok(true)
            );
            assert_eq!(
                b.compare_and_swap(StoreLabel::Default, "k", None, b"b")
                    .await,
                Ok(false)
            );
            assert_eq!(
                b.compare_and_swap(StoreLabel::Default, "k", Some(b"a"), b"b")
                    .await,
                Ok(true)
            );
            let r = b
                .update::<()>(StoreLabel::Default, "k", |v| {
                    Ok([v.unwrap_or_default(), b"!"].concat())
                })
                .await;
            assert_eq!(r, Ok(Ok(b"b!".to_vec())));
            assert_eq!(
                b.keys(StoreLabel::Default, "k").await,
                Ok(vec!["k".to_owned()])
            );
        });
    }

    #[test]
    fn store_specs() {
        assert_eq!("sqlite".parse(), Ok(StoreSpec::Sqlite));
        assert_eq!("memory".parse(), Ok(StoreSpec::Memory));
        assert_eq!(
            "redis://127.0.0.1:1".parse(),
            Ok(StoreSpec::Redis("redis://127.0.0.1:1".into()))
        );
        assert_eq!(
            "redis+cluster://10.0.0.1:7000,10.0.0.2:7000".parse(),
            Ok(StoreSpec::Redis(
                "redis+cluster://10.0.0.1:7000,10.0.0.2:7000".into()
            ))
        );
        let refused = "redis+cluster://:s3cret@10.0.0.1".parse::<StoreSpec>();
        assert!(
            refused
                .as_ref()
                .is_err_and(|e| e.contains("host:port") && !e.contains("s3cret")),
            "{refused:?}"
        );
        assert!("postgres://x".parse::<StoreSpec>().is_err());
    }
}

//! Spin's default key-value store: one SQLite file, one table.
//!
//! Same file (`<state dir>/sqlite_key_value.db`), same table and same counter
//! encoding as Spin's own store, so `spin up` in `spin-app/` reads what this
//! host and its admin tool wrote:
//!
//! ```sql
//! CREATE TABLE spin_key_value (store TEXT NOT NULL, key TEXT NOT NULL,
//!     value BLOB NOT NULL, PRIMARY KEY (store, key))
//! ```
//!
//! `store` is the label (`default`, `rate`); atomic counters are 8 bytes,
//! little-endian i64.
//!
//! **Durability.** The file is in WAL mode. Connections for the `default`
//! label write with `synchronous = FULL`: a key or pattern the admin tool
//! reported written is on disk, whatever happens to any process after.
//! Connections for the `rate` label write with `synchronous = NORMAL`: a
//! count is in the WAL file (the operating system's cache) when the
//! statement returns, so it survives any process's death, SIGKILL included,
//! and only a crash of the machine itself can lose the last counts since
//! the latest checkpoint; in exchange a counted request costs no `fsync`
//! (one per request made the SQLite rate store 16 times slower than the
//! memory one under load; docs/BENCHMARKS.md). Each change is one
//! statement, hence one transaction: a SIGKILL at any moment leaves the file
//! with or without the change, never half of it.
//!
//! **A bounded WAL.** SQLite's own checkpoints (every 1000 pages, passive)
//! copy the WAL back but cannot restart it while readers come and go
//! without pause, so under steady load it grew without end.
//! [`SqliteStore::checkpoint_if_over`], which the server calls every
//! second, truncates it once it is over [`WAL_LIMIT`] bytes. That waits for
//! the readers of older frames and holds writers meanwhile, so the counters
//! live in a file of their own ([`RATE_FILE_NAME`]): a request holds its
//! read snapshot of the records across its counter writes (one state of a
//! key and its patterns), and in one file that reader and the checkpoint
//! would wait on each other; a request's reads of the counters' file end
//! before it writes there.
//!
//! **Increment** is one statement (`INSERT … ON CONFLICT DO UPDATE …
//! RETURNING`) with a small SQL function that adds to the 8-byte encoding,
//! so concurrent increments from any number of connections or processes
//! never lose a count.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use rusqlite::functions::FunctionFlags;
use rusqlite::{Connection, OptionalExtension, params};

use noise_filter_core::{Counter, StoreLabel};

use super::error::{KvError, KvResult};

/// Spin's table, exactly as Spin creates it.
pub(super) const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS spin_key_value (store TEXT NOT NULL, \
     key TEXT NOT NULL, value BLOB NOT NULL, PRIMARY KEY (store, key))";

/// The file name Spin uses inside its state directory (`.spin/`).
pub const FILE_NAME: &str = "sqlite_key_value.db";

/// The file of the `rate` label with `--rate-store sqlite`, beside
/// [`FILE_NAME`] (Spin: `[key_value_store.rate] type = "spin"`, `path =
/// ".spin/sqlite_rate.db"`).
pub(super) const RATE_FILE_NAME: &str = "sqlite_rate.db";

/// The WAL size over which [`SqliteStore::checkpoint_if_over`] truncates it.
pub(super) const WAL_LIMIT: u64 = 8 << 20;

/// Pools of connections to one file: one per label, as their writes are
/// synced differently (above).
#[derive(Debug)]
pub struct SqliteStore {
    path: PathBuf,
    /// Idle connections for the `default` label, then for `rate`.
    idle: [Mutex<Vec<Connection>>; 2],
    /// Writes take it shared, a checkpoint exclusively: SQLite's own
    /// busy-waiting for the write lock, a sleep between tries, loses every
    /// time to writers that hold it for microseconds each, so under load a
    /// checkpoint never got its turn. std's lock queues new writes behind
    /// a waiting checkpoint.
    turns: RwLock<()>,
}

/// The pool of a label's connections.
fn pool(label: StoreLabel) -> usize {
    match label {
        StoreLabel::Default => 0,
        StoreLabel::Rate => 1,
    }
}

fn sql_error(e: rusqlite::Error) -> KvError {
    KvError(format!("sqlite: {e}"))
}

impl SqliteStore {
    /// Opens (creating if needed) the store file at `path`, and its table.
    pub fn open(path: &Path) -> KvResult<SqliteStore> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| KvError(format!("cannot create {}: {e}", dir.display())))?;
        }
        let store = SqliteStore {
            path: path.to_owned(),
            idle: [Mutex::new(Vec::new()), Mutex::new(Vec::new())],
            turns: RwLock::new(()),
        };
        let first = store.connect(StoreLabel::Default)?;
        first.execute_batch(CREATE_TABLE).map_err(sql_error)?;
        store.release(StoreLabel::Default, first);
        Ok(store)
    }

    fn connect(&self, label: StoreLabel) -> KvResult<Connection> {
        let conn = Connection::open(&self.path)
            .map_err(|e| KvError(format!("cannot open {}: {e}", self.path.display())))?;
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql_error)?;
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql_error)?;
        let synchronous = match label {
            StoreLabel::Default => "FULL",
            StoreLabel::Rate => "NORMAL",
        };
        conn.pragma_update(None, "synchronous", synchronous)
            .map_err(sql_error)?;
        conn.create_scalar_function(
            "nf_add_i64le",
            2,
            FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
            |ctx| {
                let old: Option<Vec<u8>> = ctx.get(0)?;
                let delta: i64 = ctx.get(1)?;
                let (_, bytes) = Counter::add(old.as_deref(), delta)
                    .map_err(|e| rusqlite::Error::UserFunctionError(e.into()))?;
                Ok(bytes.to_vec())
            },
        )
        .map_err(sql_error)?;
        Ok(conn)
    }

    fn release(&self, label: StoreLabel, conn: Connection) {
        self.idle[pool(label)]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(conn);
    }

    /// An idle connection for `label`, or a new one.
    fn checkout(&self, label: StoreLabel) -> KvResult<Connection> {
        let idle = self.idle[pool(label)]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        match idle {
            Some(conn) => Ok(conn),
            None => self.connect(label),
        }
    }

    /// Runs a write, in turn with checkpoints.
    fn write<T>(
        &self,
        label: StoreLabel,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> KvResult<T> {
        let _turn = self
            .turns
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        self.with(label, f)
    }

    fn with<T>(
        &self,
        label: StoreLabel,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> KvResult<T> {
        let conn = self.checkout(label)?;
        let result = f(&conn).map_err(sql_error);
        self.release(label, conn);
        result
    }

    /// When the WAL file is over `limit` bytes, copies it back into the
    /// database and truncates it (`wal_checkpoint(TRUNCATE)`: new writers
    /// wait, up to the busy timeout, for the readers of older frames, which
    /// hold them for one request). Returns the WAL's size before, when it
    /// checkpointed. A checkpoint that cannot finish (readers for 5 s) is an
    /// error; the next call tries again.
    pub fn checkpoint_if_over(&self, limit: u64) -> KvResult<Option<u64>> {
        let mut wal = self.path.clone().into_os_string();
        wal.push("-wal");
        let size = std::fs::metadata(&wal).map(|m| m.len()).unwrap_or(0);
        if size <= limit {
            return Ok(None);
        }
        // No write starts until it is done; those under way finish first.
        let _all = self
            .turns
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let busy: i64 = self.with(StoreLabel::Rate, |c| {
            c.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get(0))
        })?;
        if busy != 0 {
            return Err(KvError(format!(
                "sqlite: the WAL ({size} bytes) could not be checkpointed: readers stayed"
            )));
        }
        Ok(Some(size))
    }

    /// Opens a read snapshot: a connection in a deferred transaction, whose
    /// first read takes the file's read lock and whose later reads reuse it.
    pub fn snapshot(&self) -> KvResult<Snapshot> {
        let conn = self.checkout(StoreLabel::Default)?;
        conn.prepare_cached("BEGIN")
            .and_then(|mut begin| begin.execute([]))
            .map_err(sql_error)?;
        Ok(Snapshot { conn })
    }

    /// Ends a snapshot (a read-only transaction: its end only releases the
    /// read lock) and returns the connection to the pool. A connection whose
    /// transaction cannot be ended is closed instead of reused.
    pub fn end_snapshot(&self, snapshot: Snapshot) {
        let ended = snapshot
            .conn
            .prepare_cached("COMMIT")
            .and_then(|mut commit| commit.execute([]));
        match ended {
            Ok(_) => self.release(StoreLabel::Default, snapshot.conn),
            Err(e) => {
                tracing::warn!("sqlite: ending a read snapshot failed ({e}); connection closed");
            }
        }
    }

    /// Reads a value.
    pub fn get(&self, label: StoreLabel, key: &str) -> KvResult<Option<Vec<u8>>> {
        self.with(label, |c| read(c, label, key))
    }

    /// Writes a value.
    pub fn set(&self, label: StoreLabel, key: &str, value: &[u8]) -> KvResult<()> {
        self.write(label, |c| {
            c.prepare_cached(
                "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3) \
                 ON CONFLICT (store, key) DO UPDATE SET value = excluded.value",
            )?
            .execute(params![label.name(), key, value])
            .map(drop)
        })
    }

    /// Deletes a key.
    pub fn delete(&self, label: StoreLabel, key: &str) -> KvResult<()> {
        self.write(label, |c| {
            c.prepare_cached("DELETE FROM spin_key_value WHERE store = ?1 AND key = ?2")?
                .execute(params![label.name(), key])
                .map(drop)
        })
    }

    /// Keys of `label` starting with `prefix`, sorted.
    pub fn keys(&self, label: StoreLabel, prefix: &str) -> KvResult<Vec<String>> {
        self.with(label, |c| {
            let mut stmt = c.prepare_cached(
                "SELECT key FROM spin_key_value WHERE store = ?1 AND substr(key, 1, ?2) = ?3 \
                 ORDER BY key",
            )?;
            let len = i64::try_from(prefix.chars().count()).unwrap_or(i64::MAX);
            let rows = stmt.query_map(params![label.name(), len, prefix], |row| row.get(0))?;
            rows.collect()
        })
    }

    /// Atomically adds `delta` (absent: 0); returns the new value.
    ///
    /// The statement is stepped to its end, not just to its row: in
    /// autocommit mode the write commits when the statement finishes, and a
    /// commit that fails (a full disk, a read-only file) reports its error
    /// there. `query_row` stops at the row and drops that error, so a count
    /// that was never written came back as if it had been: the rate limit
    /// admitted every request of a full disk.
    pub fn increment(&self, label: StoreLabel, key: &str, delta: i64) -> KvResult<i64> {
        let bytes: Vec<u8> = self.write(label, |c| {
            let mut statement = c.prepare_cached(
                "INSERT INTO spin_key_value (store, key, value) \
                 VALUES (?1, ?2, nf_add_i64le(NULL, ?3)) \
                 ON CONFLICT (store, key) DO UPDATE SET value = nf_add_i64le(value, ?3) \
                 RETURNING value",
            )?;
            let mut rows = statement.query(params![label.name(), key, delta])?;
            let value: Vec<u8> = match rows.next()? {
                Some(row) => row.get(0)?,
                None => return Err(rusqlite::Error::QueryReturnedNoRows),
            };
            // The end of the statement: the commit, and its error if any.
            while rows.next()?.is_some() {}
            Ok(value)
        })?;
        Counter::decode(&bytes).ok_or_else(|| KvError("value is not a counter".into()))
    }

    /// Writes `new` if the value is still `expected` (`None`: absent).
    pub fn compare_and_swap(
        &self,
        label: StoreLabel,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        let changed = self.write(label, |c| match expected {
            None => c
                .prepare_cached(
                    "INSERT INTO spin_key_value (store, key, value) VALUES (?1, ?2, ?3) \
                     ON CONFLICT (store, key) DO NOTHING",
                )?
                .execute(params![label.name(), key, new]),
            Some(old) => c
                .prepare_cached(
                    "UPDATE spin_key_value SET value = ?4 \
                     WHERE store = ?1 AND key = ?2 AND value = ?3",
                )?
                .execute(params![label.name(), key, old, new]),
        })?;
        Ok(changed == 1)
    }
}

/// The one read statement, on any connection.
fn read(conn: &Connection, label: StoreLabel, key: &str) -> rusqlite::Result<Option<Vec<u8>>> {
    conn.prepare_cached("SELECT value FROM spin_key_value WHERE store = ?1 AND key = ?2")?
        .query_row(params![label.name(), key], |row| row.get(0))
        .optional()
}

/// A read snapshot of the file ([`SqliteStore::snapshot`]): every read sees
/// the file as of the first one. One request's reads of a label go through
/// one snapshot, so they see one state of the store (a key record and the
/// patterns of its account from the same moment) and pay for the file's
/// read lock once (two `fcntl` calls and the WAL-index checks per
/// transaction otherwise). It must be ended with
/// [`SqliteStore::end_snapshot`]: a snapshot held open keeps a WAL checkpoint
/// from passing it.
#[derive(Debug)]
pub struct Snapshot {
    conn: Connection,
}

impl Snapshot {
    /// Reads a value as of the snapshot.
    pub fn get(&self, label: StoreLabel, key: &str) -> KvResult<Option<Vec<u8>>> {
        read(&self.conn, label, key).map_err(sql_error)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    fn temp_file(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nf-sqlite-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir.join(FILE_NAME)
    }

    #[test]
    fn spin_layout_and_counters() {
        let path = temp_file("layout");
        let store = SqliteStore::open(&path).unwrap();
        store.set(StoreLabel::Default, "key/abc", b"{}").unwrap();
        assert_eq!(
            store.increment(StoreLabel::Rate, "rate/abc/1", 1).unwrap(),
            1
        );
        assert_eq!(
            store.increment(StoreLabel::Rate, "rate/abc/1", 2).unwrap(),
            3
        );
        assert_eq!(
            store.increment(StoreLabel::Rate, "rate/abc/1", -1).unwrap(),
            2
        );
        // Read back with plain SQL, as Spin would.
        let conn = Connection::open(&path).unwrap();
        let schema: String = conn
            .query_row(
                "SELECT sql FROM sqlite_master WHERE name = 'spin_key_value'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert!(schema.contains("PRIMARY KEY (store, key)"), "{schema}");
        let value: Vec<u8> = conn
            .query_row(
                "SELECT value FROM spin_key_value WHERE store='rate' AND key='rate/abc/1'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(value, 2i64.to_le_bytes());
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(
            store.keys(StoreLabel::Default, "key/").unwrap(),
            vec!["key/abc".to_owned()]
        );
        assert_eq!(
            store.keys(StoreLabel::Default, "ke%").unwrap(),
            Vec::<String>::new(),
            "no LIKE wildcards"
        );
        store.delete(StoreLabel::Default, "key/abc").unwrap();
        assert_eq!(store.get(StoreLabel::Default, "key/abc").unwrap(), None);
    }

    #[test]
    fn a_non_counter_is_refused_not_clobbered() {
        let store = SqliteStore::open(&temp_file("clobber")).unwrap();
        store.set(StoreLabel::Rate, "c", b"abc").unwrap();
        assert!(store.increment(StoreLabel::Rate, "c", 1).is_err());
        assert_eq!(
            store.get(StoreLabel::Rate, "c").unwrap(),
            Some(b"abc".to_vec())
        );
    }

    #[test]
    fn concurrent_increments_lose_nothing() {
        let store = std::sync::Arc::new(SqliteStore::open(&temp_file("concurrent")).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let store = store.clone();
                std::thread::spawn(move || {
                    for _ in 0..50 {
                        store.increment(StoreLabel::Rate, "c", 1).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(store.increment(StoreLabel::Rate, "c", 0).unwrap(), 400);
    }

    #[test]
    fn compare_and_swap() {
        let store = SqliteStore::open(&temp_file("cas")).unwrap();
        assert!(
            store
                .compare_and_swap(StoreLabel::Default, "k", None, b"a")
                .unwrap()
        );
        assert!(
            !store
                .compare_and_swap(StoreLabel::Default, "k", None, b"b")
                .unwrap()
        );
        assert!(
            !store
                .compare_and_swap(StoreLabel::Default, "k", Some(b"x"), b"b")
                .unwrap()
        );
        assert!(
            store
                .compare_and_swap(StoreLabel::Default, "k", Some(b"a"), b"b")
                .unwrap()
        );
        assert_eq!(
            store.get(StoreLabel::Default, "k").unwrap(),
            Some(b"b".to_vec())
        );
    }

    #[test]
    fn a_snapshot_reads_one_state_and_its_end_shows_the_latest() {
        let store = SqliteStore::open(&temp_file("snapshot")).unwrap();
        store.set(StoreLabel::Default, "key/a", b"live").unwrap();
        let snapshot = store.snapshot().unwrap();
        assert_eq!(
            snapshot.get(StoreLabel::Default, "key/a").unwrap(),
            Some(b"live".to_vec())
        );
        // Another writer (the admin tool) changes the store meanwhile.
        store.set(StoreLabel::Default, "key/a", b"revoked").unwrap();
        store.set(StoreLabel::Default, "patterns/a", b"[]").unwrap();
        assert_eq!(
            snapshot.get(StoreLabel::Default, "key/a").unwrap(),
            Some(b"live".to_vec()),
            "one request sees one state"
        );
        assert_eq!(
            snapshot.get(StoreLabel::Default, "patterns/a").unwrap(),
            None
        );
        store.end_snapshot(snapshot);
        // The next request sees the change, on the pooled connection too.
        let next = store.snapshot().unwrap();
        assert_eq!(
            next.get(StoreLabel::Default, "key/a").unwrap(),
            Some(b"revoked".to_vec())
        );
        store.end_snapshot(next);
        assert_eq!(
            store.get(StoreLabel::Default, "patterns/a").unwrap(),
            Some(b"[]".to_vec())
        );
    }
}

//! Labels on a Redis server, keys as the core names them (Spin's Redis store
//! does the same); counters by `INCRBY`, so ASCII decimal.
//!
//! **A Redis that does not answer** (down, unreachable, stopped, out of
//! memory) must cost a request its deadline, not minutes: every command runs
//! under [`RedisStore`]'s deadline (`--store-timeout-ms`), and on the
//! deadline it is a store error, which the core answers with its 503. The
//! connection manager reconnects in the background after a failure, with
//! short, capped retries, so the host serves again within about a second of
//! Redis coming back (its default backoff grows to a minute between
//! attempts, which is what held requests for ~two minutes before).

use std::future::Future;
use std::time::Duration;

use super::ConnectOptions;
use super::error::{KvError, KvResult};

/// How long connecting (at startup, for `serve` and every admin command)
/// may take before it fails: a few seconds, whatever the network does.
const CONNECT_DEADLINE: Duration = Duration::from_secs(5);
/// Longest wait between two reconnection attempts, in milliseconds.
const MAX_RETRY_DELAY_MS: u64 = 250;

/// A Redis server (one connection, multiplexed, reconnecting).
pub struct RedisStore {
    url: String,
    connection: redis::aio::ConnectionManager,
    /// How long one command may take.
    deadline: Duration,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("url", &redacted(&self.url))
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

/// `url` with its password, if any, replaced by `***`: what the startup
/// line, errors and logs show (`redis://user:***@host:6379/0`).
pub fn redacted(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let Some((userinfo, host)) = authority.rsplit_once('@') else {
        return url.to_owned();
    };
    let user = match userinfo.split_once(':') {
        Some((user, _password)) => format!("{user}:***"),
        // `redis://secret@host`: redis-rs reads a lone userinfo as the
        // password, so it is hidden too.
        None => "***".to_owned(),
    };
    format!("{scheme}://{user}@{host}{path}")
}

fn redis_error(e: redis::RedisError) -> KvError {
    KvError(format!("redis: {e}"))
}

/// The compare-and-swap: the file the Python package ships, so the host and
/// `noise_filter.RedisStore` swap alike.
const CAS_SCRIPT: &str =
    include_str!("../../../python/src/noise_filter/redis_compare_and_swap.lua");

impl RedisStore {
    /// Connects to `url` (`redis://host:port[/db]`, or `rediss://` for TLS,
    /// trusting `options.redis_ca` or else the system's authorities); every
    /// command then waits at most `options.deadline` for its answer. Fails
    /// within [`CONNECT_DEADLINE`] when nothing answers.
    pub async fn connect(url: &str, options: &ConnectOptions) -> KvResult<RedisStore> {
        let shown = redacted(url);
        let deadline = options.deadline;
        let client = if url.starts_with("rediss://") {
            // rustls needs one process-wide crypto provider; a second
            // install (another store) is refused harmlessly.
            let _ = rustls::crypto::ring::default_provider().install_default();
            redis::Client::build_with_tls(
                url,
                redis::TlsCertificates {
                    client_tls: None,
                    root_cert: options.redis_ca.clone(),
                },
            )
        } else {
            redis::Client::open(url)
        }
        .map_err(|e| KvError(format!("{shown}: {}", redis_error(e))))?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(deadline.max(Duration::from_millis(100)))
            .set_response_timeout(deadline)
            // backon's exponential backoff: 1 s, then ×2, capped here.
            .set_number_of_retries(2)
            .set_factor(2)
            .set_max_delay(MAX_RETRY_DELAY_MS);
        let connecting = redis::aio::ConnectionManager::new_with_config(client, config);
        let connection = match tokio::time::timeout(CONNECT_DEADLINE, connecting).await {
            Ok(Ok(connection)) => connection,
            Ok(Err(e)) => return Err(KvError(format!("cannot connect to {shown}: {e}"))),
            Err(_) => {
                return Err(KvError(format!(
                    "cannot connect to {shown}: no answer within {} s",
                    CONNECT_DEADLINE.as_secs()
                )));
            }
        };
        Ok(RedisStore {
            url: url.to_owned(),
            connection,
            deadline,
        })
    }

    /// Runs one command under the deadline.
    async fn bounded<T>(
        &self,
        command: impl Future<Output = redis::RedisResult<T>>,
    ) -> KvResult<T> {
        match tokio::time::timeout(self.deadline, command).await {
            Ok(answer) => answer.map_err(redis_error),
            Err(_) => Err(KvError(format!(
                "redis: no answer within {} ms",
                self.deadline.as_millis()
            ))),
        }
    }

    /// `PING`: the server answers within the deadline.
    pub async fn ping(&self) -> KvResult<()> {
        let mut c = self.connection.clone();
        self.bounded(redis::cmd("PING").query_async::<String>(&mut c))
            .await
            .map(drop)
    }

    pub async fn get(&self, key: &str) -> KvResult<Option<Vec<u8>>> {
        let mut c = self.connection.clone();
        self.bounded(redis::cmd("GET").arg(key).query_async(&mut c))
            .await
    }

    pub async fn set(&self, key: &str, value: &[u8]) -> KvResult<()> {
        let mut c = self.connection.clone();
        self.bounded(redis::cmd("SET").arg(key).arg(value).query_async(&mut c))
            .await
    }

    pub async fn delete(&self, key: &str) -> KvResult<()> {
        let mut c = self.connection.clone();
        self.bounded(redis::cmd("DEL").arg(key).query_async::<i64>(&mut c))
            .await?;
        Ok(())
    }

    /// `INCRBY`, and with `expiry_ms` a `PEXPIRE` in the same `MULTI`, so
    /// no counter is ever left without its expiry.
    pub async fn increment(&self, key: &str, delta: i64, expiry_ms: Option<u64>) -> KvResult<i64> {
        let mut c = self.connection.clone();
        let Some(expiry_ms) = expiry_ms else {
            return self
                .bounded(redis::cmd("INCRBY").arg(key).arg(delta).query_async(&mut c))
                .await;
        };
        let (value,): (i64,) = self
            .bounded(
                redis::pipe()
                    .atomic()
                    .cmd("INCRBY")
                    .arg(key)
                    .arg(delta)
                    .cmd("PEXPIRE")
                    .arg(key)
                    .arg(expiry_ms)
                    .ignore()
                    .query_async(&mut c),
            )
            .await?;
        Ok(value)
    }

    pub async fn keys(&self, prefix: &str) -> KvResult<Vec<String>> {
        let mut c = self.connection.clone();
        let pattern = format!("{}*", escape_glob(prefix));
        let mut cursor: u64 = 0;
        let mut keys = Vec::new();
        loop {
            let (next, batch): (u64, Vec<String>) = self
                .bounded(
                    redis::cmd("SCAN")
                        .arg(cursor)
                        .arg("MATCH")
                        .arg(&pattern)
                        .arg("COUNT")
                        .arg(1000)
                        .query_async(&mut c),
                )
                .await?;
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

    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        let mut c = self.connection.clone();
        let script = redis::Script::new(CAS_SCRIPT);
        let mut invocation = script.key(key);
        invocation
            .arg(if expected.is_some() { "1" } else { "0" })
            .arg(expected.unwrap_or_default())
            .arg(new);
        let written: i64 = self.bounded(invocation.invoke_async(&mut c)).await?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_escape() {
        assert_eq!(escape_glob("key/a*b?[c]"), "key/a\\*b\\?\\[c\\]");
    }

    #[test]
    fn passwords_are_redacted() {
        for (url, shown) in [
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379"),
            ("redis://:s3cret@cache:6379/2", "redis://:***@cache:6379/2"),
            (
                "rediss://app:s3cret@cache.example:6380",
                "rediss://app:***@cache.example:6380",
            ),
            ("redis://s3cret@cache", "redis://***@cache"),
            // An `@` in the password: the host is after the last one.
            ("redis://app:p@ss@cache/0", "redis://app:***@cache/0"),
        ] {
            assert_eq!(redacted(url), shown);
            assert!(!redacted(url).contains("s3cret") && !redacted(url).contains("p@ss"));
        }
    }
}

//! Labels on a Redis server or a Redis Cluster (Valkey alike), keys as the
//! core names them (Spin's Redis store does the same); counters by `INCRBY`,
//! so ASCII decimal.
//!
//! **A cluster** (`redis+cluster://host:port[,host:port…]`, see
//! [`cluster_nodes`]) is the redis crate's own cluster client: it learns
//! the slot map from the nodes given, routes each command by its key, and
//! follows `MOVED`/`ASK` and failovers. Every command the store sends names
//! one key (`GET`, `SET`, `DEL`, `INCRBY` with its `PEXPIRE` in one `MULTI`,
//! the compare-and-swap script with one `KEYS[1]`), so each touches one
//! slot and the key names stay the ones a single server holds: no hash
//! tags, nothing to migrate. Listing (`SCAN`) walks every master in turn.
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

/// A Redis server (one connection, multiplexed, reconnecting) or a cluster.
pub struct RedisStore {
    url: String,
    connection: Connection,
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

/// The scheme of a cluster's URL, plain and over TLS.
const CLUSTER_SCHEMES: [(&str, &str); 2] = [
    ("redis+cluster://", "redis://"),
    ("rediss+cluster://", "rediss://"),
];

/// Whether `url` names a Redis Cluster (`redis+cluster://…`,
/// `rediss+cluster://…`).
pub(super) fn is_cluster(url: &str) -> bool {
    CLUSTER_SCHEMES
        .iter()
        .any(|(scheme, _)| url.starts_with(scheme))
}

/// The seed nodes of a cluster URL, each as the redis crate takes a node:
/// `redis+cluster://[user:password@]host:port[,host:port…]` gives
/// `redis://[user:password@]host:port` per node (`rediss://` for
/// `rediss+cluster://`). Any one reachable node is enough to learn the
/// others; more survive one being down at startup. A cluster has one
/// database, so no `/db` other than `/0`.
pub(super) fn cluster_nodes(url: &str) -> Result<Vec<String>, String> {
    let shown = redacted(url);
    let Some((rest, node_scheme)) = CLUSTER_SCHEMES
        .iter()
        .find_map(|(scheme, node)| url.strip_prefix(scheme).map(|rest| (rest, *node)))
    else {
        return Err(format!("{shown}: not a redis+cluster:// URL"));
    };
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if !matches!(path, "" | "/" | "/0") {
        return Err(format!(
            "{shown}: a cluster has only database 0 (no {path:?} after the nodes)"
        ));
    }
    let (userinfo, hosts) = match authority.rsplit_once('@') {
        Some((userinfo, hosts)) => (format!("{userinfo}@"), hosts),
        None => (String::new(), authority),
    };
    let nodes: Vec<String> = hosts
        .split(',')
        .map(|host| {
            let port = host.rsplit_once(':').map(|(_, port)| port);
            if host.is_empty() || port.is_none_or(|p| p.parse::<u16>().is_err()) {
                Err(format!("{shown}: {host:?} is not host:port"))
            } else {
                Ok(format!("{node_scheme}{userinfo}{host}"))
            }
        })
        .collect::<Result<_, _>>()?;
    Ok(nodes)
}

/// The one connection behind every command: a server's connection manager
/// or the cluster client's connection; both are cheap handles to share.
#[derive(Clone)]
enum Connection {
    Server(redis::aio::ConnectionManager),
    Cluster(redis::cluster_async::ClusterConnection),
}

/// Each command is written once, for both kinds.
impl redis::aio::ConnectionLike for Connection {
    fn req_packed_command<'a>(
        &'a mut self,
        cmd: &'a redis::Cmd,
    ) -> redis::RedisFuture<'a, redis::Value> {
        match self {
            Connection::Server(c) => c.req_packed_command(cmd),
            Connection::Cluster(c) => c.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a redis::Pipeline,
        offset: usize,
        count: usize,
    ) -> redis::RedisFuture<'a, Vec<redis::Value>> {
        match self {
            Connection::Server(c) => c.req_packed_commands(pipeline, offset, count),
            Connection::Cluster(c) => c.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match self {
            Connection::Server(c) => c.get_db(),
            Connection::Cluster(c) => c.get_db(),
        }
    }
}

/// Trusts `options.redis_ca`, or else the system's authorities.
fn tls_certificates(options: &ConnectOptions) -> redis::TlsCertificates {
    // rustls needs one process-wide crypto provider; a second install
    // (another store) is refused harmlessly.
    let _ = rustls::crypto::ring::default_provider().install_default();
    redis::TlsCertificates {
        client_tls: None,
        root_cert: options.redis_ca.clone(),
    }
}

impl RedisStore {
    /// Connects to `url` (`redis://host:port[/db]`, or `rediss://` for TLS,
    /// trusting `options.redis_ca` or else the system's authorities; or a
    /// cluster, `redis+cluster://host:port[,host:port…]`, see
    /// [`cluster_nodes`]); every command then waits at most
    /// `options.deadline` for its answer. Fails within [`CONNECT_DEADLINE`]
    /// when nothing answers.
    pub async fn connect(url: &str, options: &ConnectOptions) -> KvResult<RedisStore> {
        let shown = redacted(url);
        let deadline = options.deadline;
        let connecting = async {
            if is_cluster(url) {
                Self::connect_cluster(url, options).await
            } else {
                Self::connect_server(url, options).await
            }
        };
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

    async fn connect_server(url: &str, options: &ConnectOptions) -> Result<Connection, String> {
        let deadline = options.deadline;
        let client = if url.starts_with("rediss://") {
            redis::Client::build_with_tls(url, tls_certificates(options))
        } else {
            redis::Client::open(url)
        }
        .map_err(|e| redis_error(e).0)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_connection_timeout(deadline.max(Duration::from_millis(100)))
            .set_response_timeout(deadline)
            // backon's exponential backoff: 1 s, then ×2, capped here.
            .set_number_of_retries(2)
            .set_factor(2)
            .set_max_delay(MAX_RETRY_DELAY_MS);
        redis::aio::ConnectionManager::new_with_config(client, config)
            .await
            .map(Connection::Server)
            .map_err(|e| e.to_string())
    }

    /// The cluster client, with the same bounds as a server's manager: a
    /// command that fails on a node (down, moved, the cluster electing a
    /// new master) is retried twice, at most [`MAX_RETRY_DELAY_MS`] apart,
    /// re-reading the slot map on the way, and never past the deadline
    /// (the client's default retries 16 times, minutes in all).
    async fn connect_cluster(url: &str, options: &ConnectOptions) -> Result<Connection, String> {
        let deadline = options.deadline;
        let mut builder = redis::cluster::ClusterClientBuilder::new(cluster_nodes(url)?)
            .connection_timeout(deadline.max(Duration::from_millis(100)))
            .response_timeout(deadline)
            .retries(2)
            // A wait drawn from [10 ms, min(100 ms × 2^retry, 250 ms)).
            .min_retry_wait(10)
            .retry_wait_formula(100, 2)
            .max_retry_wait(MAX_RETRY_DELAY_MS);
        if url.starts_with("rediss+cluster://") {
            builder = builder.certs(tls_certificates(options));
        }
        let client = builder.build().map_err(|e| redis_error(e).0)?;
        client
            .get_async_connection()
            .await
            .map(Connection::Cluster)
            .map_err(|e| e.to_string())
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

    /// The keys starting with `prefix`, sorted: `SCAN` (never the blocking
    /// `KEYS`) on the server, or on every master of a cluster in turn.
    pub async fn keys(&self, prefix: &str) -> KvResult<Vec<String>> {
        let pattern = format!("{}*", escape_glob(prefix));
        let mut keys = Vec::new();
        match &self.connection {
            Connection::Server(_) => self.scan(None, &pattern, &mut keys).await?,
            Connection::Cluster(_) => {
                for master in self.masters().await? {
                    self.scan(Some(master), &pattern, &mut keys).await?;
                }
            }
        }
        keys.sort();
        keys.dedup();
        Ok(keys)
    }

    /// The masters of a cluster, as `CLUSTER SLOTS` names them (the
    /// addresses the client's slot map holds): host and port of the first
    /// node of each slot range.
    async fn masters(&self) -> KvResult<Vec<(String, u16)>> {
        let mut c = self.connection.clone();
        let ranges: Vec<Vec<redis::Value>> = self
            .bounded(redis::cmd("CLUSTER").arg("SLOTS").query_async(&mut c))
            .await?;
        let mut masters = Vec::new();
        for range in ranges {
            let master = range.get(2).and_then(|node| match node {
                redis::Value::Array(node) => match (node.first(), node.get(1)) {
                    (Some(redis::Value::BulkString(host)), Some(redis::Value::Int(port)))
                        if !host.is_empty() && host.as_slice() != b"?" =>
                    {
                        Some((
                            String::from_utf8_lossy(host).into_owned(),
                            u16::try_from(*port).ok()?,
                        ))
                    }
                    _ => None,
                },
                _ => None,
            });
            let Some(master) = master else {
                return Err(KvError(format!(
                    "redis: CLUSTER SLOTS names no reachable master for {range:?}"
                )));
            };
            masters.push(master);
        }
        masters.sort();
        masters.dedup();
        Ok(masters)
    }

    /// Every page of `SCAN … MATCH pattern` on the server, or on one node
    /// of a cluster, into `keys`.
    async fn scan(
        &self,
        node: Option<(String, u16)>,
        pattern: &str,
        keys: &mut Vec<String>,
    ) -> KvResult<()> {
        let mut c = self.connection.clone();
        let mut cursor: u64 = 0;
        loop {
            let mut page = redis::cmd("SCAN");
            page.arg(cursor)
                .arg("MATCH")
                .arg(pattern)
                .arg("COUNT")
                .arg(1000);
            let value = match (&mut c, &node) {
                (Connection::Cluster(cluster), Some((host, port))) => {
                    let to = redis::cluster_routing::RoutingInfo::SingleNode(
                        redis::cluster_routing::SingleNodeRoutingInfo::ByAddress {
                            host: host.clone(),
                            port: *port,
                        },
                    );
                    self.bounded(cluster.route_command(&page, to)).await?
                }
                _ => self.bounded(page.query_async(&mut c)).await?,
            };
            let (next, batch): (u64, Vec<String>) =
                redis::from_redis_value(&value).map_err(redis_error)?;
            keys.extend(batch);
            if next == 0 {
                return Ok(());
            }
            cursor = next;
        }
    }

    /// The compare-and-swap script on `key`: `EVALSHA`, and `EVAL` with
    /// the script's text when this node has not seen it (`NOSCRIPT`: a
    /// restarted server, a cluster's newly promoted master). Both go to the
    /// key's node; the redis crate's own fallback (`SCRIPT LOAD`) goes to
    /// every master of a cluster and fails while any one is down.
    pub async fn compare_and_swap(
        &self,
        key: &str,
        expected: Option<&[u8]>,
        new: &[u8],
    ) -> KvResult<bool> {
        let mut c = self.connection.clone();
        let script = redis::Script::new(CAS_SCRIPT);
        let call = |command: &str, body: &str| {
            let mut call = redis::cmd(command);
            call.arg(body)
                .arg(1)
                .arg(key)
                .arg(if expected.is_some() { "1" } else { "0" })
                .arg(expected.unwrap_or_default())
                .arg(new);
            call
        };
        let swap = async {
            match call("EVALSHA", script.get_hash()).query_async(&mut c).await {
                Err(e) if e.kind() == redis::ErrorKind::NoScriptError => {
                    call("EVAL", CAS_SCRIPT).query_async(&mut c).await
                }
                answer => answer,
            }
        };
        let written: i64 = self.bounded(swap).await?;
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
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    #[test]
    fn glob_escape() {
        assert_eq!(escape_glob("key/a*b?[c]"), "key/a\\*b\\?\\[c\\]");
    }

    #[test]
    fn cluster_urls_name_their_seed_nodes() {
        assert!(is_cluster("redis+cluster://a:1") && is_cluster("rediss+cluster://a:1"));
        assert!(!is_cluster("redis://a:1"));
        assert_eq!(
            cluster_nodes("redis+cluster://app:s3cret@10.0.0.1:7000,cache-2:7001/"),
            Ok(vec![
                "redis://app:s3cret@10.0.0.1:7000".to_owned(),
                "redis://app:s3cret@cache-2:7001".to_owned(),
            ])
        );
        assert_eq!(
            cluster_nodes("rediss+cluster://[::1]:7000"),
            Ok(vec!["rediss://[::1]:7000".to_owned()])
        );
        for (bad, says) in [
            ("redis+cluster://:s3cret@a:1/2", "only database 0"),
            ("redis+cluster://:s3cret@a:1,,b:2", "not host:port"),
            ("redis+cluster://:s3cret@a", "not host:port"),
            ("redis+cluster://:s3cret@a:x", "not host:port"),
            ("redis://:s3cret@a:1", "not a redis+cluster"),
        ] {
            let e = cluster_nodes(bad).unwrap_err();
            assert!(e.contains(says) && !e.contains("s3cret"), "{bad}: {e}");
        }
        assert_eq!(
            redacted("redis+cluster://app:s3cret@a:1,b:2"),
            "redis+cluster://app:***@a:1,b:2"
        );
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

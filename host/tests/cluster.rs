//! The Redis store on a real Redis Cluster started by the test
//! (`redis-server --cluster-enabled yes` ×3, or ×6 with a replica each,
//! joined by `redis-cli --cluster create`), reached as `--store
//! redis+cluster://…`: the admin tool writes and lists across every
//! master, every answer is the core's bytes, two hosts admit exactly the
//! limit between them, and a master killed mid-run costs requests their
//! deadline (the core's 503) until its replica takes over, with nothing
//! admitted over the limit. Skipped, with a notice, only when
//! `redis-server` or `redis-cli` is not on PATH (CI installs them).
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::time::{Duration, Instant};

use noise_filter_core::{KeyHash, RecordKey, Rejection};
use support::table::{Table, fixture_in, hash_prefix};
use support::{
    Host, LIMIT_PER_MINUTE, RedisCluster, TempDir, admin_ok, assert_same, burst, core_answer,
};

/// The store deadline the failover test gives the host.
const DEADLINE_MS: u64 = 300;
/// What a refused request may take beyond the deadline (process scheduling
/// on a loaded two-core machine; the point is the deadline, not minutes).
const SLACK: Duration = Duration::from_millis(1_500);
/// How soon after a master dies its replica must be serving: the cluster's
/// node timeout ([`support::CLUSTER_NODE_TIMEOUT_MS`]) to fail the master,
/// the replica's election (0.5–1 s), the client's slot refresh, and room.
const RECOVERY: Duration = Duration::from_secs(15);

/// The `key/…` record of an API key.
fn record_of(key: &str) -> String {
    RecordKey::api_key(&KeyHash::of(key)).key().to_owned()
}

#[test]
fn the_table_and_two_hosts_on_a_cluster() {
    let Some(cluster) = RedisCluster::start(false) else {
        return;
    };
    let state = TempDir::new("cluster-table");
    let store = ["--store", cluster.url.as_str()];
    let f = fixture_in(state, &store);
    let s = f.state.path();

    // Keys until every master holds a key record: listing them (and
    // revoking by hash prefix, which searches the listing) must walk every
    // master, not the one the client happens to ask.
    let mut keys = vec![f.acme.clone(), f.beta.clone(), f.revoked.clone()];
    while (0..3).any(|m| {
        keys.iter()
            .all(|k| cluster.master_of(&record_of(k), 0) != m)
    }) {
        keys.push(support::create_key(s, &store, "spread"));
        assert!(keys.len() < 40, "keys never landed on every master");
    }
    let list = admin_ok(s, &store, &["keys", "list"]);
    for key in &keys {
        assert!(
            list.contains(&hash_prefix(key)),
            "{key} not listed:\n{list}"
        );
    }
    let last = keys.last().unwrap().clone();
    admin_ok(s, &store, &["keys", "revoke", &hash_prefix(&last)]);

    // Every row of the table: the core's bytes, over the cluster's records.
    let host = Host::start(s, &store);
    let mut core = cluster.memory_copy(&[0, 1, 2]);
    let table = Table::new(&f);
    for (name, method, target, headers, status, error) in &table.rows() {
        let reply = host.send(method, target, headers);
        assert_same(
            &reply,
            &core_answer(&mut core, method, target, headers),
            name,
        );
        assert_eq!(reply.status, *status, "{name}");
        if let Some(error) = error {
            assert_eq!(reply.error(), *error, "{name}");
        }
    }
    assert_eq!(host.get("/v1/filters", &last).status, 401, "revoked");

    // Two hosts on the cluster, one key, 1100 requests: exactly the limit.
    let other = Host::start(s, &store);
    let key = support::create_key(s, &store, "gamma");
    let addrs = [host.addr.clone(), other.addr.clone()];
    assert_eq!(
        support::spread(&addrs, &key, 1100),
        (LIMIT_PER_MINUTE, 100, 0)
    );
}

#[test]
fn a_master_killed_mid_run_costs_requests_their_deadline_until_its_replica_serves() {
    let Some(mut cluster) = RedisCluster::start(true) else {
        return;
    };
    let state = TempDir::new("cluster-failover");
    let deadline = DEADLINE_MS.to_string();
    let store = [
        "--store",
        cluster.url.as_str(),
        "--store-timeout-ms",
        deadline.as_str(),
    ];
    let key = support::create_key(state.path(), &store, "acme");
    let host = Host::start(state.path(), &store);
    let before = 300;
    assert_eq!(burst(&host, &key, before).0, before);

    // The master of the key's counter, once its replica holds every count
    // so far (`WAIT` after a write of nothing): Redis replicates
    // asynchronously, and what this test counts is the host's part.
    let counter = RecordKey::rate_counter(&KeyHash::of(&key), support::NOW_MS / 60_000)
        .key()
        .to_owned();
    let victim = cluster.master_of(&counter, 0);
    let mut con = redis::Client::open(cluster.nodes[victim].url.as_str())
        .unwrap()
        .get_connection()
        .unwrap();
    let count: i64 = redis::cmd("INCRBY")
        .arg(&counter)
        .arg(0)
        .query(&mut con)
        .unwrap();
    assert_eq!(count, before as i64);
    let synced: i64 = redis::cmd("WAIT")
        .arg(1)
        .arg(5_000)
        .query(&mut con)
        .unwrap();
    assert_eq!(synced, 1, "the replica acknowledged the counts");

    cluster.nodes[victim].kill();
    let killed = Instant::now();
    // Until the replica is master and the client has found it: the store's
    // 503, as the core words it, within the deadline; then served.
    let (mut refused, mut slowest) = (0, Duration::ZERO);
    loop {
        let started = Instant::now();
        let reply = host.get("/v1/filters", &key);
        let took = started.elapsed();
        if reply.status == 200 {
            break;
        }
        assert_eq!(
            reply.status,
            503,
            "{}",
            String::from_utf8_lossy(&reply.body)
        );
        assert_eq!(reply.body, Rejection::StoreUnavailable.body());
        assert!(
            took <= Duration::from_millis(DEADLINE_MS) + SLACK,
            "a 503 took {took:?}"
        );
        refused += 1;
        slowest = slowest.max(took);
        assert!(
            killed.elapsed() < RECOVERY,
            "still refused {:?} after the kill",
            killed.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    println!(
        "master killed: {refused} requests refused (the slowest in {slowest:?}), \
         served again {:?} after the kill",
        killed.elapsed()
    );
    assert!(refused > 0, "the first request after the kill was refused");

    // The rest of the minute on the promoted replica: the limit holds. A
    // refused request may have been counted (its answer lost with the
    // master), never an admitted one left uncounted.
    let (after, limited, _) = burst(&host, &key, LIMIT_PER_MINUTE);
    let admitted = before + 1 + after;
    assert!(limited > 0);
    assert!(
        admitted <= LIMIT_PER_MINUTE && admitted + refused >= LIMIT_PER_MINUTE,
        "{admitted} admitted, {refused} refused"
    );

    // The admin tool, with the dead master among the URL's nodes: it finds
    // the cluster through the others, lists every master's keys (the
    // promoted replica's among them), and its new key is served.
    let second = support::create_key(state.path(), &store, "beta");
    let list = admin_ok(state.path(), &store, &["keys", "list"]);
    assert!(list.contains(&hash_prefix(&key)) && list.contains(&hash_prefix(&second)));
    assert_eq!(host.get("/v1/filters", &second).status, 200);
}

/// A cluster over TLS (`tls-cluster yes`, certificates from a private
/// authority): `rediss+cluster://` with `--redis-ca-file` administers and
/// serves, the records landing in the cluster.
#[test]
fn rediss_cluster_with_a_private_authority() {
    let certs = TempDir::new("cluster-tls");
    let tls = support::TlsFiles::private_authority(certs.path());
    let Some(cluster) = RedisCluster::start_with(false, Some(&tls)) else {
        return;
    };
    let url = cluster.tls_url.clone().unwrap();
    let store = ["--store", url.as_str(), "--redis-ca-file", tls.ca.as_str()];
    let state = TempDir::new("cluster-tls-state");
    let key = support::create_key(state.path(), &store, "acme");
    let host = Host::start(state.path(), &store);
    assert_eq!(host.get("/v1/filters", &key).status, 200);
    let record = record_of(&key);
    let master = cluster.master_of(&record, 0);
    let stored: Option<Vec<u8>> = redis::cmd("GET")
        .arg(&record)
        .query(
            &mut redis::Client::open(cluster.nodes[master].url.as_str())
                .unwrap()
                .get_connection()
                .unwrap(),
        )
        .unwrap();
    assert!(stored.is_some(), "the key record is in the cluster");
}

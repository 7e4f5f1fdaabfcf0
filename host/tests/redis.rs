//! The same store tests against a real Redis: `redis-server` started by the
//! test on a free port (`--save ''`, nothing on disk), both labels on it.
//! Skipped, with a notice, only when `redis-server` is not on PATH (CI
//! installs it).
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use noise_filter_core::{KeyHash, MemoryStore, RecordKey, StoreLabel};
use support::{
    Host, LIMIT_PER_MINUTE, RedisServer, TempDir, add_pattern, admin_ok, assert_same, burst,
    core_answer, remaining,
};

fn connection(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
}

/// The `key/…` and `account/…` values in Redis, as the core's store.
fn memory_copy(url: &str) -> MemoryStore {
    let mut con = connection(url);
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    let mut kv = MemoryStore::new();
    for key in keys
        .into_iter()
        .filter(|k| k.starts_with("key/") || k.starts_with("account/"))
    {
        let value: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut con).unwrap();
        kv.copy_in(StoreLabel::Default, &key, value);
    }
    kv
}

/// Method, target, header lines.
type Request<'a> = (&'a str, &'a str, Vec<(&'a str, &'a str)>);

#[test]
fn admin_and_serving_on_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let state = TempDir::new("redis-serve");
    let (s, store) = (state.path(), ["--store", redis.url.as_str()]);
    let acme = support::create_key(s, &store, "acme");
    let beta = support::create_key(s, &store, "beta");
    let gone = support::create_key(s, &store, "acme");
    add_pattern(s, &store, "acme", "acme widget exploded");
    admin_ok(
        s,
        &store,
        &[
            "patterns",
            "add",
            "--account",
            "acme",
            "--pattern",
            "drop me",
            "--id",
            "custom-drop",
        ],
    );
    admin_ok(
        s,
        &store,
        &["patterns", "remove", "--account", "acme", "custom-drop"],
    );
    let import = s.join("import.json");
    std::fs::write(
        &import,
        r#"[{"pattern": "beta gadget melted", "category": "OTHER"}]"#,
    )
    .unwrap();
    admin_ok(
        s,
        &store,
        &[
            "patterns",
            "import",
            "--account",
            "beta",
            import.to_str().unwrap(),
        ],
    );
    admin_ok(s, &store, &["keys", "revoke", KeyHash::of(&gone).short()]);
    let list = admin_ok(s, &store, &["keys", "list"]);
    assert_eq!(list.lines().count(), 4, "{list}");
    assert!(
        !state.db().exists(),
        "nothing in SQLite when the store is Redis"
    );

    let host = Host::start(s, &store);
    let mut core = memory_copy(&redis.url);
    let (a, b, g) = (
        format!("Bearer {acme}"),
        format!("Bearer {beta}"),
        format!("Bearer {gone}"),
    );
    let rows: Vec<Request<'_>> = vec![
        ("GET", "/v1/filters", vec![("authorization", &a)]),
        (
            "GET",
            "/api/v1/filters?minConfidence=0.9",
            vec![("authorization", &a)],
        ),
        ("GET", "/api/v1/filters", vec![("authorization", &b)]),
        ("GET", "/v1/filters", vec![("authorization", &g)]),
        ("GET", "/v1/filters", vec![]),
        (
            "GET",
            "/v1/filters?categories=nope",
            vec![("authorization", &a)],
        ),
        ("HEAD", "/v1/filters", vec![("authorization", &a)]),
    ];
    for (method, target, headers) in &rows {
        let reply = host.send(method, target, headers);
        assert_same(
            &reply,
            &core_answer(&mut core, method, target, headers),
            target,
        );
    }
    let acme_body = String::from_utf8_lossy(&host.get("/v1/filters", &acme).body).into_owned();
    // Beta's pattern, not the word: the catalog's sources may say "beta".
    assert!(
        acme_body.contains("acme widget exploded")
            && !acme_body.contains("drop me")
            && !acme_body.contains("beta gadget melted")
    );

    // Counters are Redis INCRBY integers under the core's key.
    let window = support::NOW_MS / 60_000;
    let counter = RecordKey::rate_counter(&KeyHash::of(&acme), window);
    let value: String = redis::cmd("GET")
        .arg(counter.key())
        .query(&mut connection(&redis.url))
        .unwrap();
    assert_eq!(value, "5", "three GETs, one HEAD and one 400 from this key");
    // Every `rate` record expires: the counter and the key's `last` record.
    let mut con = connection(&redis.url);
    let rate_keys: Vec<String> = redis::cmd("KEYS").arg("rate/*").query(&mut con).unwrap();
    // Two keys were used: each has its counter and its `last` record.
    assert_eq!(rate_keys.len(), 4, "{rate_keys:?}");
    for key in rate_keys {
        let ttl: i64 = redis::cmd("PTTL").arg(&key).query(&mut con).unwrap();
        assert!(
            ttl > 0 && ttl <= noise_filter_core::RATE_COUNTER_TTL_MS as i64,
            "{key}: PTTL {ttl}"
        );
    }
}

#[test]
fn rate_limit_and_restart_on_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let state = TempDir::new("redis-rate");
    let (s, store) = (state.path(), ["--store", redis.url.as_str()]);
    let key = support::create_key(s, &store, "acme");
    let other = support::create_key(s, &store, "acme");
    add_pattern(s, &store, "acme", "survives restarts");
    let mut host = Host::start(s, &store);
    let (ok, limited, samples) = burst(&host, &key, 1050);
    assert_eq!((ok, limited), (LIMIT_PER_MINUTE, 50));
    assert!(samples.iter().all(|r| r.header("retry-after").is_some()));
    assert_eq!(remaining(&host.get("/v1/filters", &other)), 999);
    host.kill();

    // A new host process: keys, patterns and counters are still in Redis.
    let host = Host::start(s, &store);
    assert_eq!(
        host.get("/v1/filters", &key).status,
        429,
        "counters survive a restart"
    );
    let reply = host.get("/v1/filters", &other);
    assert_eq!(remaining(&reply), 998);
    assert!(String::from_utf8_lossy(&reply.body).contains("survives restarts"));
}

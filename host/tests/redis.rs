//! The same store tests against a real Redis: `redis-server` started by the
//! test on a free port (`--save ''`, nothing on disk), both labels on it.
//! Skipped, with a notice, only when `redis-server` is not on PATH (CI
//! installs it).
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use noise_filter_core::{KeyHash, RecordKey};
use support::{
    Host, LIMIT_PER_MINUTE, RedisServer, TempDir, add_pattern, admin_ok, assert_same, burst,
    core_answer, remaining,
};

fn connection(url: &str) -> redis::Connection {
    redis::Client::open(url).unwrap().get_connection().unwrap()
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
    let mut core = support::memory_copy_of_redis(&redis.url);
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

/// Three host processes on one Redis, as on three machines: one key's
/// limit holds across them exactly; an admin change made anywhere is seen
/// by every host at once; a host killed mid-burst loses no key and no
/// acknowledged count, and its replacement carries on from the same count.
#[test]
fn three_hosts_on_one_redis() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let dirs = [
        TempDir::new("redis-many-a"),
        TempDir::new("redis-many-b"),
        TempDir::new("redis-many-c"),
    ];
    let store = ["--store", redis.url.as_str()];
    let key = support::create_key(dirs[0].path(), &store, "acme");
    let mut hosts: Vec<Host> = dirs.iter().map(|d| Host::start(d.path(), &store)).collect();
    let addrs: Vec<String> = hosts.iter().map(|h| h.addr.clone()).collect();

    // One key, 1100 requests over three hosts: exactly the limit admitted.
    assert_eq!(
        support::spread(&addrs, &key, 1100),
        (LIMIT_PER_MINUTE, 100, 0)
    );

    // A key created through one machine's admin tool works on all three;
    // revoked through another's, it is refused by all three.
    let second = support::create_key(dirs[1].path(), &store, "beta");
    for host in &hosts {
        assert_eq!(host.get("/v1/filters", &second).status, 200);
    }
    let hash = KeyHash::of(&second).short().to_owned();
    admin_ok(dirs[2].path(), &store, &["keys", "revoke", &hash]);
    for host in &hosts {
        assert_eq!(host.get("/v1/filters", &second).status, 401);
    }

    // A host SIGKILLed in the middle of a burst: every 200 anyone got was
    // counted (a request cut off by the kill may have been counted without
    // its answer, never the other way round).
    let third = support::create_key(dirs[0].path(), &store, "gamma");
    let burst = {
        let (addrs, third) = (addrs.clone(), third.clone());
        std::thread::spawn(move || support::spread(&addrs, &third, 600))
    };
    std::thread::sleep(std::time::Duration::from_millis(150));
    hosts[0].kill();
    let (ok, limited, lost) = burst.join().unwrap();
    assert_eq!(limited, 0);
    assert_eq!(ok + lost, 600);
    let reply = hosts[1].get("/v1/filters", &third);
    assert_eq!(reply.status, 200);
    let counted = LIMIT_PER_MINUTE as u64 - remaining(&reply) - 1;
    assert!(
        counted >= ok as u64 && counted <= (ok + lost) as u64,
        "{ok} answered 200, {lost} cut off, {counted} counted"
    );
    println!("killed host: {ok} answered, {lost} cut off, {counted} counted");

    // Its replacement sees the same keys and the same count.
    hosts[0] = Host::start(dirs[0].path(), &store);
    let reply = hosts[0].get("/v1/filters", &third);
    assert_eq!(remaining(&reply), LIMIT_PER_MINUTE as u64 - counted - 2);
    assert_eq!(hosts[0].get("/v1/filters", &key).status, 429);
    assert_eq!(hosts[0].get("/v1/filters", &second).status, 401);
}

/// A managed Redis with in-transit encryption, as a `redis-server` with a
/// TLS port and a certificate from a private authority: `rediss://` with
/// `--redis-ca-file` serves and administers; without the authority the
/// connection is refused (an unknown issuer), clearly and within seconds.
#[test]
fn rediss_with_a_private_authority() {
    let certs = TempDir::new("redis-tls");
    let tls = support::TlsFiles::private_authority(certs.path());
    let tls_port = support::free_port().to_string();
    let (cert, key, ca) = (tls.cert.as_str(), tls.key.as_str(), tls.ca.as_str());
    // The plain port stays open for the test's own checks and readiness.
    let Some(redis) = RedisServer::start_with(&[
        "--save",
        "",
        "--appendonly",
        "no",
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        cert,
        "--tls-key-file",
        key,
        "--tls-ca-cert-file",
        ca,
        "--tls-auth-clients",
        "no",
    ]) else {
        return;
    };
    let url = format!("rediss://127.0.0.1:{tls_port}");
    let trusted = ["--store", url.as_str(), "--redis-ca-file", ca];

    let state = TempDir::new("redis-tls-state");
    let api_key = support::create_key(state.path(), &trusted, "acme");
    let host = Host::start(state.path(), &trusted);
    assert_eq!(host.get("/v1/filters", &api_key).status, 200);
    // Written over TLS into the same server.
    let hash = KeyHash::of(&api_key);
    let stored: Option<Vec<u8>> = redis::cmd("GET")
        .arg(RecordKey::api_key(&hash).key())
        .query(&mut connection(&redis.url))
        .unwrap();
    assert!(stored.is_some(), "the key record is in Redis");

    // The system's trust store does not know the private authority.
    let started = std::time::Instant::now();
    let out = support::admin(state.path(), &["--store", url.as_str()], &["keys", "list"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("UnknownIssuer"), "{err}");
    assert!(started.elapsed() < std::time::Duration::from_secs(8));
}

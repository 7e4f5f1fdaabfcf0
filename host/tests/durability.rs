//! Restarts and SIGKILL: what was acknowledged is still there, and the
//! SQLite store opens cleanly.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use noise_filter_core::{KeyHash, RecordKey};
use support::{Host, TempDir, add_pattern, admin, admin_ok, create_key, remaining};

const DURABLE_RATE: [&str; 2] = ["--rate-store", "sqlite"];

#[test]
fn restart_keeps_keys_patterns_and_durable_counters() {
    let state = TempDir::new("restart");
    let s = state.path();
    let key = create_key(s, &[], "acme");
    add_pattern(s, &[], "acme", "kept across restarts");

    let mut host = Host::start(s, &DURABLE_RATE);
    for expected in [999, 998, 997] {
        assert_eq!(remaining(&host.get("/v1/filters", &key)), expected);
    }
    host.kill();

    let mut host = Host::start(s, &DURABLE_RATE);
    let reply = host.get("/v1/filters", &key);
    assert_eq!(remaining(&reply), 996, "counters in SQLite survive");
    assert!(String::from_utf8_lossy(&reply.body).contains("kept across restarts"));
    host.kill();

    // The default `rate` store is memory: keys and patterns survive, counters start afresh.
    let host = Host::start(s, &[]);
    let reply = host.get("/v1/filters", &key);
    assert_eq!((reply.status, remaining(&reply)), (200, 999));
    assert!(String::from_utf8_lossy(&reply.body).contains("kept across restarts"));
}

#[test]
fn sigkill_under_load_loses_nothing_acknowledged() {
    let state = TempDir::new("sigkill");
    let s = state.path().to_owned();
    let load_keys: Vec<String> = (0..6).map(|_| create_key(&s, &[], "load")).collect();
    let mut host = Host::start(&s, &DURABLE_RATE);

    // Load: every request writes a counter in the SQLite file.
    let stop = Arc::new(AtomicBool::new(false));
    let load: Vec<_> = load_keys
        .iter()
        .map(|key| {
            let (addr, key, stop) = (host.addr.clone(), key.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut acknowledged = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let Some(reply) = support::try_send(
                        &addr,
                        "GET",
                        "/v1/filters",
                        &[("authorization", &format!("Bearer {key}"))],
                    ) else {
                        break; // the server is gone
                    };
                    assert_eq!(reply.status, 200);
                    acknowledged += 1;
                }
                (key, acknowledged)
            })
        })
        .collect();

    // Admin writes at the same time; record what was acknowledged.
    let writer = {
        let (s, stop) = (s.clone(), stop.clone());
        std::thread::spawn(move || {
            let (mut keys, mut patterns) = (Vec::new(), Vec::new());
            let mut i = 0;
            while !stop.load(Ordering::SeqCst) || i < 8 {
                let out = admin(&s, &[], &["keys", "create", "--account", "durable"]);
                if out.status.success() {
                    keys.push(String::from_utf8(out.stdout).unwrap().trim().to_owned());
                }
                let text = format!("durable pattern {i}");
                let out = admin(
                    &s,
                    &[],
                    &[
                        "patterns",
                        "add",
                        "--account",
                        "durable",
                        "--pattern",
                        &text,
                    ],
                );
                if out.status.success() {
                    patterns.push(text);
                }
                i += 1;
            }
            (keys, patterns)
        })
    };

    // An import of 200 patterns, killed part-way: all or nothing.
    let import = s.join("import.json");
    let many: Vec<String> = (0..200)
        .map(|i| format!(r#"{{"pattern": "torn pattern {i}"}}"#))
        .collect();
    std::fs::write(&import, format!("[{}]", many.join(","))).unwrap();
    let mut torn = support::host_cmd(&s, &[])
        .args(["patterns", "import", "--account", "torn"])
        .arg(&import)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(15));
    let _ = torn.kill();
    let _ = torn.wait();

    std::thread::sleep(Duration::from_millis(1500));
    host.kill(); // SIGKILL, mid-load
    stop.store(true, Ordering::SeqCst);
    let acknowledged: Vec<(String, u64)> = load.into_iter().map(|t| t.join().unwrap()).collect();
    let (keys, patterns) = writer.join().unwrap();
    assert!(
        acknowledged.iter().map(|(_, n)| n).sum::<u64>() > 0,
        "the server was under load"
    );
    assert!(keys.len() >= 8 && patterns.len() >= 8);

    // The file opens cleanly and is intact.
    let db = rusqlite::Connection::open(state.db()).unwrap();
    let check: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(check, "ok");
    let mode: String = db
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    // Every acknowledged request's count is there, in the counters' file.
    drop(db);
    let db = rusqlite::Connection::open(state.path().join("sqlite_rate.db")).unwrap();
    let window = support::NOW_MS / 60_000;
    for (key, n) in &acknowledged {
        let counter = RecordKey::rate_counter(&KeyHash::of(key), window);
        let value: Vec<u8> = db
            .query_row(
                "SELECT value FROM spin_key_value WHERE store = 'rate' AND key = ?1",
                [counter.key()],
                |r| r.get(0),
            )
            .unwrap();
        let stored = i64::from_le_bytes(value.try_into().unwrap());
        assert!(
            stored >= i64::try_from(*n).unwrap(),
            "{stored} counted < {n} acknowledged"
        );
    }
    drop(db);

    // A new server: every acknowledged key works, every pattern is there.
    let host = Host::start(&s, &[]);
    for key in &keys {
        assert_eq!(
            host.get("/v1/filters", key).status,
            200,
            "acknowledged key lost"
        );
    }
    let body = String::from_utf8_lossy(&host.get("/v1/filters", &keys[0]).body).into_owned();
    for text in &patterns {
        assert!(
            body.contains(text.as_str()),
            "acknowledged pattern {text:?} lost"
        );
    }
    let listed = admin_ok(&s, &[], &["patterns", "list", "--account", "torn"]);
    let torn_count = listed.matches("torn pattern").count();
    assert!(
        torn_count == 0 || torn_count == 200,
        "a killed import left {torn_count} patterns"
    );
}

//! Bad days for the store, for real: a `redis-server` that stops answering,
//! is killed and comes back; no Redis at all; a SQLite file on a volume that
//! fills up. What must hold: a request gets the core's 503 within the store
//! deadline (never a hang, never an admitted request whose count was not
//! written), the host serves again by itself soon after the store returns,
//! and the admin tool and `serve` fail within seconds.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use noise_filter_core::Rejection;
use support::{Host, LIMIT_PER_MINUTE, RedisServer, Reply, TempDir, admin, host_cmd};

/// The store deadline these tests give the host.
const DEADLINE_MS: u64 = 300;
/// What a refused request may take beyond the deadline (process scheduling
/// on a loaded two-core machine; the point is seconds, not minutes).
const SLACK: Duration = Duration::from_millis(1_500);
/// How soon after the store returns the host must serve again.
const RECOVERY: Duration = Duration::from_secs(5);

fn timed_get(host: &Host, key: &str) -> (Reply, Duration) {
    let started = Instant::now();
    let reply = host.get("/v1/filters", key);
    (reply, started.elapsed())
}

/// The store's 503, exactly as the core words it, within the deadline.
fn assert_store_failure(host: &Host, key: &str, when: &str) {
    let (reply, took) = timed_get(host, key);
    assert_eq!(
        reply.status,
        503,
        "{when}: {}",
        String::from_utf8_lossy(&reply.body)
    );
    assert_eq!(reply.body, Rejection::StoreUnavailable.body(), "{when}");
    assert!(
        took <= Duration::from_millis(DEADLINE_MS) + SLACK,
        "{when}: the 503 took {took:?}"
    );
}

/// Polls until a request is served again; returns how long that took.
fn wait_for_200(host: &Host, key: &str, when: &str) -> Duration {
    let started = Instant::now();
    loop {
        let reply = host.get("/v1/filters", key);
        if reply.status == 200 {
            return started.elapsed();
        }
        assert_eq!(
            reply.status, 503,
            "{when}: only the store's 503 while it is away"
        );
        assert!(
            started.elapsed() < RECOVERY,
            "{when}: still {} after {:?}",
            reply.status,
            started.elapsed()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn a_redis_that_hangs_or_dies_costs_a_request_its_deadline_and_comes_back() {
    // An append-only file synced on every write: the key survives SIGKILL.
    let Some(mut redis) =
        RedisServer::start_with(&["--appendonly", "yes", "--appendfsync", "always"])
    else {
        return;
    };
    let state = TempDir::new("redis-faults");
    let deadline = DEADLINE_MS.to_string();
    let store = [
        "--store",
        redis.url.as_str(),
        "--store-timeout-ms",
        deadline.as_str(),
    ];
    let key = support::create_key(state.path(), &store, "acme");
    let host = Host::start(state.path(), &store);
    assert_eq!(host.get("/v1/filters", &key).status, 200);

    // Stopped: connections stay open and nothing answers.
    redis.pause();
    for _ in 0..5 {
        assert_store_failure(&host, &key, "redis stopped");
    }
    redis.resume();
    let back = wait_for_200(&host, &key, "after SIGCONT");
    println!("served again {back:?} after redis resumed");

    // Killed: connections refused.
    redis.kill();
    for _ in 0..5 {
        assert_store_failure(&host, &key, "redis killed");
    }
    redis.restart();
    let back = wait_for_200(&host, &key, "after restart");
    println!("served again {back:?} after redis restarted");
    // The count went on from what Redis kept: no request was admitted
    // without its count.
    let reply = host.get("/v1/filters", &key);
    assert_eq!(reply.status, 200);
    assert!(support::remaining(&reply) < 999 - 1);
}

#[test]
fn admin_and_serve_fail_within_seconds_without_redis() {
    let state = TempDir::new("redis-none");
    // A port nothing listens on.
    let port = support::free_port();
    let refused = format!("redis://:s3cret@127.0.0.1:{port}");
    // A server that accepts connections and never answers.
    let Some(hung) = RedisServer::start() else {
        return;
    };
    hung.pause();
    let silent = hung.url.clone();
    for url in [&refused, &silent] {
        let store = ["--store", url.as_str()];
        let started = Instant::now();
        let out = admin(state.path(), &store, &["keys", "list"]);
        let took = started.elapsed();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{url}: keys list succeeded");
        assert!(
            took < Duration::from_secs(8),
            "{url}: keys list took {took:?}"
        );
        assert!(
            !stderr.contains("s3cret"),
            "the password is shown: {stderr}"
        );

        let started = Instant::now();
        let mut serve = host_cmd(state.path(), &store)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let status = loop {
            if let Some(status) = serve.try_wait().unwrap() {
                break status;
            }
            if started.elapsed() > Duration::from_secs(8) {
                let _ = serve.kill();
                let _ = serve.wait();
                panic!("{url}: serve still running after 8 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert!(!status.success(), "{url}: serve started");
    }
}

/// A small tmpfs mounted for the test, unmounted when dropped.
struct SmallVolume {
    dir: TempDir,
}

impl SmallVolume {
    /// `None`, after saying why, where the test may not mount one.
    fn mount(size: &str) -> Option<SmallVolume> {
        let dir = TempDir::new("full-disk");
        let mounted = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if !mounted {
            println!(
                "SKIPPED: cannot mount a tmpfs here (needs root); the full-disk test did not run"
            );
            return None;
        }
        Some(SmallVolume { dir })
    }

    /// Writes a file until the volume is full.
    fn fill(&self) -> std::path::PathBuf {
        use std::io::Write;
        let path = self.dir.path().join("filler");
        let mut file = std::fs::File::create(&path).unwrap();
        let block = vec![0u8; 4096];
        while file
            .write_all(&block)
            .and_then(|()| file.sync_data())
            .is_ok()
        {}
        path
    }
}

impl Drop for SmallVolume {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(self.dir.path()).status();
    }
}

#[test]
fn a_full_disk_refuses_instead_of_admitting_uncounted_requests() {
    let Some(volume) = SmallVolume::mount("4m") else {
        return;
    };
    let state = volume.dir.path();
    let store = ["--store", "sqlite", "--rate-store", "sqlite"];
    let key = support::create_key(state, &store, "acme");
    let host = Host::start(state, &store);
    assert_eq!(host.get("/v1/filters", &key).status, 200);

    let filler = volume.fill();
    // More requests than the limit: a count that cannot be written must not
    // be an admitted request, so at most the limit's worth of 200s (fewer:
    // each 200 is a count that did reach the file).
    let auth = format!("Bearer {key}");
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for _ in 0..LIMIT_PER_MINUTE + 100 {
        let reply = host.send("GET", "/v1/filters", &[("authorization", &auth)]);
        if reply.status == 503 {
            assert_eq!(reply.body, Rejection::StoreUnavailable.body());
        }
        *statuses.entry(reply.status).or_default() += 1;
    }
    println!("full disk: {statuses:?}");
    assert!(
        statuses.keys().all(|s| [200, 429, 503].contains(s)),
        "{statuses:?}"
    );
    assert!(
        statuses.get(&200).copied().unwrap_or(0) < LIMIT_PER_MINUTE,
        "requests admitted with counts that were never written: {statuses:?}"
    );
    assert!(statuses.contains_key(&503), "{statuses:?}");

    // Space again: served, and the key record is intact.
    std::fs::remove_file(filler).unwrap();
    let reply = host.get("/v1/filters", &key);
    assert!(
        [200, 429].contains(&reply.status),
        "{}",
        String::from_utf8_lossy(&reply.body)
    );
    let listed = support::admin_ok(state, &store, &["keys", "list"]);
    assert!(listed.contains("acme"), "{listed}");
}

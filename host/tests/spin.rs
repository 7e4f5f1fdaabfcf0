//! The component under real Spin (`spin up`), as a Spin user runs it: the
//! request table of `http.rs` answered with the core's bytes, on Spin's
//! SQLite store and on a real Redis; and two `spin up` instances on one
//! Redis holding the rate limit exactly, one of them with the runtime
//! config of the SpinKube Secret in `deploy/spinkube/`.
//!
//! Spin is found through `SPIN_BIN`, else `spin` on PATH (`cargo xtask ci`
//! installs Spin 4.0.2 and sets `SPIN_BIN`); without it the tests say they
//! were skipped. Keys and patterns are written by the host's admin tool
//! into the same SQLite file or Redis that `spin up` then reads.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use noise_filter_core::{MemoryStore, Response, UnixMillis};
use support::table::{Table, fixture_in};
use support::{LIMIT_PER_MINUTE, RedisServer, Reply, TempDir};

/// The Spin CLI, or `None` after saying the test is skipped.
fn spin_bin() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("SPIN_BIN") {
        return Some(PathBuf::from(bin));
    }
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .map(|dir| dir.join("spin"))
            .find(|candidate| candidate.is_file())
    });
    if on_path.is_none() {
        println!(
            "SKIPPED: no Spin (set SPIN_BIN, or put spin on PATH; CI installs Spin 4.0.2 \
             from ../shared/tools/spin)"
        );
    }
    on_path
}

/// A `spin up` of the component, killed when dropped. `spin up` runs the
/// app in a child process (`spin trigger http`) that outlives a killed
/// parent, so `spin up` gets a process group of its own and the whole group
/// is killed.
struct SpinUp {
    child: Child,
    addr: String,
}

impl Drop for SpinUp {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

/// The app folder: `spin.toml` as the repository ships it, its `source`
/// pointed at the component the tests built, and a runtime config.
fn app(dir: &Path, runtime_config: &str) {
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../spin-app/spin.toml"),
    )
    .unwrap();
    let source = manifest
        .lines()
        .find(|l| l.starts_with("source = "))
        .expect("spin.toml has a source");
    let manifest = manifest.replace(
        source,
        &format!("source = {:?}", support::component().display().to_string()),
    );
    std::fs::write(dir.join("spin.toml"), manifest).unwrap();
    std::fs::write(dir.join("runtime-config.toml"), runtime_config).unwrap();
}

fn spin_up(spin: &Path, dir: &Path) -> SpinUp {
    let addr = format!("127.0.0.1:{}", support::free_port());
    let mut child = Command::new(spin)
        .current_dir(dir)
        .args([
            "up",
            "--runtime-config-file",
            "runtime-config.toml",
            "--listen",
        ])
        .arg(&addr)
        .env("SPIN_DISABLE_TELEMETRY", "1")
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spin up starts");
    // Spin says where it serves once it is ready.
    let stdout = child.stdout.take().unwrap();
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut ready = Some(ready_tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if line.contains("Serving http://")
                && let Some(tx) = ready.take()
            {
                let _ = tx.send(());
            }
        }
    });
    let up = SpinUp { child, addr };
    ready_rx
        .recv_timeout(Duration::from_secs(60))
        .expect("spin up did not say it was serving within 60 s");
    up
}

fn now() -> UnixMillis {
    UnixMillis(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_millis() as u64,
    )
}

fn same(reply: &Reply, core: &Response) -> bool {
    let want: Vec<(String, String)> = core
        .headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.clone()))
        .collect();
    reply.status == core.status
        && reply.without_framing() == want
        && reply.body[..] == core.body[..]
}

/// Sends every row of the table to `addr`; each answer must be the core's
/// for the same request against the same records, at Spin's clock: the
/// core's answer is computed for the instant before the request was sent
/// and the one after its answer came, and Spin's must be one of the two
/// (they differ only when a second, or a window, turned in between).
fn run_table(addr: &str, table: &Table, mut core: MemoryStore) {
    for (name, method, target, headers, status, _) in table.rows() {
        let before = now();
        let reply = support::send(addr, method, target, &headers);
        let after = now();
        let (mut early, mut late) = (core.clone(), core.clone());
        let at_before = support::core_answer_at(&mut early, method, target, &headers, before);
        let at_after = support::core_answer_at(&mut late, method, target, &headers, after);
        core = if same(&reply, &at_before) {
            early
        } else if same(&reply, &at_after) {
            late
        } else {
            // Show the difference against the later answer.
            support::assert_same(&reply, &at_after, name);
            unreachable!()
        };
        assert_eq!(reply.status, status, "{name}");
    }
}

const SQLITE_CONFIG: &str = "[key_value_store.rate]\ntype = \"spin\"\n";

/// The runtime config a SpinKube deployment gets: the `runtime-config.toml`
/// of `deploy/spinkube/runtime-config.secret.yaml`, its cluster Redis
/// address replaced by `url`.
fn spinkube_config(url: &str) -> String {
    let secret = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/spinkube/runtime-config.secret.yaml"),
    )
    .unwrap();
    // The block scalar under `runtime-config.toml: |`, indented four spaces.
    let config: String = secret
        .lines()
        .skip_while(|line| line.trim() != "runtime-config.toml: |")
        .skip(1)
        .take_while(|line| line.is_empty() || line.starts_with("    "))
        .map(|line| format!("{}\n", line.strip_prefix("    ").unwrap_or(line)))
        .collect();
    let documented = "url = \"redis://redis.noise-filter.svc.cluster.local:6379\"";
    assert_eq!(config.matches(documented).count(), 2, "{config}");
    config.replace(documented, &format!("url = {url:?}"))
}

fn redis_config(url: &str) -> String {
    format!(
        "[key_value_store.default]\ntype = \"redis\"\nurl = \"{url}\"\n\n\
         [key_value_store.rate]\ntype = \"redis\"\nurl = \"{url}\"\n"
    )
}

#[test]
fn the_table_under_spin_on_sqlite() {
    let Some(spin) = spin_bin() else { return };
    let dir = TempDir::new("spin-sqlite");
    app(dir.path(), SQLITE_CONFIG);
    // Spin's default store: `.spin/sqlite_key_value.db` beside spin.toml.
    let state = TempDir(dir.path().join(".spin"));
    std::fs::create_dir_all(state.path()).unwrap();
    let f = fixture_in(state, &[]);
    let core = support::memory_copy(&f.state.db());
    let up = spin_up(&spin, dir.path());
    run_table(&up.addr, &Table::new(&f), core);
}

#[test]
fn the_table_under_spin_on_redis() {
    let Some(spin) = spin_bin() else { return };
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let dir = TempDir::new("spin-redis");
    app(dir.path(), &redis_config(&redis.url));
    let f = fixture_in(TempDir::new("spin-redis-admin"), &["--store", &redis.url]);
    let core = support::memory_copy_of_redis(&redis.url);
    let up = spin_up(&spin, dir.path());
    run_table(&up.addr, &Table::new(&f), core);
}

#[test]
fn two_spin_instances_on_one_redis_admit_exactly_the_limit() {
    let Some(spin) = spin_bin() else { return };
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let store = ["--store", redis.url.as_str()];
    let admin = TempDir::new("spin-two-admin");
    let key = support::create_key(admin.path(), &store, "acme");
    let (one, two) = (TempDir::new("spin-one"), TempDir::new("spin-two"));
    // One with the repository's Redis runtime config, one with the
    // SpinKube Secret's.
    app(one.path(), &redis_config(&redis.url));
    app(two.path(), &spinkube_config(&redis.url));
    let instances = [spin_up(&spin, one.path()), spin_up(&spin, two.path())];
    // The whole burst inside one window: the sliding window would admit
    // more across a boundary.
    let into_minute = now().0 % 60_000;
    if into_minute > 40_000 {
        std::thread::sleep(Duration::from_millis(60_000 - into_minute + 500));
    }
    let addrs: Vec<String> = instances.iter().map(|i| i.addr.clone()).collect();
    let started = Instant::now();
    let (ok, limited, lost) = support::spread(&addrs, &key, LIMIT_PER_MINUTE + 100);
    println!(
        "two spin instances: {ok} admitted, {limited} limited in {:?}",
        started.elapsed()
    );
    assert_eq!(lost, 0, "every request answered");
    assert_eq!((ok, limited), (LIMIT_PER_MINUTE, 100));
}

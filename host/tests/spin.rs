//! The component under real Spin (`spin up`), as a Spin user runs it: the
//! request table of `http.rs` answered with the core's bytes, on Spin's
//! SQLite store and on a real Redis; two `spin up` instances on one
//! Redis holding the rate limit exactly, one of them with the runtime
//! config of the SpinKube Secret in `deploy/spinkube/`; and the admin API
//! with the secret variable set, on both stores: a key made over it served,
//! an exclusion and an end taking effect, concurrent admins losing nothing,
//! no secret in any log (without the variable, the table's 404).
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
    /// Everything `spin up` printed on stdout.
    stdout: std::sync::Arc<std::sync::Mutex<String>>,
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
    spin_up_with(spin, dir, None)
}

/// `spin up` with the `admin_token` variable set, as `spin up` takes one
/// (`SPIN_VARIABLE_ADMIN_TOKEN`); its stderr goes to `spin.stderr` in `dir`.
fn spin_up_with(spin: &Path, dir: &Path, admin_token: Option<&str>) -> SpinUp {
    let addr = format!("127.0.0.1:{}", support::free_port());
    let mut command = Command::new(spin);
    command
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
        .stderr(std::fs::File::create(dir.join("spin.stderr")).unwrap());
    if let Some(token) = admin_token {
        command.env("SPIN_VARIABLE_ADMIN_TOKEN", token);
    }
    let mut child = command.spawn().expect("spin up starts");
    // Spin says where it serves once it is ready.
    let stdout = child.stdout.take().unwrap();
    let printed = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    let sink = printed.clone();
    std::thread::spawn(move || {
        let mut ready = Some(ready_tx);
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            sink.lock().unwrap().push_str(&format!("{line}\n"));
            if line.contains("Serving http://")
                && let Some(tx) = ready.take()
            {
                let _ = tx.send(());
            }
        }
    });
    let up = SpinUp {
        child,
        addr,
        stdout: printed,
    };
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
    admin_api_is_off(&up);
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
    admin_api_is_off(&up);
}

/// Without the variable, the admin API's paths answer what any unknown
/// path answers, token or not.
fn admin_api_is_off(up: &SpinUp) {
    let unknown = support::send(&up.addr, "GET", "/nope", &[]);
    let auth = format!("Bearer {ADMIN_TOKEN}");
    for (method, target) in [("GET", "/admin/v1/keys"), ("POST", "/admin/v1/keys")] {
        let reply = support::send_body(
            &up.addr,
            method,
            target,
            &[("authorization", &auth)],
            Some(br#"{"account":"acme"}"#),
        );
        assert_eq!(reply.status, 404, "{method} {target}");
        assert_eq!(reply.body, unknown.body);
    }
}

const ADMIN_TOKEN: &str = "a-spin-admin-token-0123456789abcdef0123456789";

/// A call of the admin API.
fn admin(up: &SpinUp, method: &str, target: &str, token: &str, body: Option<&str>) -> Reply {
    let auth = format!("Bearer {token}");
    support::send_body(
        &up.addr,
        method,
        target,
        &[("authorization", &auth)],
        body.map(str::as_bytes),
    )
}

fn get(up: &SpinUp, target: &str, key: &str) -> Reply {
    support::send(
        &up.addr,
        "GET",
        target,
        &[("authorization", &format!("Bearer {key}"))],
    )
}

/// The admin API under Spin, the variable set: what issue 28 asks of it.
fn the_admin_api(spin: &Path, dir: &Path) {
    let up = spin_up_with(spin, dir, Some(ADMIN_TOKEN));
    // A key made over the API is served.
    let created = admin(
        &up,
        "POST",
        "/admin/v1/keys",
        ADMIN_TOKEN,
        Some(r#"{"account":"acme","label":"spin"}"#),
    );
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let key = created.json()["key"].as_str().unwrap().to_owned();
    let first = get(&up, "/v1/filters", &key);
    assert_eq!(first.status, 200);
    assert!(first.ids().contains(&"googlebot".to_owned()));
    // An exclusion leaves the next answer.
    let excluded = admin(
        &up,
        "POST",
        "/admin/v1/accounts/acme/exclusions",
        ADMIN_TOKEN,
        Some(r#"{"id":"googlebot"}"#),
    );
    assert_eq!(excluded.status, 201);
    assert!(
        !get(&up, "/v1/filters", &key)
            .ids()
            .contains(&"googlebot".to_owned())
    );
    // A pattern that ends three seconds from now is served, then not, by
    // Spin's own clock; nothing runs in between.
    let until = noise_filter_core::Until(UnixMillis(now().0 + 3_000));
    let body = format!(r#"{{"pattern":"muted for three seconds","until":"{until}"}}"#);
    let added = admin(
        &up,
        "POST",
        "/admin/v1/accounts/acme/patterns",
        ADMIN_TOKEN,
        Some(&body),
    );
    assert_eq!(added.status, 201);
    let served = get(&up, "/v1/filters?categories=custom", &key);
    assert_eq!(served.ids(), ["custom-1"]);
    while now() <= until.0 {
        std::thread::sleep(Duration::from_millis(100));
    }
    let ended = get(&up, "/v1/filters?categories=custom", &key);
    assert!(ended.ids().is_empty());
    assert_ne!(ended.header("etag"), served.header("etag"));
    // Wrong token, no token: 401.
    for token in ["w".repeat(44).as_str(), ""] {
        assert_eq!(admin(&up, "GET", "/admin/v1/keys", token, None).status, 401);
    }
    // Concurrent admins lose nothing (on Redis, through Spin's own
    // compare-and-swap, which reports every swap as failed: the core reads
    // back what landed).
    let threads: Vec<_> = (0..12)
        .map(|i| {
            let addr = up.addr.clone();
            std::thread::spawn(move || {
                let body = format!(r#"{{"pattern":"concurrent admin {i}"}}"#);
                let reply = support::send_body(
                    &addr,
                    "POST",
                    "/admin/v1/accounts/acme/patterns",
                    &[("authorization", &format!("Bearer {ADMIN_TOKEN}"))],
                    Some(body.as_bytes()),
                );
                (
                    reply.status,
                    String::from_utf8_lossy(&reply.body).into_owned(),
                )
            })
        })
        .collect();
    for thread in threads {
        let (status, body) = thread.join().unwrap();
        assert_eq!(status, 201, "{body}");
    }
    let listed = admin(
        &up,
        "GET",
        "/admin/v1/accounts/acme/patterns",
        ADMIN_TOKEN,
        None,
    );
    let patterns = listed.json()["patterns"].as_array().unwrap().clone();
    let concurrent: std::collections::BTreeSet<&str> = patterns
        .iter()
        .filter_map(|p| p["pattern"].as_str())
        .filter(|p| p.starts_with("concurrent admin"))
        .collect();
    assert_eq!(concurrent.len(), 12, "every one, once: {patterns:?}");
    assert_eq!(patterns.len(), 13);
    // Revoked over the API: the key is refused.
    let hash = created.json()["hash"].as_str().unwrap()[..10].to_owned();
    let revoke = format!("/admin/v1/keys/{hash}/revoke");
    assert_eq!(admin(&up, "POST", &revoke, ADMIN_TOKEN, None).status, 200);
    assert_eq!(get(&up, "/v1/filters", &key).status, 401);
    // Spin keeps no request log; the component's stderr has one line per
    // change and refused call, and no secret is in any of what Spin wrote.
    drop_spin(up, dir, &[ADMIN_TOKEN, &key]);
}

/// Stops `up` and checks what it and the component wrote: the component's
/// lines in Spin's log folder, no `secrets` anywhere.
fn drop_spin(up: SpinUp, dir: &Path, secrets: &[&str]) {
    let printed = up.stdout.lock().unwrap().clone();
    drop(up);
    let stderr = std::fs::read_to_string(dir.join(".spin/logs/noise-filter_stderr.txt"))
        .expect("Spin keeps the component's stderr in .spin/logs");
    let audits = stderr
        .lines()
        .filter(|l| l.starts_with("admin: audit "))
        .count();
    // The key, the exclusion, 1 + 12 patterns, the revocation.
    assert_eq!(audits, 16, "{stderr}");
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("admin: refused status=401"))
            .count(),
        2,
        "{stderr}"
    );
    let spin_stderr = std::fs::read_to_string(dir.join("spin.stderr")).unwrap_or_default();
    for secret in secrets {
        for (what, text) in [
            ("component", &stderr),
            ("spin stdout", &printed),
            ("spin stderr", &spin_stderr),
        ] {
            assert!(
                !text.contains(secret),
                "a secret is in the {what} log:\n{text}"
            );
        }
    }
}

#[test]
fn the_admin_api_under_spin_on_sqlite() {
    let Some(spin) = spin_bin() else { return };
    let dir = TempDir::new("spin-admin-sqlite");
    app(dir.path(), SQLITE_CONFIG);
    the_admin_api(&spin, dir.path());
}

#[test]
fn the_admin_api_under_spin_on_redis() {
    let Some(spin) = spin_bin() else { return };
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let dir = TempDir::new("spin-admin-redis");
    app(dir.path(), &redis_config(&redis.url));
    the_admin_api(&spin, dir.path());
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

/// The manifests of `deploy/spinkube/` name what each other defines, and
/// what the app and the core define: the namespace, the Redis Service the
/// runtime config's URL reaches, the Secrets the SpinApp loads, the Spin
/// variable of `spin.toml`, the label spin-operator gives the app's pods,
/// and the Ingress routing exactly the published paths (never `/admin/`).
/// No cluster is reachable from here; what can be checked without one is.
#[test]
fn the_spinkube_manifests_agree_with_each_other_and_the_app() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/spinkube");
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    let (namespace, redis, config, app, ingress) = (
        read("namespace.yaml"),
        read("redis.yaml"),
        read("runtime-config.secret.yaml"),
        read("spinapp.yaml"),
        read("ingress.yaml"),
    );
    let value = |text: &str, key: &str| -> Vec<String> {
        text.lines()
            .filter_map(|l| l.trim().strip_prefix(&format!("{key}: ")))
            .map(|v| v.trim_matches('"').to_owned())
            .collect()
    };
    assert_eq!(value(&namespace, "name"), ["noise-filter"]);
    for (file, text) in [
        ("redis.yaml", &redis),
        ("runtime-config.secret.yaml", &config),
        ("spinapp.yaml", &app),
        ("ingress.yaml", &ingress),
    ] {
        let kinds = text.lines().filter(|l| l.starts_with("kind: ")).count();
        assert_eq!(
            value(text, "namespace").len(),
            kinds,
            "{file}: every object in the namespace"
        );
        assert!(
            value(text, "namespace").iter().all(|n| n == "noise-filter"),
            "{file}"
        );
    }
    // Redis: persistent, and where the runtime config looks for it.
    assert!(redis.contains(r#"args: ["--appendonly", "yes""#), "{redis}");
    assert!(redis.contains("volumeClaimTemplates:"));
    assert!(redis.contains("kind: Service\nmetadata:\n  name: redis\n  namespace: noise-filter"));
    assert_eq!(
        config
            .matches("redis://redis.noise-filter.svc.cluster.local:6379")
            .count(),
        2
    );
    // The SpinApp: its runtime config's Secret, its variable.
    let app_name = value(&app, "name")[0].clone();
    assert_eq!(app_name, "noise-filter");
    assert_eq!(value(&app, "loadFromSecret"), value(&config, "name"));
    let manifest = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../spin-app/spin.toml"),
    )
    .unwrap();
    assert!(app.contains("    - name: admin_token\n"));
    assert!(manifest.contains("admin_token = { default = \"\", secret = true }"));
    assert!(manifest.contains("admin_token = \"{{ admin_token }}\""));
    // Only the app's pods reach Redis, by the label spin-operator sets.
    assert!(redis.contains(&format!("core.spinkube.dev/app-name: {app_name}")));
    // The Ingress: the published paths, exactly, to the app's Service.
    let paths: Vec<String> = value(&ingress, "- path");
    let published: Vec<String> = noise_filter_core::Variant::ALL
        .map(|v| v.path().to_owned())
        .to_vec();
    assert_eq!(paths, published);
    assert!(
        !ingress
            .lines()
            .any(|l| l.contains("path:") && l.contains("/admin"))
    );
    assert_eq!(value(&ingress, "pathType"), ["Exact", "Exact"]);
    assert!(
        value(&ingress, "name")
            .iter()
            .filter(|n| **n == app_name)
            .count()
            >= 2
    );
}

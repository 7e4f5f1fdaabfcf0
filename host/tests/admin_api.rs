//! The admin API through the real host, and the CLI on it: off without a
//! token, keys and exclusions made over HTTP and served at once, a pattern
//! that ends at the host's clock, the CLI's `--remote` printing what it
//! prints on the store itself, an account moved from SQLite to Redis, the
//! component's own lines in the host's JSON log, and what is never logged.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::process::Command;

use support::{Host, RedisServer, TempDir, host_cmd};

const TOKEN: &str = "an-admin-token-for-the-tests-0123456789abcdef";

/// `serve` with the admin token in the environment, as an operator sets it.
fn host_with_token(state: &std::path::Path, store: &[&str], extra: &[&str]) -> Host {
    let mut command = host_cmd(state, store);
    command.env("NOISE_FILTER_ADMIN_TOKEN", TOKEN);
    Host::start_command(state, command, extra)
}

fn fixed(ms: u64) -> Vec<String> {
    vec!["--fixed-time-ms".to_owned(), ms.to_string()]
}

fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// The CLI on a deployment's API: `--remote`, the token in the environment.
fn remote(host: &Host, args: &[&str]) -> std::process::Output {
    Command::new(support::host_bin())
        .env("NOISE_FILTER_ADMIN_TOKEN", TOKEN)
        .args(["--remote", &format!("http://{}", host.addr)])
        .args(args)
        .output()
        .unwrap()
}

fn ok(out: std::process::Output, what: &str) -> (String, String) {
    assert!(
        out.status.success(),
        "{what} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn without_a_token_the_admin_api_is_any_unknown_path() {
    let state = TempDir::new("admin-off");
    let host = Host::start(state.path(), &[]);
    let unknown = host.send("GET", "/nope", &[]);
    for (method, target) in [("GET", "/admin/v1/keys"), ("POST", "/admin/v1/keys")] {
        let reply = host.admin(method, target, TOKEN, Some(r#"{"account":"acme"}"#));
        assert_eq!(reply.status, 404, "{method} {target}");
        assert_eq!(reply.body, unknown.body);
        assert_eq!(reply.without_framing(), unknown.without_framing());
    }
    // And the CLI says what a 404 there means.
    let out = remote(&host, &["keys", "list"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no admin API there"), "{err}");
}

#[test]
fn a_key_and_an_exclusion_made_over_http_take_effect_at_once() {
    let state = TempDir::new("admin-http");
    let host = host_with_token(state.path(), &[], &strs(&fixed(support::NOW_MS)));
    let created = host.admin(
        "POST",
        "/admin/v1/keys",
        TOKEN,
        Some(r#"{"account":"acme","label":"first"}"#),
    );
    assert_eq!(created.status, 201);
    assert_eq!(created.header("cache-control"), Some("no-store"));
    assert_eq!(created.header("access-control-allow-origin"), None);
    let key = created.json()["key"].as_str().unwrap().to_owned();
    let before = host.get("/v1/filters", &key);
    assert_eq!(before.status, 200);
    assert!(before.ids().contains(&"googlebot".to_owned()));
    let excluded = host.admin(
        "POST",
        "/admin/v1/accounts/acme/exclusions",
        TOKEN,
        Some(r#"{"id":"googlebot"}"#),
    );
    assert_eq!(excluded.status, 201);
    let after = host.get("/v1/filters", &key);
    assert!(!after.ids().contains(&"googlebot".to_owned()));
    assert_ne!(after.header("etag"), before.header("etag"));
    // Wrong or no token: 401, whatever the route.
    for token in ["x".repeat(40).as_str(), ""] {
        let reply = host.admin("GET", "/admin/v1/keys", token, None);
        assert_eq!(reply.status, 401, "{token:?}");
        assert_eq!(reply.header("www-authenticate"), Some("Bearer"));
    }
}

#[test]
fn a_pattern_ends_at_its_date_on_the_hosts_clock() {
    let state = TempDir::new("admin-ends");
    let s = state.path();
    let now = support::NOW_MS;
    let host = host_with_token(s, &[], &strs(&fixed(now)));
    let key = host
        .admin(
            "POST",
            "/admin/v1/keys",
            TOKEN,
            Some(r#"{"account":"acme"}"#),
        )
        .json()["key"]
        .as_str()
        .unwrap()
        .to_owned();
    // One hour after the fixed clock.
    let until = now + 3_600_000;
    let body = format!(
        r#"[{{"pattern":"muted until the fix ships","until":"{}"}},{{"pattern":"kept"}}]"#,
        noise_filter_core::Until(noise_filter_core::UnixMillis(until))
    );
    let added = host.admin(
        "POST",
        "/admin/v1/accounts/acme/patterns",
        TOKEN,
        Some(&body),
    );
    assert_eq!(added.status, 201);
    let served = host.get("/v1/filters?categories=custom", &key);
    assert_eq!(served.ids(), ["custom-1", "custom-2"]);
    drop(host);
    // The same store, the clock past the end: no process ran in between.
    let later = host_with_token(s, &[], &strs(&fixed(until)));
    let after = later.get("/v1/filters?categories=custom", &key);
    assert_eq!(after.ids(), ["custom-2"]);
    assert_ne!(after.header("etag"), served.header("etag"));
}

#[test]
fn the_cli_prints_the_same_on_the_api_as_on_the_store() {
    let state = TempDir::new("admin-remote");
    let s = state.path();
    let host = host_with_token(s, &[], &[]);
    // Changes through the API, named by where they were written.
    let (key, err) = ok(
        remote(
            &host,
            &["keys", "create", "--account", "acme", "--label", "ci"],
        ),
        "keys create",
    );
    let key = key.trim().to_owned();
    assert!(key.starts_with("nf_"), "{key}");
    assert!(
        err.contains(&format!("wrote to admin API http://{}", host.addr)),
        "{err}"
    );
    assert_eq!(host.get("/api/v1/filters", &key).status, 200);
    ok(
        remote(
            &host,
            &[
                "patterns",
                "add",
                "--account",
                "acme",
                "--pattern",
                "acme noise",
                "--until",
                "2099-01-01",
            ],
        ),
        "patterns add",
    );
    ok(
        remote(
            &host,
            &[
                "exclusions",
                "add",
                "--account",
                "acme",
                "--id",
                "googlebot",
                "--category",
                "NETWORK_ISSUE",
            ],
        ),
        "exclusions add",
    );
    // Every listing, text and JSON: the store the server reads (the local
    // CLI on its file) and the API print the same bytes.
    for args in [
        &["keys", "list"][..],
        &["keys", "list", "--account", "acme"],
        &["patterns", "list", "--account", "acme"],
        &["exclusions", "list", "--account", "acme"],
    ] {
        for json in [false, true] {
            let mut args = args.to_vec();
            if json {
                args.insert(0, "--json");
            }
            let (over_api, _) = ok(remote(&host, &args), &format!("{args:?} remote"));
            let local = support::admin_ok(s, &[], &args);
            assert_eq!(over_api, local, "{args:?}");
        }
    }
    // A refusal reads the same too: the core's words.
    let over_api = remote(
        &host,
        &["patterns", "remove", "--account", "acme", "custom-9"],
    );
    let local = support::admin_err(
        s,
        &[],
        &["patterns", "remove", "--account", "acme", "custom-9"],
    );
    assert!(!over_api.status.success());
    assert_eq!(String::from_utf8_lossy(&over_api.stderr), local);
    // The token and the key never reach the host's log.
    let log = host.stderr_so_far();
    assert!(!log.contains(TOKEN) && !log.contains(&key), "{log}");
}

#[test]
fn concurrent_admin_calls_over_http_lose_nothing() {
    let state = TempDir::new("admin-concurrent");
    let host = host_with_token(state.path(), &[], &[]);
    let threads: Vec<_> = (0..16)
        .map(|i| {
            let addr = host.addr.clone();
            std::thread::spawn(move || {
                let body = format!(r#"{{"pattern":"added by admin {i}"}}"#);
                support::send_body(
                    &addr,
                    "POST",
                    "/admin/v1/accounts/acme/patterns",
                    &[("authorization", &format!("Bearer {TOKEN}"))],
                    Some(body.as_bytes()),
                )
                .status
            })
        })
        .collect();
    for thread in threads {
        assert_eq!(thread.join().unwrap(), 201);
    }
    let listed = host.admin("GET", "/admin/v1/accounts/acme/patterns", TOKEN, None);
    let mut texts: Vec<String> = listed.json()["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["pattern"].as_str().unwrap().to_owned())
        .collect();
    texts.sort();
    let mut expected: Vec<String> = (0..16).map(|i| format!("added by admin {i}")).collect();
    expected.sort();
    assert_eq!(texts, expected);
}

#[test]
fn the_components_lines_are_the_hosts_json_log_lines_and_hold_no_secret() {
    let state = TempDir::new("admin-log");
    let s = state.path();
    let mut command = host_cmd(s, &["--log-format", "json"]);
    command.env("NOISE_FILTER_ADMIN_TOKEN", TOKEN);
    let mut host = Host::start_command(s, command, &[]);
    let created = host.admin(
        "POST",
        "/admin/v1/keys",
        TOKEN,
        Some(r#"{"account":"acme"}"#),
    );
    let key = created.json()["key"].as_str().unwrap().to_owned();
    let wrong = format!("{}-wrong", &TOKEN[..20]);
    assert_eq!(
        host.admin("GET", "/admin/v1/keys", &wrong, None).status,
        401
    );
    let revoke = format!("/admin/v1/keys/{key}/revoke");
    assert_eq!(host.admin("POST", &revoke, TOKEN, None).status, 400);
    let log = host.interrupt();
    let lines: Vec<serde_json::Value> = log
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("not one JSON object ({e}): {line}"))
        })
        .collect();
    let component: Vec<&str> = lines
        .iter()
        .filter(|l| l["target"] == "component")
        .map(|l| l["message"].as_str().unwrap())
        .collect();
    assert_eq!(component.len(), 3, "{log}");
    assert!(
        component[0].starts_with("admin: audit token="),
        "{}",
        component[0]
    );
    assert!(component[0].contains("action=keys.create account=acme"));
    assert!(
        component[1].starts_with("admin: refused status=401"),
        "{}",
        component[1]
    );
    assert!(component[2].contains("status=400"), "{}", component[2]);
    for secret in [TOKEN, wrong.as_str(), key.as_str()] {
        assert!(!log.contains(secret), "{secret} is in the log:\n{log}");
    }
}

#[test]
fn an_account_moves_from_sqlite_to_redis_with_its_keys() {
    let Some(redis) = RedisServer::start() else {
        return;
    };
    let state = TempDir::new("admin-move");
    let s = state.path();
    let key = support::create_key(s, &[], "acme");
    support::add_pattern(s, &[], "acme", "acme widget noise");
    support::admin_ok(
        s,
        &[],
        &[
            "exclusions",
            "add",
            "--account",
            "acme",
            "--category",
            "bot-traffic",
        ],
    );
    let document = s.join("acme.json");
    let exported = support::admin_ok(s, &[], &["accounts", "export", "--account", "acme"]);
    assert!(!exported.contains(&key), "keys leave as hashes only");
    std::fs::write(&document, &exported).unwrap();
    let to = ["--store", redis.url.as_str()];
    let imported = support::admin_ok(s, &to, &["accounts", "import", document.to_str().unwrap()]);
    assert!(imported.contains("1 key(s) written"), "{imported}");
    // The same answer from both stores, for the key never issued again.
    let sqlite = Host::start(s, &[]);
    let on_redis = Host::start(TempDir::new("admin-move-redis").path(), &to);
    let (a, b) = (
        sqlite.get("/v1/filters", &key),
        on_redis.get("/v1/filters", &key),
    );
    assert_eq!(b.status, 200);
    assert_eq!(a.body, b.body);
    assert_eq!(a.header("etag"), b.header("etag"));
    // Again: nothing to write. Into a store where acme differs: refused.
    let again = support::admin_ok(s, &to, &["accounts", "import", document.to_str().unwrap()]);
    assert!(
        again.contains("0 key(s) written, 1 already there"),
        "{again}"
    );
    let other = TempDir::new("admin-move-other");
    support::add_pattern(other.path(), &[], "acme", "something else");
    let refused = support::admin_err(
        other.path(),
        &[],
        &["accounts", "import", document.to_str().unwrap()],
    );
    assert!(
        refused.contains("already in this store with other contents"),
        "{refused}"
    );
}

#[test]
fn admin_commands_name_their_store_and_make_none_by_surprise() {
    let state = TempDir::new("admin-where");
    let s = state.path();
    let out = support::admin(s, &[], &["keys", "create", "--account", "acme"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!(
            "wrote to sqlite {}",
            s.join("sqlite_key_value.db").display()
        )),
        "{err}"
    );
    // Outside the repository, with no --state-dir and no store there yet:
    // refused, and nothing made.
    let elsewhere = TempDir::new("admin-nowhere");
    let out = Command::new(support::host_bin())
        .current_dir(elsewhere.path())
        .args(["keys", "create", "--account", "acme"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--state-dir"), "{err}");
    assert!(!elsewhere.path().join(".spin").exists());
}

#[test]
fn a_token_setting_that_is_no_token_stops_the_start() {
    let state = TempDir::new("admin-badtoken");
    let s = state.path();
    let out = host_cmd(s, &[])
        .env("NOISE_FILTER_ADMIN_TOKEN", "short-secret")
        .args(["serve", "--listen", "127.0.0.1:0", "--component"])
        .arg(support::component())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("admin token is 32 to 512"), "{err}");
    assert!(!err.contains("short-secret"), "{err}");
    // A file works as the variable does.
    let file = s.join("admin-token");
    std::fs::write(&file, format!("{TOKEN}\n")).unwrap();
    let host = Host::start_with(s, &[], &["--admin-token-file", file.to_str().unwrap()]);
    let reply = host.admin("GET", "/admin/v1/keys", TOKEN, None);
    assert_eq!(reply.status, 200);
}

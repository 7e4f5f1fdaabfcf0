//! The served endpoint over real HTTP: the real host binary on a free port,
//! over a real SQLite store written by the admin tool, with the component's
//! clock fixed. Every answer is compared with the core's, natively, for the
//! same request against the same records at the same time.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use support::table::{INVALID, Table, fixture, hash_prefix};
use support::{Host, TempDir, admin_ok, assert_same, core_answer, memory_copy};

#[test]
fn every_answer_is_the_cores_bytes() {
    answers_are_the_cores_bytes("bytes", &[]);
}

/// The same table with a fresh instance for every request (as Spin runs a
/// WASI 0.2 component): reuse changes no byte, and neither does its absence.
#[test]
fn every_answer_is_the_cores_bytes_with_a_fresh_instance_each() {
    answers_are_the_cores_bytes("fresh", &["--max-instance-reuse-count", "1"]);
}

/// Sends every row of the table to a host started with `serve_args`; each
/// answer must be the core's.
fn answers_are_the_cores_bytes(name: &str, serve_args: &[&str]) {
    let f = fixture(name);
    let now = support::NOW_MS.to_string();
    let host = Host::start_with(
        f.state.path(),
        &[],
        &[&["--fixed-time-ms", now.as_str()], serve_args].concat(),
    );
    let mut core = memory_copy(&f.state.db());
    let table = Table::new(&f);
    let rows = table.rows();
    let a = format!("Bearer {}", f.acme);
    let mut replies = Vec::new();
    for (name, method, target, headers, status, error) in &rows {
        let reply = host.send(method, target, headers);
        let want = core_answer(&mut core, method, target, headers);
        assert_same(&reply, &want, name);
        assert_eq!(reply.status, *status, "{name}");
        if let Some(error) = error {
            assert_eq!(reply.error(), *error, "{name}");
        }
        assert_eq!(
            reply.header("access-control-allow-origin"),
            Some("*"),
            "{name}: CORS"
        );
        if reply.status != 200 && reply.status != 304 {
            assert_eq!(reply.header("cache-control"), Some("no-store"), "{name}");
        }
        if reply.status == 401 {
            assert_eq!(reply.header("www-authenticate"), Some("Bearer"), "{name}");
        }
        if reply.status == 400 || reply.status == 414 {
            assert!(!reply.error().is_empty(), "{name}");
        }
        replies.push(reply);
    }
    let by_name = |name: &str| &replies[rows.iter().position(|r| r.0 == name).unwrap()];

    // Content codings: the host sends the core's encoded bytes as they are,
    // and they decode to the identity answer.
    let gzip = by_name("A gzip (a browser's Accept-Encoding)");
    assert_eq!(gzip.header("content-encoding"), Some("gzip"));
    let mut decoded = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::GzDecoder::new(&gzip.body[..]),
        &mut decoded,
    )
    .unwrap();
    assert_eq!(decoded, by_name("variant A").body);
    assert!(gzip.body.len() * 4 < decoded.len());
    let br = by_name("A br (the usual answer)");
    assert_eq!(br.header("content-encoding"), Some("br"));
    let mut decoded = Vec::new();
    brotli_decompressor::BrotliDecompress(&mut &br.body[..], &mut decoded).unwrap();
    // Both accounts' usual answer: the same catalog bytes.
    assert_eq!(decoded, by_name("includeCustom=false").body);
    assert!(
        br.body.len() * 100 <= decoded.len() * 16,
        "brotli at most 16 %"
    );
    assert_eq!(
        by_name("codings refused: identity").header("content-encoding"),
        None
    );

    // 200: caching headers, both variants' shapes.
    let a200 = by_name("variant A");
    assert_eq!(a200.header("cache-control"), Some("public, max-age=300"));
    assert_eq!(a200.header("vary"), Some("Authorization, Accept-Encoding"));
    assert_eq!(a200.header("content-type"), Some("application/json"));
    assert!(a200.json()["version"].is_string());
    assert!(by_name("variant B").json().get("version").is_none());
    // Custom patterns: the account's own, never another's.
    assert!(a200.ids().iter().any(|id| id == "custom-1"));
    let acme_custom: Vec<_> = a200.json()["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["id"].as_str().unwrap().starts_with("custom-"))
        .map(|p| p["pattern"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        acme_custom,
        ["acme widget exploded", "acme-[0-9]+ timed out"]
    );
    let beta_body = String::from_utf8_lossy(&by_name("other account").body).into_owned();
    assert!(
        beta_body.contains("beta gadget melted") && !beta_body.contains("acme"),
        "{beta_body}"
    );
    assert!(!String::from_utf8_lossy(&by_name("includeCustom=false").body).contains("acme widget"));
    // HEAD: GET's headers, no body.
    let head = by_name("HEAD");
    assert!(head.body.is_empty());
    assert_eq!(head.header("etag"), a200.header("etag"));
    // 405 says what is allowed; the preflight says what browsers may send.
    assert_eq!(by_name("POST").header("allow"), Some("GET, HEAD, OPTIONS"));
    let preflight = by_name("preflight");
    assert!(preflight.body.is_empty());
    assert_eq!(
        preflight.header("access-control-allow-headers"),
        Some("Authorization")
    );
    assert_eq!(
        preflight.header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    assert!(preflight.header("access-control-max-age").is_some());

    // ETag → 304 with an empty body and the same caching headers.
    let etag = a200.header("etag").unwrap().to_owned();
    let conditional = [
        ("authorization", a.as_str()),
        ("if-none-match", etag.as_str()),
    ];
    let reply = host.send("GET", "/v1/filters", &conditional);
    assert_same(
        &reply,
        &core_answer(&mut core, "GET", "/v1/filters", &conditional),
        "304",
    );
    assert_eq!(reply.status, 304);
    assert!(reply.body.is_empty());
    assert_eq!(reply.header("etag"), Some(etag.as_str()));
    assert_eq!(reply.header("cache-control"), Some("public, max-age=300"));
    // A stale ETag gets the full answer.
    let stale = [
        ("authorization", a.as_str()),
        ("if-none-match", "\"stale\""),
    ];
    let reply = host.send("GET", "/v1/filters", &stale);
    assert_same(
        &reply,
        &core_answer(&mut core, "GET", "/v1/filters", &stale),
        "stale etag",
    );
    assert_eq!(reply.status, 200);
}

/// An instance serves at most `--max-instance-reuse-count` requests: ten
/// requests one after another with a count of 3 are served by four
/// instances, and with 1 by ten (the operator reads it when stopping it).
#[test]
fn instances_serve_at_most_the_reuse_count() {
    let f = fixture("reuse");
    for (count, instances) in [("3", 4), ("1", 10)] {
        let mut host =
            Host::start_with(f.state.path(), &[], &["--max-instance-reuse-count", count]);
        for _ in 0..10 {
            assert_eq!(host.get("/v1/filters", &f.acme).status, 200);
        }
        let said = host.interrupt();
        assert!(
            said.contains(&format!("requests=10 instances={instances}")),
            "reuse count {count}: {said}"
        );
    }
}

#[test]
fn admin_changes_take_effect_while_serving() {
    let f = fixture("live");
    let s = f.state.path();
    let host = Host::start(s, &[]);
    let before = host.get("/v1/filters", &f.beta);
    assert_eq!(before.status, 200);

    admin_ok(
        s,
        &[],
        &[
            "patterns",
            "add",
            "--account",
            "beta",
            "--pattern",
            "freshly added noise",
            "--id",
            "custom-fresh",
        ],
    );
    let added = host.get("/v1/filters", &f.beta);
    assert!(added.ids().contains(&"custom-fresh".to_owned()));
    assert_ne!(added.header("etag"), before.header("etag"));
    assert!(
        !host
            .get("/v1/filters", &f.acme)
            .ids()
            .contains(&"custom-fresh".to_owned()),
        "isolation"
    );

    admin_ok(
        s,
        &[],
        &["patterns", "remove", "--account", "beta", "custom-fresh"],
    );
    assert!(
        !host
            .get("/v1/filters", &f.beta)
            .ids()
            .contains(&"custom-fresh".to_owned())
    );

    admin_ok(s, &[], &["keys", "revoke", &hash_prefix(&f.beta)]);
    let refused = host.get("/api/v1/filters", &f.beta);
    assert_eq!((refused.status, refused.error().as_str()), (401, INVALID));
    assert_eq!(
        host.get("/api/v1/filters", &f.acme).status,
        200,
        "other keys unaffected"
    );
}

#[test]
fn a_demo_key_only_when_asked_for() {
    let state = TempDir::new("demo");
    // A production start on an empty store mints nothing.
    let plain = Host::start_with(state.path(), &[], &[]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let text = plain.greeting.lock().unwrap().clone();
    assert!(text.contains("0 key(s)") && !text.contains("nf_"), "{text}");
    drop(plain);
    let listed = support::admin_ok(state.path(), &[], &["keys", "list"]);
    assert!(!listed.contains("demo"), "{listed}");

    // `cargo xtask serve` asks for one.
    let host = Host::start_with(state.path(), &[], &["--demo-key"]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let greeting = loop {
        let text = host.greeting.lock().unwrap().clone();
        if text.matches("curl").count() >= 2 || std::time::Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let key = greeting
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("nf_"))
        .unwrap_or_else(|| panic!("no demo key in {greeting}"));
    assert!(greeting.contains(&format!(
        "curl -i -H 'Authorization: Bearer {key}' http://{}/v1/filters",
        host.addr
    )));
    assert!(greeting.contains("/api/v1/filters"));
    assert_eq!(host.get("/v1/filters", key).status, 200);
    drop(host);

    let again = Host::start_with(state.path(), &[], &["--demo-key"]);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let text = again.greeting.lock().unwrap().clone();
    assert!(
        text.contains("keys create") && !text.contains("nf_"),
        "{text}"
    );
}

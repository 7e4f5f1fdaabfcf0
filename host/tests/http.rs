//! The served endpoint over real HTTP: the real host binary on a free port,
//! over a real SQLite store written by the admin tool, with the component's
//! clock fixed. Every answer is compared with the core's, natively, for the
//! same request against the same records at the same time.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use support::{
    Host, TempDir, add_pattern, admin_ok, assert_same, core_answer, create_key, memory_copy,
};

struct Fixture {
    state: TempDir,
    acme: String,
    beta: String,
    revoked: String,
}

fn fixture(name: &str) -> Fixture {
    let state = TempDir::new(name);
    let s = state.path();
    let acme = create_key(s, &[], "acme");
    let beta = create_key(s, &[], "beta");
    let revoked = create_key(s, &[], "acme");
    add_pattern(s, &[], "acme", "acme widget exploded");
    admin_ok(
        s,
        &[],
        &[
            "patterns",
            "add",
            "--account",
            "acme",
            "--pattern",
            "acme-[0-9]+ timed out",
            "--type",
            "regex",
            "--category",
            "network-issue",
            "--confidence",
            "0.8",
            "--source",
            "our gateway",
        ],
    );
    add_pattern(s, &[], "beta", "beta gadget melted");
    admin_ok(s, &[], &["keys", "revoke", &hash_prefix(&revoked)]);
    Fixture {
        state,
        acme,
        beta,
        revoked,
    }
}

/// The hash prefix `keys list` shows for a key.
fn hash_prefix(key: &str) -> String {
    noise_filter_core::KeyHash::of(key).short().to_owned()
}

/// A request and what it must get: name, method, target, header lines,
/// status, `error` text.
type Row<'a> = (
    &'a str,
    &'a str,
    &'a str,
    Vec<(&'a str, &'a str)>,
    u16,
    Option<&'a str>,
);

const MISSING: &str = "Missing or invalid Authorization header";
const REQUIRED: &str = "API key required";
const INVALID: &str = "Invalid API key";

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
    let bearer = |key: &str| format!("Bearer {key}");
    let (a, b, r) = (bearer(&f.acme), bearer(&f.beta), bearer(&f.revoked));
    let unknown = format!("Bearer nf_{}", "0".repeat(48));
    let lower = format!("bearer {}", f.acme);
    let long_query = format!("/v1/filters?x={}", "a".repeat(2100));
    let many = format!("/api/v1/filters?categories={}", vec!["OTHER"; 17].join(","));
    let rows: Vec<Row<'_>> = vec![
        (
            "variant A",
            "GET",
            "/v1/filters",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "variant B",
            "GET",
            "/api/v1/filters",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "A categories",
            "GET",
            "/v1/filters?categories=bot-traffic,network-issue&minConfidence=0.3",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "B categories",
            "GET",
            "/api/v1/filters?categories=BOT_TRAFFIC,OTHER",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "A custom category",
            "GET",
            "/v1/filters?categories=custom",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "includeCustom=false",
            "GET",
            "/v1/filters?includeCustom=false",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "minConfidence=0.99",
            "GET",
            "/api/v1/filters?minConfidence=0.99",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "lowercase bearer",
            "GET",
            "/v1/filters",
            vec![("authorization", &lower)],
            200,
            None,
        ),
        (
            "other account",
            "GET",
            "/v1/filters",
            vec![("authorization", &b)],
            200,
            None,
        ),
        (
            "HEAD",
            "HEAD",
            "/v1/filters",
            vec![("authorization", &a)],
            200,
            None,
        ),
        (
            "no Authorization",
            "GET",
            "/v1/filters",
            vec![],
            401,
            Some(MISSING),
        ),
        (
            "Basic scheme",
            "GET",
            "/v1/filters",
            vec![("authorization", "Basic YTpi")],
            401,
            Some(MISSING),
        ),
        (
            "no scheme",
            "GET",
            "/api/v1/filters",
            vec![("authorization", &f.acme)],
            401,
            Some(MISSING),
        ),
        (
            "two tokens",
            "GET",
            "/v1/filters",
            vec![("authorization", "Bearer a b")],
            401,
            Some(MISSING),
        ),
        (
            "header twice",
            "GET",
            "/v1/filters",
            vec![("authorization", &a), ("authorization", &a)],
            401,
            Some(MISSING),
        ),
        (
            "empty token",
            "GET",
            "/v1/filters",
            vec![("authorization", "Bearer ")],
            401,
            Some(REQUIRED),
        ),
        (
            "unknown key",
            "GET",
            "/v1/filters",
            vec![("authorization", &unknown)],
            401,
            Some(INVALID),
        ),
        (
            "malformed key",
            "GET",
            "/api/v1/filters",
            vec![("authorization", "Bearer hello")],
            401,
            Some(INVALID),
        ),
        (
            "revoked key",
            "GET",
            "/v1/filters",
            vec![("authorization", &r)],
            401,
            Some(INVALID),
        ),
        (
            "minConfidence=2",
            "GET",
            "/v1/filters?minConfidence=2",
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "minConfidence=abc",
            "GET",
            "/api/v1/filters?minConfidence=abc",
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "includeCustom=maybe",
            "GET",
            "/v1/filters?includeCustom=maybe",
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "B spelling on A",
            "GET",
            "/v1/filters?categories=BOT_TRAFFIC",
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "A spelling on B",
            "GET",
            "/api/v1/filters?categories=bot-traffic",
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "parameter twice",
            "GET",
            "/v1/filters?minConfidence=0.5&minConfidence=0.6",
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "17 categories",
            "GET",
            &many,
            vec![("authorization", &a)],
            400,
            None,
        ),
        (
            "query over 2 KiB",
            "GET",
            &long_query,
            vec![("authorization", &a)],
            414,
            None,
        ),
        (
            "unknown path",
            "GET",
            "/v2/filters",
            vec![("authorization", &a)],
            404,
            Some("Not found"),
        ),
        (
            "unknown path, POST",
            "POST",
            "/filters",
            vec![],
            404,
            Some("Not found"),
        ),
        (
            "POST",
            "POST",
            "/v1/filters",
            vec![("authorization", &a)],
            405,
            None,
        ),
        ("DELETE", "DELETE", "/api/v1/filters", vec![], 405, None),
        (
            "preflight",
            "OPTIONS",
            "/api/v1/filters",
            vec![
                ("origin", "https://app.example"),
                ("access-control-request-method", "GET"),
            ],
            204,
            None,
        ),
    ];
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

    // 200: caching headers, both variants' shapes.
    let a200 = by_name("variant A");
    assert_eq!(a200.header("cache-control"), Some("public, max-age=300"));
    assert_eq!(a200.header("vary"), Some("Authorization"));
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

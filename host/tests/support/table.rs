//! The table of requests every server of the component must answer with
//! the core's bytes: the host (`http.rs`) and real Spin (`spin.rs`) run it.

use super::{TempDir, add_pattern, admin_ok, create_key};

/// A SQLite state folder written by the admin tool: keys of two accounts
/// (one of them revoked) and their custom patterns.
#[derive(Debug)]
pub struct Fixture {
    pub state: TempDir,
    pub acme: String,
    pub beta: String,
    pub revoked: String,
}

pub fn fixture(name: &str) -> Fixture {
    fixture_in(TempDir::new(name), &[])
}

/// The same records in `state` (its SQLite file), or in the store that
/// `store_args` name (`--store redis://…`).
pub fn fixture_in(state: TempDir, store_args: &[&str]) -> Fixture {
    let s = state.path();
    let acme = create_key(s, store_args, "acme");
    let beta = create_key(s, store_args, "beta");
    let revoked = create_key(s, store_args, "acme");
    add_pattern(s, store_args, "acme", "acme widget exploded");
    admin_ok(
        s,
        store_args,
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
    add_pattern(s, store_args, "beta", "beta gadget melted");
    admin_ok(s, store_args, &["keys", "revoke", &hash_prefix(&revoked)]);
    Fixture {
        state,
        acme,
        beta,
        revoked,
    }
}

/// The hash prefix `keys list` shows for a key.
pub fn hash_prefix(key: &str) -> String {
    noise_filter_core::KeyHash::of(key).short().to_owned()
}

/// A request and what it must get: name, method, target, header lines,
/// status, `error` text.
pub type Row<'a> = (
    &'a str,
    &'a str,
    &'a str,
    Vec<(&'a str, &'a str)>,
    u16,
    Option<&'a str>,
);

/// What a browser sends (Chromium's `Accept-Encoding`).
pub const BROWSER: &str = "gzip, deflate, br, zstd";

pub const MISSING: &str = "Missing or invalid Authorization header";
pub const REQUIRED: &str = "API key required";
pub const INVALID: &str = "Invalid API key";

/// The request strings of the table (keys as `Authorization` values, long
/// targets), owned so that the rows can borrow them.
#[derive(Debug)]
pub struct Table {
    a: String,
    b: String,
    r: String,
    /// The acme key without a scheme.
    bare: String,
    unknown: String,
    lower: String,
    long_query: String,
    many: String,
}

impl Table {
    /// The table for the keys of `f`.
    pub fn new(f: &Fixture) -> Table {
        let bearer = |key: &str| format!("Bearer {key}");
        let (a, b, r) = (bearer(&f.acme), bearer(&f.beta), bearer(&f.revoked));
        let unknown = format!("Bearer nf_{}", "0".repeat(48));
        let lower = format!("bearer {}", f.acme);
        let long_query = format!("/v1/filters?x={}", "a".repeat(2100));
        let many = format!("/api/v1/filters?categories={}", vec!["OTHER"; 17].join(","));
        Table {
            a,
            b,
            r,
            bare: f.acme.clone(),
            unknown,
            lower,
            long_query,
            many,
        }
    }

    /// Every row: name, method, target, header lines, status, `error` text.
    pub fn rows(&self) -> Vec<Row<'_>> {
        let Table {
            a,
            b,
            r,
            bare,
            unknown,
            lower,
            long_query,
            many,
        } = self;
        let rows: Vec<Row<'_>> = vec![
            (
                "variant A",
                "GET",
                "/v1/filters",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "variant B",
                "GET",
                "/api/v1/filters",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "A categories",
                "GET",
                "/v1/filters?categories=bot-traffic,network-issue&minConfidence=0.3",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "B categories",
                "GET",
                "/api/v1/filters?categories=BOT_TRAFFIC,OTHER",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "A custom category",
                "GET",
                "/v1/filters?categories=custom",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "includeCustom=false",
                "GET",
                "/v1/filters?includeCustom=false",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "minConfidence=0.99",
                "GET",
                "/api/v1/filters?minConfidence=0.99",
                vec![("authorization", a)],
                200,
                None,
            ),
            (
                "lowercase bearer",
                "GET",
                "/v1/filters",
                vec![("authorization", lower)],
                200,
                None,
            ),
            (
                "other account",
                "GET",
                "/v1/filters",
                vec![("authorization", b)],
                200,
                None,
            ),
            (
                "HEAD",
                "HEAD",
                "/v1/filters",
                vec![("authorization", a)],
                200,
                None,
            ),
            // Content codings: the core's bytes passed through untouched.
            (
                "A gzip (a browser's Accept-Encoding)",
                "GET",
                "/v1/filters",
                vec![("authorization", a), ("accept-encoding", BROWSER)],
                200,
                None,
            ),
            (
                "B gzip with q-values",
                "GET",
                "/api/v1/filters?minConfidence=0.9",
                vec![
                    ("authorization", a),
                    ("accept-encoding", "gzip;q=0.7, br;q=0.2"),
                ],
                200,
                None,
            ),
            (
                "A br (the usual answer)",
                "GET",
                "/v1/filters?includeCustom=false",
                vec![("authorization", b), ("accept-encoding", BROWSER)],
                200,
                None,
            ),
            (
                "B br",
                "GET",
                "/api/v1/filters?includeCustom=false",
                vec![("authorization", b), ("accept-encoding", "br")],
                200,
                None,
            ),
            (
                "HEAD gzip",
                "HEAD",
                "/v1/filters",
                vec![("authorization", a), ("accept-encoding", "gzip")],
                200,
                None,
            ),
            (
                "codings refused: identity",
                "GET",
                "/v1/filters",
                vec![
                    ("authorization", a),
                    ("accept-encoding", "br;q=0, gzip;q=0"),
                ],
                200,
                None,
            ),
            (
                "401 with Accept-Encoding",
                "GET",
                "/v1/filters",
                vec![("accept-encoding", BROWSER)],
                401,
                Some(MISSING),
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
                vec![("authorization", bare)],
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
                vec![("authorization", a), ("authorization", a)],
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
                vec![("authorization", unknown)],
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
                vec![("authorization", r)],
                401,
                Some(INVALID),
            ),
            (
                "minConfidence=2",
                "GET",
                "/v1/filters?minConfidence=2",
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "minConfidence=abc",
                "GET",
                "/api/v1/filters?minConfidence=abc",
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "includeCustom=maybe",
                "GET",
                "/v1/filters?includeCustom=maybe",
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "B spelling on A",
                "GET",
                "/v1/filters?categories=BOT_TRAFFIC",
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "A spelling on B",
                "GET",
                "/api/v1/filters?categories=bot-traffic",
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "parameter twice",
                "GET",
                "/v1/filters?minConfidence=0.5&minConfidence=0.6",
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "17 categories",
                "GET",
                many,
                vec![("authorization", a)],
                400,
                None,
            ),
            (
                "query over 2 KiB",
                "GET",
                long_query,
                vec![("authorization", a)],
                414,
                None,
            ),
            (
                "unknown path",
                "GET",
                "/v2/filters",
                vec![("authorization", a)],
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
                vec![("authorization", a)],
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
        rows
    }
}

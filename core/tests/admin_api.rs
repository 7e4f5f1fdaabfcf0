// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! The admin HTTP API, as the core answers it: off without a token, the
//! token before anything else, each route's answer and refusals, one log
//! line per change and per refusal (no key, no token in it), compare-and-
//! swap against other admins, and what a change does to the next request.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use noise_filter_core::admin_api::{self, AdminAnswer, AdminStore, AdminTokens};
use noise_filter_core::{
    Listing, MemoryStore, RecordKey, Request, Response, StoreError, SyncStore, UnixMillis, admin,
};
use serde_json::{Value, json};
use support::{NOW, ids};

const TOKEN: &str = "0123456789abcdef0123456789abcdef-admin";

fn tokens() -> AdminTokens {
    AdminTokens::configure(TOKEN).unwrap().unwrap()
}

fn call_with(
    store: &mut impl AdminStore,
    tokens: Option<&AdminTokens>,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> AdminAnswer {
    let headers: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
    let request = Request {
        method,
        target,
        headers: &headers,
    };
    admin_api::run(&request, body, NOW, tokens, [5; 24], store)
}

/// A call with the configured token.
fn call(store: &mut impl AdminStore, method: &str, target: &str, body: Value) -> AdminAnswer {
    let auth = format!("Bearer {TOKEN}");
    let body = if body.is_null() {
        Vec::new()
    } else {
        body.to_string().into_bytes()
    };
    call_with(
        store,
        Some(&tokens()),
        method,
        target,
        &[("authorization", &auth)],
        &body,
    )
}

fn body(answer: &AdminAnswer) -> Value {
    serde_json::from_slice(&answer.response.body).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}",
            String::from_utf8_lossy(&answer.response.body)
        )
    })
}

fn get(store: &mut MemoryStore, target: &str, key: &str) -> Response {
    let auth = format!("Bearer {key}");
    let headers = [("authorization", auth.as_bytes())];
    noise_filter_core::run(
        &Request {
            method: "GET",
            target,
            headers: &headers,
        },
        NOW,
        store,
    )
}

/// Every log line: one line of printable ASCII, never a key nor the token.
fn check_line(answer: &AdminAnswer, keys: &[&str]) -> String {
    let line = answer.log.clone().expect("a log line");
    assert!(line.bytes().all(|b| (b' '..=b'~').contains(&b)), "{line}");
    assert!(!line.contains(TOKEN), "{line}");
    for key in keys {
        assert!(!line.contains(key), "{line}");
    }
    assert!(!line.contains("nf_0"), "{line}");
    line
}

#[test]
fn without_a_token_the_admin_api_is_an_unknown_path() {
    let mut store = MemoryStore::new();
    let auth = format!("Bearer {TOKEN}");
    let endpoint_404 = noise_filter_core::run(
        &Request {
            method: "GET",
            target: "/nope",
            headers: &[],
        },
        NOW,
        &mut store,
    );
    for (method, target) in [
        ("GET", "/admin/v1/keys"),
        ("POST", "/admin/v1/keys"),
        ("DELETE", "/admin/v1/accounts/acme/patterns/custom-1"),
        ("GET", "/admin"),
    ] {
        let answer = call_with(
            &mut store,
            None,
            method,
            target,
            &[("authorization", &auth)],
            br#"{"account":"acme"}"#,
        );
        assert_eq!(answer.response, endpoint_404, "{method} {target}");
        assert_eq!(answer.log, None, "nothing is logged either");
    }
    assert_eq!(store.entries().count(), 0, "nothing written");
}

#[test]
fn the_token_comes_first_and_a_refusal_says_nothing_of_the_routes() {
    let mut store = MemoryStore::new();
    let wrong = format!("Bearer {}", "f".repeat(40));
    let cases: [(&[(&str, &str)], &str); 5] = [
        (&[], "Missing or invalid Authorization header"),
        (
            &[("authorization", "Basic abc")],
            "Missing or invalid Authorization header",
        ),
        (
            &[("authorization", "Bearer")],
            "Missing or invalid Authorization header",
        ),
        (&[("authorization", &wrong)], "Invalid admin token"),
        (
            &[("authorization", &format!("Bearer {TOKEN}x"))],
            "Invalid admin token",
        ),
    ];
    for (headers, error) in cases {
        for target in ["/admin/v1/keys", "/admin/v1/no-such-route", "/admin/"] {
            let answer = call_with(&mut store, Some(&tokens()), "POST", target, headers, b"{}");
            assert_eq!(answer.response.status, 401, "{headers:?} {target}");
            assert_eq!(body(&answer), json!({ "error": error }));
            assert_eq!(answer.response.header("www-authenticate"), Some("Bearer"));
            assert_eq!(answer.response.header("cache-control"), Some("no-store"));
            assert_eq!(answer.response.header("access-control-allow-origin"), None);
            let line = check_line(&answer, &[]);
            assert!(line.starts_with("admin: refused status=401 "), "{line}");
            assert!(!line.contains(&"f".repeat(40)), "{line}");
        }
    }
    // The token pasted into the URL instead of the header: refused, and
    // the line holds no path (the fuzz target's find).
    let pasted = format!("/admin/v1/keys/{TOKEN}");
    let answer = call_with(&mut store, Some(&tokens()), "GET", &pasted, &[], b"");
    assert_eq!(answer.response.status, 401);
    let line = check_line(&answer, &[]);
    assert!(line.contains(" path=- "), "{line}");
    assert!(!line.contains(TOKEN), "{line}");
    // A second configured token works as well, named by its own id.
    let both = AdminTokens::configure(&format!("{}, {TOKEN}", "z".repeat(32)))
        .unwrap()
        .unwrap();
    let auth = format!("Bearer {TOKEN}");
    let answer = call_with(
        &mut store,
        Some(&both),
        "GET",
        "/admin/v1/keys",
        &[("authorization", &auth)],
        b"",
    );
    assert_eq!(answer.response.status, 200);
    assert_eq!(body(&answer), json!({ "keys": [] }));
    assert_eq!(answer.log, None, "a read is not a change");
}

#[test]
fn unknown_routes_and_methods_are_refused_after_the_token() {
    let mut store = MemoryStore::new();
    let cases = [
        ("GET", "/admin/v1/nope", 404, None),
        ("GET", "/admin/v2/keys", 404, None),
        ("GET", "/admin/v1/keys/", 404, None),
        ("PUT", "/admin/v1/keys", 405, Some("GET, POST")),
        (
            "DELETE",
            "/admin/v1/accounts/acme/patterns",
            405,
            Some("GET, POST"),
        ),
        ("GET", "/admin/v1/keys/abcdef/revoke", 405, Some("POST")),
        ("POST", "/admin/v1/accounts/acme/export", 405, Some("GET")),
    ];
    for (method, target, status, allow) in cases {
        let answer = call(&mut store, method, target, Value::Null);
        assert_eq!(answer.response.status, status, "{method} {target}");
        assert_eq!(answer.response.header("allow"), allow, "{method} {target}");
        let line = check_line(&answer, &[]);
        assert!(line.contains(&format!("status={status}")), "{line}");
        assert!(line.contains("token="), "names who was refused: {line}");
    }
    // HEAD is no method of the API, and its refusal has no body.
    let head = call(&mut store, "HEAD", "/admin/v1/keys", Value::Null);
    assert_eq!(head.response.status, 405);
    assert!(head.response.body.is_empty());
}

#[test]
fn a_key_created_over_the_api_is_served_and_revoked_over_it() {
    let mut store = MemoryStore::new();
    let created = call(
        &mut store,
        "POST",
        "/admin/v1/keys",
        json!({"account": "acme", "label": "ci"}),
    );
    assert_eq!(created.response.status, 201);
    let made = body(&created);
    let key = made["key"].as_str().unwrap().to_owned();
    let hash = made["hash"].as_str().unwrap().to_owned();
    assert!(key.starts_with("nf_") && key.len() == 51);
    assert_eq!(made["account"], "acme");
    assert_eq!(made["label"], "ci");
    let line = check_line(&created, &[&key]);
    assert!(line.contains("action=keys.create account=acme"), "{line}");
    assert!(line.contains(&hash[..12]), "{line}");
    assert_eq!(get(&mut store, "/v1/filters", &key).status, 200);

    let listed = body(&call(
        &mut store,
        "GET",
        "/admin/v1/keys?account=acme",
        Value::Null,
    ));
    assert_eq!(listed["keys"][0]["hash"], hash.as_str());
    assert_eq!(listed["keys"][0]["account"], "acme");
    let none = body(&call(
        &mut store,
        "GET",
        "/admin/v1/keys?account=other",
        Value::Null,
    ));
    assert_eq!(none, json!({ "keys": [] }));

    let target = format!("/admin/v1/keys/{}/revoke", &hash[..8]);
    let revoked = call(&mut store, "POST", &target, Value::Null);
    assert_eq!(revoked.response.status, 200);
    assert_eq!(body(&revoked)["already"], false);
    assert!(check_line(&revoked, &[&key]).contains("action=keys.revoke"));
    assert_eq!(get(&mut store, "/v1/filters", &key).status, 401);
    let again = call(&mut store, "POST", &target, Value::Null);
    assert_eq!(body(&again)["already"], true);
    assert_eq!(again.log, None, "nothing changed");

    // The refusals of `keys revoke`, with their statuses.
    for (prefix, status) in [("abc", 400), ("000000", 404)] {
        let target = format!("/admin/v1/keys/{prefix}/revoke");
        let refused = call(&mut store, "POST", &target, Value::Null);
        assert_eq!(refused.response.status, status, "{prefix}");
        assert!(
            body(&refused)["error"]
                .as_str()
                .unwrap()
                .ends_with("nothing written")
        );
    }
    // A key given where a prefix goes is refused, and never logged.
    let target = format!("/admin/v1/keys/{key}/revoke");
    let refused = call(&mut store, "POST", &target, Value::Null);
    assert_eq!(refused.response.status, 400);
    check_line(&refused, &[&key]);
}

#[test]
fn patterns_are_added_imported_listed_and_removed_all_or_nothing() {
    let mut store = MemoryStore::new();
    let made = body(&call(
        &mut store,
        "POST",
        "/admin/v1/keys",
        json!({"account": "acme"}),
    ));
    let key = made["key"].as_str().unwrap().to_owned();
    let patterns = "/admin/v1/accounts/acme/patterns";
    let one = call(
        &mut store,
        "POST",
        patterns,
        json!({"pattern": "acme widget exploded"}),
    );
    assert_eq!(one.response.status, 201);
    assert_eq!(body(&one), json!({ "ids": ["custom-1"] }));
    assert!(check_line(&one, &[]).contains("action=patterns.add account=acme ids=custom-1"));

    let record = admin::patterns_record("acme").unwrap();
    let before = store.value(&record).unwrap().to_vec();
    let refused = call(
        &mut store,
        "POST",
        patterns,
        json!([{"pattern": "fine pattern"}, {"pattern": "(a+)+$", "type": "regex"}]),
    );
    assert_eq!(refused.response.status, 400);
    let error = body(&refused)["error"].as_str().unwrap().to_owned();
    assert!(error.starts_with("pattern 2: "), "{error}");
    assert_eq!(store.value(&record).unwrap(), before, "nothing written");
    assert!(check_line(&refused, &[]).contains("status=400"));

    let imported = call(
        &mut store,
        "POST",
        patterns,
        json!([{"pattern": "second noise"}, {"pattern": "third noise", "until": "2020-01-01"}]),
    );
    assert_eq!(body(&imported), json!({ "ids": ["custom-2", "custom-3"] }));
    let listed = body(&call(&mut store, "GET", patterns, Value::Null));
    let listed = listed["patterns"].as_array().unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(listed[2]["until"], "2020-01-01T00:00:00Z");
    // The ended one is stored, not served.
    let served = ids(&get(&mut store, "/v1/filters?categories=custom", &key));
    assert_eq!(served, ["custom-1", "custom-2"]);

    let removed = call(
        &mut store,
        "DELETE",
        &format!("{patterns}/custom-1"),
        Value::Null,
    );
    assert_eq!(body(&removed), json!({ "removed": "custom-1" }));
    let missing = call(
        &mut store,
        "DELETE",
        &format!("{patterns}/custom-1"),
        Value::Null,
    );
    assert_eq!(missing.response.status, 404);
    let bad_account = call(
        &mut store,
        "GET",
        "/admin/v1/accounts/Not%20One/patterns",
        Value::Null,
    );
    assert_eq!(bad_account.response.status, 400);
}

#[test]
fn an_exclusion_made_over_the_api_leaves_the_next_answer() {
    let mut store = MemoryStore::new();
    let made = body(&call(
        &mut store,
        "POST",
        "/admin/v1/keys",
        json!({"account": "acme"}),
    ));
    let key = made["key"].as_str().unwrap().to_owned();
    assert!(ids(&get(&mut store, "/v1/filters", &key)).contains(&"googlebot".to_owned()));
    let exclusions = "/admin/v1/accounts/acme/exclusions";
    let added = call(
        &mut store,
        "POST",
        exclusions,
        json!([{"id": "googlebot"}, {"category": "NETWORK_ISSUE", "until": "2099-01-01"}]),
    );
    assert_eq!(added.response.status, 201);
    assert_eq!(
        body(&added),
        json!({"exclusions": [
            {"id": "googlebot"},
            {"category": "network-issue", "until": "2099-01-01T00:00:00Z"}
        ]})
    );
    let line = check_line(&added, &[]);
    assert!(
        line.contains("excluded=id:googlebot,category:network-issue@2099-01-01T00:00:00Z"),
        "{line}"
    );
    let answer = get(&mut store, "/api/v1/filters", &key);
    assert!(!ids(&answer).contains(&"googlebot".to_owned()));
    let listed = body(&call(&mut store, "GET", exclusions, Value::Null));
    assert_eq!(listed["exclusions"].as_array().unwrap().len(), 2);

    let refused = call(&mut store, "POST", exclusions, json!({"id": "googlbot"}));
    assert_eq!(refused.response.status, 400);
    let removed = call(
        &mut store,
        "DELETE",
        &format!("{exclusions}/id/googlebot"),
        Value::Null,
    );
    assert_eq!(body(&removed), json!({ "removed": {"id": "googlebot"} }));
    assert!(ids(&get(&mut store, "/api/v1/filters", &key)).contains(&"googlebot".to_owned()));
    let gone = call(
        &mut store,
        "DELETE",
        &format!("{exclusions}/id/googlebot"),
        Value::Null,
    );
    assert_eq!(gone.response.status, 404);
    let unknown_kind = call(
        &mut store,
        "DELETE",
        &format!("{exclusions}/tagz/x"),
        Value::Null,
    );
    assert_eq!(unknown_kind.response.status, 400);
}

#[test]
fn an_account_moves_between_stores_with_its_keys() {
    let mut from = MemoryStore::new();
    let made = body(&call(
        &mut from,
        "POST",
        "/admin/v1/keys",
        json!({"account": "acme"}),
    ));
    let key = made["key"].as_str().unwrap().to_owned();
    call(
        &mut from,
        "POST",
        "/admin/v1/keys",
        json!({"account": "other"}),
    );
    call(
        &mut from,
        "POST",
        "/admin/v1/accounts/acme/patterns",
        json!({"pattern": "acme noise"}),
    );
    call(
        &mut from,
        "POST",
        "/admin/v1/accounts/acme/exclusions",
        json!({"id": "googlebot"}),
    );
    let export = call(
        &mut from,
        "GET",
        "/admin/v1/accounts/acme/export",
        Value::Null,
    );
    assert_eq!(export.response.status, 200);
    let document = body(&export);
    assert_eq!(document["format"], admin::EXPORT_FORMAT);
    assert_eq!(
        document["keys"].as_array().unwrap().len(),
        1,
        "acme's key only"
    );
    assert!(
        !export.response.body.windows(3).any(|w| w == b"nf_"),
        "hashes, never keys"
    );

    let mut to = MemoryStore::new();
    let import = "/admin/v1/accounts/acme/import";
    let imported = call(&mut to, "POST", import, document.clone());
    assert_eq!(imported.response.status, 200);
    assert_eq!(
        body(&imported),
        json!({"account": "acme", "keys_written": 1, "keys_present": 0, "custom_written": true})
    );
    assert!(check_line(&imported, &[&key]).contains("action=account.import"));
    // The key works in the new store, with the same answer.
    let old = get(&mut from, "/v1/filters", &key);
    let new = get(&mut to, "/v1/filters", &key);
    assert_eq!(new.body, old.body);
    assert_eq!(new.header("etag"), old.header("etag"));
    // Run again: nothing to write.
    let again = body(&call(&mut to, "POST", import, document.clone()));
    assert_eq!(again["keys_written"], 0);
    assert_eq!(again["custom_written"], false);
    // Into a store where the account already differs: refused, nothing written.
    let mut taken = MemoryStore::new();
    call(
        &mut taken,
        "POST",
        "/admin/v1/accounts/acme/patterns",
        json!({"pattern": "other"}),
    );
    let entries: Vec<_> = taken
        .entries()
        .map(|(l, k, v)| (l, k.to_owned(), v.to_vec()))
        .collect();
    let conflict = call(&mut taken, "POST", import, document.clone());
    assert_eq!(conflict.response.status, 409);
    let after: Vec<_> = taken
        .entries()
        .map(|(l, k, v)| (l, k.to_owned(), v.to_vec()))
        .collect();
    assert_eq!(after, entries);
    // A document for another account, or not one at all.
    let elsewhere = call(&mut to, "POST", "/admin/v1/accounts/other/import", document);
    assert_eq!(elsewhere.response.status, 400);
    let junk = call(&mut to, "POST", import, json!({"format": "something else"}));
    assert_eq!(junk.response.status, 400);
}

#[test]
fn bodies_are_bounded_and_read_strictly() {
    let mut store = MemoryStore::new();
    let auth = format!("Bearer {TOKEN}");
    let large = vec![b' '; admin_api::MAX_BODY_BYTES + 1];
    let answer = call_with(
        &mut store,
        Some(&tokens()),
        "POST",
        "/admin/v1/keys",
        &[("authorization", &auth)],
        &large,
    );
    assert_eq!(answer.response.status, 413);
    for bad in [&b"{"[..], b"[]", br#"{"account":"acme","extra":1}"#, b""] {
        let answer = call_with(
            &mut store,
            Some(&tokens()),
            "POST",
            "/admin/v1/keys",
            &[("authorization", &auth)],
            bad,
        );
        assert_eq!(
            answer.response.status,
            400,
            "{}",
            String::from_utf8_lossy(bad)
        );
        assert!(
            body(&answer)["error"]
                .as_str()
                .unwrap()
                .starts_with("Invalid request body: ")
        );
    }
    let twice = call(
        &mut store,
        "GET",
        "/admin/v1/keys?account=a&account=b",
        Value::Null,
    );
    assert_eq!(twice.response.status, 400);
}

/// A store where another admin changes the account's record between each
/// read and the compare-and-swap that follows it, `times` times.
struct Contended {
    store: MemoryStore,
    times: usize,
    added: usize,
}

impl SyncStore for Contended {
    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.get(record)
    }
    fn increment(&mut self, record: &RecordKey, delta: i64) -> Result<i64, StoreError> {
        self.store.increment(record, delta)
    }
    fn delete(&mut self, record: &RecordKey) -> Result<(), StoreError> {
        self.store.delete(record)
    }
}

impl AdminStore for Contended {
    fn list(&mut self, listing: &Listing) -> Result<Vec<String>, StoreError> {
        self.store.list(listing)
    }
    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        if self.added < self.times {
            self.added += 1;
            let pattern =
                noise_filter_core::NewPattern::string(&format!("other admin {}", self.added));
            self.store
                .add_patterns("acme", vec![pattern], UnixMillis(0))
                .unwrap();
        }
        self.store.swap(record, expected, value)
    }
}

#[test]
fn a_change_made_meanwhile_by_another_admin_is_kept() {
    let mut store = Contended {
        store: MemoryStore::new(),
        times: 3,
        added: 0,
    };
    let added = call(
        &mut store,
        "POST",
        "/admin/v1/accounts/acme/patterns",
        json!({"pattern": "mine"}),
    );
    assert_eq!(added.response.status, 201, "{}", body(&added));
    let record = admin::patterns_record("acme").unwrap();
    let patterns = admin::read_patterns(store.store.value(&record)).unwrap();
    let texts: Vec<&str> = patterns
        .patterns
        .iter()
        .map(|p| p.pattern.as_str())
        .collect();
    assert_eq!(
        texts,
        ["other admin 1", "other admin 2", "other admin 3", "mine"]
    );

    // A record that never stops changing: refused after the attempts,
    // nothing of this call written.
    let mut store = Contended {
        store: MemoryStore::new(),
        times: usize::MAX,
        added: 0,
    };
    let refused = call(
        &mut store,
        "POST",
        "/admin/v1/accounts/acme/patterns",
        json!({"pattern": "mine"}),
    );
    assert_eq!(refused.response.status, 503);
    let patterns = admin::read_patterns(store.store.value(&record)).unwrap();
    assert!(patterns.patterns.iter().all(|p| p.pattern != "mine"));
}

/// A store whose compare-and-swap writes when it should but reports that it
/// did not (Spin 4.0.2's Redis store: its `swap` ends with an `UNWATCH` that
/// Redis refuses, after the transaction ran).
struct LostReports(MemoryStore);

impl SyncStore for LostReports {
    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.0.get(record)
    }
    fn increment(&mut self, record: &RecordKey, delta: i64) -> Result<i64, StoreError> {
        self.0.increment(record, delta)
    }
    fn delete(&mut self, record: &RecordKey) -> Result<(), StoreError> {
        self.0.delete(record)
    }
}

impl AdminStore for LostReports {
    fn list(&mut self, listing: &Listing) -> Result<Vec<String>, StoreError> {
        self.0.list(listing)
    }
    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        self.0.swap(record, expected, value)?;
        Ok(false)
    }
}

#[test]
fn a_change_whose_report_is_lost_is_made_once_and_answered_as_made() {
    let mut store = LostReports(MemoryStore::new());
    let made = call(
        &mut store,
        "POST",
        "/admin/v1/keys",
        json!({"account": "acme"}),
    );
    assert_eq!(made.response.status, 201, "{}", body(&made));
    let hash = body(&made)["hash"].as_str().unwrap().to_owned();
    let patterns = "/admin/v1/accounts/acme/patterns";
    let added = call(
        &mut store,
        "POST",
        patterns,
        json!([{"pattern": "one"}, {"pattern": "two"}]),
    );
    assert_eq!(added.response.status, 201, "{}", body(&added));
    assert_eq!(body(&added), json!({ "ids": ["custom-1", "custom-2"] }));
    let listed = body(&call(&mut store, "GET", patterns, Value::Null));
    assert_eq!(
        listed["patterns"].as_array().unwrap().len(),
        2,
        "added once"
    );
    let removed = call(
        &mut store,
        "DELETE",
        &format!("{patterns}/custom-1"),
        Value::Null,
    );
    assert_eq!(removed.response.status, 200, "{}", body(&removed));
    let exclusions = "/admin/v1/accounts/acme/exclusions";
    let excluded = call(&mut store, "POST", exclusions, json!({"id": "googlebot"}));
    assert_eq!(excluded.response.status, 201, "{}", body(&excluded));
    let removed = call(
        &mut store,
        "DELETE",
        &format!("{exclusions}/id/googlebot"),
        Value::Null,
    );
    assert_eq!(removed.response.status, 200, "{}", body(&removed));
    let revoked = call(
        &mut store,
        "POST",
        &format!("/admin/v1/keys/{}/revoke", &hash[..8]),
        Value::Null,
    );
    assert_eq!(revoked.response.status, 200, "{}", body(&revoked));
    assert_eq!(body(&revoked)["already"], false);
    assert!(revoked.log.unwrap().contains("action=keys.revoke"));
    let record = admin::patterns_record("acme").unwrap();
    let stored = admin::read_patterns(store.0.value(&record)).unwrap();
    let ids: Vec<&str> = stored.patterns.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["custom-2"]);
    assert!(stored.exclusions.is_empty());
}

/// A store whose compare-and-swap reports success whether or not it wrote
/// (what a Spin Redis store would do with its `UNWATCH` fixed: a
/// transaction aborted by `WATCH` reads as done), and where another admin
/// wrote first, once.
struct FalseSuccess {
    store: MemoryStore,
    raced: bool,
}

impl SyncStore for FalseSuccess {
    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.store.get(record)
    }
    fn increment(&mut self, record: &RecordKey, delta: i64) -> Result<i64, StoreError> {
        self.store.increment(record, delta)
    }
    fn delete(&mut self, record: &RecordKey) -> Result<(), StoreError> {
        self.store.delete(record)
    }
}

impl AdminStore for FalseSuccess {
    fn list(&mut self, listing: &Listing) -> Result<Vec<String>, StoreError> {
        self.store.list(listing)
    }
    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        if !std::mem::replace(&mut self.raced, true) {
            let theirs = noise_filter_core::NewPattern::string("the other admin's");
            self.store
                .add_patterns("acme", vec![theirs], UnixMillis(0))
                .unwrap();
        }
        self.store.swap(record, expected, value)?;
        Ok(true)
    }
}

#[test]
fn a_swap_reported_done_is_read_back_so_no_change_is_lost() {
    let mut store = FalseSuccess {
        store: MemoryStore::new(),
        raced: false,
    };
    let added = call(
        &mut store,
        "POST",
        "/admin/v1/accounts/acme/patterns",
        json!({"pattern": "mine"}),
    );
    assert_eq!(added.response.status, 201, "{}", body(&added));
    let record = admin::patterns_record("acme").unwrap();
    let patterns = admin::read_patterns(store.store.value(&record)).unwrap();
    let texts: Vec<&str> = patterns
        .patterns
        .iter()
        .map(|p| p.pattern.as_str())
        .collect();
    assert_eq!(texts, ["the other admin's", "mine"]);
}

#[test]
fn a_failing_store_is_a_503_and_its_line() {
    let mut store = MemoryStore::new();
    store.failing = true;
    let answer = call(
        &mut store,
        "POST",
        "/admin/v1/keys",
        json!({"account": "acme"}),
    );
    assert_eq!(answer.response.status, 503);
    assert_eq!(
        body(&answer)["error"],
        "Service unavailable: the key-value store did not answer"
    );
    assert!(check_line(&answer, &[]).contains("status=503"));
}

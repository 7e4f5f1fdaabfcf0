//! A deterministic world for the core's tests: an in-memory store, keys made
//! from counted "random" bytes, and a fixed clock.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
#![allow(dead_code, unreachable_pub)]

use noise_filter_core::{
    ApiKey, MemoryStore, NewPattern, Request, Response, UnixMillis, admin, run,
};

/// 2025-11-22T08:26:30Z: 30 s into a rate window.
pub const NOW: UnixMillis = UnixMillis(1_763_799_960_000 + 30_000);

pub struct World {
    pub store: MemoryStore,
    pub now: UnixMillis,
    minted: u8,
}

impl World {
    pub fn new() -> World {
        World {
            store: MemoryStore::new(),
            now: NOW,
            minted: 0,
        }
    }

    /// Creates an active key for `account` and returns it.
    pub fn key(&mut self, account: &str) -> String {
        self.minted += 1;
        let made = admin::create_key(&[self.minted; 24], account, "test", self.now).unwrap();
        self.store.set(&made.record.record, made.record.value);
        made.key.expose().to_owned()
    }

    /// Revokes `key`.
    pub fn revoke(&mut self, key: &str) {
        let key = ApiKey::parse(key).unwrap();
        self.store.revoke(&key, self.now).unwrap();
    }

    /// Adds custom patterns (given as JSON objects) to `account`.
    pub fn custom(&mut self, account: &str, patterns: serde_json::Value) {
        let news: Vec<NewPattern> = serde_json::from_value(patterns).unwrap();
        self.store.add_patterns(account, news, self.now).unwrap();
    }

    pub fn request(&mut self, method: &str, target: &str, headers: &[(&str, &str)]) -> Response {
        let headers: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
        run(
            &Request {
                method,
                target,
                headers: &headers,
            },
            self.now,
            &mut self.store,
        )
    }

    /// A GET with `Authorization: Bearer <key>`.
    pub fn get(&mut self, target: &str, key: &str) -> Response {
        let auth = format!("Bearer {key}");
        self.request("GET", target, &[("Authorization", &auth)])
    }
}

/// A world with one key for account `acme` and three custom patterns: an
/// uncategorized substring, a regex, a categorized substring.
pub fn acme() -> (World, String) {
    let mut world = World::new();
    let key = world.key("acme");
    world.custom(
        "acme",
        serde_json::json!([
            {"pattern": "acme-widget exploded", "source": "Seen in acme's widget"},
            {"pattern": "^acme-\\d+ failed$", "type": "regex", "confidence": 0.8},
            {"pattern": "AcmeCrawler/", "category": "bot-traffic", "confidence": 0.95}
        ]),
    );
    (world, key)
}

/// The body as JSON.
pub fn json(response: &Response) -> serde_json::Value {
    serde_json::from_slice(&response.body).unwrap_or_else(|e| {
        panic!(
            "body is not JSON ({e}): {}",
            String::from_utf8_lossy(&response.body)
        )
    })
}

/// The `error` text of an error body, checking the body is exactly `{"error": string}`.
pub fn error_of(response: &Response) -> String {
    let value = json(response);
    let object = value.as_object().expect("error body is an object");
    assert_eq!(object.len(), 1, "error body has exactly one field: {value}");
    object["error"]
        .as_str()
        .expect("error is a string")
        .to_owned()
}

/// Ids of the patterns in a response body.
pub fn ids(response: &Response) -> Vec<String> {
    json(response)["patterns"]
        .as_array()
        .expect("patterns is an array")
        .iter()
        .map(|p| p["id"].as_str().unwrap().to_owned())
        .collect()
}

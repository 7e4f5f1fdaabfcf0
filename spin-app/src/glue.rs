//! The component's whole job, with the store behind a trait.
//!
//! [`answer`] takes the request as the runtime handed it over, the current
//! time and the store, and returns the status, the header lines to write (the
//! core's, in order, plus framing) and the body. The Spin parts
//! (`component.rs`, `kv.rs`) only open buckets and copy bytes; everything in
//! here runs natively under `cargo test -p noise-filter-spin` over in-memory
//! maps (`map_buckets.rs`, compiled for the tests only).

use std::borrow::Cow;

use noise_filter_core::admin_api::{self, AdminStore, AdminTokens};
use noise_filter_core::{
    KEY_RANDOM_BYTES, Listing, RecordKey, Request, Response, StoreError, StoreLabel, SyncStore,
    UnixMillis,
};

/// One open store label: the three operations the endpoint asks for, and
/// the two more of the admin API.
pub trait Bucket {
    /// Reads a value (`None`: absent).
    fn get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Atomically adds `delta` to a counter (absent: 0); returns the new value.
    fn increment(&self, key: &str, delta: i64) -> Result<i64, StoreError>;
    /// Deletes a key (absent: fine).
    fn delete(&self, key: &str) -> Result<(), StoreError>;
    /// Every key of the label.
    fn keys(&self) -> Result<Vec<String>, StoreError>;
    /// Writes `value` if the key holds `expected` (`None`: absent), as one
    /// atomic compare-and-swap; says whether it wrote.
    fn swap(&self, key: &str, expected: Option<&[u8]>, value: &[u8]) -> Result<bool, StoreError>;
}

/// Opens store labels by name (`default`, `rate`).
pub trait Buckets {
    /// An open label.
    type Bucket: Bucket;
    /// Opens the label `name`, as `spin.toml` lists it.
    fn open(&mut self, name: &str) -> Result<Self::Bucket, StoreError>;
}

/// The core's two stores over a [`Buckets`]: each label is opened on first
/// use and kept for the rest of the request (a request that is refused before
/// reaching the store opens none).
#[derive(Debug)]
pub struct Stores<B: Buckets> {
    buckets: B,
    default: Option<B::Bucket>,
    rate: Option<B::Bucket>,
}

impl<B: Buckets> Stores<B> {
    /// Nothing opened yet.
    pub fn new(buckets: B) -> Self {
        Stores {
            buckets,
            default: None,
            rate: None,
        }
    }

    fn bucket(&mut self, label: StoreLabel) -> Result<&B::Bucket, StoreError> {
        let slot = match label {
            StoreLabel::Default => &mut self.default,
            StoreLabel::Rate => &mut self.rate,
        };
        if slot.is_none() {
            *slot = Some(self.buckets.open(label.name())?);
        }
        slot.as_ref().ok_or(StoreError)
    }
}

impl<B: Buckets> SyncStore for Stores<B> {
    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, StoreError> {
        self.bucket(record.label())?.get(record.key())
    }

    fn increment(&mut self, record: &RecordKey, delta: i64) -> Result<i64, StoreError> {
        self.bucket(record.label())?.increment(record.key(), delta)
    }

    fn delete(&mut self, record: &RecordKey) -> Result<(), StoreError> {
        self.bucket(record.label())?.delete(record.key())
    }
}

impl<B: Buckets> AdminStore for Stores<B> {
    fn list(&mut self, listing: &Listing) -> Result<Vec<String>, StoreError> {
        // Spin's key-value interface lists a whole label; the core keeps
        // what its listing asked for.
        self.bucket(listing.label())?.keys()
    }

    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        self.bucket(record.label())?
            .swap(record.key(), expected, value)
    }
}

/// What the runtime is given to send: status, header lines, body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// The status code.
    pub status: u16,
    /// Header lines in order: the core's, then `content-length`.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body (borrowed when it is the core's static data: written from
    /// where it lies, not copied).
    pub body: Cow<'static, [u8]>,
}

/// Answers one request: `method` as sent, `target` the path and query,
/// `headers` every header line in order (repeats included: a repeated
/// `Authorization` must be seen to be refused).
pub fn answer(
    method: &str,
    target: &str,
    headers: &[(String, Vec<u8>)],
    now: UnixMillis,
    store: &mut impl SyncStore,
) -> Answer {
    let lines = borrowed(headers);
    let request = Request {
        method,
        target,
        headers: &lines,
    };
    let response = noise_filter_core::run(&request, now, store);
    frame(method == "HEAD", response)
}

/// The request's headers as the core's `Request` borrows them.
fn borrowed(headers: &[(String, Vec<u8>)]) -> Vec<(&str, &[u8])> {
    headers
        .iter()
        .map(|(name, value)| (name.as_str(), value.as_slice()))
        .collect()
}

/// Answers one call of the admin API (`noise_filter_core::admin_api`):
/// `configured` is the admin token setting as the runtime gave it (`None`:
/// not set), `body` the request's body (at most
/// [`admin_api::MAX_BODY_BYTES`] + 1 bytes of it), `random` bytes from the
/// runtime's CSPRNG for a key the call may create. Returns the answer and
/// the lines to log: the call's own (a change, a refusal), and one when the
/// setting holds no valid token (the API then stays off).
#[allow(clippy::too_many_arguments)] // the request's parts, as `answer` takes them, and the call's
pub fn admin(
    method: &str,
    target: &str,
    headers: &[(String, Vec<u8>)],
    body: &[u8],
    now: UnixMillis,
    configured: Option<&str>,
    random: [u8; KEY_RANDOM_BYTES],
    store: &mut impl AdminStore,
) -> (Answer, Vec<String>) {
    let mut lines = Vec::new();
    let tokens = match configured.map(AdminTokens::configure) {
        None | Some(Ok(None)) => None,
        Some(Ok(Some(tokens))) => Some(tokens),
        Some(Err(error)) => {
            lines.push(format!("admin: {error}"));
            None
        }
    };
    let lines_in = borrowed(headers);
    let request = Request {
        method,
        target,
        headers: &lines_in,
    };
    let answer = admin_api::run(&request, body, now, tokens.as_ref(), random, store);
    lines.extend(answer.log);
    (frame(method == "HEAD", answer.response), lines)
}

/// The core's response plus framing. A body's length is declared so the
/// runtime need not chunk it; a HEAD answer declares nothing (its GET twin's
/// length is not known here, and a declared length with no body would be
/// refused by the runtime), nor do 204 and 304, which have no body.
pub fn frame(head: bool, response: Response) -> Answer {
    let Response {
        status,
        headers,
        body,
    } = response;
    let mut lines: Vec<(String, Vec<u8>)> = headers
        .into_iter()
        .map(|(name, value)| (name.to_owned(), value.into_bytes()))
        .collect();
    if !head && status != 204 && status != 304 {
        lines.push((
            "content-length".to_owned(),
            body.len().to_string().into_bytes(),
        ));
    }
    Answer {
        status,
        headers: lines,
        body,
    }
}

/// Milliseconds since the Unix epoch from the system's wall clock (in the
/// component: `wasi:clocks/wall-clock`). A clock before 1970 reads as 0.
pub fn now() -> UnixMillis {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    UnixMillis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;
    use crate::map_buckets::MapBuckets;
    use noise_filter_core::{ApiKey, Counter, MemoryStore, NewPattern};

    const NOW: UnixMillis = UnixMillis(1_763_800_000_000);

    fn seeded() -> (MapBuckets, MemoryStore, ApiKey) {
        let key = ApiKey::from_random([3; 24]);
        let memory = MemoryStore::new()
            .with_key(&key, "acme")
            .with_patterns("acme", vec![NewPattern::string("acme widget exploded")]);
        let buckets = MapBuckets::spin_toml();
        for (label, record, value) in memory.entries() {
            buckets.set(label.name(), record, value.to_vec());
        }
        (buckets, memory, key)
    }

    fn auth(key: &ApiKey) -> Vec<(String, Vec<u8>)> {
        vec![(
            "authorization".into(),
            format!("Bearer {}", key.expose()).into_bytes(),
        )]
    }

    /// Same bytes as the core natively, for a table of requests, both variants.
    #[test]
    fn answers_what_the_core_answers() {
        let (buckets, mut memory, key) = seeded();
        let mut stores = Stores::new(buckets);
        let cases: &[(&str, &str, bool)] = &[
            ("GET", "/v1/filters", true),
            ("GET", "/api/v1/filters", true),
            (
                "GET",
                "/v1/filters?categories=bot-traffic,custom&minConfidence=0.1",
                true,
            ),
            ("GET", "/api/v1/filters?includeCustom=false", true),
            ("HEAD", "/v1/filters", true),
            ("GET", "/v1/filters?minConfidence=2", true),
            ("GET", "/v1/filters", false),
            ("OPTIONS", "/v1/filters", false),
            ("POST", "/v1/filters", true),
            ("GET", "/nope", true),
        ];
        for &(method, target, with_key) in cases {
            let headers = if with_key { auth(&key) } else { Vec::new() };
            let got = answer(method, target, &headers, NOW, &mut stores);
            let lines: Vec<(&str, &[u8])> = headers
                .iter()
                .map(|(n, v)| (n.as_str(), v.as_slice()))
                .collect();
            let request = Request {
                method,
                target,
                headers: &lines,
            };
            let want = noise_filter_core::run(&request, NOW, &mut memory);
            assert_eq!(got.status, want.status, "{method} {target}");
            assert_eq!(got.body, want.body, "{method} {target}");
            let core_lines: Vec<(String, Vec<u8>)> = want
                .headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone().into_bytes()))
                .collect();
            assert_eq!(
                &got.headers[..core_lines.len()],
                &core_lines[..],
                "{method} {target}"
            );
        }
    }

    #[test]
    fn counts_in_the_rate_label_as_spin_encodes_it() {
        let (buckets, _, key) = seeded();
        let mut stores = Stores::new(buckets.clone());
        for _ in 0..3 {
            assert_eq!(
                answer("GET", "/v1/filters", &auth(&key), NOW, &mut stores).status,
                200
            );
        }
        let window = NOW.0 / 60_000;
        let counter = RecordKey::rate_counter(&key.hash(), window);
        assert_eq!(
            buckets.value("rate", counter.key()),
            Some(Counter::encode(3).to_vec())
        );
        assert_eq!(buckets.value("default", counter.key()), None);
    }

    #[test]
    fn frames_bodies_but_not_head_204_or_304() {
        let (buckets, _, key) = seeded();
        let mut stores = Stores::new(buckets);
        let get = answer("GET", "/v1/filters", &auth(&key), NOW, &mut stores);
        let length = get.headers.last().unwrap();
        assert_eq!(length.0, "content-length");
        assert_eq!(length.1, get.body.len().to_string().into_bytes());

        let head = answer("HEAD", "/v1/filters", &auth(&key), NOW, &mut stores);
        assert!(head.body.is_empty());
        assert!(head.headers.iter().all(|(n, _)| n != "content-length"));

        let etag = get
            .headers
            .iter()
            .find(|(n, _)| n == "etag")
            .unwrap()
            .1
            .clone();
        let mut conditional = auth(&key);
        conditional.push(("if-none-match".into(), etag));
        let cached = answer("GET", "/v1/filters", &conditional, NOW, &mut stores);
        assert_eq!(cached.status, 304);
        assert!(cached.headers.iter().all(|(n, _)| n != "content-length"));

        let preflight = answer("OPTIONS", "/v1/filters", &[], NOW, &mut stores);
        assert_eq!(preflight.status, 204);
        assert!(preflight.headers.iter().all(|(n, _)| n != "content-length"));
    }

    #[test]
    fn repeated_authorization_is_seen() {
        let (buckets, _, key) = seeded();
        let mut stores = Stores::new(buckets);
        let mut headers = auth(&key);
        headers.extend(auth(&key));
        let got = answer("GET", "/v1/filters", &headers, NOW, &mut stores);
        assert_eq!(got.status, 401);
        assert_eq!(
            &got.body[..],
            br#"{"error":"Missing or invalid Authorization header"}"#
        );
    }

    #[test]
    fn opens_labels_lazily_and_once() {
        let (buckets, _, key) = seeded();
        let opened = buckets.opened.clone();
        let mut stores = Stores::new(buckets);
        answer("GET", "/v1/filters", &[], NOW, &mut stores);
        assert_eq!(opened.get(), 0, "a refused request opens no store");
        answer("GET", "/v1/filters", &auth(&key), NOW, &mut stores);
        assert_eq!(opened.get(), 2, "default and rate, each once");
    }

    #[test]
    fn a_store_that_cannot_be_opened_is_a_503() {
        let (mut buckets, _, key) = seeded();
        buckets.failing = true;
        let mut stores = Stores::new(buckets);
        let got = answer("GET", "/api/v1/filters", &auth(&key), NOW, &mut stores);
        assert_eq!(got.status, 503);
        assert!(got.body.starts_with(br#"{"error":"#));

        let mut undeclared = MapBuckets {
            allowed: vec!["default".into()],
            ..seeded().0
        };
        undeclared.failing = false;
        let got = answer(
            "GET",
            "/api/v1/filters",
            &auth(&key),
            NOW,
            &mut Stores::new(undeclared),
        );
        assert_eq!(got.status, 503, "rate label missing from spin.toml");
    }

    const TOKEN: &str = "a-test-admin-token-of-forty-characters!!";

    #[test]
    fn the_admin_api_is_the_cores_and_off_without_a_token() {
        let (buckets, mut memory, key) = seeded();
        let mut stores = Stores::new(buckets.clone());
        let admin_auth = vec![(
            "authorization".to_owned(),
            format!("Bearer {TOKEN}").into_bytes(),
        )];
        let body = br#"{"id":"googlebot"}"#;
        let target = "/admin/v1/accounts/acme/exclusions";
        // Not configured (no setting, an empty one): the endpoint's 404.
        for configured in [None, Some(""), Some("  ")] {
            let (got, lines) = admin(
                "POST",
                target,
                &admin_auth,
                body,
                NOW,
                configured,
                [1; 24],
                &mut stores,
            );
            let want = answer("POST", target, &admin_auth, NOW, &mut stores);
            assert_eq!(got, want, "{configured:?}");
            assert!(lines.is_empty());
        }
        // A setting that is no token: still off, and one line says why
        // (never what the setting holds).
        let (got, lines) = admin(
            "POST",
            target,
            &admin_auth,
            body,
            NOW,
            Some("too-short"),
            [1; 24],
            &mut stores,
        );
        assert_eq!(got.status, 404);
        assert_eq!(lines.len(), 1);
        assert!(lines[0].contains("admin API stays off") && !lines[0].contains("too-short"));
        // Configured: the core's answer, over the labels, and its line.
        let (got, lines) = admin(
            "POST",
            target,
            &admin_auth,
            body,
            NOW,
            Some(TOKEN),
            [1; 24],
            &mut stores,
        );
        let headers: Vec<(&str, &[u8])> = admin_auth
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let request = Request {
            method: "POST",
            target,
            headers: &headers,
        };
        let tokens = AdminTokens::configure(TOKEN).unwrap();
        let want = admin_api::run(&request, body, NOW, tokens.as_ref(), [1; 24], &mut memory);
        assert_eq!(got, frame(false, want.response));
        assert_eq!(lines, want.log.into_iter().collect::<Vec<_>>());
        assert_eq!(got.status, 201);
        let filters = answer("GET", "/v1/filters", &auth(&key), NOW, &mut stores);
        assert!(!String::from_utf8_lossy(&filters.body).contains("\"googlebot\""));
    }

    #[test]
    fn a_swap_writes_only_over_what_it_expects() {
        let (buckets, _, _) = seeded();
        let mut stores = Stores::new(buckets.clone());
        let record = RecordKey::custom_patterns(&noise_filter_core::AccountId::new("z").unwrap());
        assert!(AdminStore::swap(&mut stores, &record, None, b"one").unwrap());
        assert!(!AdminStore::swap(&mut stores, &record, None, b"two").unwrap());
        assert!(!AdminStore::swap(&mut stores, &record, Some(b"two"), b"three").unwrap());
        assert!(AdminStore::swap(&mut stores, &record, Some(b"one"), b"three").unwrap());
        assert_eq!(
            buckets.value("default", record.key()),
            Some(b"three".to_vec())
        );
        let listed = stores
            .list(&noise_filter_core::admin::key_listing())
            .unwrap();
        assert!(listed.iter().any(|k| k.starts_with("key/")));
    }

    #[test]
    fn clock_reads_now() {
        assert!(now().0 > 1_700_000_000_000);
    }
}

//! What the key-value store holds: the kinds of record, which store label
//! each lives in, the key each is kept under, and each record's bytes.
//!
//! The core never touches the store; it names records and reads and writes
//! their bytes, and the shells (Spin component, host, npm handler, admin CLI)
//! move them. A shell maps a [`RecordKind`] (or its [`StoreLabel`]) to one of
//! its stores and never looks inside a key or a value.
//!
//! | kind | label | key | value (codec) |
//! |---|---|---|---|
//! | [`RecordKind::ApiKey`] | `default` | `key/<sha256 hex of the API key>` | [`KeyRecord`] JSON ([`KeyRecord::encode`]) |
//! | [`RecordKind::CustomPatterns`] | `default` | `account/<account>/patterns` | [`crate::CustomPatterns`], pre-rendered ([`crate::CustomPatterns::encode`]) |
//! | [`RecordKind::RateCounter`] | `rate` | `rate/<sha256 hex>/<window number>` | [`Counter`]: 8-byte little-endian i64 (Spin's atomics), or decimal (Redis `INCRBY`) |
//!
//! Keys and patterns are durable (`default`); counters live in their own
//! label so a deployment can keep them in memory or Redis.

use serde::{Deserialize, Serialize};

use crate::auth::KeyHash;
use crate::rate::{RATE_COUNTER_TTL_MS, UnixMillis};

/// Which of the two stores a record lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreLabel {
    /// Keys and custom patterns (`default`): durable.
    Default,
    /// Rate counters (`rate`): may be kept in memory or Redis.
    Rate,
}

impl StoreLabel {
    /// Both labels, as `spin.toml` declares them.
    pub const ALL: [StoreLabel; 2] = [StoreLabel::Default, StoreLabel::Rate];

    /// The label as written in `spin.toml` and Spin's SQLite table.
    pub const fn name(self) -> &'static str {
        match self {
            StoreLabel::Default => "default",
            StoreLabel::Rate => "rate",
        }
    }

    /// The label named `name`, if it is one of the two.
    pub fn from_name(name: &str) -> Option<StoreLabel> {
        StoreLabel::ALL.into_iter().find(|l| l.name() == name)
    }

    /// [`RecordKind::lifetime_ms`] of the kinds this label holds, which
    /// agree: for a shell that sees a record's label and not its kind (Spin's
    /// key-value interface opens a store per label, so the host's stores see
    /// only the label).
    pub const fn lifetime_ms(self) -> Option<u64> {
        match self {
            StoreLabel::Default => RecordKind::ApiKey.lifetime_ms(),
            StoreLabel::Rate => RecordKind::RateCounter.lifetime_ms(),
        }
    }
}

/// The kinds of record the service keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordKind {
    /// What is known of one API key ([`KeyRecord`]), under the key's hash.
    ApiKey,
    /// All custom patterns of one account ([`crate::CustomPatterns`]).
    CustomPatterns,
    /// One key's request count in one rate window ([`Counter`]).
    RateCounter,
}

impl RecordKind {
    /// Every kind, in the order of the store layout's table.
    pub const ALL: [RecordKind; 3] = [
        RecordKind::ApiKey,
        RecordKind::CustomPatterns,
        RecordKind::RateCounter,
    ];

    /// How long a store that can expire records (Redis) keeps one of this
    /// kind after its last write, in milliseconds; `None`: until it is
    /// deleted. Only rate counters expire ([`crate::RATE_COUNTER_TTL_MS`]:
    /// what the core's own cleanup misses, a failed delete or the last
    /// windows of a key never used again, goes too). A shell gives a record
    /// the lifetime of its kind with each write; it never decides one from a
    /// record's label or key.
    pub const fn lifetime_ms(self) -> Option<u64> {
        match self {
            RecordKind::ApiKey | RecordKind::CustomPatterns => None,
            RecordKind::RateCounter => Some(RATE_COUNTER_TTL_MS),
        }
    }

    /// The store label this kind of record lives in.
    pub const fn label(self) -> StoreLabel {
        match self {
            RecordKind::ApiKey | RecordKind::CustomPatterns => StoreLabel::Default,
            RecordKind::RateCounter => StoreLabel::Rate,
        }
    }

    /// The start of every key of this kind.
    const fn prefix(self) -> &'static str {
        match self {
            RecordKind::ApiKey => "key/",
            RecordKind::CustomPatterns => "account/",
            RecordKind::RateCounter => "rate/",
        }
    }
}

/// One record's place in the store: its kind (hence its label) and its key.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RecordKey {
    kind: RecordKind,
    key: String,
}

impl RecordKey {
    /// The record of the API key with this hash.
    pub fn api_key(hash: &KeyHash) -> RecordKey {
        RecordKey::new(RecordKind::ApiKey, hash.as_str())
    }

    /// The custom patterns of `account`.
    pub fn custom_patterns(account: &AccountId) -> RecordKey {
        RecordKey {
            kind: RecordKind::CustomPatterns,
            key: format!("account/{}/patterns", account.as_str()),
        }
    }

    /// The counter of the key with this hash in rate window `window`.
    pub fn rate_counter(hash: &KeyHash, window: u64) -> RecordKey {
        RecordKey {
            kind: RecordKind::RateCounter,
            key: format!("rate/{}/{window}", hash.as_str()),
        }
    }

    /// The window of the latest first request of the key with this hash
    /// (a counter, so it is written with the store's atomic increment): what
    /// tells the next window's first request which counters are stale
    /// (`stale_windows` in `rate.rs`).
    pub fn rate_last_window(hash: &KeyHash) -> RecordKey {
        RecordKey {
            kind: RecordKind::RateCounter,
            key: format!("rate/{}/last", hash.as_str()),
        }
    }

    fn new(kind: RecordKind, rest: &str) -> RecordKey {
        RecordKey {
            kind,
            key: format!("{}{rest}", kind.prefix()),
        }
    }

    /// Its kind.
    pub fn kind(&self) -> RecordKind {
        self.kind
    }

    /// The label it lives in.
    pub fn label(&self) -> StoreLabel {
        self.kind.label()
    }

    /// The key, as stored.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The key record a listed key of the `default` label names (`key/<hash>`),
    /// if it is one.
    pub fn parse_api_key(key: &str) -> Option<(RecordKey, KeyHash)> {
        let hash = KeyHash::from_hex(key.strip_prefix(RecordKind::ApiKey.prefix())?)?;
        Some((RecordKey::api_key(&hash), hash))
    }

    /// Its kind's [`RecordKind::lifetime_ms`].
    pub fn lifetime_ms(&self) -> Option<u64> {
        self.kind.lifetime_ms()
    }
}

/// Records to list: the keys of one kind's label that start with a prefix.
/// A shell lists [`Listing::label`]'s keys under [`Listing::prefix`] and
/// hands them back to the core ([`crate::admin::find_key`],
/// [`crate::admin::list_keys`]); which label, and which prefix, is the
/// core's to say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    kind: RecordKind,
    prefix: String,
}

impl Listing {
    /// Every API key record whose hash starts with `hash_prefix` (`""`:
    /// every key record).
    pub(crate) fn api_keys(hash_prefix: &str) -> Listing {
        Listing {
            kind: RecordKind::ApiKey,
            prefix: format!("{}{hash_prefix}", RecordKind::ApiKey.prefix()),
        }
    }

    /// The kind of every record listed.
    pub fn kind(&self) -> RecordKind {
        self.kind
    }

    /// The label to list.
    pub fn label(&self) -> StoreLabel {
        self.kind.label()
    }

    /// The start of every key listed.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

impl std::fmt::Display for RecordKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.label().name(), self.key)
    }
}

/// A rate counter's bytes. Spin's `wasi:keyvalue/atomics` (and so this
/// project's SQLite and in-memory stores) keep a counter as 8 bytes of
/// little-endian i64; Redis's `INCRBY` keeps it as ASCII decimal. Both are
/// read; the 8-byte form is the one written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counter;

/// A counter that cannot be changed: the stored value is not a counter, or
/// the sum would overflow. Nothing is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CounterError;

impl std::fmt::Display for CounterError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the value is not an 8-byte counter, or the counter would overflow")
    }
}

impl std::error::Error for CounterError {}

impl Counter {
    /// The stored form of `value`.
    pub const fn encode(value: i64) -> [u8; 8] {
        value.to_le_bytes()
    }

    /// Reads a stored counter in either form; `None`: not a counter.
    pub fn decode(bytes: &[u8]) -> Option<i64> {
        let decimal = !bytes.is_empty()
            && bytes
                .iter()
                .enumerate()
                .all(|(i, b)| b.is_ascii_digit() || (i == 0 && *b == b'-'));
        if decimal {
            std::str::from_utf8(bytes).ok()?.parse().ok()
        } else {
            Some(i64::from_le_bytes(bytes.try_into().ok()?))
        }
    }

    /// An atomic increment's work: the counter `current` (absent: 0) plus
    /// `delta`, as the new value and its bytes. Stores that increment
    /// themselves (an SQL function, a map under a lock) call this.
    pub fn add(current: Option<&[u8]>, delta: i64) -> Result<(i64, [u8; 8]), CounterError> {
        let old = match current {
            None => 0,
            Some(bytes) => Counter::decode(bytes).ok_or(CounterError)?,
        };
        let new = old.checked_add(delta).ok_or(CounterError)?;
        Ok((new, Counter::encode(new)))
    }
}

/// An account name: 1 to 64 of `a-z 0-9 . _ -`, starting with a letter or digit.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct AccountId(String);

impl AccountId {
    /// Checks and wraps an account name.
    pub fn new(name: &str) -> Result<AccountId, String> {
        let b = name.as_bytes();
        let ok = (1..=64).contains(&b.len())
            && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
            && b.iter().all(|c| {
                c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, b'.' | b'_' | b'-')
            });
        if ok {
            Ok(AccountId(name.to_owned()))
        } else {
            Err(format!(
                "invalid account name {:?}: use 1 to 64 of a-z, 0-9, '.', '_', '-', starting \
                 with a letter or digit",
                name.chars().take(80).collect::<String>()
            ))
        }
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl TryFrom<String> for AccountId {
    type Error = String;
    fn try_from(s: String) -> Result<Self, String> {
        AccountId::new(&s)
    }
}

impl From<AccountId> for String {
    fn from(a: AccountId) -> String {
        a.0
    }
}

impl std::fmt::Display for AccountId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// What the store keeps for one API key (under the key's hash, never the key).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyRecord {
    /// The account the key belongs to.
    pub account: AccountId,
    /// A note of the owner's choosing ("ci", "production").
    #[serde(default)]
    pub label: String,
    /// When the key was created (RFC 3339, UTC).
    pub created: String,
    /// When the key was revoked; a revoked key is refused as invalid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
}

impl KeyRecord {
    /// A new active key record.
    pub fn new(account: AccountId, label: &str, now: UnixMillis) -> KeyRecord {
        KeyRecord {
            account,
            label: label.to_owned(),
            created: timestamp(now),
            revoked: None,
        }
    }

    /// Whether requests with this key are accepted.
    pub fn is_active(&self) -> bool {
        self.revoked.is_none()
    }

    /// Marks the key revoked at `now` (kept for the listing's history).
    pub fn revoke(&mut self, now: UnixMillis) {
        self.revoked.get_or_insert_with(|| timestamp(now));
    }

    /// The record as stored.
    pub fn encode(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain struct serializes")
    }

    /// Reads a stored record; `None`: not a key record.
    pub fn decode(bytes: &[u8]) -> Option<KeyRecord> {
        serde_json::from_slice(bytes).ok()
    }
}

/// `YYYY-MM-DD` of `now`, UTC.
pub(crate) fn date(now: UnixMillis) -> String {
    let (y, m, d) = civil_from_days((now.0 / 86_400_000) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// RFC 3339 timestamp of `now`, UTC, to the second.
fn timestamp(now: UnixMillis) -> String {
    let secs = now.0 / 1000 % 86_400;
    format!(
        "{}T{:02}:{:02}:{:02}Z",
        date(now),
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
pub(crate) fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_read_in_both_encodings_and_add_in_spins() {
        assert_eq!(Counter::decode(&7i64.to_le_bytes()), Some(7));
        assert_eq!(Counter::decode(b"42"), Some(42));
        assert_eq!(Counter::decode(b"12345678"), Some(12_345_678));
        assert_eq!(Counter::decode(b"-3"), Some(-3));
        assert_eq!(Counter::decode(b"xyz"), None);
        assert_eq!(Counter::add(None, 1), Ok((1, 1i64.to_le_bytes())));
        assert_eq!(
            Counter::add(Some(&5i64.to_le_bytes()), -1),
            Ok((4, 4i64.to_le_bytes()))
        );
        assert_eq!(Counter::add(Some(b"x"), 1), Err(CounterError));
        assert_eq!(
            Counter::add(Some(&i64::MAX.to_le_bytes()), 1),
            Err(CounterError)
        );
    }

    #[test]
    fn record_keys_name_their_label() {
        let hash = KeyHash::of("nf_x");
        let key = RecordKey::api_key(&hash);
        assert_eq!(key.label(), StoreLabel::Default);
        assert_eq!(
            RecordKey::parse_api_key(key.key()),
            Some((key, hash.clone()))
        );
        assert_eq!(RecordKey::rate_counter(&hash, 9).label(), StoreLabel::Rate);
        let account = AccountId::new("acme").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            RecordKey::custom_patterns(&account).key(),
            "account/acme/patterns"
        );
        assert_eq!(StoreLabel::from_name("rate"), Some(StoreLabel::Rate));
    }

    #[test]
    fn only_rate_counters_expire_and_every_kind_of_a_label_alike() {
        assert_eq!(
            RecordKind::RateCounter.lifetime_ms(),
            Some(3 * crate::rate::RATE_WINDOW_MS)
        );
        assert_eq!(RecordKind::ApiKey.lifetime_ms(), None);
        assert_eq!(RecordKind::CustomPatterns.lifetime_ms(), None);
        for kind in RecordKind::ALL {
            assert_eq!(kind.label().lifetime_ms(), kind.lifetime_ms(), "{kind:?}");
        }
        let hash = KeyHash::of("nf_x");
        assert_eq!(
            RecordKey::rate_last_window(&hash).lifetime_ms(),
            Some(180_000)
        );
    }

    #[test]
    fn a_key_listing_names_its_label_and_the_records_it_lists() {
        let hash = KeyHash::of("nf_x");
        let all = Listing::api_keys("");
        assert_eq!(all.label(), StoreLabel::Default);
        assert_eq!(all.prefix(), "key/");
        let key = RecordKey::api_key(&hash);
        assert!(key.key().starts_with(all.prefix()));
        assert_eq!(all.kind(), key.kind());
        assert_eq!(Listing::api_keys("abc123").prefix(), "key/abc123");
    }
}

//! What the key-value store holds, and under which keys.
//!
//! The core never touches the store; it names the keys and reads and writes
//! the records, and the shells (Spin component, host, npm handler, admin CLI)
//! move the bytes. Layout (documented in ARCHITECTURE.md):
//!
//! | store label | key | value |
//! |---|---|---|
//! | `default` | `key/<sha256 hex of the API key>` | [`KeyRecord`] as JSON |
//! | `default` | `account/<account>/patterns` | [`crate::CustomPatterns`], pre-rendered ([`crate::CustomPatterns::encode`]) |
//! | `rate` | `rate/<sha256 hex>/<window number>` | atomic counter |
//!
//! Keys and patterns are durable (`default`); counters live in their own label
//! so a deployment can keep them in memory or Redis.

use serde::{Deserialize, Serialize};

use crate::auth::KeyHash;
use crate::rate::UnixMillis;

/// Label of the durable store: keys and custom patterns.
pub const DEFAULT_STORE: &str = "default";
/// Label of the store for rate counters.
pub const RATE_STORE: &str = "rate";

/// Which of the two stores an action is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StoreLabel {
    /// Keys and custom patterns (`default`).
    Default,
    /// Rate counters (`rate`).
    Rate,
}

impl StoreLabel {
    /// The label as written in `spin.toml`.
    pub const fn name(self) -> &'static str {
        match self {
            StoreLabel::Default => DEFAULT_STORE,
            StoreLabel::Rate => RATE_STORE,
        }
    }
}

/// Prefix of key records in the `default` store.
pub const KEY_RECORD_PREFIX: &str = "key/";
/// Prefix of per-account records in the `default` store.
pub const ACCOUNT_PREFIX: &str = "account/";

/// Store key of the record for a key hash.
pub fn key_record_key(hash: &KeyHash) -> String {
    format!("{KEY_RECORD_PREFIX}{}", hash.as_str())
}

/// Store key of an account's custom patterns.
pub fn custom_patterns_key(account: &AccountId) -> String {
    format!("{ACCOUNT_PREFIX}{}/patterns", account.as_str())
}

/// Store key of a key's counter for one rate window.
pub fn counter_key(hash: &KeyHash, window: u64) -> String {
    format!("rate/{}/{window}", hash.as_str())
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
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain struct serializes")
    }

    /// Reads a stored record.
    pub fn from_json(bytes: &[u8]) -> Option<KeyRecord> {
        serde_json::from_slice(bytes).ok()
    }
}

/// `YYYY-MM-DD` of `now`, UTC.
pub fn date(now: UnixMillis) -> String {
    let (y, m, d) = civil_from_days((now.0 / 86_400_000) as i64);
    format!("{y:04}-{m:02}-{d:02}")
}

/// RFC 3339 timestamp of `now`, UTC, to the second.
pub fn timestamp(now: UnixMillis) -> String {
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
fn civil_from_days(z: i64) -> (i64, u32, u32) {
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

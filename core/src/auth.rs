//! API keys: the `Authorization` header, key format, hashing and generation.
//!
//! A key is `nf_` followed by 48 lowercase hex digits: 24 random bytes (192
//! bits) from the shell's CSPRNG. The prefix lets secret scanners recognise a
//! leaked key. The store only ever holds the SHA-256 of a key ([`KeyHash`]);
//! the key itself is shown once, when it is created.

use std::borrow::Cow;

use sha2::{Digest, Sha256};

use crate::error::Rejection;

/// The prefix of every key.
pub const KEY_PREFIX: &str = "nf_";
/// Random bytes in a key.
pub const KEY_RANDOM_BYTES: usize = 24;
const KEY_LEN: usize = KEY_PREFIX.len() + 2 * KEY_RANDOM_BYTES;

/// A freshly made API key. Its `Debug` form never shows the secret.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Makes a key from random bytes the shell took from a CSPRNG.
    pub fn from_random(bytes: [u8; KEY_RANDOM_BYTES]) -> ApiKey {
        let mut key = String::with_capacity(KEY_LEN);
        key.push_str(KEY_PREFIX);
        key.push_str(&hex(&bytes));
        ApiKey(key)
    }

    /// A key as its owner gives it back (to revoke it, say); `None` when it
    /// does not have the shape of a key this service issues.
    pub fn parse(token: &str) -> Option<ApiKey> {
        is_well_formed(token).then(|| ApiKey(token.to_owned()))
    }

    /// The key, to show to its owner once.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Its hash, under which the store keeps the key's record.
    pub fn hash(&self) -> KeyHash {
        KeyHash::of(&self.0)
    }
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(nf_…)")
    }
}

/// SHA-256 of a presented key, as 64 lowercase hex digits. Safe to log.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyHash(String);

impl KeyHash {
    /// Hashes a presented token.
    pub fn of(token: &str) -> KeyHash {
        KeyHash(hex(&Sha256::digest(token.as_bytes())))
    }

    /// Reads a hash back from its hex form (64 lowercase hex digits).
    pub fn from_hex(hex: &str) -> Option<KeyHash> {
        (hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| KeyHash(hex.to_owned()))
    }

    /// The hex form.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// A short form for listings: the first 12 hex digits.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }

    /// The hash of the key a request presents in its `Authorization`
    /// values, read exactly as the endpoint reads them to authenticate
    /// (any case of `Bearer`, spaces or tabs around the token): for a
    /// shell's access log, so a key used in any accepted spelling leaves
    /// its trace. `None` when the header holds no well-formed key.
    pub fn presented(values: &[&[u8]]) -> Option<KeyHash> {
        authenticate(values).ok()
    }
}

/// Whether `token` has the shape of a key this service issues. A token that
/// does not is refused without asking the store.
pub(crate) fn is_well_formed(token: &str) -> bool {
    token.len() == KEY_LEN
        && token.starts_with(KEY_PREFIX)
        && token[KEY_PREFIX.len()..]
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Reads the `Authorization` header values of a request (all of them, so a
/// repeated header is seen) and returns the hash of a well-formed key.
///
/// | header | outcome |
/// |---|---|
/// | absent, empty, repeated, not `Bearer <one token>` | `MalformedAuthorization` |
/// | `Bearer` with an empty or blank token | `ApiKeyRequired` |
/// | one token that is not a well-formed key | `InvalidApiKey` |
pub(crate) fn authenticate(values: &[&[u8]]) -> Result<KeyHash, Rejection> {
    let [value] = values else {
        return Err(Rejection::MalformedAuthorization);
    };
    let value = std::str::from_utf8(value).map_err(|_| Rejection::MalformedAuthorization)?;
    let value = value.trim_matches([' ', '\t']);
    let (scheme, rest) = match value.find([' ', '\t']) {
        Some(at) => (&value[..at], &value[at..]),
        None => (value, ""),
    };
    if !scheme.eq_ignore_ascii_case("bearer") {
        return Err(Rejection::MalformedAuthorization);
    }
    let mut tokens = rest.split([' ', '\t']).filter(|t| !t.is_empty());
    let token = match (tokens.next(), tokens.next()) {
        (None, _) => return Err(Rejection::ApiKeyRequired),
        (Some(token), None) => token,
        (Some(_), Some(_)) => return Err(Rejection::MalformedAuthorization),
    };
    if !is_well_formed(token) {
        return Err(Rejection::InvalidApiKey);
    }
    Ok(KeyHash::of(token))
}

/// `text` with every `nf_` followed by hex digits (an API key, or the start
/// of one) written `nf_***`: for a log line that holds what a client sent
/// where a key does not belong (a path, an admin call's body), so that no
/// key reaches a log however it was sent.
pub fn redact_keys(text: &str) -> Cow<'_, str> {
    let prefix = KEY_PREFIX;
    if !text.contains(prefix) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(prefix) {
        out.push_str(&rest[..at]);
        let after = &rest[at + prefix.len()..];
        let hex = after.bytes().take_while(u8::is_ascii_hexdigit).count();
        out.push_str(prefix);
        if hex > 0 {
            out.push_str("***");
        }
        rest = &after[hex..];
    }
    out.push_str(rest);
    Cow::Owned(out)
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(DIGITS[usize::from(b >> 4)] as char);
        s.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    s
}

//! Managing keys and custom patterns: what each change writes, or why it is
//! refused, as pure functions. The current record's bytes come in (read by
//! the shell), the new record's bytes or an [`AdminRefusal`] come out; the
//! shell writes them with one compare-and-swap (the host's CLI) or one set
//! (the npm helpers). A refusal writes nothing.
//!
//! | change | reads | writes |
//! |---|---|---|
//! | [`create_key`] | nothing (the record must be absent) | the key's [`KeyRecord`] |
//! | [`find_key`] + [`revoke_key`] | the key records under a hash prefix, then the one found | it, revoked |
//! | [`list_keys`] | every key record | nothing |
//! | [`add_patterns`] (one, or an import: all or none) | the account's patterns | them, added to |
//! | [`remove_pattern`] | the account's patterns | them, without it |
//! | [`read_patterns`] | the account's patterns | nothing |
//! | [`add_exclusions`] (all or none) | the account's record | it, with them |
//! | [`remove_exclusion`] | the account's record | it, without it |
//! | [`export_account`] | every key record, the account's record | nothing: one JSON document |
//! | [`import_account`] + [`import_write`] | each record the document holds | each one absent before |
//!
//! An account's record holds its custom patterns and its exclusions of
//! built-ins alike (`custom.rs`): one write, whole or not at all.

use serde::{Deserialize, Serialize};

use crate::auth::{ApiKey, KEY_RANDOM_BYTES, KeyHash};
use crate::custom::{CustomPatterns, NewPattern};
use crate::exclusion::{Excluded, Exclusion, InvalidExclusion, NewExclusion};
use crate::pattern::InvalidPattern;
use crate::rate::UnixMillis;
use crate::store::{AccountId, KeyRecord, Listing, RecordKey};

/// Fewest hex digits of a key's hash that name it (`keys revoke <prefix>`).
pub const MIN_HASH_PREFIX: usize = 6;
/// Longest key label, in characters. A label is read with its key's record
/// on every request, so it stays short.
pub const MAX_LABEL_CHARS: usize = 64;
/// Largest import file, in bytes: room for the most custom patterns an
/// account may have (500), each of the longest text and source, escaped;
/// a shell refuses a larger file before reading it, so an import never
/// holds more than this in memory.
pub const MAX_IMPORT_BYTES: u64 = 4 * 1024 * 1024;

/// Why an admin change was refused. Nothing was written.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AdminRefusal {
    /// The account name is not one (the text says what is accepted).
    InvalidAccount(String),
    /// A key label that is too long or holds a character that would change
    /// how a listing reads (a control, a line or paragraph separator, a
    /// bidirectional or invisible format character).
    InvalidLabel,
    /// A new key needs exactly [`KEY_RANDOM_BYTES`] random bytes.
    RandomBytes {
        /// How many were given.
        given: usize,
    },
    /// A record already exists under the new key's hash: the random source
    /// repeated itself.
    KeyExists,
    /// A hash prefix that is too short or not hex.
    HashPrefix,
    /// No key's hash starts with the prefix.
    NoKeyWithPrefix(String),
    /// Several keys' hashes start with the prefix.
    AmbiguousPrefix {
        /// The prefix.
        prefix: String,
        /// How many keys it names.
        keys: usize,
    },
    /// No record is stored for the key.
    NoSuchKey,
    /// The key's stored record cannot be read.
    UnreadableKeyRecord,
    /// The account's stored patterns cannot be read.
    UnreadablePatterns,
    /// A pattern was refused (the text says which and why).
    InvalidPattern(InvalidPattern),
    /// The account has no custom pattern with this id.
    NoSuchPattern(String),
    /// An exclusion was refused (the text says which and why).
    InvalidExclusion(InvalidExclusion),
    /// The account has no exclusion of this.
    NoSuchExclusion(String),
    /// An account document that cannot be imported (the text says why).
    InvalidExport(String),
    /// A record an import would write is already in this store with other
    /// bytes (the text says which).
    ImportConflict(String),
}

impl std::fmt::Display for AdminRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AdminRefusal::InvalidAccount(text) => f.write_str(text),
            AdminRefusal::InvalidLabel => write!(
                f,
                "a key label is at most {MAX_LABEL_CHARS} characters, without control, \
                 line-separator or invisible formatting characters"
            ),
            AdminRefusal::RandomBytes { given } => write!(
                f,
                "a key needs exactly {KEY_RANDOM_BYTES} random bytes, got {given}"
            ),
            AdminRefusal::KeyExists => f.write_str(
                "a key with this hash already exists (the random source repeated itself)",
            ),
            AdminRefusal::HashPrefix => write!(
                f,
                "give at least {MIN_HASH_PREFIX} hex digits of the key's hash, as `keys list` \
                 shows it"
            ),
            AdminRefusal::NoKeyWithPrefix(prefix) => {
                write!(f, "no key's hash starts with {prefix}")
            }
            AdminRefusal::AmbiguousPrefix { prefix, keys } => {
                write!(
                    f,
                    "{keys} keys' hashes start with {prefix}: give more digits"
                )
            }
            AdminRefusal::NoSuchKey => f.write_str("no such key"),
            AdminRefusal::UnreadableKeyRecord => {
                f.write_str("the key's stored record is unreadable")
            }
            AdminRefusal::UnreadablePatterns => {
                f.write_str("the account's stored custom patterns are unreadable")
            }
            AdminRefusal::InvalidPattern(why) => write!(f, "{why}"),
            AdminRefusal::NoSuchPattern(id) => {
                write!(f, "the account has no custom pattern {id:?}")
            }
            AdminRefusal::InvalidExclusion(why) => write!(f, "{why}"),
            AdminRefusal::NoSuchExclusion(what) => {
                write!(f, "the account has no exclusion of {what}")
            }
            AdminRefusal::InvalidExport(why) => write!(f, "not an account document: {why}"),
            AdminRefusal::ImportConflict(what) => {
                write!(f, "{what} is already in this store with other contents")
            }
        }?;
        f.write_str("; nothing written")
    }
}

impl std::error::Error for AdminRefusal {}

fn account(name: &str) -> Result<AccountId, AdminRefusal> {
    AccountId::new(name).map_err(AdminRefusal::InvalidAccount)
}

/// A key's label, checked: printed in listings, so nothing in it may start
/// a new row, move the cursor or reorder the text around it.
fn label(text: &str) -> Result<&str, AdminRefusal> {
    let disruptive = |c: char| {
        c.is_control()
            || matches!(c,
                '\u{2028}' | '\u{2029}'          // line and paragraph separators
                | '\u{200B}'..='\u{200F}'        // zero-width characters, LRM, RLM
                | '\u{202A}'..='\u{202E}'        // bidirectional embeddings, overrides
                | '\u{2060}'..='\u{206F}'        // word joiner, isolates, invisible operators
                | '\u{FEFF}'                      // zero-width no-break space
            )
    };
    if text.chars().count() > MAX_LABEL_CHARS || text.chars().any(disruptive) {
        return Err(AdminRefusal::InvalidLabel);
    }
    Ok(text)
}

/// A record to write: where, and its bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Where.
    pub record: RecordKey,
    /// The bytes.
    pub value: Vec<u8>,
}

/// A new key: the key, shown once, and its record, to write only where no
/// record is (a compare-and-swap from absent).
#[derive(Debug, Clone)]
pub struct NewKey {
    /// The key itself: shown to its owner once, never stored.
    pub key: ApiKey,
    /// Its record, under its hash.
    pub record: Write,
}

/// Makes a key for `account` from random bytes the shell took from a CSPRNG.
pub fn create_key(
    random: &[u8],
    account: &str,
    label: &str,
    now: UnixMillis,
) -> Result<NewKey, AdminRefusal> {
    let random =
        <[u8; KEY_RANDOM_BYTES]>::try_from(random).map_err(|_| AdminRefusal::RandomBytes {
            given: random.len(),
        })?;
    let key = ApiKey::from_random(random);
    let record = key_record(&key, account, label, now)?;
    Ok(NewKey { key, record })
}

/// The record of an existing `key` (for fixtures and seeded stores).
pub(crate) fn key_record(
    key: &ApiKey,
    account_name: &str,
    label: &str,
    now: UnixMillis,
) -> Result<Write, AdminRefusal> {
    Ok(Write {
        record: RecordKey::api_key(&key.hash()),
        value: KeyRecord::new(account(account_name)?, self::label(label)?, now).encode(),
    })
}

/// What to list to find a key by a hash prefix given by a person (at least
/// [`MIN_HASH_PREFIX`] hex digits, any case).
pub fn key_search(hash_prefix: &str) -> Result<Listing, AdminRefusal> {
    let prefix = hash_prefix.trim().to_ascii_lowercase();
    if prefix.len() < MIN_HASH_PREFIX || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(AdminRefusal::HashPrefix);
    }
    Ok(Listing::api_keys(&prefix))
}

/// What to list for [`list_keys`]: every key record.
pub fn key_listing() -> Listing {
    Listing::api_keys("")
}

/// The one key record among `listed`, the keys listed for [`key_search`]
/// (`search` is that listing's [`Listing::prefix`]), and its hash.
pub fn find_key(search: &str, listed: &[String]) -> Result<(RecordKey, KeyHash), AdminRefusal> {
    let found: Vec<(RecordKey, KeyHash)> = listed
        .iter()
        .filter(|k| k.starts_with(search))
        .filter_map(|k| RecordKey::parse_api_key(k))
        .collect();
    let prefix = || {
        search
            .strip_prefix(key_listing().prefix())
            .unwrap_or(search)
            .to_owned()
    };
    match <[_; 1]>::try_from(found) {
        Ok([one]) => Ok(one),
        Err(found) if found.is_empty() => Err(AdminRefusal::NoKeyWithPrefix(prefix())),
        Err(found) => Err(AdminRefusal::AmbiguousPrefix {
            prefix: prefix(),
            keys: found.len(),
        }),
    }
}

/// What a revocation writes, and what the listing says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Revocation {
    /// The revoked record's bytes.
    pub value: Vec<u8>,
    /// The account of the key.
    pub account: AccountId,
    /// When it had been revoked before, if it had (the record is unchanged).
    pub already: Option<String>,
}

/// Revokes the key whose record is `current`.
pub fn revoke_key(current: Option<&[u8]>, now: UnixMillis) -> Result<Revocation, AdminRefusal> {
    let mut record = KeyRecord::decode(current.ok_or(AdminRefusal::NoSuchKey)?)
        .ok_or(AdminRefusal::UnreadableKeyRecord)?;
    let already = record.revoked.clone();
    record.revoke(now);
    Ok(Revocation {
        value: record.encode(),
        account: record.account,
        already,
    })
}

/// One key as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListedKey {
    /// The key's hash.
    pub hash: KeyHash,
    /// Its record (`None`: unreadable).
    pub record: Option<KeyRecord>,
}

/// The keys among `records` (every `(store key, value)` listed for
/// [`key_listing`]), of `account` if given, by creation time then hash.
/// Unreadable records are listed when no account is asked for.
pub fn list_keys(
    records: &[(String, Vec<u8>)],
    account_name: Option<&str>,
) -> Result<Vec<ListedKey>, AdminRefusal> {
    let wanted = account_name.map(account).transpose()?;
    let mut listed: Vec<ListedKey> = records
        .iter()
        .filter_map(|(key, value)| {
            let (_, hash) = RecordKey::parse_api_key(key)?;
            let record = KeyRecord::decode(value);
            let keep = match (&wanted, &record) {
                (None, _) => true,
                (Some(want), Some(r)) => &r.account == want,
                (Some(_), None) => false,
            };
            keep.then_some(ListedKey { hash, record })
        })
        .collect();
    listed.sort_by(|a, b| {
        let created = |k: &ListedKey| k.record.as_ref().map(|r| r.created.clone());
        created(a)
            .cmp(&created(b))
            .then_with(|| a.hash.cmp(&b.hash))
    });
    Ok(listed)
}

/// Where `account`'s custom patterns are kept.
pub fn patterns_record(account_name: &str) -> Result<RecordKey, AdminRefusal> {
    Ok(RecordKey::custom_patterns(&account(account_name)?))
}

/// An account's custom patterns as stored in `current` (absent: none).
pub fn read_patterns(current: Option<&[u8]>) -> Result<CustomPatterns, AdminRefusal> {
    match current {
        None => Ok(CustomPatterns::new()),
        Some(bytes) => CustomPatterns::decode(bytes).ok_or(AdminRefusal::UnreadablePatterns),
    }
}

/// What adding patterns writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Added {
    /// The account's new record.
    pub value: Vec<u8>,
    /// The new patterns' ids, in order.
    pub ids: Vec<String>,
}

/// Adds `news` to the patterns in `current`, all or none; a refusal names
/// which pattern (by its place, from 1) and why.
pub fn add_patterns(
    current: Option<&[u8]>,
    news: Vec<NewPattern>,
    now: UnixMillis,
) -> Result<Added, AdminRefusal> {
    let mut patterns = read_patterns(current)?;
    let ids = patterns.add_all(news, now)?;
    Ok(Added {
        value: patterns.encode(),
        ids,
    })
}

/// Removes pattern `id` from the patterns in `current`.
pub fn remove_pattern(
    current: Option<&[u8]>,
    id: &str,
    now: UnixMillis,
) -> Result<Vec<u8>, AdminRefusal> {
    let mut patterns = read_patterns(current)?;
    if !patterns.remove(id, now) {
        return Err(AdminRefusal::NoSuchPattern(id.chars().take(64).collect()));
    }
    Ok(patterns.encode())
}

impl From<InvalidPattern> for AdminRefusal {
    fn from(why: InvalidPattern) -> AdminRefusal {
        AdminRefusal::InvalidPattern(why)
    }
}

impl From<InvalidExclusion> for AdminRefusal {
    fn from(why: InvalidExclusion) -> AdminRefusal {
        AdminRefusal::InvalidExclusion(why)
    }
}

/// What adding exclusions writes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AddedExclusions {
    /// The account's new record.
    pub value: Vec<u8>,
    /// The exclusions as stored, in the order given.
    pub exclusions: Vec<Exclusion>,
}

/// Adds `news` to the exclusions in `current`, all or none (one of
/// something already excluded replaces its end).
pub fn add_exclusions(
    current: Option<&[u8]>,
    news: Vec<NewExclusion>,
    now: UnixMillis,
) -> Result<AddedExclusions, AdminRefusal> {
    let mut record = read_patterns(current)?;
    let exclusions = record.exclude(news, now)?;
    Ok(AddedExclusions {
        value: record.encode(),
        exclusions,
    })
}

/// Removes the exclusion of `kind` (`id`, `category`) `value` from the
/// record in `current`.
pub fn remove_exclusion(
    current: Option<&[u8]>,
    kind: &str,
    value: &str,
    now: UnixMillis,
) -> Result<(Vec<u8>, Excluded), AdminRefusal> {
    let excluded = Excluded::named(kind, value)?;
    let mut record = read_patterns(current)?;
    if !record.remove_exclusion(&excluded, now) {
        return Err(AdminRefusal::NoSuchExclusion(excluded.to_string()));
    }
    Ok((record.encode(), excluded))
}

/// The form of an account document, its first field: a reader refuses any
/// other.
pub const EXPORT_FORMAT: &str = "noise-filter account 1";

/// One account as one JSON document, to move it between stores (SQLite to
/// Redis, one deployment to another) without issuing its keys again: its
/// keys as their records under their hashes (a key itself is never
/// stored, so never exported), its custom patterns and its exclusions with
/// everything that keeps ids from being reused.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AccountExport {
    /// [`EXPORT_FORMAT`].
    pub format: String,
    /// The account.
    pub account: AccountId,
    /// Its keys, by creation time then hash.
    pub keys: Vec<ExportedKey>,
    /// Its record: custom patterns, exclusions, the next id, retired ids.
    pub custom: CustomPatterns,
}

/// One key of an exported account: its hash and record, never the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportedKey {
    /// SHA-256 of the key, 64 hex digits.
    pub hash: String,
    /// Its label.
    #[serde(default)]
    pub label: String,
    /// When it was created.
    pub created: String,
    /// When it was revoked, if it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revoked: Option<String>,
}

/// The document of `account`: its keys among `records` (every key record,
/// listed for [`key_listing`]), and its record `current`.
pub fn export_account(
    account_name: &str,
    records: &[(String, Vec<u8>)],
    current: Option<&[u8]>,
) -> Result<AccountExport, AdminRefusal> {
    let keys = list_keys(records, Some(account_name))?
        .into_iter()
        .filter_map(|listed| {
            let record = listed.record?;
            Some(ExportedKey {
                hash: listed.hash.as_str().to_owned(),
                label: record.label,
                created: record.created,
                revoked: record.revoked,
            })
        })
        .collect();
    Ok(AccountExport {
        format: EXPORT_FORMAT.to_owned(),
        account: account(account_name)?,
        keys,
        custom: read_patterns(current)?,
    })
}

/// What importing a document writes: each record, to write where none is
/// ([`import_write`] says what to do with one already there).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Import {
    /// The account.
    pub account: AccountId,
    /// One record per key.
    pub keys: Vec<Write>,
    /// The account's record.
    pub custom: Write,
}

/// Reads an account document (at most [`MAX_IMPORT_BYTES`], as an import
/// file) and checks everything in it as the admin functions check what
/// they write: the account, every key's hash and label, every pattern,
/// every exclusion's form. `account_name`: the account it must be (the
/// admin API's path), if any.
pub fn import_account(document: &[u8], account_name: Option<&str>) -> Result<Import, AdminRefusal> {
    let doc: AccountExport =
        serde_json::from_slice(document).map_err(|e| AdminRefusal::InvalidExport(e.to_string()))?;
    if doc.format != EXPORT_FORMAT {
        return Err(AdminRefusal::InvalidExport(format!(
            "format is {:?}; this version reads {EXPORT_FORMAT:?}",
            doc.format.chars().take(64).collect::<String>()
        )));
    }
    if let Some(name) = account_name
        && account(name)? != doc.account
    {
        return Err(AdminRefusal::InvalidExport(format!(
            "it holds account {}, not {name}",
            doc.account
        )));
    }
    let mut keys = Vec::with_capacity(doc.keys.len());
    for key in &doc.keys {
        let hash = KeyHash::from_hex(&key.hash).ok_or_else(|| {
            AdminRefusal::InvalidExport(format!(
                "{:?} is not a key's hash (64 lowercase hex digits)",
                key.hash.chars().take(80).collect::<String>()
            ))
        })?;
        let record = KeyRecord {
            account: doc.account.clone(),
            label: label(&key.label)?.to_owned(),
            created: key.created.clone(),
            revoked: key.revoked.clone(),
        };
        keys.push(Write {
            record: RecordKey::api_key(&hash),
            value: record.encode(),
        });
    }
    for pattern in &doc.custom.patterns {
        pattern.check()?;
    }
    let mut ids: Vec<&str> = doc.custom.patterns.iter().map(|p| p.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(twice) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(AdminRefusal::InvalidExport(format!(
            "pattern id {:?} is given twice",
            twice[0]
        )));
    }
    Ok(Import {
        keys,
        custom: Write {
            record: RecordKey::custom_patterns(&doc.account),
            value: doc.custom.encode(),
        },
        account: doc.account,
    })
}

/// What an import does with one of its records, given what the store holds
/// there: write it (`true`, where nothing is), nothing (`false`: the same
/// bytes are there, an import run again), or refuse (other bytes: another
/// account's key, a record changed since).
pub fn import_write(write: &Write, current: Option<&[u8]>) -> Result<bool, AdminRefusal> {
    match current {
        None => Ok(true),
        Some(bytes) if bytes == write.value.as_slice() => Ok(false),
        Some(_) => Err(AdminRefusal::ImportConflict(match write.record.kind() {
            crate::RecordKind::ApiKey => format!(
                "the key with hash {}",
                write.record.key().trim_start_matches("key/")
            ),
            _ => "the account's custom patterns and exclusions".to_owned(),
        })),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    const NOW: UnixMillis = UnixMillis(1_763_800_000_000);

    #[test]
    fn a_key_is_made_from_exactly_its_random_bytes() {
        let made = create_key(&[7; 24], "acme", "ci", NOW).unwrap_or_else(|e| panic!("{e}"));
        assert!(made.key.expose().starts_with("nf_0707"));
        assert_eq!(made.record.record, RecordKey::api_key(&made.key.hash()));
        assert_eq!(
            create_key(&[7; 23], "acme", "", NOW).err(),
            Some(AdminRefusal::RandomBytes { given: 23 })
        );
        assert!(matches!(
            create_key(&[7; 24], "Not An Account", "", NOW),
            Err(AdminRefusal::InvalidAccount(_))
        ));
    }

    #[test]
    fn a_key_is_found_by_a_prefix_of_its_hash() {
        let listed = vec![
            format!("key/{}", "ab".repeat(32)),
            format!("key/{}", "ac".repeat(32)),
        ];
        let search = key_search("ABABAB").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(search.label(), crate::StoreLabel::Default);
        let (record, hash) = find_key(search.prefix(), &listed).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(record.key(), listed[0]);
        assert_eq!(hash.as_str(), "ab".repeat(32));
        let search = key_search("a0a0a0").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            find_key(search.prefix(), &listed),
            Err(AdminRefusal::NoKeyWithPrefix("a0a0a0".into()))
        );
        let two = [listed[0].clone(), listed[0].replace("key/abab", "key/abac")];
        let search = key_search("ababab").unwrap_or_else(|e| panic!("{e}"));
        assert!(find_key(search.prefix(), &two[..1]).is_ok());
        let search = key_search("abab").map(|l| l.prefix().to_owned());
        assert_eq!(search, Err(AdminRefusal::HashPrefix));
        let every = key_listing();
        assert!(listed.iter().all(|k| k.starts_with(every.prefix())));
        assert_eq!(
            find_key(every.prefix(), &listed),
            Err(AdminRefusal::AmbiguousPrefix {
                prefix: String::new(),
                keys: 2
            })
        );
        assert_eq!(key_search("abc"), Err(AdminRefusal::HashPrefix));
        assert_eq!(key_search("zzzzzz"), Err(AdminRefusal::HashPrefix));
    }

    #[test]
    fn labels_that_would_forge_a_listing_are_refused() {
        for bad in [
            "ci\nkey abc acme",
            "\u{1b}[2Jcleared",
            "a\u{85}b",
            "a\u{2028}b",
            "\u{202E}tcudorp",
            "zero\u{200B}width",
            &"x".repeat(MAX_LABEL_CHARS + 1),
        ] {
            assert_eq!(
                create_key(&[7; 24], "acme", bad, NOW).err(),
                Some(AdminRefusal::InvalidLabel),
                "{bad:?}"
            );
        }
        for good in [
            "",
            "ci",
            "production (eu-west)",
            "équipe données",
            &"x".repeat(64),
        ] {
            assert!(create_key(&[7; 24], "acme", good, NOW).is_ok(), "{good:?}");
        }
    }

    fn added(
        record: Option<&[u8]>,
        ids: &[Option<&str>],
    ) -> Result<(Vec<u8>, Vec<String>), String> {
        let news = ids
            .iter()
            .enumerate()
            .map(|(n, id)| NewPattern {
                id: id.map(str::to_owned),
                ..NewPattern::string(&format!("pattern number {n}"))
            })
            .collect();
        add_patterns(record, news, NOW)
            .map(|a| (a.value, a.ids))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn custom_ids_are_never_reused() {
        // An id of the assigned form cannot be chosen by hand: it could
        // collide with a later assigned one.
        let err = added(None, &[Some("custom-3")]).unwrap_err();
        assert!(err.contains("form of an id the service assigns"), "{err}");
        let (record, ids) = added(None, &[None, Some("custom-mine"), None]).unwrap();
        assert_eq!(ids, ["custom-1", "custom-mine", "custom-2"]);
        // Removed: an assigned id is never assigned again, nor can it be
        // given by hand; a chosen one is retired.
        let record = remove_pattern(Some(&record), "custom-2", NOW).unwrap();
        let record = remove_pattern(Some(&record), "custom-mine", NOW).unwrap();
        let (record, ids) = added(Some(&record), &[None]).unwrap();
        assert_eq!(ids, ["custom-3"]);
        assert!(added(Some(&record), &[Some("custom-2")]).is_err());
        let err = added(Some(&record), &[Some("custom-mine")]).unwrap_err();
        assert!(err.contains("removed before"), "{err}");
        assert!(err.ends_with("nothing written"), "{err}");
        // The retired ids survive the record's round trip.
        let patterns = read_patterns(Some(&record)).unwrap();
        assert_eq!(patterns.retired, ["custom-mine"]);
        assert_eq!(patterns.encode(), record);
    }

    #[test]
    fn a_record_without_retired_ids_keeps_its_bytes_and_the_retired_list_is_bounded() {
        let (record, _) = added(None, &[Some("custom-a")]).unwrap();
        assert!(!String::from_utf8_lossy(&record).contains("retired"));
        let mut patterns = read_patterns(Some(&record)).unwrap();
        for n in 0..crate::custom::MAX_RETIRED_IDS + 5 {
            let id = format!("custom-x{n}");
            patterns
                .add(
                    NewPattern {
                        id: Some(id.clone()),
                        ..NewPattern::string("some text")
                    },
                    NOW,
                )
                .unwrap();
            assert!(patterns.remove(&id, NOW));
        }
        assert_eq!(patterns.retired.len(), crate::custom::MAX_RETIRED_IDS);
        assert_eq!(
            patterns.retired[0], "custom-x5",
            "the oldest are forgotten first"
        );
        let decoded = read_patterns(Some(&patterns.encode())).unwrap();
        assert_eq!(decoded, patterns);
    }

    #[test]
    fn refusals_say_nothing_was_written() {
        let unreadable = add_patterns(Some(b"garbage"), vec![NewPattern::string("abc")], NOW);
        assert_eq!(
            unreadable.err().map(|e| e.to_string()),
            Some("the account's stored custom patterns are unreadable; nothing written".into())
        );
        let missing = remove_pattern(None, "custom-9", NOW);
        assert_eq!(
            missing.err().map(|e| e.to_string()),
            Some("the account has no custom pattern \"custom-9\"; nothing written".into())
        );
        assert_eq!(revoke_key(None, NOW), Err(AdminRefusal::NoSuchKey));
    }
}

//! The admin tool: keys and custom patterns, on the same store the server
//! reads. Every rule (account names, key format, pattern validation) is the
//! core's; this only reads, asks the core, and writes once.
//!
//! **Nothing half-written.** Each change is one write of one value: a key's
//! record, or an account's whole pattern document. Changes that depend on
//! what is stored (revoke, add, remove, import) are a compare-and-swap of that
//! value ([`Backend::update`]), so two admins at once cannot lose each
//! other's change, and a refusal writes nothing.

use std::io::Write as _;

use anyhow::{Context as _, anyhow, bail};
use noise_filter_core::store::{self, KEY_RECORD_PREFIX};
use noise_filter_core::{AccountId, ApiKey, CustomPatterns, KeyRecord, NewPattern, UnixMillis};

use crate::kv::Backend;

const DEFAULT: &str = "default";

/// The wall clock, as the core takes it.
pub(crate) fn now() -> UnixMillis {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    UnixMillis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// A new key from the operating system's CSPRNG.
pub(crate) fn random_key() -> anyhow::Result<ApiKey> {
    let mut bytes = [0u8; noise_filter_core::auth::KEY_RANDOM_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| anyhow!("no random bytes from the OS: {e}"))?;
    Ok(ApiKey::from_random(bytes))
}

/// Creates a key for `account` and returns it (the only time it is seen).
pub(crate) async fn create_key(
    store: &Backend,
    account: &str,
    label: &str,
) -> anyhow::Result<ApiKey> {
    let account = AccountId::new(account).map_err(|e| anyhow!(e))?;
    let key = random_key()?;
    let record = KeyRecord::new(account, label, now());
    let written = store
        .compare_and_swap(
            DEFAULT,
            &store::key_record_key(&key.hash()),
            None,
            &record.to_json(),
        )
        .await?;
    if !written {
        // 192 random bits colliding: the OS's random source is broken.
        bail!("a key with this hash already exists; nothing written");
    }
    Ok(key)
}

/// One key as listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ListedKey {
    /// Hex SHA-256 of the key.
    pub(crate) hash: String,
    /// The stored record (`None`: unreadable).
    pub(crate) record: Option<KeyRecord>,
}

/// Every key record, optionally of one account, by creation time then hash.
pub(crate) async fn list_keys(
    store: &Backend,
    account: Option<&str>,
) -> anyhow::Result<Vec<ListedKey>> {
    let account = account
        .map(AccountId::new)
        .transpose()
        .map_err(|e| anyhow!(e))?;
    let mut listed = Vec::new();
    for key in store.keys(DEFAULT, KEY_RECORD_PREFIX).await? {
        let Some(value) = store.get(DEFAULT, &key).await? else {
            continue;
        };
        let record = KeyRecord::from_json(&value);
        if let (Some(want), Some(r)) = (&account, &record) {
            if &r.account != want {
                continue;
            }
        } else if account.is_some() {
            continue;
        }
        listed.push(ListedKey {
            hash: key[KEY_RECORD_PREFIX.len()..].to_owned(),
            record,
        });
    }
    listed.sort_by(|a, b| {
        let created = |k: &ListedKey| k.record.as_ref().map(|r| r.created.clone());
        created(a)
            .cmp(&created(b))
            .then_with(|| a.hash.cmp(&b.hash))
    });
    Ok(listed)
}

/// Prints the listing: hash prefix, account, label, created, revoked.
pub(crate) fn print_keys(keys: &[ListedKey]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<14} {:<20} {:<16} {:<21} revoked",
        "key (sha256)", "account", "label", "created"
    )?;
    for key in keys {
        let short = &key.hash[..key.hash.len().min(12)];
        match &key.record {
            Some(r) => writeln!(
                out,
                "{short:<14} {:<20} {:<16} {:<21} {}",
                r.account.as_str(),
                r.label,
                r.created,
                r.revoked.as_deref().unwrap_or("-")
            )?,
            None => writeln!(out, "{short:<14} (unreadable record)")?,
        }
    }
    Ok(())
}

/// What a revoke did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Revoked {
    /// Revoked now.
    Now {
        /// Full hash.
        hash: String,
        /// The account.
        account: String,
    },
    /// It was revoked before, at this time.
    Already {
        /// Full hash.
        hash: String,
        /// When.
        at: String,
    },
}

/// Revokes the one key whose hash starts with `prefix` (at least 6 hex digits).
pub(crate) async fn revoke_key(store: &Backend, prefix: &str) -> anyhow::Result<Revoked> {
    let prefix = prefix.trim().to_ascii_lowercase();
    if prefix.len() < 6 || !prefix.bytes().all(|b| b.is_ascii_hexdigit()) {
        bail!("give at least 6 hex digits of the key's hash, as `keys list` shows it");
    }
    let matches = store
        .keys(DEFAULT, &format!("{KEY_RECORD_PREFIX}{prefix}"))
        .await?;
    let key = match matches.as_slice() {
        [] => bail!("no key's hash starts with {prefix}"),
        [one] => one.clone(),
        many => bail!(
            "{} keys' hashes start with {prefix}: give more digits",
            many.len()
        ),
    };
    let hash = key[KEY_RECORD_PREFIX.len()..].to_owned();
    let mut already = None;
    let changed = store
        .update(DEFAULT, &key, |value| {
            let mut record = value
                .and_then(KeyRecord::from_json)
                .ok_or_else(|| anyhow!("the record of key {hash} is missing or unreadable"))?;
            already = record.revoked.clone();
            record.revoke(now());
            Ok::<_, anyhow::Error>(record.to_json())
        })
        .await??;
    let record = KeyRecord::from_json(&changed).context("record just written")?;
    Ok(match already {
        Some(at) => Revoked::Already { hash, at },
        None => Revoked::Now {
            hash,
            account: record.account.to_string(),
        },
    })
}

/// An account's custom patterns (empty if it has none).
pub(crate) async fn list_patterns(
    store: &Backend,
    account: &str,
) -> anyhow::Result<CustomPatterns> {
    let account = AccountId::new(account).map_err(|e| anyhow!(e))?;
    match store
        .get(DEFAULT, &store::custom_patterns_key(&account))
        .await?
    {
        None => Ok(CustomPatterns::new()),
        Some(bytes) => CustomPatterns::decode(&bytes)
            .with_context(|| format!("the stored patterns of account {account} are unreadable")),
    }
}

/// Prints an account's patterns, one per line.
pub(crate) fn print_patterns(patterns: &CustomPatterns) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    if patterns.patterns.is_empty() {
        writeln!(out, "no custom patterns")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<20} {:<7} {:<20} {:<10} {:<40} source",
        "id", "type", "category", "confidence", "pattern"
    )?;
    for p in &patterns.patterns {
        writeln!(
            out,
            "{:<20} {:<7} {:<20} {:<10} {:<40} {}",
            p.id,
            p.kind.name(),
            p.category_name(noise_filter_core::Variant::A),
            p.confidence,
            serde_json::to_string(&p.pattern)?,
            p.source
        )?;
    }
    Ok(())
}

/// Adds patterns to an account, all or none; returns their ids.
pub(crate) async fn add_patterns(
    store: &Backend,
    account: &str,
    news: Vec<NewPattern>,
) -> anyhow::Result<Vec<String>> {
    let account = AccountId::new(account).map_err(|e| anyhow!(e))?;
    let key = store::custom_patterns_key(&account);
    let mut ids = Vec::new();
    store
        .update(DEFAULT, &key, |value| {
            let mut doc = read_patterns(value)?;
            ids = doc
                .add_all(news.clone(), now())
                .map_err(|e| anyhow!("refused, nothing written: {e}"))?;
            Ok::<_, anyhow::Error>(doc.encode())
        })
        .await??;
    Ok(ids)
}

/// Removes pattern `id` from an account.
pub(crate) async fn remove_pattern(store: &Backend, account: &str, id: &str) -> anyhow::Result<()> {
    let account = AccountId::new(account).map_err(|e| anyhow!(e))?;
    let key = store::custom_patterns_key(&account);
    store
        .update(DEFAULT, &key, |value| {
            let mut doc = read_patterns(value)?;
            if !doc.remove(id, now()) {
                bail!("account {account} has no custom pattern {id:?}");
            }
            Ok(doc.encode())
        })
        .await??;
    Ok(())
}

fn read_patterns(value: Option<&[u8]>) -> anyhow::Result<CustomPatterns> {
    match value {
        None => Ok(CustomPatterns::new()),
        Some(bytes) => CustomPatterns::decode(bytes)
            .ok_or_else(|| anyhow!("the stored pattern document is unreadable; nothing written")),
    }
}

/// Reads an import file: a JSON array of patterns as `patterns add` takes them.
pub(crate) fn read_import(path: &std::path::Path) -> anyhow::Result<Vec<NewPattern>> {
    let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    serde_json::from_slice(&text).map_err(|e| {
        anyhow!(
            "{}: {e}; expected a JSON array of objects with `pattern` and optional `type` \
             (string|regex), `category`, `confidence`, `source`, `id`",
            path.display()
        )
    })
}

//! The admin tool: keys and custom patterns, on the same store the server
//! reads.
//!
//! What each change writes, and every refusal and its text, is the core's
//! (`noise_filter_core::admin`); this reads, asks the core, and writes.
//!
//! **Nothing half-written.** Each change is one write of one value: a key's
//! record, or an account's whole pattern document. Changes that depend on
//! what is stored (revoke, add, remove, import) are a compare-and-swap of that
//! value ([`Backend::update`]), so two admins at once cannot lose each
//! other's change, and a refusal writes nothing.

use std::io::Write as _;

use anyhow::{Context as _, anyhow};
use noise_filter_core::admin::{self, AdminRefusal, ListedKey, Revocation, Write};
use noise_filter_core::{
    ApiKey, CustomPatterns, KEY_RANDOM_BYTES, KeyHash, NewPattern, UnixMillis,
};

use crate::store::Backend;

/// The wall clock, as the core takes it.
pub fn now() -> UnixMillis {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    UnixMillis(u64::try_from(since.as_millis()).unwrap_or(u64::MAX))
}

/// A new key's random bytes, from the operating system's CSPRNG.
fn random_bytes() -> anyhow::Result<[u8; KEY_RANDOM_BYTES]> {
    let mut bytes = [0u8; KEY_RANDOM_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| anyhow!("no random bytes from the OS: {e}"))?;
    Ok(bytes)
}

/// Creates a key for `account` and returns it (the only time it is seen).
pub async fn create_key(store: &Backend, account: &str, label: &str) -> anyhow::Result<ApiKey> {
    let made = admin::create_key(&random_bytes()?, account, label, now())?;
    let Write { record, value } = made.record;
    if !store
        .compare_and_swap(record.label(), record.key(), None, &value)
        .await?
    {
        return Err(AdminRefusal::KeyExists.into());
    }
    Ok(made.key)
}

/// Every key record, optionally of one account, by creation time then hash.
pub async fn list_keys(store: &Backend, account: Option<&str>) -> anyhow::Result<Vec<ListedKey>> {
    let listing = admin::key_listing();
    let mut records = Vec::new();
    for key in store.keys(listing.label(), listing.prefix()).await? {
        if let Some(value) = store.get(listing.label(), &key).await? {
            records.push((key, value));
        }
    }
    Ok(admin::list_keys(&records, account)?)
}

/// Prints the listing: hash prefix, account, label, created, revoked.
pub fn print_keys(keys: &[ListedKey]) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:<14} {:<20} {:<16} {:<21} revoked",
        "key (sha256)", "account", "label", "created"
    )?;
    for key in keys {
        let short = key.hash.short();
        match &key.record {
            Some(r) => writeln!(
                out,
                "{short:<14} {:<20} {:<16} {:<21} {}",
                r.account.as_str(),
                // Labels are checked when made; one stored before that is
                // still printed on one row.
                r.label.escape_debug().to_string(),
                r.created,
                r.revoked.as_deref().unwrap_or("-")
            )?,
            None => writeln!(out, "{short:<14} (unreadable record)")?,
        }
    }
    Ok(())
}

/// Revokes the one key whose hash starts with `prefix` (at least 6 hex
/// digits); returns its hash and what the core made of it.
pub async fn revoke_key(store: &Backend, prefix: &str) -> anyhow::Result<(KeyHash, Revocation)> {
    let search = admin::key_search(prefix)?;
    let listed = store.keys(search.label(), search.prefix()).await?;
    let (record, hash) = admin::find_key(search.prefix(), &listed)?;
    let mut revocation = None;
    store
        .update(record.label(), record.key(), |current| {
            let revoked = admin::revoke_key(current, now())?;
            let value = revoked.value.clone();
            revocation = Some(revoked);
            Ok::<_, AdminRefusal>(value)
        })
        .await??;
    let revocation = revocation.context("a revocation that was written")?;
    Ok((hash, revocation))
}

/// An account's custom patterns (empty if it has none).
pub async fn list_patterns(store: &Backend, account: &str) -> anyhow::Result<CustomPatterns> {
    let record = admin::patterns_record(account)?;
    let current = store.get(record.label(), record.key()).await?;
    Ok(admin::read_patterns(current.as_deref())?)
}

/// Prints an account's patterns, one per line.
pub fn print_patterns(patterns: &CustomPatterns) -> anyhow::Result<()> {
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
            p.source.escape_debug()
        )?;
    }
    Ok(())
}

/// Adds patterns to an account, all or none; returns their ids.
pub async fn add_patterns(
    store: &Backend,
    account: &str,
    news: Vec<NewPattern>,
) -> anyhow::Result<Vec<String>> {
    let record = admin::patterns_record(account)?;
    let mut ids = Vec::new();
    store
        .update(record.label(), record.key(), |current| {
            let added = admin::add_patterns(current, news.clone(), now())?;
            ids = added.ids;
            Ok::<_, AdminRefusal>(added.value)
        })
        .await??;
    Ok(ids)
}

/// Removes pattern `id` from an account.
pub async fn remove_pattern(store: &Backend, account: &str, id: &str) -> anyhow::Result<()> {
    let record = admin::patterns_record(account)?;
    store
        .update(record.label(), record.key(), |current| {
            admin::remove_pattern(current, id, now())
        })
        .await??;
    Ok(())
}

/// Reads an import file: a JSON array of patterns as `patterns add` takes
/// them. A file larger than any valid import is refused before it is read.
pub fn read_import(path: &std::path::Path) -> anyhow::Result<Vec<NewPattern>> {
    use std::io::Read as _;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = Vec::new();
    // Read at most one byte past the bound: a pipe or a file that grows
    // is bounded too, not only what its metadata says.
    file.take(admin::MAX_IMPORT_BYTES + 1)
        .read_to_end(&mut text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(
        text.len() as u64 <= admin::MAX_IMPORT_BYTES,
        "{} is larger than {} MiB, more than the most custom patterns an account may have \
         can take; nothing written",
        path.display(),
        admin::MAX_IMPORT_BYTES >> 20
    );
    serde_json::from_slice(&text).map_err(|e| {
        anyhow!(
            "{}: {e}; expected a JSON array of objects with `pattern` and optional `type` \
             (string|regex), `category`, `confidence`, `source`, `id`",
            path.display()
        )
    })
}

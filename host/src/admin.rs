//! The admin tool: keys, custom patterns, exclusions and whole accounts, on
//! the store the server reads or through a deployment's admin API
//! (`--remote`).
//!
//! What each change writes, and every refusal and its text, is the core's
//! (`noise_filter_core::admin`); this reads, asks the core, and writes. With
//! `--remote` the deployment's component asks the same core
//! (`noise_filter_core::admin_api`), and its answers are read back into the
//! same values, so a command prints the same on either (and with `--json`
//! the same JSON as the API's).
//!
//! **Nothing half-written.** Each change is one write of one value: a key's
//! record, or an account's whole record (its patterns and exclusions).
//! Changes that depend on what is stored (revoke, add, remove, import) are
//! a compare-and-swap of that value ([`Backend::update`]), so two admins at
//! once cannot lose each other's change, and a refusal writes nothing.

use std::io::Write as _;

use anyhow::{Context as _, anyhow};
use noise_filter_core::admin::{self, AccountExport, AdminRefusal, ListedKey, Write};
use noise_filter_core::admin_api::body;
use noise_filter_core::{
    CustomPattern, CustomPatterns, Exclusion, KEY_RANDOM_BYTES, KeyHash, KeyRecord, NewExclusion,
    NewPattern, UnixMillis, Variant,
};

use crate::remote::{Remote, segment};
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

/// Where admin commands work.
#[derive(Debug)]
pub enum Admin<'a> {
    /// A store this process opened (the `default` label's backend), and
    /// how commands name it.
    Local {
        /// The backend.
        store: &'a Backend,
        /// E.g. `sqlite /srv/.spin/sqlite_key_value.db`, `redis://host:6379`.
        name: String,
    },
    /// A deployment's admin API.
    Remote(&'a Remote),
}

/// A key's revocation, as printed.
pub type Revoked = body::Revoked;
/// A new key, as printed.
pub type CreatedKey = body::CreatedKey;
/// What an import wrote.
pub type Imported = body::Imported;

/// Reads an answer of the admin API.
fn read<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> anyhow::Result<T> {
    serde_json::from_slice(bytes).context("the admin API answered something this CLI cannot read")
}

impl Admin<'_> {
    /// The store changes are written to, as a command names it.
    pub fn name(&self) -> String {
        match self {
            Admin::Local { name, .. } => name.clone(),
            Admin::Remote(remote) => remote.describe(),
        }
    }

    /// Creates a key for `account` (the only time the key is seen).
    pub async fn create_key(&self, account: &str, label: &str) -> anyhow::Result<CreatedKey> {
        match self {
            Admin::Local { store, .. } => {
                let made = admin::create_key(&random_bytes()?, account, label, now())?;
                let Write { record, value } = made.record;
                let stored = KeyRecord::decode(&value).context("a record the core made")?;
                if !store
                    .compare_and_swap(record.label(), record.key(), None, &value)
                    .await?
                {
                    return Err(AdminRefusal::KeyExists.into());
                }
                read(&body::created_key(
                    made.key.expose(),
                    &made.key.hash(),
                    &stored,
                ))
            }
            Admin::Remote(remote) => {
                let request = serde_json::json!({ "account": account, "label": label });
                read(&remote.post("keys", request.to_string().into_bytes())?)
            }
        }
    }

    /// Every key, optionally of one account, by creation time then hash.
    pub async fn list_keys(&self, account: Option<&str>) -> anyhow::Result<Vec<ListedKey>> {
        match self {
            Admin::Local { store, .. } => {
                let listing = admin::key_listing();
                let mut records = Vec::new();
                for key in store.keys(listing.label(), listing.prefix()).await? {
                    if let Some(value) = store.get(listing.label(), &key).await? {
                        records.push((key, value));
                    }
                }
                Ok(admin::list_keys(&records, account)?)
            }
            Admin::Remote(remote) => {
                let path = match account {
                    Some(account) => format!("keys?account={}", segment(account)),
                    None => "keys".to_owned(),
                };
                #[derive(serde::Deserialize)]
                struct Keys {
                    keys: Vec<body::Key>,
                }
                let keys: Keys = read(&remote.get(&path)?)?;
                keys.keys
                    .into_iter()
                    .map(|k| {
                        let hash = KeyHash::from_hex(&k.hash)
                            .ok_or_else(|| anyhow!("the admin API listed a hash {:?}", k.hash))?;
                        let record = match k.account {
                            Some(account) => Some(KeyRecord {
                                account: noise_filter_core::AccountId::new(&account)
                                    .map_err(|e| anyhow!(e))?,
                                label: k.label,
                                created: k.created,
                                revoked: k.revoked,
                            }),
                            None => None,
                        };
                        Ok(ListedKey { hash, record })
                    })
                    .collect()
            }
        }
    }

    /// Revokes the one key whose hash starts with `prefix` (at least 6 hex
    /// digits).
    pub async fn revoke_key(&self, prefix: &str) -> anyhow::Result<Revoked> {
        match self {
            Admin::Local { store, .. } => {
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
                let at = revocation
                    .already
                    .clone()
                    .or_else(|| KeyRecord::decode(&revocation.value).and_then(|r| r.revoked));
                Ok(Revoked {
                    hash: hash.as_str().to_owned(),
                    account: revocation.account.to_string(),
                    revoked: at.unwrap_or_default(),
                    already: revocation.already.is_some(),
                })
            }
            Admin::Remote(remote) => {
                let path = format!("keys/{}/revoke", segment(prefix));
                read(&remote.post(&path, Vec::new())?)
            }
        }
    }

    /// An account's whole record, local only (patterns and exclusions).
    async fn record(store: &Backend, account: &str) -> anyhow::Result<CustomPatterns> {
        let record = admin::patterns_record(account)?;
        let current = store.get(record.label(), record.key()).await?;
        Ok(admin::read_patterns(current.as_deref())?)
    }

    /// Changes an account's record by `change` (one of the core's admin
    /// functions) with one compare-and-swap, retried against other admins.
    async fn change_record(
        store: &Backend,
        account: &str,
        change: impl FnMut(Option<&[u8]>) -> Result<Vec<u8>, AdminRefusal>,
    ) -> anyhow::Result<()> {
        let record = admin::patterns_record(account)?;
        store.update(record.label(), record.key(), change).await??;
        Ok(())
    }

    /// An account's custom patterns (none if it has none), ended ones too.
    pub async fn list_patterns(&self, account: &str) -> anyhow::Result<Vec<CustomPattern>> {
        match self {
            Admin::Local { store, .. } => Ok(Admin::record(store, account).await?.patterns),
            Admin::Remote(remote) => {
                #[derive(serde::Deserialize)]
                struct Patterns {
                    patterns: Vec<CustomPattern>,
                }
                let path = format!("accounts/{}/patterns", segment(account));
                Ok(read::<Patterns>(&remote.get(&path)?)?.patterns)
            }
        }
    }

    /// Adds patterns to an account, all or none; returns their ids.
    pub async fn add_patterns(
        &self,
        account: &str,
        news: Vec<NewPattern>,
    ) -> anyhow::Result<Vec<String>> {
        match self {
            Admin::Local { store, .. } => {
                let mut ids = Vec::new();
                Admin::change_record(store, account, |current| {
                    let added = admin::add_patterns(current, news.clone(), now())?;
                    ids = added.ids;
                    Ok(added.value)
                })
                .await?;
                Ok(ids)
            }
            Admin::Remote(remote) => {
                // Checked here first, by the same core: what JSON cannot
                // carry (a NaN confidence would arrive as no confidence)
                // is refused with the text a local store gives.
                CustomPatterns::new().add_all(news.clone(), now())?;
                #[derive(serde::Deserialize)]
                struct Ids {
                    ids: Vec<String>,
                }
                let path = format!("accounts/{}/patterns", segment(account));
                let request = serde_json::to_vec(&news)?;
                Ok(read::<Ids>(&remote.post(&path, request)?)?.ids)
            }
        }
    }

    /// Removes pattern `id` from an account.
    pub async fn remove_pattern(&self, account: &str, id: &str) -> anyhow::Result<()> {
        match self {
            Admin::Local { store, .. } => {
                Admin::change_record(store, account, |current| {
                    admin::remove_pattern(current, id, now())
                })
                .await
            }
            Admin::Remote(remote) => {
                let path = format!("accounts/{}/patterns/{}", segment(account), segment(id));
                remote.delete(&path).map(drop)
            }
        }
    }

    /// An account's exclusions of built-ins, ended ones too.
    pub async fn list_exclusions(&self, account: &str) -> anyhow::Result<Vec<Exclusion>> {
        match self {
            Admin::Local { store, .. } => Ok(Admin::record(store, account).await?.exclusions),
            Admin::Remote(remote) => {
                let path = format!("accounts/{}/exclusions", segment(account));
                Ok(read::<Exclusions>(&remote.get(&path)?)?.exclusions)
            }
        }
    }

    /// Adds exclusions to an account, all or none; returns them as stored.
    pub async fn add_exclusions(
        &self,
        account: &str,
        news: Vec<NewExclusion>,
    ) -> anyhow::Result<Vec<Exclusion>> {
        match self {
            Admin::Local { store, .. } => {
                let mut added = Vec::new();
                Admin::change_record(store, account, |current| {
                    let change = admin::add_exclusions(current, news.clone(), now())?;
                    added = change.exclusions;
                    Ok(change.value)
                })
                .await?;
                Ok(added)
            }
            Admin::Remote(remote) => {
                let path = format!("accounts/{}/exclusions", segment(account));
                let request = serde_json::to_vec(&news)?;
                Ok(read::<Exclusions>(&remote.post(&path, request)?)?.exclusions)
            }
        }
    }

    /// Removes the exclusion of `kind` (`id`, `category`, `tag`) `value`.
    pub async fn remove_exclusion(
        &self,
        account: &str,
        kind: &str,
        value: &str,
    ) -> anyhow::Result<Exclusion> {
        match self {
            Admin::Local { store, .. } => {
                let mut removed = None;
                Admin::change_record(store, account, |current| {
                    let (new, excluded) = admin::remove_exclusion(current, kind, value, now())?;
                    removed = Some(excluded);
                    Ok(new)
                })
                .await?;
                Ok(Exclusion {
                    excluded: removed.context("an exclusion that was removed")?,
                    until: None,
                })
            }
            Admin::Remote(remote) => {
                #[derive(serde::Deserialize)]
                struct Removed {
                    removed: Exclusion,
                }
                let path = format!(
                    "accounts/{}/exclusions/{}/{}",
                    segment(account),
                    segment(kind),
                    segment(value)
                );
                Ok(read::<Removed>(&remote.delete(&path)?)?.removed)
            }
        }
    }

    /// An account as one document: its keys (as hashes), its patterns and
    /// exclusions.
    pub async fn export(&self, account: &str) -> anyhow::Result<AccountExport> {
        match self {
            Admin::Local { store, .. } => {
                let listing = admin::key_listing();
                let mut records = Vec::new();
                for key in store.keys(listing.label(), listing.prefix()).await? {
                    if let Some(value) = store.get(listing.label(), &key).await? {
                        records.push((key, value));
                    }
                }
                let record = admin::patterns_record(account)?;
                let current = store.get(record.label(), record.key()).await?;
                Ok(admin::export_account(
                    account,
                    &records,
                    current.as_deref(),
                )?)
            }
            Admin::Remote(remote) => {
                let path = format!("accounts/{}/export", segment(account));
                read(&remote.get(&path)?)
            }
        }
    }

    /// Imports an account document (`document`, as `export` writes it) into
    /// this store: each of its records written where none is, left where
    /// the same is; any other record there refuses the whole import before
    /// anything is written.
    pub async fn import(&self, document: &[u8]) -> anyhow::Result<Imported> {
        match self {
            Admin::Local { store, .. } => {
                let import = admin::import_account(document, None)?;
                let writes: Vec<&Write> = import.keys.iter().chain([&import.custom]).collect();
                let mut needed = Vec::with_capacity(writes.len());
                for write in &writes {
                    let current = store.get(write.record.label(), write.record.key()).await?;
                    needed.push(admin::import_write(write, current.as_deref())?);
                }
                for (write, needed) in writes.iter().zip(&needed) {
                    if *needed
                        && !store
                            .compare_and_swap(
                                write.record.label(),
                                write.record.key(),
                                None,
                                &write.value,
                            )
                            .await?
                    {
                        anyhow::bail!(
                            "{} was written by someone else during the import; run the import \
                             again (what it wrote is kept, the rest is checked again)",
                            write.record
                        );
                    }
                }
                let keys = needed[..import.keys.len()].iter().filter(|n| **n).count();
                Ok(Imported {
                    account: import.account.to_string(),
                    keys_written: keys,
                    keys_present: import.keys.len() - keys,
                    custom_written: needed[import.keys.len()],
                })
            }
            Admin::Remote(remote) => {
                // The document names its account; the API's path does too.
                let import = admin::import_account(document, None)?;
                let path = format!("accounts/{}/import", segment(import.account.as_str()));
                read(&remote.post(&path, document.to_vec())?)
            }
        }
    }
}

#[derive(serde::Deserialize)]
struct Exclusions {
    exclusions: Vec<Exclusion>,
}

/// How a command prints what it did: as text for people, or with `--json`
/// as the admin API's JSON (one document on stdout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// Lines for people.
    Text,
    /// The API's JSON.
    Json,
}

/// Writes `bytes` and a newline to stdout.
fn out(bytes: &[u8]) -> anyhow::Result<()> {
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(bytes)?;
    stdout.write_all(b"\n")?;
    Ok(())
}

/// A new key: the key alone on stdout (as text), its hash on stderr.
pub fn print_created(created: &CreatedKey, output: Output) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&serde_json::to_vec(created)?);
    }
    eprintln!(
        "created a key for account {} (hash {}); it is shown only now:",
        created.account,
        &created.hash[..12]
    );
    out(created.key.as_bytes())
}

/// The listing: hash prefix, account, label, created, revoked.
pub fn print_keys(keys: &[ListedKey], output: Output) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&body::keys(keys));
    }
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

/// A revocation.
pub fn print_revoked(revoked: &Revoked, output: Output) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&body::revoked(revoked));
    }
    let short = &revoked.hash[..12];
    let line = if revoked.already {
        format!("key {short} was already revoked at {}", revoked.revoked)
    } else {
        format!("revoked key {short} of account {}", revoked.account)
    };
    out(line.as_bytes())
}

/// An account's patterns, one per line; an ended one says when it ended.
pub fn print_patterns(
    patterns: &[CustomPattern],
    output: Output,
    now: UnixMillis,
) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&body::patterns(patterns));
    }
    let mut out = std::io::stdout().lock();
    if patterns.is_empty() {
        writeln!(out, "no custom patterns")?;
        return Ok(());
    }
    writeln!(
        out,
        "{:<20} {:<7} {:<20} {:<10} {:<40} {:<26} source",
        "id", "type", "category", "confidence", "pattern", "until"
    )?;
    for p in patterns {
        writeln!(
            out,
            "{:<20} {:<7} {:<20} {:<10} {:<40} {:<26} {}",
            p.id,
            p.kind.name(),
            p.category_name(Variant::A),
            p.confidence,
            serde_json::to_string(&p.pattern)?,
            until(p.until, now),
            p.source.escape_debug()
        )?;
    }
    Ok(())
}

/// An end as listed: `-`, the time, and `(ended)` once it has passed.
fn until(until: Option<noise_filter_core::Until>, now: UnixMillis) -> String {
    match until {
        None => "-".to_owned(),
        Some(until) if until.has_passed(now) => format!("{until} (ended)"),
        Some(until) => until.to_string(),
    }
}

/// An account's exclusions, one per line.
pub fn print_exclusions(
    exclusions: &[Exclusion],
    output: Output,
    now: UnixMillis,
) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&body::exclusions(exclusions));
    }
    let mut out = std::io::stdout().lock();
    if exclusions.is_empty() {
        writeln!(out, "no exclusions")?;
        return Ok(());
    }
    writeln!(out, "{:<10} {:<40} until", "excludes", "")?;
    for e in exclusions {
        writeln!(
            out,
            "{:<10} {:<40} {}",
            e.excluded.kind(),
            e.excluded.value(),
            until(e.until, now)
        )?;
    }
    Ok(())
}

/// Exclusions just added.
pub fn print_excluded(
    account: &str,
    exclusions: &[Exclusion],
    output: Output,
) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&body::exclusions(exclusions));
    }
    for e in exclusions {
        let until = e.until.map(|u| format!(" until {u}")).unwrap_or_default();
        out(format!("account {account} excludes {}{until}", e.excluded).as_bytes())?;
    }
    Ok(())
}

/// What an import wrote.
pub fn print_imported(imported: &Imported, output: Output) -> anyhow::Result<()> {
    if output == Output::Json {
        return out(&body::imported(imported));
    }
    out(format!(
        "imported account {}: {} key(s) written, {} already there; patterns and exclusions {}",
        imported.account,
        imported.keys_written,
        imported.keys_present,
        if imported.custom_written {
            "written"
        } else {
            "already there"
        }
    )
    .as_bytes())
}

/// An account document, on stdout (it is JSON either way).
pub fn print_export(export: &AccountExport) -> anyhow::Result<()> {
    out(&body::export(export))
}

/// `--json`'s answer for a change that has no listing: the API's body.
pub fn print_json(bytes: &[u8]) -> anyhow::Result<()> {
    out(bytes)
}

/// Reads a file an admin command takes (patterns to import, an account
/// document): at most [`admin::MAX_IMPORT_BYTES`] times `factor`, refused
/// before it is read further.
pub fn read_bounded(path: &std::path::Path, limit: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut text = Vec::new();
    // Read at most one byte past the bound: a pipe or a file that grows
    // is bounded too, not only what its metadata says.
    file.take(limit + 1)
        .read_to_end(&mut text)
        .with_context(|| format!("cannot read {}", path.display()))?;
    anyhow::ensure!(
        text.len() as u64 <= limit,
        "{} is larger than {} MiB, more than an import can take; nothing written",
        path.display(),
        limit >> 20
    );
    Ok(text)
}

/// Reads an import file: a JSON array of patterns as `patterns add` takes
/// them. A file larger than any valid import is refused before it is read.
pub fn read_import(path: &std::path::Path) -> anyhow::Result<Vec<NewPattern>> {
    let text = read_bounded(path, admin::MAX_IMPORT_BYTES)?;
    serde_json::from_slice(&text).map_err(|e| {
        anyhow!(
            "{}: {e}; expected a JSON array of objects with `pattern` and optional `type` \
             (string|regex), `category`, `confidence`, `source`, `id`, `until`",
            path.display()
        )
    })
}

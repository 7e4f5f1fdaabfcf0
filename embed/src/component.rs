//! The exports of the world `embed` over the core, and the store import as
//! the core's `SyncStore`: conversions only.

use noise_filter_core::{
    self as core, Event, Field, Kind, Matcher, MatcherPattern, Request, StoreError, SyncStore,
    UnixMillis, admin as core_admin,
};

#[allow(
    unsafe_code,
    missing_docs,
    unreachable_pub,
    missing_debug_implementations
)]
#[allow(clippy::all)]
mod bindings {
    wit_bindgen::generate!({
        path: "../wit",
        world: "embed",
    });
    use super::Embed;
    export!(Embed);
}

use bindings::exports::noise_filter::core::{admin, endpoint, matching};
use bindings::noise_filter::core::{store, types};

/// The component's exports.
#[derive(Debug)]
pub(crate) struct Embed;

// ----------------------------------------------------------------------------
// The store import as the core's `SyncStore`.

/// The embedder's store, through the `store` import. An `err` it returns is
/// the core's [`StoreError`]: the request is answered 503.
#[derive(Debug)]
struct Imported;

impl SyncStore for Imported {
    fn get(&mut self, record: &core::RecordKey) -> Result<Option<Vec<u8>>, StoreError> {
        store::get(&record_key(record)).map_err(|()| StoreError)
    }

    fn increment(&mut self, record: &core::RecordKey, delta: i64) -> Result<i64, StoreError> {
        store::increment(&record_key(record), delta).map_err(|()| StoreError)
    }

    fn delete(&mut self, record: &core::RecordKey) -> Result<(), StoreError> {
        store::delete(&record_key(record)).map_err(|()| StoreError)
    }
}

fn record_key(record: &core::RecordKey) -> store::RecordKey {
    store::RecordKey {
        kind: record_kind(record.kind()),
        label: store_label(record.label()),
        key: record.key().to_owned(),
    }
}

fn record_kind(kind: core::RecordKind) -> store::RecordKind {
    match kind {
        core::RecordKind::ApiKey => store::RecordKind::ApiKey,
        core::RecordKind::CustomPatterns => store::RecordKind::CustomPatterns,
        core::RecordKind::RateCounter => store::RecordKind::RateCounter,
    }
}

fn store_label(label: core::StoreLabel) -> store::StoreLabel {
    match label {
        core::StoreLabel::Default => store::StoreLabel::Default,
        core::StoreLabel::Rate => store::StoreLabel::Rate,
    }
}

// ----------------------------------------------------------------------------
// Matching.

fn kind_in(kind: types::PatternKind) -> Kind {
    match kind {
        types::PatternKind::String => Kind::String,
        types::PatternKind::Regex => Kind::Regex,
    }
}

fn kind_out(kind: Kind) -> types::PatternKind {
    match kind {
        Kind::String => types::PatternKind::String,
        Kind::Regex => types::PatternKind::Regex,
    }
}

fn event_in(event: matching::Event) -> Event {
    Event {
        exception_type: event.exception_type,
        message: event.message,
        frames: event.frames,
        user_agent: event.user_agent,
    }
}

fn field_out(field: Field) -> matching::Field {
    match field {
        Field::Message => matching::Field::Message,
        // An event with more than 4 billion frames cannot cross the boundary.
        Field::Frame(i) => matching::Field::Frame(u32::try_from(i).unwrap_or(u32::MAX)),
        Field::UserAgent => matching::Field::UserAgent,
    }
}

/// A compiled pattern set: the `matcher` resource.
#[derive(Debug)]
pub(crate) struct MatcherResource(Matcher);

impl matching::GuestMatcher for MatcherResource {
    fn builtin(min_confidence: Option<f64>) -> matching::Matcher {
        let matcher = min_confidence.map_or_else(Matcher::builtin_default, Matcher::builtin);
        matching::Matcher::new(MatcherResource(matcher))
    }

    fn from_patterns(patterns: Vec<matching::Pattern>) -> Result<matching::Matcher, String> {
        let patterns = patterns.into_iter().map(|p| MatcherPattern {
            id: p.id,
            pattern: p.pattern,
            kind: kind_in(p.kind),
            category: p.category,
            confidence: p.confidence,
        });
        Matcher::new(patterns)
            .map(|m| matching::Matcher::new(MatcherResource(m)))
            .map_err(|e| e.to_string())
    }

    fn from_response(body: Vec<u8>) -> Result<matching::Matcher, String> {
        Matcher::from_response(&body)
            .map(|m| matching::Matcher::new(MatcherResource(m)))
            .map_err(|e| e.to_string())
    }

    fn classify(&self, event: matching::Event) -> matching::Verdict {
        let verdict = self.0.classify(&event_in(event));
        matching::Verdict {
            noise: verdict.noise,
            matches: verdict
                .matches
                .into_iter()
                .map(|m| matching::Match {
                    id: m.id.to_owned(),
                    category: m.category.to_owned(),
                    tags: m.tags.names().map(str::to_owned).collect(),
                    confidence: m.confidence,
                    field: field_out(m.field),
                })
                .collect(),
        }
    }

    fn is_noise(&self, event: matching::Event) -> bool {
        self.0.is_noise_texts(
            event.exception_type.as_deref(),
            event.message.as_deref(),
            event.frames.iter().map(String::as_str),
            event.user_agent.as_deref(),
        )
    }

    fn is_noise_json(&self, events: String) -> Result<Vec<bool>, String> {
        self.0.is_noise_json(&events).map_err(|e| e.to_string())
    }

    fn patterns(&self) -> Vec<matching::Pattern> {
        self.0
            .patterns()
            .iter()
            .map(|p| matching::Pattern {
                id: p.id.clone(),
                pattern: p.pattern.clone(),
                kind: kind_out(p.kind),
                category: p.category.clone(),
                confidence: p.confidence,
            })
            .collect()
    }

    fn with_first_party(
        &self,
        origins: Vec<String>,
        paths: Vec<String>,
    ) -> Result<matching::Matcher, String> {
        let rule = core::FirstParty::new(origins, paths).map_err(|e| e.to_string())?;
        let matcher = self.0.clone().with_first_party(rule);
        Ok(matching::Matcher::new(MatcherResource(matcher)))
    }

    fn excluding(
        &self,
        ids: Vec<String>,
        categories: Vec<String>,
        tags: Vec<String>,
    ) -> Result<matching::Matcher, String> {
        let exclusions = core::Exclusions::default()
            .with_ids(ids)
            .and_then(|e| e.with_categories(categories))
            .and_then(|e| e.with_tags(tags))
            .map_err(|e| e.to_string())?;
        Ok(matching::Matcher::new(MatcherResource(
            self.0.excluding(&exclusions),
        )))
    }
}

impl matching::Guest for Embed {
    type Matcher = MatcherResource;
}

// ----------------------------------------------------------------------------
// The endpoint.

impl endpoint::Guest for Embed {
    fn record_lifetimes() -> Vec<(store::RecordKind, u64)> {
        core::RecordKind::ALL
            .into_iter()
            .filter_map(|kind| Some((record_kind(kind), kind.lifetime_ms()?)))
            .collect()
    }

    fn handle(request: endpoint::Request, now: u64) -> endpoint::Response {
        let headers: Vec<(&str, &[u8])> = request
            .headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_slice()))
            .collect();
        let request = Request {
            method: &request.method,
            target: &request.target,
            headers: &headers,
        };
        let response = core::run(&request, UnixMillis(now), &mut Imported);
        endpoint::Response {
            status: response.status,
            headers: response
                .headers
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value))
                .collect(),
            body: response.body.into_owned(),
        }
    }
}

// ----------------------------------------------------------------------------
// Admin.

fn write_out(write: core_admin::Write) -> admin::Write {
    admin::Write {
        place: record_key(&write.record),
        value: write.value,
    }
}

fn key_record_out(record: core::KeyRecord) -> admin::KeyRecord {
    admin::KeyRecord {
        account: record.account.as_str().to_owned(),
        label: record.label,
        created: record.created,
        revoked: record.revoked,
    }
}

fn new_pattern_in(p: admin::NewPattern) -> core::NewPattern {
    let mut new = core::NewPattern::string(&p.pattern);
    new.id = p.id;
    new.kind = kind_in(p.kind);
    new.category = p.category;
    new.confidence = p.confidence;
    new.source = p.source;
    new
}

fn refusal(refusal: core_admin::AdminRefusal) -> String {
    refusal.to_string()
}

fn listing_out(listing: &core::Listing) -> admin::Listing {
    admin::Listing {
        kind: record_kind(listing.kind()),
        label: store_label(listing.label()),
        prefix: listing.prefix().to_owned(),
    }
}

impl admin::Guest for Embed {
    fn create_key(
        random: Vec<u8>,
        account: String,
        label: String,
        now: u64,
    ) -> Result<admin::NewKey, String> {
        let new =
            core_admin::create_key(&random, &account, &label, UnixMillis(now)).map_err(refusal)?;
        Ok(admin::NewKey {
            key: new.key.expose().to_owned(),
            hash: new.key.hash().as_str().to_owned(),
            write: write_out(new.record),
            exists: refusal(core_admin::AdminRefusal::KeyExists),
        })
    }

    fn key_random_bytes() -> u32 {
        core::KEY_RANDOM_BYTES as u32
    }

    fn key_search(hash_prefix: String) -> Result<admin::Listing, String> {
        core_admin::key_search(&hash_prefix)
            .map(|listing| listing_out(&listing))
            .map_err(refusal)
    }

    fn key_listing() -> admin::Listing {
        listing_out(&core_admin::key_listing())
    }

    fn find_key(search: String, listed: Vec<String>) -> Result<admin::FoundKey, String> {
        core_admin::find_key(&search, &listed)
            .map(|(record, hash)| admin::FoundKey {
                place: record_key(&record),
                hash: hash.as_str().to_owned(),
            })
            .map_err(refusal)
    }

    fn revoke_key(current: Option<Vec<u8>>, now: u64) -> Result<admin::Revocation, String> {
        let revoked =
            core_admin::revoke_key(current.as_deref(), UnixMillis(now)).map_err(refusal)?;
        Ok(admin::Revocation {
            value: revoked.value,
            account: revoked.account.as_str().to_owned(),
            already: revoked.already,
        })
    }

    fn list_keys(
        records: Vec<(String, Vec<u8>)>,
        account: Option<String>,
    ) -> Result<Vec<admin::ListedKey>, String> {
        let listed = core_admin::list_keys(&records, account.as_deref()).map_err(refusal)?;
        Ok(listed
            .into_iter()
            .map(|k| admin::ListedKey {
                hash: k.hash.as_str().to_owned(),
                details: k.record.map(key_record_out),
            })
            .collect())
    }

    fn patterns_record(account: String) -> Result<store::RecordKey, String> {
        core_admin::patterns_record(&account)
            .map(|record| record_key(&record))
            .map_err(refusal)
    }

    fn add_patterns(
        current: Option<Vec<u8>>,
        patterns: Vec<admin::NewPattern>,
        now: u64,
    ) -> Result<admin::Added, String> {
        let news = patterns.into_iter().map(new_pattern_in).collect();
        let added =
            core_admin::add_patterns(current.as_deref(), news, UnixMillis(now)).map_err(refusal)?;
        Ok(admin::Added {
            value: added.value,
            ids: added.ids,
        })
    }

    fn remove_pattern(current: Option<Vec<u8>>, id: String, now: u64) -> Result<Vec<u8>, String> {
        core_admin::remove_pattern(current.as_deref(), &id, UnixMillis(now)).map_err(refusal)
    }

    fn read_patterns(current: Option<Vec<u8>>) -> Result<Vec<admin::CustomPattern>, String> {
        let patterns = core_admin::read_patterns(current.as_deref()).map_err(refusal)?;
        Ok(patterns
            .patterns
            .into_iter()
            .map(|p| admin::CustomPattern {
                category: p.category_name(core::Variant::A).to_owned(),
                id: p.id,
                pattern: p.pattern,
                kind: kind_out(p.kind),
                confidence: p.confidence,
                source: p.source,
            })
            .collect())
    }
}

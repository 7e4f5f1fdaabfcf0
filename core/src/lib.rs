//! # noise-filter-core
//!
//! The no-I/O core of noise-filter. It turns one HTTP request into one
//! response for both variants of the published interface (`/v1/filters` and
//! `/api/v1/filters`), and it owns everything that is policy: routing,
//! authentication, the rate-limit decision, parameter validation, filtering,
//! the JSON shape of each variant, every header, the built-in catalog, the
//! validation of custom patterns and the matcher that applies patterns to
//! error events.
//!
//! **Invariant: the core performs no I/O.** It never reads a clock, a store,
//! the network, the environment or a random source. Time comes in as
//! [`UnixMillis`], random bytes for a new key as an argument, and store access
//! is turned into data: [`handle`] returns a [`Step`] saying what to read or
//! write, the shell does it and resumes the step with the result (the model
//! is quinn-proto and str0m). The same request therefore gives the same bytes
//! natively, in wasm under Node, in the Spin component and under the host.
//!
//! ```
//! use noise_filter_core::{run, ApiKey, MemoryStore, Request, UnixMillis};
//!
//! let now = UnixMillis(1_763_800_000_000);
//! let key = ApiKey::from_random([7; 24]);
//! let mut store = MemoryStore::new().with_key(&key, "acme");
//!
//! let auth = format!("Bearer {}", key.expose());
//! let headers = [("authorization", auth.as_bytes())];
//! let request = Request { method: "GET", target: "/api/v1/filters?minConfidence=0.9", headers: &headers };
//! let response = run(&request, now, &mut store);
//! assert_eq!(response.status, 200);
//! assert!(response.body.starts_with(br#"{"patterns":[{"id":"#));
//! ```
//!
//! ## The public surface
//!
//! Modules are private; this list is the crate's whole API.
//!
//! - **The words of the interface**: [`Variant`], [`Category`], [`Kind`],
//!   [`CUSTOM_CATEGORY_A`].
//! - **Matching**: [`Matcher`] (by default the built-in catalog at
//!   [`DEFAULT_MIN_CONFIDENCE`], as the endpoint lists it: [`Matcher::builtin_default`]),
//!   [`MatcherPattern`], [`Event`] (a batch of them as JSON, refused with
//!   [`InvalidEvents`]), [`Verdict`], [`Match`], [`Field`],
//!   [`InvalidPattern`]; the patterns a matcher leaves out ([`Exclusions`],
//!   [`InvalidExclusion`]; [`Matcher::excluding`],
//!   [`Matcher::builtin_excluding`]); the "not our code" rule
//!   ([`FirstParty`], [`InvalidFirstParty`], [`Matcher::with_first_party`],
//!   its match's [`FIRST_PARTY_RULE_ID`], [`FIRST_PARTY_CATEGORY`],
//!   [`FIRST_PARTY_CONFIDENCE`]); [`pattern_list`]: pattern
//!   lists and response bodies read into [`MatcherPattern`]s, with the
//!   core's refusal texts, from any JSON-like value; the built-in catalog
//!   ([`builtin_patterns`], [`BuiltinPattern`], [`catalog_release`]) and
//!   its sub-kinds ([`Tags`]); the regex subset ([`translate_regex`],
//!   [`SyntaxError`], [`MAX_REGEX_LEN`]) and what a published regex meets
//!   besides ([`validate_regex`], [`MIN_REGEX_LITERALS`]).
//! - **The shell's regex engine** (feature `host-regex`, the npm
//!   matcher-only wasm): the matcher runs its regexes with the engine the
//!   shell gives ([`use_regex_engine`], [`RegexEngine`], [`REGEX_FLAGS`]),
//!   not Rust's `regex`.
//! - **The endpoint** (feature `endpoint`): [`handle`] and its [`Step`]s
//!   ([`Get`], [`Increment`], [`Delete`]), or [`run`] over a [`SyncStore`];
//!   [`Request`], [`Response`], [`Rejection`], [`ParamError`],
//!   [`UnixMillis`], the rate limit's constants ([`RATE_LIMIT`],
//!   [`RATE_WINDOW_MS`], [`RATE_COUNTER_TTL_MS`]) and algorithm ([`RateWindow`], [`rate_decision`],
//!   [`RateDecision`]), the parameters' defaults and bounds
//!   ([`DEFAULT_INCLUDE_CUSTOM`], [`MAX_CATEGORIES`], [`MAX_QUERY_LEN`]).
//! - **The store** (feature `endpoint`): [`RecordKind`] (with each kind's
//!   lifetime), [`RecordKey`], [`StoreLabel`], [`Listing`], [`StoreError`], the records and their codecs
//!   ([`KeyRecord`], [`CustomPatterns`], [`Counter`] and its [`CounterError`]), [`AccountId`],
//!   [`ApiKey`], [`KeyHash`] (and [`KEY_PREFIX`], [`KEY_RANDOM_BYTES`]),
//!   [`redact_keys`] for a log line of a client's text.
//! - **A test double** (features `endpoint` and `memory-store`, off by
//!   default): `MemoryStore`, the deterministic in-memory store of the
//!   tests, benchmarks and the parity oracle; no shell serves from it.
//! - **Admin** (feature `endpoint`): [`admin`]'s functions: every change to
//!   keys, custom patterns and exclusions of built-ins, an account's export
//!   and import, with [`NewPattern`], [`CustomPattern`], [`NewExclusion`],
//!   [`Exclusion`], [`Excluded`] (of the [`EXCLUSION_KINDS`]) and [`Until`] (a pattern's or an
//!   exclusion's end); [`admin_api`]: the admin HTTP API over them, with
//!   its own steps (read, list, compare-and-swap), off unless a shell hands
//!   in [`admin_api::AdminTokens`].
//! - **The noise report** (feature `report`, off by default): [`report`],
//!   an export of events read, matched and summed up, with every output of
//!   the `report` command.

#![warn(missing_docs)]

#[cfg(feature = "endpoint")]
pub mod admin;
#[cfg(feature = "endpoint")]
pub mod admin_api;
#[cfg(feature = "endpoint")]
mod auth;
mod catalog;
#[cfg(feature = "endpoint")]
mod coding;
mod compiled_size;
#[cfg(feature = "endpoint")]
mod custom;
#[cfg(feature = "endpoint")]
mod error;
mod event;
#[cfg(feature = "endpoint")]
mod exchange;
mod exclusion;
mod first_party;
#[cfg(feature = "endpoint")]
#[allow(unreachable_pub)] // shared with build.rs, which includes it by #[path]
mod gzip;
#[cfg(feature = "host-regex")]
mod host_regex;
#[cfg(feature = "endpoint")]
mod http;
#[allow(unreachable_pub)] // shared with build.rs, which includes it by #[path]
mod literals;
mod matcher;
#[cfg(all(feature = "endpoint", feature = "memory-store"))]
mod memory;
#[cfg(not(feature = "endpoint"))]
#[allow(unreachable_pub)] // shared with build.rs, which includes it by #[path]
mod packed_id;
#[cfg(feature = "endpoint")]
mod params;
mod pattern;
pub mod pattern_list;
#[cfg(feature = "endpoint")]
mod rate;
#[cfg(feature = "report")]
pub mod report;
#[cfg(feature = "endpoint")]
mod respond;
#[cfg(not(feature = "host-regex"))]
#[allow(unreachable_pub)] // shared with build.rs, which includes it by #[path]
mod rust_regex;
#[cfg(feature = "endpoint")]
mod shape;
#[cfg(feature = "endpoint")]
mod store;
mod syntax;
#[allow(unreachable_pub)] // shared with build.rs, which includes it by #[path]
mod tags;
#[cfg(feature = "endpoint")]
mod until;
#[cfg(feature = "endpoint")]
#[allow(unreachable_pub)] // shared with build.rs, which includes it by #[path]
mod wire;

pub use catalog::{BuiltinPattern, builtin_patterns, catalog_release};
pub use event::{Event, Field, InvalidEvents, Match, Verdict};
pub use exclusion::{Exclusions, InvalidExclusion};
pub use first_party::{
    FIRST_PARTY_CATEGORY, FIRST_PARTY_CONFIDENCE, FIRST_PARTY_RULE_ID, FirstParty,
    InvalidFirstParty,
};
#[cfg(feature = "host-regex")]
pub use host_regex::{REGEX_FLAGS, RegexEngine, use_regex_engine};
pub use matcher::Matcher;
#[cfg(all(feature = "endpoint", feature = "memory-store"))]
pub use memory::MemoryStore;
pub use pattern::{
    CUSTOM_CATEGORY_A, Category, DEFAULT_MIN_CONFIDENCE, InvalidPattern, Kind, MatcherPattern,
    Variant,
};
pub use syntax::{MAX_REGEX_LEN, MIN_REGEX_LITERALS, SyntaxError, translate_regex, validate_regex};
pub use tags::Tags;
#[cfg(feature = "endpoint")]
pub use {
    auth::{ApiKey, KEY_PREFIX, KEY_RANDOM_BYTES, KeyHash, redact_keys},
    custom::{CustomPattern, CustomPatterns, NewPattern},
    error::Rejection,
    exchange::{Delete, Get, Increment, Step, StoreError, SyncStore, handle, run},
    exclusion::{EXCLUSION_KINDS, Excluded, Exclusion, NewExclusion},
    http::{Request, Response},
    params::{DEFAULT_INCLUDE_CUSTOM, MAX_CATEGORIES, MAX_QUERY_LEN, ParamError},
    rate::{
        RATE_COUNTER_TTL_MS, RATE_LIMIT, RATE_WINDOW_MS, RateDecision, RateWindow, UnixMillis,
        rate_decision,
    },
    store::{
        AccountId, Counter, CounterError, KeyRecord, Listing, RecordKey, RecordKind, StoreLabel,
    },
    until::Until,
};

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
//! use noise_filter_core::{run, ApiKey, KeyRecord, AccountId, MemoryStore, Request,
//!     StoreLabel, UnixMillis, store};
//!
//! let now = UnixMillis(1_763_800_000_000);
//! let key = ApiKey::from_random([7; 24]);
//! let mut kv = MemoryStore::new();
//! let record = KeyRecord::new(AccountId::new("acme").unwrap(), "docs", now);
//! kv.set(StoreLabel::Default, &store::key_record_key(&key.hash()), record.to_json());
//!
//! let auth = format!("Bearer {}", key.expose());
//! let headers = [("authorization", auth.as_bytes())];
//! let request = Request { method: "GET", target: "/api/v1/filters?minConfidence=0.9", headers: &headers };
//! let response = run(&request, now, &mut kv);
//! assert_eq!(response.status, 200);
//! assert!(response.body.starts_with(br#"{"patterns":[{"id":"#));
//! ```

#[cfg(feature = "endpoint")]
pub mod auth;
pub mod catalog;
#[cfg(feature = "endpoint")]
pub mod custom;
#[cfg(feature = "endpoint")]
pub mod error;
#[cfg(feature = "endpoint")]
pub mod exchange;
#[cfg(feature = "endpoint")]
pub mod http;
pub mod matcher;
#[cfg(feature = "endpoint")]
pub mod memory;
#[cfg(feature = "endpoint")]
pub mod params;
pub mod pattern;
pub mod pattern_list;
#[cfg(feature = "endpoint")]
pub mod rate;
#[cfg(feature = "endpoint")]
pub mod shape;
#[cfg(feature = "endpoint")]
pub mod store;
pub mod syntax;
#[cfg(feature = "endpoint")]
#[allow(unreachable_pub)]
mod wire;

pub use catalog::BuiltinPattern;
pub use matcher::{Event, Field, Match, Matcher, MatcherPattern, Verdict};
pub use pattern::{Category, InvalidPattern, Kind, Variant};
#[cfg(feature = "endpoint")]
pub use {
    auth::{ApiKey, KeyHash},
    custom::{CustomPattern, CustomPatterns, NewPattern},
    error::{ParamError, Rejection},
    exchange::{Delete, Get, Increment, Step, StoreError, SyncStore, handle, run},
    http::{Request, Response},
    memory::MemoryStore,
    params::Filter,
    rate::{RateWindow, UnixMillis},
    store::{AccountId, KeyRecord, StoreLabel},
};

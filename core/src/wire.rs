//! The JSON shape of one pattern in each variant.
//!
//! Built-in patterns are rendered by `build.rs` and custom patterns per request;
//! both go through these structs (this file is included by `build.rs` through
//! `#[path]`), so a built-in and a custom pattern can never be spelled
//! differently. Field order is the order of interface.md 2.2.

use serde::Serialize;

/// A pattern as Variant A writes it.
#[derive(Debug, Serialize)]
pub struct PatternA<'a> {
    pub id: &'a str,
    pub pattern: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub category: &'a str,
    pub confidence: f64,
    pub source: &'a str,
}

/// A pattern as Variant B writes it: no `type`, no `source`.
#[derive(Debug, Serialize)]
pub struct PatternB<'a> {
    pub id: &'a str,
    pub pattern: &'a str,
    pub category: &'a str,
    pub confidence: f64,
}

//! The words of the interface: categories, pattern kinds, the two variants.

use serde::{Deserialize, Serialize};

/// One of the two published variants of the interface (docs/CONTRACT.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// `/v1/filters`: `version`, `type`, `source`, kebab-case categories.
    A,
    /// `/api/v1/filters`: UPPER_SNAKE categories, substring patterns only.
    B,
}

impl Variant {
    /// Both variants, in the order the documentation lists them.
    pub const ALL: [Variant; 2] = [Variant::A, Variant::B];

    /// The path this variant is served on.
    pub const fn path(self) -> &'static str {
        match self {
            Variant::A => "/v1/filters",
            Variant::B => "/api/v1/filters",
        }
    }

    /// The variant served on `path`, if any. Matching is exact: no trailing
    /// slash, no case folding, no percent-decoding.
    pub fn from_path(path: &str) -> Option<Variant> {
        Variant::ALL.into_iter().find(|v| v.path() == path)
    }
}

/// A pattern category (the category table of docs/CONTRACT.md). The order of the variants is the
/// order of the table, and the order in which responses list categories.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    /// Errors from browser extensions.
    BrowserExtension,
    /// Third-party script errors.
    ThirdPartyScript,
    /// Bot and crawler noise.
    BotTraffic,
    /// Network-related errors.
    NetworkIssue,
    /// Known library bugs.
    KnownLibrary,
    /// Miscellaneous patterns.
    Other,
}

impl Category {
    /// All six, in the order of the category table (docs/CONTRACT.md).
    pub const ALL: [Category; 6] = [
        Category::BrowserExtension,
        Category::ThirdPartyScript,
        Category::BotTraffic,
        Category::NetworkIssue,
        Category::KnownLibrary,
        Category::Other,
    ];

    /// Position in [`Category::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The spelling of this category in `variant`.
    pub const fn name(self, variant: Variant) -> &'static str {
        match (variant, self) {
            (Variant::A, Category::BrowserExtension) => "browser-extension",
            (Variant::A, Category::ThirdPartyScript) => "third-party-script",
            (Variant::A, Category::BotTraffic) => "bot-traffic",
            (Variant::A, Category::NetworkIssue) => "network-issue",
            (Variant::A, Category::KnownLibrary) => "known-library",
            (Variant::A, Category::Other) => "other",
            (Variant::B, Category::BrowserExtension) => "BROWSER_EXTENSION",
            (Variant::B, Category::ThirdPartyScript) => "THIRD_PARTY_SCRIPT",
            (Variant::B, Category::BotTraffic) => "BOT_TRAFFIC",
            (Variant::B, Category::NetworkIssue) => "NETWORK_ISSUE",
            (Variant::B, Category::KnownLibrary) => "KNOWN_LIBRARY",
            (Variant::B, Category::Other) => "OTHER",
        }
    }

    /// Parses a category in the exact spelling of `variant` (case included).
    pub fn parse(text: &str, variant: Variant) -> Option<Category> {
        Category::ALL.into_iter().find(|c| c.name(variant) == text)
    }
}

/// The category value Variant A gives a custom pattern that has no category of
/// its own (docs/CONTRACT.md). Variant B shows such a pattern as `OTHER`.
pub const CUSTOM_CATEGORY_A: &str = "custom";

/// How the `pattern` text is read (Variant A's `type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A case-insensitive substring.
    String,
    /// An ECMAScript regular expression in the shared subset, applied
    /// case-insensitively (`new RegExp(pattern, "i")`).
    Regex,
}

impl Kind {
    /// The `type` value of Variant A.
    pub const fn name(self) -> &'static str {
        match self {
            Kind::String => "string",
            Kind::Regex => "regex",
        }
    }
}

/// `minConfidence` when the request gives none, and the threshold of
/// [`crate::Matcher::builtin_default`]: the built-in patterns a matcher holds
/// by default in every language are the ones the endpoint lists by default.
pub const DEFAULT_MIN_CONFIDENCE: f64 = 0.5;

/// Why a pattern was refused (a custom pattern being added, or a pattern
/// handed to the matcher). Shown to the person who gave it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidPattern(pub String);

impl std::fmt::Display for InvalidPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidPattern {}

/// One pattern as the matcher takes it: from the catalog, an account's
/// custom patterns, or a response body of either variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatcherPattern {
    /// The pattern's id.
    pub id: String,
    /// Its text.
    pub pattern: String,
    /// Substring or regex (absent in Variant B bodies: substring).
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Its category, as the source spelled it.
    pub category: String,
    /// Its confidence (absent: 1).
    pub confidence: f64,
}

//! Sub-kinds of the built-in patterns ("tags"): what a pattern recognises,
//! finer than its category (docs/CATALOG.md, "Tags").
//!
//! The vocabulary is fixed here and `build.rs` (which includes this file)
//! refuses any other name, so a tag is one bit of a [`Tags`] set: a
//! pattern's tags cost 8 bytes natively, a verdict's none beyond a copy,
//! and a test of one tag (an exclusion by sub-kind) is one `and`. The bot
//! tags up to `advertising` are crawler-user-agents' own (its `tags`
//! field, since 2026-04), spelt as it spells them.

use serde::ser::{Serialize, SerializeSeq, Serializer};

/// Every tag, in the order of their bits. Append only: a tag's bit is its
/// index, and the packed catalog stores indices.
pub(crate) const NAMES: [&str; 48] = [
    // bot-traffic; crawler-user-agents' tags, then the catalog's own
    "search-engine",
    "seo",
    "ai-crawler",
    "monitoring",
    "social-preview",
    "feed-reader",
    "scanner",
    "browser-automation",
    "http-library",
    "archiver",
    "academic",
    "advertising",
    "link-scanner",
    "generic-bot",
    // browser-extension
    "extension-url",
    "wallet",
    "ad-blocker",
    "translator",
    "password-manager",
    "userscript",
    "security-software",
    "browser-injected",
    "extension-runtime",
    // third-party-script
    "ads",
    "analytics",
    "tag-manager",
    "consent",
    "in-app-browser",
    "widget",
    "captcha",
    // network-issue
    "fetch-failure",
    "abort",
    "timeout",
    "chunk-load",
    "service-worker",
    "connection",
    // known-library
    "resize-observer",
    "media-playback",
    "hydration",
    "dom-mutation",
    "storage",
    "webgl",
    "library-bug",
    // other
    "cross-origin",
    "sdk-synthetic",
    "legacy-browser",
    "local-file",
    "resource-exhaustion",
];

/// A set of tags (a built-in pattern's, or none for any other pattern).
#[derive(Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Tags(u64);

impl Tags {
    /// No tag: a custom pattern, or one from a list the catalog does not know.
    pub const NONE: Tags = Tags(0);

    /// The set with these bits (`build.rs` writes them).
    #[cfg_attr(not(feature = "endpoint"), allow(dead_code))]
    pub(crate) const fn from_bits(bits: u64) -> Tags {
        Tags(bits)
    }

    /// The set of tag indices given as `'A' + index` characters, as the
    /// packed catalog stores them.
    #[cfg_attr(feature = "endpoint", allow(dead_code))]
    pub(crate) fn from_packed(letters: &str) -> Tags {
        Tags(
            letters
                .bytes()
                .map(|b| 1u64 << (b.wrapping_sub(b'A') & 63))
                .fold(0, |all, bit| all | bit),
        )
    }

    /// Its tags, in vocabulary order.
    pub fn names(self) -> impl Iterator<Item = &'static str> {
        NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.0 & (1 << i) != 0)
            .map(|(_, name)| *name)
    }

    /// Whether `name` is one of its tags.
    pub fn contains(self, name: &str) -> bool {
        NAMES
            .iter()
            .position(|n| *n == name)
            .is_some_and(|i| self.0 & (1 << i) != 0)
    }

    /// Whether it has no tag.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// Every tag name there is, in bit order.
    pub fn vocabulary() -> &'static [&'static str] {
        &NAMES
    }
}

impl std::fmt::Debug for Tags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

/// A list of names, as a verdict's JSON writes them.
impl Serialize for Tags {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(None)?;
        for name in self.names() {
            seq.serialize_element(name)?;
        }
        seq.end()
    }
}

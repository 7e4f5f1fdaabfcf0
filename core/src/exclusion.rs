//! An account's exclusions of built-in patterns: the built-ins it turned
//! off, by id or by category, for good or until a date.
//!
//! An exclusion names built-in patterns; it never touches the account's own
//! patterns (those it removes, or asks for without, `includeCustom=false`).
//! The endpoint leaves what an account excludes out of every answer to that
//! account's keys, in both variants and whatever the parameters say, so a
//! client, a matcher built from a response, a cache: everything downstream
//! follows. The words are the ones a matcher's local exclusions use (npm's
//! `exclude: {ids, categories}`): a built-in's `id`, a `category` in either
//! variant's spelling.
//!
//! Exclusions live in the account's record, beside its custom patterns
//! (`custom.rs`), so a request still reads one record for its account; one
//! whose end has passed no longer applies, with nothing to run (the core
//! compares it with the request's `now`).
//!
//! A matcher's exclusions ([`Exclusions`]) are the same words chosen where
//! the matcher runs (an end-to-end test whose headless browser the catalog
//! calls a bot, a page that wants one rule off): the patterns left out of a
//! matcher, by id or category, so its verdicts are those of a matcher built
//! from the rest. There an id is not checked against the catalog (a
//! deployment may serve ids this build does not know; an id no pattern has
//! leaves the set as it is) and `custom` names an account's patterns given
//! no category, which an account's own exclusions never touch.

#[cfg(feature = "endpoint")]
mod account;

#[cfg(feature = "endpoint")]
pub use account::{EXCLUSION_KINDS, Excluded, Exclusion, NewExclusion};
#[cfg(feature = "endpoint")]
pub(crate) use account::{Excluding, MAX_EXCLUSIONS};

use crate::catalog;
use crate::matcher::Matcher;
use crate::pattern::{CUSTOM_CATEGORY_A, Category, MatcherPattern, Variant};
use crate::tags::Tags;

/// Why an exclusion was refused (the text says which and why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidExclusion(pub String);

impl std::fmt::Display for InvalidExclusion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidExclusion {}

/// The tag spelled `name`, as the vocabulary holds it.
fn tag_named(name: &str) -> Option<&'static str> {
    Tags::vocabulary().iter().copied().find(|t| *t == name)
}

/// The category spelled `name` in either variant.
fn category_named(name: &str) -> Option<Category> {
    Variant::ALL
        .into_iter()
        .find_map(|variant| Category::parse(name, variant))
}

/// Patterns to leave out of a matcher: by id, by category, by tag.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Exclusions {
    ids: Vec<String>,
    categories: Vec<ExcludedCategory>,
    tags: Vec<&'static str>,
}

/// A category an exclusion names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ExcludedCategory {
    /// One of the six, in either variant's spelling.
    Listed(Category),
    /// Variant A's `custom`: an account's patterns given no category.
    Custom,
}

impl Exclusions {
    /// These exclusions and the patterns with these `ids`; an empty id is
    /// refused (`exclude: ids[0]: empty`).
    pub fn with_ids<S: AsRef<str>>(
        mut self,
        ids: impl IntoIterator<Item = S>,
    ) -> Result<Exclusions, InvalidExclusion> {
        for (at, id) in ids.into_iter().enumerate() {
            let id = id.as_ref();
            if id.is_empty() {
                return Err(InvalidExclusion(format!("exclude: ids[{at}]: empty")));
            }
            self.ids.push(id.to_owned());
        }
        Ok(self)
    }

    /// These exclusions and the patterns of these `categories`, each one of
    /// the six in either variant's spelling (`bot-traffic`, `BOT_TRAFFIC`)
    /// or `custom`; any other word is refused.
    pub fn with_categories<S: AsRef<str>>(
        mut self,
        categories: impl IntoIterator<Item = S>,
    ) -> Result<Exclusions, InvalidExclusion> {
        for (at, name) in categories.into_iter().enumerate() {
            let name = name.as_ref();
            let category = if name == CUSTOM_CATEGORY_A {
                ExcludedCategory::Custom
            } else {
                ExcludedCategory::Listed(category_named(name).ok_or_else(|| {
                    InvalidExclusion(format!(
                        "exclude: categories[{at}]: `{name}` is not a category \
                         (browser-extension, third-party-script, bot-traffic, network-issue, \
                         known-library, other, custom, or Variant B's spelling of one)"
                    ))
                })?)
            };
            self.categories.push(category);
        }
        Ok(self)
    }

    /// These exclusions and the built-in patterns with these `tags`, each
    /// one of the catalog's ([`Tags::vocabulary`]); any other word is
    /// refused. A pattern without tags (not a built-in) is never left out
    /// by tag.
    pub fn with_tags<S: AsRef<str>>(
        mut self,
        tags: impl IntoIterator<Item = S>,
    ) -> Result<Exclusions, InvalidExclusion> {
        for (at, name) in tags.into_iter().enumerate() {
            let name = name.as_ref();
            self.tags.push(tag_named(name).ok_or_else(|| {
                InvalidExclusion(format!(
                    "exclude: tags[{at}]: `{name}` is not a tag of the catalog (docs/CATALOG.md, \
                     \"Tags\")"
                ))
            })?);
        }
        Ok(self)
    }

    /// Whether nothing is excluded.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty() && self.categories.is_empty() && self.tags.is_empty()
    }

    /// Whether `pattern`, with its `tags` (a built-in's; none for any
    /// other pattern), is left out.
    pub fn excludes(&self, pattern: &MatcherPattern, tags: Tags) -> bool {
        let category = if pattern.category == CUSTOM_CATEGORY_A {
            Some(ExcludedCategory::Custom)
        } else {
            category_named(&pattern.category).map(ExcludedCategory::Listed)
        };
        self.names(&pattern.id, category, tags)
    }

    /// Whether a pattern with this id, category and tags is left out.
    fn names(&self, id: &str, category: Option<ExcludedCategory>, tags: Tags) -> bool {
        self.ids.iter().any(|excluded| excluded == id)
            || category.is_some_and(|c| self.categories.contains(&c))
            || self.tags.iter().any(|t| tags.contains(t))
    }
}

impl Matcher {
    /// The built-in catalog at or above `min_confidence`, without the
    /// patterns `exclusions` leaves out: as quick to build as
    /// [`Matcher::builtin`] (the built-in regexes are recognised by their
    /// text and take what `build.rs` prepared).
    pub fn builtin_excluding(min_confidence: f64, exclusions: &Exclusions) -> Matcher {
        let kept: Vec<MatcherPattern> = catalog::builtin_patterns()
            .iter()
            .filter(|p| p.confidence >= min_confidence)
            .filter(|p| !exclusions.names(p.id, Some(ExcludedCategory::Listed(p.category)), p.tags))
            .map(MatcherPattern::from)
            .collect();
        // A `Vec`, as the other callers pass: `Matcher::new` is generic over
        // its iterator, and each other iterator type is another copy of it.
        Matcher::new(kept).expect("the catalog is validated at build time")
    }

    /// This matcher without the patterns `exclusions` leaves out (its
    /// first-party rule, if it has one, kept).
    pub fn excluding(&self, exclusions: &Exclusions) -> Matcher {
        let kept: Vec<MatcherPattern> = self
            .patterns()
            .iter()
            .zip(self.tags())
            .filter(|(p, tags)| !exclusions.excludes(p, **tags))
            .map(|(p, _)| p.clone())
            .collect();
        let mut narrowed = Matcher::new(kept).expect("a subset of patterns that compiled compiles");
        narrowed.first_party = self.first_party.clone();
        narrowed
    }
}

//! An account's exclusions as stored and served: what one names
//! ([`Excluded`]), its end ([`Exclusion`]), how one is asked for and checked
//! against the catalog ([`NewExclusion`]), and those that apply to one
//! request ([`Excluding`]).

use serde::{Deserialize, Serialize};

use super::{InvalidExclusion, category_named, tag_named};
use crate::catalog;
use crate::pattern::{CUSTOM_CATEGORY_A, Category, Variant};
use crate::rate::UnixMillis;
use crate::tags::Tags;
use crate::until::Until;

/// Most exclusions one account may have.
pub(crate) const MAX_EXCLUSIONS: usize = 500;

/// What an exclusion leaves out: the built-in with this id, or every
/// built-in of this category.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Excluded {
    /// The built-in pattern with this id.
    Id(String),
    /// Every built-in pattern of this category (the account's own patterns
    /// of the category stay).
    Category(Category),
    /// Every built-in pattern with this tag, a sub-kind of its category
    /// (one of [`crate::Tags::vocabulary`]).
    Tag(&'static str),
}

/// The kinds of exclusion, as the admin API's paths and JSON name them.
pub const EXCLUSION_KINDS: [&str; 3] = ["id", "category", "tag"];

impl Excluded {
    /// `id`, `category` or `tag`.
    pub fn kind(&self) -> &'static str {
        match self {
            Excluded::Id(_) => "id",
            Excluded::Category(_) => "category",
            Excluded::Tag(_) => "tag",
        }
    }

    /// The id, the category in Variant A's spelling, or the tag.
    pub fn value(&self) -> &str {
        match self {
            Excluded::Id(id) => id,
            Excluded::Category(category) => category.name(Variant::A),
            Excluded::Tag(tag) => tag,
        }
    }

    /// What `kind` and `value` name, checked only for its form (a removal
    /// must find an exclusion of an id that a later catalog no longer has).
    pub fn named(kind: &str, value: &str) -> Result<Excluded, InvalidExclusion> {
        match kind {
            "id" if is_id(value) => Ok(Excluded::Id(value.to_owned())),
            "id" => Err(InvalidExclusion(format!(
                "{:?} is not a pattern id (a-z, 0-9 and '-')",
                cut(value)
            ))),
            "category" => category(value).map(Excluded::Category),
            "tag" => tag(value).map(Excluded::Tag),
            other => Err(InvalidExclusion(format!(
                "{:?} is not a kind of exclusion: use {}",
                cut(other),
                EXCLUSION_KINDS.join(" or ")
            ))),
        }
    }

    /// As the serving layout writes it: `id:<id>`, `category:<category>`,
    /// `tag:<tag>`.
    pub(crate) fn stored(&self) -> String {
        format!("{}:{}", self.kind(), self.value())
    }
}

impl std::fmt::Display for Excluded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} {}", self.kind(), self.value())
    }
}

/// One exclusion as stored and listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exclusion {
    /// What it leaves out.
    pub excluded: Excluded,
    /// When it stops applying (`None`: until removed).
    pub until: Option<Until>,
}

impl Exclusion {
    /// Whether it applies at `now`.
    pub fn applies(&self, now: UnixMillis) -> bool {
        self.until.is_none_or(|until| !until.has_passed(now))
    }
}

/// The JSON of an exclusion, listed and stored alike: `{"id": …}`,
/// `{"category": …}` or `{"tag": …}`, and `"until"` when it ends.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ExclusionJson {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tag: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    until: Option<Until>,
}

impl Serialize for Exclusion {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (mut id, mut category, mut tag) = (None, None, None);
        match &self.excluded {
            Excluded::Id(name) => id = Some(name.clone()),
            Excluded::Category(c) => category = Some(c.name(Variant::A).to_owned()),
            Excluded::Tag(name) => tag = Some((*name).to_owned()),
        }
        ExclusionJson {
            id,
            category,
            tag,
            until: self.until,
        }
        .serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Exclusion {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Exclusion, D::Error> {
        let json = ExclusionJson::deserialize(deserializer)?;
        let excluded = match (json.id, json.category, json.tag) {
            (Some(id), None, None) => Excluded::named("id", &id),
            (None, Some(category), None) => Excluded::named("category", &category),
            (None, None, Some(tag)) => Excluded::named("tag", &tag),
            _ => Err(InvalidExclusion("give one of id, category or tag".into())),
        }
        .map_err(serde::de::Error::custom)?;
        Ok(Exclusion {
            excluded,
            until: json.until,
        })
    }
}

/// An exclusion as an account asks for it (the admin API's body, the CLI's
/// flags): exactly one of `id`, `category` and `tag`, and an optional `until`
/// (a date, or an RFC 3339 time).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewExclusion {
    /// The id of a built-in pattern of this catalog.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// A category, in either variant's spelling.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// A tag, a sub-kind of the built-ins' categories.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tag: Option<String>,
    /// When it stops applying; absent: until removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

impl NewExclusion {
    /// Checks it: an id must be a built-in's of this catalog (a typo would
    /// exclude nothing, silently), a category one of the six, a tag one of
    /// the catalog's vocabulary.
    pub fn validate(self) -> Result<Exclusion, InvalidExclusion> {
        let excluded = match (self.id, self.category, self.tag) {
            (Some(id), None, None) => builtin_id(&id)?,
            (None, Some(c), None) => Excluded::Category(category(&c)?),
            (None, None, Some(t)) => Excluded::Tag(tag(&t)?),
            _ => {
                return Err(InvalidExclusion(
                    "an exclusion names one of id (a built-in pattern), category or tag".into(),
                ));
            }
        };
        let until = match self.until.as_deref() {
            None => None,
            Some(text) => {
                Some(Until::parse(text).map_err(|e| InvalidExclusion(format!("until: {e}")))?)
            }
        };
        Ok(Exclusion { excluded, until })
    }
}

fn builtin_id(id: &str) -> Result<Excluded, InvalidExclusion> {
    if id.starts_with(crate::custom::CUSTOM_ID_PREFIX) {
        return Err(InvalidExclusion(format!(
            "{:?} is one of the account's own patterns: exclusions turn off built-ins; remove \
             it instead",
            cut(id)
        )));
    }
    if catalog::builtin_patterns().iter().any(|p| p.id == id) {
        Ok(Excluded::Id(id.to_owned()))
    } else {
        Err(InvalidExclusion(format!(
            "{:?} is not the id of a built-in pattern of this catalog (release {}); \
             GET /v1/filters?minConfidence=0 lists them all",
            cut(id),
            catalog::catalog_release()
        )))
    }
}

fn category(name: &str) -> Result<Category, InvalidExclusion> {
    if name == CUSTOM_CATEGORY_A {
        return Err(InvalidExclusion(
            "\"custom\" is the account's own patterns: exclusions turn off built-ins; remove \
             them, or ask with includeCustom=false"
                .into(),
        ));
    }
    category_named(name).ok_or_else(|| {
        InvalidExclusion(format!(
            "{:?} is not a category: use one of browser-extension, third-party-script, \
                 bot-traffic, network-issue, known-library, other (or Variant B's spelling)",
            cut(name)
        ))
    })
}

fn tag(name: &str) -> Result<&'static str, InvalidExclusion> {
    tag_named(name).ok_or_else(|| {
        InvalidExclusion(format!(
            "{:?} is not a tag of the catalog: use one of {}",
            cut(name),
            Tags::vocabulary().join(", ")
        ))
    })
}

fn is_id(text: &str) -> bool {
    (1..=64).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// The exclusions of an account that apply to one request, resolved against
/// the catalog: which categories and which built-ins (by their place in
/// the catalog) to leave out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Excluding {
    /// Bit `c.index()` set: category `c`'s built-ins are left out.
    pub(crate) categories: u8,
    /// Places in [`catalog::builtin_patterns`] of the built-ins excluded by id or tag,
    /// ascending, without repeats.
    pub(crate) patterns: Vec<usize>,
}

impl Excluding {
    /// The exclusions `stored` (their serving form: `id:<id>`,
    /// `category:<name>` or `tag:<name>`, and an end) that apply at `now`; `None` when none
    /// does, so a request without exclusions takes the path it always took.
    /// An id this catalog does not have (a later release dropped it)
    /// excludes nothing.
    pub(crate) fn at<'a>(
        stored: impl IntoIterator<Item = (&'a str, Option<Until>)>,
        now: UnixMillis,
    ) -> Option<Excluding> {
        let mut excluding = Excluding::default();
        for (target, until) in stored {
            if until.is_some_and(|until| until.has_passed(now)) {
                continue;
            }
            match target.split_once(':') {
                Some(("id", id)) => {
                    if let Some(at) = catalog::builtin_patterns().iter().position(|p| p.id == id) {
                        excluding.patterns.push(at);
                    }
                }
                Some(("category", name)) => {
                    if let Some(c) = Category::parse(name, Variant::A) {
                        excluding.categories |= 1 << c.index();
                    }
                }
                // As the ids of the built-ins that have it: one more pass
                // over the catalog when the request is made, nothing new
                // where the answer is put together.
                Some(("tag", name)) => excluding.patterns.extend(
                    catalog::builtin_patterns()
                        .iter()
                        .enumerate()
                        .filter(|(_, p)| p.tags.contains(name))
                        .map(|(at, _)| at),
                ),
                _ => {}
            }
        }
        excluding.patterns.sort_unstable();
        excluding.patterns.dedup();
        (excluding != Excluding::default()).then_some(excluding)
    }

    /// Whether `category`'s built-ins are left out.
    pub(crate) fn category(&self, category: Category) -> bool {
        self.categories & (1 << category.index()) != 0
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    fn new(id: Option<&str>, category: Option<&str>, until: Option<&str>) -> NewExclusion {
        NewExclusion {
            id: id.map(str::to_owned),
            category: category.map(str::to_owned),
            tag: None,
            until: until.map(str::to_owned),
        }
    }

    #[test]
    fn an_exclusion_by_tag_names_the_builtins_with_that_tag() {
        let exclusion = NewExclusion {
            tag: Some("ai-crawler".into()),
            ..NewExclusion::default()
        }
        .validate()
        .unwrap();
        assert_eq!(exclusion.excluded, Excluded::Tag("ai-crawler"));
        assert_eq!(
            serde_json::to_string(&exclusion).unwrap(),
            r#"{"tag":"ai-crawler"}"#
        );
        let back: Exclusion = serde_json::from_str(r#"{"tag":"ai-crawler"}"#).unwrap();
        assert_eq!(back, exclusion);
        let excluding = Excluding::at(
            [(exclusion.excluded.stored().as_str(), None)],
            UnixMillis(0),
        )
        .unwrap();
        let tagged: Vec<usize> = catalog::builtin_patterns()
            .iter()
            .enumerate()
            .filter(|(_, p)| p.tags.contains("ai-crawler"))
            .map(|(at, _)| at)
            .collect();
        assert!(tagged.len() > 3, "the catalog tags its AI crawlers");
        assert_eq!(excluding.patterns, tagged);
        let refused = NewExclusion {
            tag: Some("ai-crawlers".into()),
            ..NewExclusion::default()
        }
        .validate()
        .unwrap_err();
        assert!(refused.0.contains("not a tag of the catalog"), "{refused}");
        assert!(Excluded::named("tag", "nope").is_err());
    }

    #[test]
    fn an_exclusion_names_a_builtin_or_a_category() {
        let googlebot = new(Some("googlebot"), None, None).validate().unwrap();
        assert_eq!(googlebot.excluded, Excluded::Id("googlebot".into()));
        let bots = new(None, Some("BOT_TRAFFIC"), Some("2026-12-31"))
            .validate()
            .unwrap();
        assert_eq!(bots.excluded, Excluded::Category(Category::BotTraffic));
        assert_eq!(
            serde_json::to_string(&bots).unwrap(),
            r#"{"category":"bot-traffic","until":"2026-12-31T00:00:00Z"}"#
        );
        let back: Exclusion =
            serde_json::from_str(r#"{"category":"bot-traffic","until":"2026-12-31"}"#).unwrap();
        assert_eq!(back, bots);

        for (refused, says) in [
            (
                new(Some("googlbot"), None, None),
                "not the id of a built-in",
            ),
            (new(Some("custom-3"), None, None), "account's own patterns"),
            (new(None, Some("custom"), None), "account's own patterns"),
            (new(None, Some("bots"), None), "not a category"),
            (new(None, None, None), "one of id"),
            (new(Some("googlebot"), Some("other"), None), "one of id"),
            (new(Some("googlebot"), None, Some("soon")), "until:"),
        ] {
            let why = refused.clone().validate().unwrap_err().0;
            assert!(why.contains(says), "{refused:?}: {why}");
        }
    }

    #[test]
    fn a_request_resolves_the_exclusions_that_apply_at_its_instant() {
        let now = UnixMillis(2_000_000);
        let later = Some(Until(UnixMillis(3_000_000)));
        let ended = Some(Until(UnixMillis(2_000_000)));
        let googlebot = catalog::builtin_patterns()
            .iter()
            .position(|p| p.id == "googlebot")
            .unwrap();
        let excluding = Excluding::at(
            [
                ("id:googlebot", later),
                ("id:googlebot", None),
                ("id:no-such-pattern", None),
                ("category:network-issue", None),
                ("category:other", ended),
            ],
            now,
        )
        .unwrap();
        assert_eq!(excluding.patterns, [googlebot]);
        assert!(excluding.category(Category::NetworkIssue));
        assert!(!excluding.category(Category::Other), "ended");
        assert_eq!(Excluding::at([("category:other", ended)], now), None);
    }

    #[test]
    fn a_removal_names_an_exclusion_by_its_form_only() {
        assert_eq!(
            Excluded::named("id", "a-pattern-a-later-catalog-dropped"),
            Ok(Excluded::Id("a-pattern-a-later-catalog-dropped".into()))
        );
        assert!(Excluded::named("id", "Not An Id").is_err());
        assert!(Excluded::named("tag", "x").is_err());
        assert_eq!(
            Excluded::named("category", "OTHER").map(|e| e.stored()),
            Ok("category:other".into())
        );
    }
}

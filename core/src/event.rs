//! An error event as the matcher reads it, and the matcher's answer: which
//! pattern matched which text of it.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::tags::Tags;

/// An error event, as far as matching is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The exception type (`TypeError`), if known.
    #[serde(default, rename = "type")]
    pub exception_type: Option<String>,
    /// The message or exception value.
    #[serde(default)]
    pub message: Option<String>,
    /// Stack-frame URLs (file names), outermost first or last: order is kept.
    #[serde(default)]
    pub frames: Vec<String>,
    /// The user agent of the browser or client that reported it.
    #[serde(default)]
    pub user_agent: Option<String>,
}

impl Event {
    /// The message text patterns see: `Type: value`, or whichever is present.
    pub fn message_text(&self) -> Option<String> {
        message_text(self.exception_type.as_deref(), self.message.as_deref()).map(Cow::into_owned)
    }
}

/// [`Event::message_text`] of borrowed parts (borrowed unless both are there).
pub(crate) fn message_text<'a>(
    exception_type: Option<&'a str>,
    message: Option<&'a str>,
) -> Option<Cow<'a, str>> {
    match (exception_type, message) {
        (Some(t), Some(m)) if !t.is_empty() => Some(Cow::Owned(format!("{t}: {m}"))),
        (Some(t), None) => Some(Cow::Borrowed(t)),
        (_, Some(m)) => Some(Cow::Borrowed(m)),
        (None, None) => None,
    }
}

/// One event of a batch given as JSON ([`Matcher::is_noise_json`]):
/// [`Event`]'s shape, with a misspelt field refused
/// rather than silently unmatched.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct EventJson {
    #[serde(default, rename = "type")]
    pub(crate) exception_type: Option<String>,
    #[serde(default)]
    pub(crate) message: Option<String>,
    #[serde(default)]
    pub(crate) frames: Vec<String>,
    #[serde(default)]
    pub(crate) user_agent: Option<String>,
}

/// A batch of events that is not a JSON array of events; says where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEvents(pub String);

impl std::fmt::Display for InvalidEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidEvents {}

/// Which text of the event a pattern matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "field", content = "index")]
pub enum Field {
    /// The message (`Type: value`).
    Message,
    /// The stack-frame URL at this index of [`Event::frames`].
    Frame(usize),
    /// The user agent.
    UserAgent,
}

/// One pattern that matched one text, or the first-party rule
/// ([`Matcher::with_first_party`](crate::Matcher::with_first_party)) that
/// found every placed frame elsewhere.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match<'m> {
    /// The pattern's index in [`Matcher::patterns`](crate::Matcher::patterns);
    /// for the first-party rule's match, one past the last
    /// (`patterns().len()`). Not serialized: a verdict's JSON names
    /// patterns by id (and `index` is a frame's).
    #[serde(skip)]
    pub index: usize,
    /// The pattern's id.
    pub id: &'m str,
    /// Its category.
    pub category: &'m str,
    /// Its sub-kinds: a built-in pattern's tags (docs/CATALOG.md,
    /// "Tags"), none for any other.
    pub tags: Tags,
    /// Its confidence.
    pub confidence: f64,
    /// The text it matched.
    #[serde(flatten)]
    pub field: Field,
}

/// The matcher's answer for one event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict<'m> {
    /// Whether any pattern matched: the event is noise.
    pub noise: bool,
    /// Every match, by text (message, frames, user agent), then pattern
    /// order; the first-party rule's, if any, last.
    pub matches: Vec<Match<'m>>,
}

//! The labelled evaluation set (catalog/eval.toml), compiled in so the same
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
#![allow(unreachable_pub, dead_code)]
//! test runs natively and under wasm.

use noise_filter_core::{Event, FirstParty};
use serde::Deserialize;

#[derive(Debug, Deserialize)]
pub struct LabelledEvent {
    pub label: String,
    /// For noise events: the catalog category the noise belongs to (what
    /// per-category recall is computed over). Absent on real events.
    #[serde(default)]
    pub category: Option<String>,
    /// `Some("held-out")` (`"held-out-2"` ... `"held-out-7"` for the later
    /// rounds) for a part frozen before the patterns written for it,
    /// `Some("development")` (`"development-2"` ... `"development-7"`) for the
    /// events added with it that patterns were
    /// written with in view, absent for the events of earlier releases
    /// (docs/CATALOG.md, "The evaluation set").
    #[serde(default)]
    pub part: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub frames: Vec<String>,
    #[serde(default)]
    pub user_agent: Option<String>,
    pub source: String,
    /// Where the application's own code lives, as the event's source shows
    /// (its origins, or path prefixes for file paths); absent when the
    /// source does not say. The first-party rule is measured with it.
    #[serde(default)]
    pub first_party: Option<FirstPartyEntry>,
}

/// The application's own code: the first-party rule's two lists.
#[derive(Debug, Deserialize)]
pub struct FirstPartyEntry {
    #[serde(default)]
    pub origins: Vec<String>,
    #[serde(default)]
    pub paths: Vec<String>,
}

impl LabelledEvent {
    /// Whether the event is in a held-out part (of any round).
    pub fn held_out(&self) -> bool {
        self.part
            .as_deref()
            .is_some_and(|p| p.starts_with("held-out"))
    }

    /// The first-party rule the event's application would give, if known.
    pub fn first_party(&self) -> Option<FirstParty> {
        self.first_party.as_ref().map(|fp| {
            FirstParty::new(fp.origins.clone(), fp.paths.clone())
                .unwrap_or_else(|e| panic!("first_party of {}: {e}", self.source))
        })
    }

    pub fn event(&self) -> Event {
        Event {
            exception_type: None,
            message: self.message.clone(),
            frames: self.frames.clone(),
            user_agent: self.user_agent.clone(),
        }
    }

    /// Every text of the event.
    pub fn texts(&self) -> Vec<&str> {
        self.message
            .iter()
            .chain(&self.frames)
            .chain(&self.user_agent)
            .map(String::as_str)
            .collect()
    }
}

#[derive(Deserialize)]
struct File {
    event: Vec<LabelledEvent>,
}

pub fn events() -> Vec<LabelledEvent> {
    let file: File =
        toml::from_str(include_str!("../../catalog/eval.toml")).expect("eval.toml parses");
    file.event
}

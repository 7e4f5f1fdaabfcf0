//! A JSON record of an export read into an event (docs/REPORT.md, "Inputs").
//!
//! Three shapes, told apart per record:
//!
//! - **Sentry's API** (`/events/?full=true`, an issue's events): an object
//!   with an `entries` list or a string `eventID`. The texts come from the
//!   `exception` entry by the rule of docs/CONTRACT.md ("Reading a
//!   tracker's event": the last exception value; frames `absPath`, else
//!   `filename`), the `message` entry, the `request` entry's `User-Agent`;
//!   without an exception or a message entry, the `message` field, else the
//!   `title`. Time `dateCreated`, issue `groupID`, user `user`.
//! - **Sentry's event** (the ingest shape: what an SDK sends, what
//!   `beforeSend` sees): a string `event_id`, a `logentry` object or an
//!   `exception.values` list; read exactly by that rule. Time `timestamp`,
//!   user `user`; such an event has no issue.
//! - **The matcher's event**: `type`, `message`, `frames`, `userAgent`, each
//!   optional, plus the report's own `timestamp`, `issue`, `user`; no other
//!   field (a misspelt one is refused, as the matcher's JSON batch does).
//!
//! Reading a Sentry event never fails on a part of the wrong type: that part
//! is not read (the rule's own words). Only the record's JSON syntax, a
//! record that is no event, or a misspelt field of the matcher's shape
//! makes a record malformed.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use super::time::{self, Millis};

/// The shape a record was read as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Shape {
    SentryApi,
    SentryEvent,
    MatcherEvent,
    DiscoverCsv,
}

impl Shape {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Shape::SentryApi => "sentry-api",
            Shape::SentryEvent => "sentry-event",
            Shape::MatcherEvent => "matcher-event",
            Shape::DiscoverCsv => "discover-csv",
        }
    }
}

/// An event of the export: the texts patterns see, and what the report
/// counts it by.
#[derive(Debug, Default)]
pub(crate) struct EventRecord<'a> {
    pub exception_type: Option<Cow<'a, str>>,
    pub message: Option<Cow<'a, str>>,
    pub frames: Vec<Cow<'a, str>>,
    pub user_agent: Option<Cow<'a, str>>,
    /// Script URLs besides `frames` that only the first-party check reads
    /// (the API's `rawStacktrace`: the URLs before source maps).
    pub raw_frames: Vec<Cow<'a, str>>,
    pub time: Option<Millis>,
    pub issue: Option<Cow<'a, str>>,
    pub user: Option<String>,
    pub browser: Option<Cow<'a, str>>,
    /// The page's address (samples only: not a text patterns apply to).
    pub url: Option<Cow<'a, str>>,
    /// The event's id (samples).
    pub id: Option<Cow<'a, str>>,
    /// How many events the record stands for (a Discover row with `count`).
    pub weight: u64,
}

/// What became of a record.
pub(crate) enum Read<'a> {
    Event(Shape, Box<EventRecord<'a>>),
    /// An event that is not an error report (a transaction): not counted.
    Skipped(&'static str),
    Malformed(String),
}

/// Reads one JSON record.
pub(crate) fn record(bytes: &[u8]) -> Result<Read<'_>, (String, u64)> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let raw = match Raw::deserialize(&mut de).and_then(|raw| de.end().map(|()| raw)) {
        Ok(raw) => raw,
        Err(e) => return Err((format!("not JSON: {e}"), e.line() as u64)),
    };
    Ok(raw.into_read())
}

/// A JSON value as far as the reader cares: a string, a number, or
/// something else (skipped).
#[derive(Debug, Default)]
enum Val<'a> {
    #[default]
    Missing,
    Null,
    Str(Cow<'a, str>),
    Int(i128),
    Float(f64),
    /// A boolean, a list or an object.
    Other,
}

impl<'a> Val<'a> {
    fn str(self) -> Option<Cow<'a, str>> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    fn is_str(&self) -> bool {
        matches!(self, Val::Str(_))
    }

    /// A string, or a number written in decimal (ids are either).
    fn id(self) -> Option<Cow<'a, str>> {
        match self {
            Val::Str(s) if !s.is_empty() => Some(s),
            Val::Int(n) => Some(Cow::Owned(n.to_string())),
            Val::Float(f) if f.is_finite() => Some(Cow::Owned(f.to_string())),
            _ => None,
        }
    }

    fn time(&self) -> Option<Millis> {
        match self {
            Val::Str(s) => time::parse(s),
            Val::Int(n) => time::from_number(*n as f64),
            Val::Float(f) => time::from_number(*f),
            _ => None,
        }
    }
}

struct ValVisitor;

impl<'de> Visitor<'de> for ValVisitor {
    type Value = Val<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Val<'de>, E> {
        Ok(Val::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Val<'de>, E> {
        Ok(Val::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Val<'de>, E> {
        Ok(Val::Str(Cow::Owned(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Val<'de>, E> {
        Ok(Val::Int(i128::from(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Val<'de>, E> {
        Ok(Val::Int(i128::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Val<'de>, E> {
        Ok(Val::Float(v))
    }
    fn visit_bool<E>(self, _: bool) -> Result<Val<'de>, E> {
        Ok(Val::Other)
    }
    fn visit_unit<E>(self) -> Result<Val<'de>, E> {
        Ok(Val::Null)
    }
    fn visit_none<E>(self) -> Result<Val<'de>, E> {
        Ok(Val::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Val<'de>, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Val::Other)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Val<'de>, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Val::Other)
    }
}

impl<'de> Deserialize<'de> for Val<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValVisitor)
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Val::deserialize(d)? {
            Val::Str(s) => Ok(Key(s)),
            _ => Err(de::Error::custom("an object key that is not a string")),
        }
    }
}

/// A list of lenient items; anything but a list reads as an empty one.
#[derive(Debug)]
struct List<T> {
    items: Vec<T>,
    /// It was a list.
    present: bool,
}

impl<T> Default for List<T> {
    fn default() -> Self {
        List {
            items: Vec::new(),
            present: false,
        }
    }
}

impl<'de, T: Deserialize<'de> + Default> Deserialize<'de> for List<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de> + Default> Visitor<'de> for V<T> {
            type Value = List<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<List<T>, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<T>()? {
                    items.push(item);
                }
                Ok(List {
                    items,
                    present: true,
                })
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<List<T>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(List::default())
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<List<T>, E> {
                Ok(List::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<List<T>, E> {
                Ok(List::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<List<T>, E> {
                Ok(List::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<List<T>, E> {
                Ok(List::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<List<T>, E> {
                Ok(List::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<List<T>, E> {
                Ok(List::default())
            }
            fn visit_unit<E>(self) -> Result<List<T>, E> {
                Ok(List::default())
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// Lenient objects: the named fields are read (each alias a key), any other
/// key is skipped, and anything but an object reads as one with nothing.
macro_rules! lenient {
    ($(#[$meta:meta])* struct $name:ident { $($field:ident : $ty:ty = [$($key:literal),+]),* $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Default)]
        struct $name<'a> {
            $($field: $ty,)*
            /// It was an object.
            present: bool,
            /// The first key not listed, if any (borrowed: most keys have
            /// no escapes, and most objects have such keys).
            unknown: Option<Cow<'a, str>>,
            _life: std::marker::PhantomData<&'a ()>,
        }

        impl<'de> Deserialize<'de> for $name<'de> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V;
                impl<'de> Visitor<'de> for V {
                    type Value = $name<'de>;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("any value")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<$name<'de>, A::Error> {
                        let mut out = $name::default();
                        out.present = true;
                        while let Some(key) = map.next_key::<Key<'de>>()? {
                            match key.0.as_ref() {
                                $($($key)|+ => out.$field = map.next_value()?,)*
                                _ => {
                                    if out.unknown.is_none() {
                                        out.unknown = Some(key.0);
                                    }
                                    map.next_value::<IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(out)
                    }
                    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<$name<'de>, A::Error> {
                        while seq.next_element::<IgnoredAny>()?.is_some() {}
                        Ok($name::default())
                    }
                    fn visit_borrowed_str<E>(self, _: &'de str) -> Result<$name<'de>, E> { Ok($name::default()) }
                    fn visit_str<E>(self, _: &str) -> Result<$name<'de>, E> { Ok($name::default()) }
                    fn visit_i64<E>(self, _: i64) -> Result<$name<'de>, E> { Ok($name::default()) }
                    fn visit_u64<E>(self, _: u64) -> Result<$name<'de>, E> { Ok($name::default()) }
                    fn visit_f64<E>(self, _: f64) -> Result<$name<'de>, E> { Ok($name::default()) }
                    fn visit_bool<E>(self, _: bool) -> Result<$name<'de>, E> { Ok($name::default()) }
                    fn visit_unit<E>(self) -> Result<$name<'de>, E> { Ok($name::default()) }
                }
                d.deserialize_any(V)
            }
        }
    };
}

lenient! {
    /// A record: the fields of all three shapes.
    struct Raw {
        // Sentry's event.
        event_id: Val<'a> = ["event_id"],
        exception: Exception<'a> = ["exception"],
        logentry: LogEntry<'a> = ["logentry"],
        message: Message<'a> = ["message"],
        request: Request<'a> = ["request"],
        timestamp: Val<'a> = ["timestamp"],
        user: User<'a> = ["user"],
        contexts: Contexts<'a> = ["contexts"],
        tags: Tags<'a> = ["tags"],
        kind: Val<'a> = ["type"],
        // The API's.
        entries: List<Entry<'a>> = ["entries"],
        event_id_api: Val<'a> = ["eventID"],
        group_id: Val<'a> = ["groupID"],
        date_created: Val<'a> = ["dateCreated"],
        title: Val<'a> = ["title"],
        event_type: Val<'a> = ["event.type"],
        // The matcher's.
        frames: List<Val<'a>> = ["frames"],
        user_agent: Val<'a> = ["userAgent"],
        issue: Val<'a> = ["issue"],
    }
}

lenient! {
    struct Exception {
        values: List<ExceptionValue<'a>> = ["values"],
    }
}

lenient! {
    struct ExceptionValue {
        kind: Val<'a> = ["type"],
        value: Val<'a> = ["value"],
        stacktrace: Stacktrace<'a> = ["stacktrace"],
        raw_stacktrace: Stacktrace<'a> = ["rawStacktrace", "raw_stacktrace"],
    }
}

lenient! {
    struct Stacktrace {
        frames: List<Frame<'a>> = ["frames"],
    }
}

lenient! {
    struct Frame {
        abs_path: Val<'a> = ["abs_path", "absPath"],
        filename: Val<'a> = ["filename"],
    }
}

lenient! {
    struct LogEntry {
        formatted: Val<'a> = ["formatted"],
        message: Val<'a> = ["message"],
    }
}

lenient! {
    struct Request {
        headers: Headers<'a> = ["headers"],
        url: Val<'a> = ["url"],
    }
}

lenient! {
    struct Contexts {
        browser: BrowserContext<'a> = ["browser"],
    }
}

lenient! {
    struct BrowserContext {
        name: Val<'a> = ["name"],
    }
}

lenient! {
    /// An API entry: `type` says which of the data's fields mean something.
    struct Entry {
        kind: Val<'a> = ["type"],
        data: EntryData<'a> = ["data"],
    }
}

lenient! {
    struct EntryData {
        values: List<ExceptionValue<'a>> = ["values"],
        headers: Headers<'a> = ["headers"],
        formatted: Val<'a> = ["formatted"],
        message: Val<'a> = ["message"],
        url: Val<'a> = ["url"],
    }
}

/// `message`: Sentry's event has a string or an object with `formatted`
/// and `message`; the API and the matcher's shape a string.
#[derive(Debug, Default)]
struct Message<'a> {
    text: Val<'a>,
    formatted: Val<'a>,
    message: Val<'a>,
}

impl<'de> Deserialize<'de> for Message<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Message<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Message<'de>, A::Error> {
                let entry = LogEntry::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(Message {
                    text: Val::Other,
                    formatted: entry.formatted,
                    message: entry.message,
                })
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Str(Cow::Borrowed(v)),
                    ..Message::default()
                })
            }
            fn visit_str<E>(self, v: &str) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Str(Cow::Owned(v.to_owned())),
                    ..Message::default()
                })
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Message<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Message {
                    text: Val::Other,
                    ..Message::default()
                })
            }
            fn visit_i64<E>(self, _: i64) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Other,
                    ..Message::default()
                })
            }
            fn visit_u64<E>(self, _: u64) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Other,
                    ..Message::default()
                })
            }
            fn visit_f64<E>(self, _: f64) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Other,
                    ..Message::default()
                })
            }
            fn visit_bool<E>(self, _: bool) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Other,
                    ..Message::default()
                })
            }
            fn visit_unit<E>(self) -> Result<Message<'de>, E> {
                Ok(Message {
                    text: Val::Null,
                    ..Message::default()
                })
            }
        }
        d.deserialize_any(V)
    }
}

/// The first `User-Agent` header, any case, of headers given as an object or
/// as `[name, value]` pairs.
#[derive(Debug, Default)]
struct Headers<'a> {
    user_agent: Option<Cow<'a, str>>,
}

/// A `[name, value]` pair; `None` for anything else.
#[derive(Default)]
struct Pair<'a>(Option<(Cow<'a, str>, Val<'a>)>);

impl<'de> Deserialize<'de> for Pair<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Pair<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Pair<'de>, A::Error> {
                let name = seq.next_element::<Val<'de>>()?;
                let value = seq.next_element::<Val<'de>>()?;
                let mut extra = false;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    extra = true;
                }
                Ok(Pair(match (name, value, extra) {
                    (Some(Val::Str(name)), Some(value), false) => Some((name, value)),
                    _ => None,
                }))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Pair<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Pair(None))
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
            fn visit_unit<E>(self) -> Result<Pair<'de>, E> {
                Ok(Pair(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Headers<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Headers<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Headers<'de>, A::Error> {
                let mut out = Headers::default();
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value = map.next_value::<Val<'de>>()?;
                    if out.user_agent.is_none() && key.0.eq_ignore_ascii_case("user-agent") {
                        out.user_agent = value.str();
                    }
                }
                Ok(out)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Headers<'de>, A::Error> {
                let mut out = Headers::default();
                while let Some(Pair(pair)) = seq.next_element::<Pair<'de>>()? {
                    if let Some((name, value)) = pair
                        && out.user_agent.is_none()
                        && name.eq_ignore_ascii_case("user-agent")
                    {
                        out.user_agent = value.str();
                    }
                }
                Ok(out)
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
            fn visit_unit<E>(self) -> Result<Headers<'de>, E> {
                Ok(Headers::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// The tags the report reads, from an object, `[key, value]` pairs (the
/// ingest shape) or `{key, value}` objects (the API's).
#[derive(Debug, Default)]
struct Tags<'a> {
    present: bool,
    browser: Option<Cow<'a, str>>,
    browser_name: Option<Cow<'a, str>>,
    url: Option<Cow<'a, str>>,
    user: Option<Cow<'a, str>>,
}

impl<'a> Tags<'a> {
    fn set(&mut self, key: &str, value: Val<'a>) {
        let slot = match key {
            "browser" => &mut self.browser,
            "browser.name" => &mut self.browser_name,
            "url" => &mut self.url,
            "user" => &mut self.user,
            _ => return,
        };
        if slot.is_none() {
            *slot = value.str();
        }
    }
}

lenient! {
    struct TagObject {
        key: Val<'a> = ["key"],
        value: Val<'a> = ["value"],
    }
}

/// One item of a tag list: a pair or a `{key, value}` object.
#[derive(Default)]
struct TagItem<'a>(Option<(Cow<'a, str>, Val<'a>)>);

impl<'de> Deserialize<'de> for TagItem<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TagItem<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<TagItem<'de>, A::Error> {
                let Pair(pair) = Pair::deserialize(de::value::SeqAccessDeserializer::new(seq))?;
                Ok(TagItem(pair))
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<TagItem<'de>, A::Error> {
                let tag = TagObject::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(TagItem(tag.key.str().map(|k| (k, tag.value))))
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
            fn visit_str<E>(self, _: &str) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
            fn visit_i64<E>(self, _: i64) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
            fn visit_u64<E>(self, _: u64) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
            fn visit_f64<E>(self, _: f64) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
            fn visit_bool<E>(self, _: bool) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
            fn visit_unit<E>(self) -> Result<TagItem<'de>, E> {
                Ok(TagItem(None))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> Deserialize<'de> for Tags<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Tags<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Tags<'de>, A::Error> {
                let mut out = Tags {
                    present: true,
                    ..Tags::default()
                };
                while let Some(key) = map.next_key::<Key<'de>>()? {
                    let value = map.next_value::<Val<'de>>()?;
                    out.set(&key.0, value);
                }
                Ok(out)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Tags<'de>, A::Error> {
                let mut out = Tags {
                    present: true,
                    ..Tags::default()
                };
                while let Some(TagItem(item)) = seq.next_element::<TagItem<'de>>()? {
                    if let Some((key, value)) = item {
                        out.set(&key, value);
                    }
                }
                Ok(out)
            }
            fn visit_borrowed_str<E>(self, _: &'de str) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
            fn visit_unit<E>(self) -> Result<Tags<'de>, E> {
                Ok(Tags::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// `user`: Sentry's object (`id`, `email`, `username`, `ip_address`) or the
/// matcher's shape's string.
#[derive(Debug, Default)]
struct User<'a> {
    key: Option<String>,
    /// Neither an object nor a string (the matcher's shape refuses it).
    wrong: bool,
    _life: std::marker::PhantomData<&'a ()>,
}

lenient! {
    struct UserObject {
        id: Val<'a> = ["id"],
        email: Val<'a> = ["email"],
        username: Val<'a> = ["username"],
        ip_address: Val<'a> = ["ip_address"],
    }
}

impl<'de> Deserialize<'de> for User<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let user = |key: Option<String>, wrong: bool| User {
            key,
            wrong,
            _life: std::marker::PhantomData,
        };
        match UserValue::deserialize(d)? {
            UserValue::Object(o) => Ok(user(user_key(o), false)),
            UserValue::Text(s) => Ok(user((!s.is_empty()).then_some(s), false)),
            UserValue::Null => Ok(user(None, false)),
            UserValue::Other => Ok(user(None, true)),
        }
    }
}

enum UserValue<'a> {
    Object(UserObject<'a>),
    Text(String),
    Null,
    Other,
}

impl<'de> Deserialize<'de> for UserValue<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = UserValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<UserValue<'de>, A::Error> {
                Ok(UserValue::Object(UserObject::deserialize(
                    de::value::MapAccessDeserializer::new(map),
                )?))
            }
            fn visit_str<E>(self, v: &str) -> Result<UserValue<'de>, E> {
                Ok(UserValue::Text(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UserValue<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(UserValue::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<UserValue<'de>, E> {
                Ok(UserValue::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<UserValue<'de>, E> {
                Ok(UserValue::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<UserValue<'de>, E> {
                Ok(UserValue::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<UserValue<'de>, E> {
                Ok(UserValue::Other)
            }
            fn visit_unit<E>(self) -> Result<UserValue<'de>, E> {
                Ok(UserValue::Null)
            }
        }
        d.deserialize_any(V)
    }
}

/// A Sentry user's key: the first of its id, email, username and IP
/// address, named by which it is (`id:42`: an id 42 and a username 42 are
/// different users). `{{auto}}`, the SDKs' placeholder for "the IP the
/// request came from", is no address.
fn user_key(o: UserObject<'_>) -> Option<String> {
    if let Some(id) = o.id.id() {
        return Some(format!("id:{id}"));
    }
    for (name, value) in [("email", o.email), ("username", o.username)] {
        if let Some(v) = value.str().filter(|v| !v.is_empty()) {
            return Some(format!("{name}:{v}"));
        }
    }
    o.ip_address
        .str()
        .filter(|ip| !ip.is_empty() && ip != "{{auto}}")
        .map(|ip| format!("ip:{ip}"))
}

/// The event types an error report has; others (`transaction`, …) are not
/// counted.
fn is_error_type(kind: &str) -> bool {
    matches!(kind, "error" | "default")
}

impl<'a> Raw<'a> {
    fn into_read(self) -> Read<'a> {
        if !self.present {
            return Read::Malformed(
                "not an event: expected a JSON object (a Sentry event or the matcher's event)"
                    .into(),
            );
        }
        if self.entries.present || self.event_id_api.is_str() {
            return self.api();
        }
        if self.event_id.is_str() || self.logentry.present || self.exception.values.present {
            return self.sentry_event();
        }
        self.matcher_event()
    }

    /// The thrown exception's texts: (type, value, frames, raw frames).
    fn thrown(values: List<ExceptionValue<'a>>) -> Thrown<'a> {
        let mut thrown = Thrown::default();
        let Some(last) = values.items.into_iter().last() else {
            return thrown;
        };
        thrown.kind = last.kind.str();
        thrown.value = last.value.str();
        thrown.frames = frame_urls(last.stacktrace.frames);
        thrown.raw_frames = frame_urls(last.raw_stacktrace.frames);
        thrown
    }

    fn sentry_event(self) -> Read<'a> {
        if let Some(kind) = self.kind.str()
            && !is_error_type(&kind)
        {
            return Read::Skipped("not an error event (a transaction or another type)");
        }
        let thrown = Raw::thrown(self.exception.values);
        let message = thrown
            .value
            .or_else(|| self.logentry.formatted.str())
            .or_else(|| self.logentry.message.str())
            .or_else(|| self.message.formatted.str())
            .or_else(|| self.message.message.str())
            .or_else(|| self.message.text.str());
        let record = EventRecord {
            exception_type: thrown.kind,
            message,
            frames: thrown.frames,
            user_agent: self.request.headers.user_agent,
            raw_frames: thrown.raw_frames,
            time: self.timestamp.time(),
            issue: None,
            user: self
                .user
                .key
                .or_else(|| self.tags.user.map(Cow::into_owned)),
            browser: self
                .contexts
                .browser
                .name
                .str()
                .or(self.tags.browser_name)
                .or(self.tags.browser),
            url: self.request.url.str().or(self.tags.url),
            id: self.event_id.str(),
            weight: 1,
        };
        Read::Event(Shape::SentryEvent, Box::new(record))
    }

    fn api(self) -> Read<'a> {
        let kind = self.event_type.str().or_else(|| self.kind.str());
        if let Some(kind) = kind
            && !is_error_type(&kind)
        {
            return Read::Skipped("not an error event (a transaction or another type)");
        }
        let mut exception = None;
        let (mut formatted, mut entry_message) = (None, None);
        let (mut user_agent, mut url) = (None, None);
        for entry in self.entries.items {
            match entry.kind.str().as_deref() {
                Some("exception") if exception.is_none() && entry.data.values.present => {
                    exception = Some(entry.data.values);
                }
                Some("message") => {
                    formatted = formatted.or(entry.data.formatted.str());
                    entry_message = entry_message.or(entry.data.message.str());
                }
                Some("request") => {
                    user_agent = user_agent.or(entry.data.headers.user_agent);
                    url = url.or(entry.data.url.str());
                }
                _ => {}
            }
        }
        let had_exception = exception.is_some();
        let thrown = exception.map(Raw::thrown).unwrap_or_default();
        let mut message = thrown.value.or(formatted).or(entry_message);
        if message.is_none() && !had_exception {
            // The list endpoints without `full=true` have no entries: the
            // message, else the title ("Type: value" for an error).
            message = self
                .message
                .text
                .str()
                .filter(|m| !m.is_empty())
                .or_else(|| self.title.str());
        }
        let record = EventRecord {
            exception_type: thrown.kind,
            message,
            frames: thrown.frames,
            user_agent,
            raw_frames: thrown.raw_frames,
            time: self.date_created.time(),
            issue: self.group_id.id(),
            user: self
                .user
                .key
                .or_else(|| self.tags.user.map(Cow::into_owned)),
            browser: self.tags.browser_name.or(self.tags.browser),
            url: url.or(self.tags.url),
            id: self.event_id_api.str(),
            weight: 1,
        };
        Read::Event(Shape::SentryApi, Box::new(record))
    }

    fn matcher_event(self) -> Read<'a> {
        const FIELDS: &str = "type, message, frames, userAgent, timestamp, issue, user";
        if let Some(unknown) = self.unknown_field() {
            return Read::Malformed(format!(
                "not an event: unknown field `{unknown}` (the matcher's event has {FIELDS}; a \
                 Sentry event has event_id, exception or logentry; the API's has entries)"
            ));
        }
        let text = |name: &str, v: Val<'a>| match v {
            Val::Str(s) => Ok(Some(s)),
            Val::Missing | Val::Null => Ok(None),
            _ => Err(Read::Malformed(format!(
                "field `{name}`: expected a string"
            ))),
        };
        let exception_type = match text("type", self.kind) {
            Ok(v) => v,
            Err(e) => return e,
        };
        let message = match self.message.text {
            Val::Str(s) => Some(s),
            Val::Missing | Val::Null => None,
            _ => return Read::Malformed("field `message`: expected a string".into()),
        };
        let user_agent = match text("userAgent", self.user_agent) {
            Ok(v) => v,
            Err(e) => return e,
        };
        let mut frames = Vec::with_capacity(self.frames.items.len());
        for frame in self.frames.items {
            match frame {
                Val::Str(s) => frames.push(s),
                _ => return Read::Malformed("field `frames`: expected a list of strings".into()),
            }
        }
        if self.user.wrong {
            return Read::Malformed("field `user`: expected a string".into());
        }
        let time = match &self.timestamp {
            Val::Missing | Val::Null => None,
            v => match v.time() {
                Some(t) => Some(t),
                None => {
                    return Read::Malformed(
                        "field `timestamp`: expected RFC 3339 text or Unix seconds".into(),
                    );
                }
            },
        };
        if exception_type.is_none()
            && message.is_none()
            && frames.is_empty()
            && user_agent.is_none()
        {
            return Read::Malformed(format!(
                "not an event: none of type, message, frames, userAgent (the matcher's event \
                 has {FIELDS})"
            ));
        }
        let record = EventRecord {
            exception_type,
            message,
            frames,
            user_agent,
            raw_frames: Vec::new(),
            time,
            issue: self.issue.id(),
            user: self.user.key,
            browser: None,
            url: None,
            id: None,
            weight: 1,
        };
        Read::Event(Shape::MatcherEvent, Box::new(record))
    }

    /// The first key the matcher's shape does not have.
    fn unknown_field(&self) -> Option<&str> {
        // Keys the reader knows from Sentry's shapes, which the matcher's
        // shape refuses as it refuses any other.
        let foreign = [
            ("event_id", !matches!(self.event_id, Val::Missing)),
            ("exception", self.exception.present),
            ("logentry", self.logentry.present),
            ("request", self.request.present),
            ("contexts", self.contexts.present),
            ("tags", self.tags.present),
            ("entries", self.entries.present),
            ("eventID", !matches!(self.event_id_api, Val::Missing)),
            ("groupID", !matches!(self.group_id, Val::Missing)),
            ("dateCreated", !matches!(self.date_created, Val::Missing)),
            ("title", !matches!(self.title, Val::Missing)),
            ("event.type", !matches!(self.event_type, Val::Missing)),
        ];
        if let Some((name, _)) = foreign.iter().find(|(_, present)| *present) {
            return Some(name);
        }
        self.unknown.as_deref()
    }
}

#[derive(Debug, Default)]
struct Thrown<'a> {
    kind: Option<Cow<'a, str>>,
    value: Option<Cow<'a, str>>,
    frames: Vec<Cow<'a, str>>,
    raw_frames: Vec<Cow<'a, str>>,
}

/// Each frame's `abs_path` when it is present (not null), else its
/// `filename`; empty ones and ones of the wrong type skipped.
fn frame_urls(frames: List<Frame<'_>>) -> Vec<Cow<'_, str>> {
    let mut urls = Vec::with_capacity(frames.items.len());
    for frame in frames.items {
        let url = match frame.abs_path {
            Val::Missing | Val::Null => frame.filename,
            other => other,
        };
        if let Val::Str(url) = url
            && !url.is_empty()
        {
            urls.push(url);
        }
    }
    urls
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn event(json: &str) -> (Shape, EventRecord<'_>) {
        match record(json.as_bytes()).unwrap() {
            Read::Event(shape, e) => (shape, *e),
            Read::Skipped(why) => panic!("skipped: {why}"),
            Read::Malformed(why) => panic!("malformed: {why}"),
        }
    }

    fn malformed(json: &str) -> String {
        match record(json.as_bytes()) {
            Ok(Read::Malformed(why)) => why,
            Err((why, _)) => why,
            _ => panic!("read: {json}"),
        }
    }

    #[test]
    fn api_events_read_their_entries() {
        let (shape, e) = event(
            r#"{"eventID":"9999","groupID":"1341191803","dateCreated":"2020-06-17T22:26:56.098086Z",
            "user":{"id":"550747","email":"hell@boy.cat"},"tags":[{"key":"browser.name","value":"Chrome"}],
            "entries":[{"type":"exception","data":{"values":[{"type":"ForbiddenError","value":"GET /x 403",
            "stacktrace":{"frames":[{"absPath":"webpack:///a.js","filename":"/a.js"},{"absPath":null,"filename":"b.js"},{"absPath":7,"filename":"c.js"}]},
            "rawStacktrace":{"frames":[{"absPath":"https://cdn.example/app.js"}]}}]}},
            {"type":"request","data":{"headers":[["User-Agent","Mozilla/5.0 X"]],"url":"https://app.example/"}}],
            "title":"ForbiddenError: GET /x 403","message":""}"#,
        );
        assert_eq!(shape, Shape::SentryApi);
        assert_eq!(e.exception_type.as_deref(), Some("ForbiddenError"));
        assert_eq!(e.message.as_deref(), Some("GET /x 403"));
        assert_eq!(e.frames, ["webpack:///a.js", "b.js"]);
        assert_eq!(e.raw_frames, ["https://cdn.example/app.js"]);
        assert_eq!(e.user_agent.as_deref(), Some("Mozilla/5.0 X"));
        assert_eq!(e.issue.as_deref(), Some("1341191803"));
        assert_eq!(e.user.as_deref(), Some("id:550747"));
        assert_eq!(e.browser.as_deref(), Some("Chrome"));
        assert_eq!(e.url.as_deref(), Some("https://app.example/"));
        assert_eq!(e.time, time::parse("2020-06-17T22:26:56.098Z"));
    }

    #[test]
    fn api_events_without_entries_read_the_title() {
        let (_, e) = event(
            r#"{"eventID":"9fac","title":"This is an example Python exception","message":"","groupID":"1889724436","event.type":"error","user":null}"#,
        );
        assert_eq!(
            e.message.as_deref(),
            Some("This is an example Python exception")
        );
        assert_eq!(e.user, None);
    }

    #[test]
    fn transactions_are_not_counted() {
        for json in [
            r#"{"event_id":"a","type":"transaction"}"#,
            r#"{"eventID":"a","event.type":"transaction","title":"GET /"}"#,
        ] {
            assert!(
                matches!(record(json.as_bytes()), Ok(Read::Skipped(_))),
                "{json}"
            );
        }
    }

    #[test]
    fn the_matchers_shape_is_read_strictly() {
        let (shape, e) = event(
            r#"{"message":"Script error.","frames":["a.js"],"userAgent":"UA","timestamp":1592432816,"issue":7,"user":"u1"}"#,
        );
        assert_eq!(shape, Shape::MatcherEvent);
        assert_eq!(e.issue.as_deref(), Some("7"));
        assert_eq!(e.user.as_deref(), Some("u1"));
        assert!(malformed(r#"{"mesage":"x"}"#).contains("unknown field `mesage`"));
        assert!(malformed(r#"{"message":3}"#).contains("`message`: expected a string"));
        assert!(malformed(r#"{"frames":["a",1]}"#).contains("`frames`"));
        assert!(malformed("[1,2]").contains("expected a JSON object"));
        assert!(malformed(r#"{"message":"x""#).starts_with("not JSON"));
        assert!(malformed("{}").contains("none of type"));
    }
}

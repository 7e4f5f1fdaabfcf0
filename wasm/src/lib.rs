//! # noise-filter-wasm
//!
//! The wasm-bindgen binding of `noise-filter-core`, the engine of the npm
//! package `noise-filter` (`npm/`). **It only converts types**: JavaScript
//! strings and bytes in, core calls, JavaScript values out. Every decision
//! (routing, auth, rate limit, parameters, shapes, headers, matching) stays
//! in the core, so the package answers with the same bytes as the Spin
//! component and the host.
//!
//! Two builds, each wrapped by hand-written JavaScript in `npm/src/`: with
//! the default feature `handler` the main entry's wasm (`noise-filter`),
//! without it the matcher-only wasm (`noise-filter/matcher`), which holds
//! [`JsMatcher`] and nothing of the endpoint (the core is then built without
//! its `endpoint` feature). The exports:
//!
//! - [`Exchange`] (`handler`): the core's step machine ([`noise_filter_core::handle`]).
//!   The JavaScript handler asks its async stores what each step names and
//!   resumes the step with the answer, until the step is a response.
//! - Store helpers (`handler`: [`new_key`], [`add_custom_patterns`], …): make the
//!   records the core reads, with the core's own types and validation.
//! - The noise report (`handler`: [`JsReportPlan`], [`JsReport`]): the
//!   core's `report` for `npx noise-filter report`, fed the export's bytes
//!   in chunks.
//! - [`JsMatcher`]: the core's [`Matcher`], the same exports in both wasms.
//!   A verdict crosses the boundary as a flat `Uint32Array` (pattern index,
//!   [`TextCode`]) so that classifying an event costs a few strings in and a
//!   few integers out. Pattern lists cross as JavaScript describes the
//!   user's values ([`ValueKind`]s, strings, numbers); the core reads them
//!   ([`noise_filter_core::pattern_list`]) and words every refusal.
//! - With `js-regex` (the matcher-only wasm): the core's regexes run by the
//!   JavaScript engine's `RegExp` (`src/regexp.rs`), given to the core when
//!   the module starts, so the wasm holds no regex engine.
//! - The wire's codes as wasm-bindgen enums ([`TextCode`], [`TextLength`],
//!   [`ValueKind`], [`Classified`]): JavaScript reads them from the glue, so
//!   no number of this file is copied into `npm/src/matching.js`.

use noise_filter_core::pattern_list::{self, Json, Value};
use noise_filter_core::{Exclusions, Field, FirstParty, Matcher, MatcherPattern, Verdict};
use wasm_bindgen::prelude::*;

#[cfg(feature = "handler")]
mod handler;
#[cfg(feature = "js-regex")]
mod regexp;
#[cfg(feature = "handler")]
pub use handler::*;
#[cfg(feature = "handler")]
mod report;
#[cfg(feature = "handler")]
pub use report::*;

fn error(message: impl std::fmt::Display) -> JsError {
    JsError::new(&message.to_string())
}

/// The module's memory, where [`JsMatcher::input_buffer`] lives (not
/// `memory`: the module already exports that name).
#[wasm_bindgen(js_name = wasmMemory)]
pub fn wasm_memory() -> JsValue {
    wasm_bindgen::memory()
}

/// The core's matcher.
///
/// Classifying crosses the boundary once with one string and four lengths,
/// and returns the number of matches; the matches themselves are fetched
/// with [`JsMatcher::matches`] only when there are some.
#[wasm_bindgen(js_name = Matcher)]
#[derive(Debug)]
pub struct JsMatcher {
    inner: Matcher,
    /// The last verdict, flat: pattern index, text code.
    last: Vec<u32>,
    /// Where JavaScript writes an event's texts (`TextEncoder.encodeInto`)
    /// for [`JsMatcher::classify_input`].
    input: Vec<u8>,
}

/// Which text of the event a match in a verdict is of ([`JsMatcher::matches`]):
/// the message, the user agent, or frame `i` as `Frame + i`.
#[wasm_bindgen]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextCode {
    /// The message (`Type: value`).
    Message = 0,
    /// The user agent.
    UserAgent = 1,
    /// The first frame; frame `i` is `Frame + i`.
    Frame = 2,
}

/// The length JavaScript gives [`JsMatcher::classify`] for a text the event
/// does not have (an empty text is there, of length 0).
#[wasm_bindgen]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextLength {
    /// No such text.
    Absent = -1,
}

/// What [`JsMatcher::classify`] and its siblings answer besides a count.
#[wasm_bindgen]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)] // u32::MAX: no count of matches can be it
pub enum Classified {
    /// The texts must cross apart (a frame holds a `\n`, or the buffer was
    /// not written by `encodeInto`): call `classifyFrames`.
    TextsApart = 4_294_967_295,
}

#[wasm_bindgen(js_class = Matcher)]
impl JsMatcher {
    /// The built-in catalog at or above `min_confidence`; `undefined`: the
    /// core's default threshold, so the matcher holds the built-in patterns
    /// the endpoint lists by default ([`Matcher::builtin_default`]).
    pub fn builtin(min_confidence: Option<f64>) -> JsMatcher {
        JsMatcher::wrap(min_confidence.map_or_else(Matcher::builtin_default, Matcher::builtin))
    }

    /// Classifies an event given as its texts concatenated: the exception
    /// type, the message, the `frame_count` frame URLs joined by `\n`, the
    /// user agent. Each length is in UTF-16 code units (JavaScript's
    /// `length`), [`TextLength::Absent`] for an absent text; the user agent
    /// is the rest. Returns
    /// the number of matches, or [`Classified::TextsApart`] when the frames
    /// do not split into `frame_count` (one holds a `\n`: use
    /// `classifyFrames`).
    pub fn classify(
        &mut self,
        texts: &str,
        type_len: i32,
        message_len: i32,
        frames_len: i32,
        frame_count: u32,
        has_user_agent: bool,
    ) -> u32 {
        let Some(event) = EventTexts::split(
            texts,
            [type_len, message_len, frames_len],
            frame_count,
            has_user_agent,
        ) else {
            return Classified::TextsApart as u32;
        };
        self.verdict(
            event.exception_type,
            event.message,
            event.frames().map(str::to_owned).collect(),
            event.user_agent,
        )
    }

    /// The address in wasm memory of a buffer of at least `capacity` bytes
    /// for [`JsMatcher::classify_input`]. It moves only when this is called
    /// with a larger capacity.
    #[wasm_bindgen(js_name = inputBuffer)]
    pub fn input_buffer(&mut self, capacity: u32) -> u32 {
        let capacity = capacity as usize;
        if self.input.len() < capacity {
            self.input.resize(capacity, 0);
        }
        self.input.as_ptr() as u32
    }

    /// [`JsMatcher::classify`] of the first `len` bytes JavaScript wrote
    /// into the input buffer: the texts cross without a copy by the glue.
    #[wasm_bindgen(js_name = classifyInput)]
    pub fn classify_input(
        &mut self,
        len: u32,
        type_len: i32,
        message_len: i32,
        frames_len: i32,
        frame_count: u32,
        has_user_agent: bool,
    ) -> u32 {
        let input = std::mem::take(&mut self.input);
        let found = match input.get(..len as usize).map(std::str::from_utf8) {
            Some(Ok(texts)) => self.classify(
                texts,
                type_len,
                message_len,
                frames_len,
                frame_count,
                has_user_agent,
            ),
            // Not written by encodeInto: let the caller pass the texts apart.
            _ => Classified::TextsApart as u32,
        };
        self.input = input;
        found
    }

    /// Whether the event written into the input buffer (as for
    /// [`JsMatcher::classify_input`]) is noise: 1 or 0, stopping at the
    /// first match and keeping no verdict; [`Classified::TextsApart`] when
    /// the texts must cross apart.
    #[wasm_bindgen(js_name = isNoiseInput)]
    pub fn is_noise_input(
        &self,
        len: u32,
        type_len: i32,
        message_len: i32,
        frames_len: i32,
        frame_count: u32,
        has_user_agent: bool,
    ) -> u32 {
        let Some(Ok(texts)) = self.input.get(..len as usize).map(std::str::from_utf8) else {
            return Classified::TextsApart as u32;
        };
        let Some(event) = EventTexts::split(
            texts,
            [type_len, message_len, frames_len],
            frame_count,
            has_user_agent,
        ) else {
            return Classified::TextsApart as u32;
        };
        u32::from(self.inner.is_noise_texts(
            event.exception_type,
            event.message,
            event.frames(),
            event.user_agent,
        ))
    }

    /// [`JsMatcher::classify`] with the texts apart (for frame URLs that
    /// contain `\n`).
    #[wasm_bindgen(js_name = classifyFrames)]
    pub fn classify_frames(
        &mut self,
        exception_type: Option<String>,
        message: Option<String>,
        frames: Vec<String>,
        user_agent: Option<String>,
    ) -> u32 {
        let event = noise_filter_core::Event {
            exception_type,
            message,
            frames,
            user_agent,
        };
        self.last = encode(&self.inner.classify(&event));
        (self.last.len() / 2) as u32
    }

    /// The matches of the last classification, flat: pattern index,
    /// [`TextCode`] (frame `i`: `Frame + i`), in the core's order.
    pub fn matches(&self) -> Vec<u32> {
        self.last.clone()
    }
}

/// Constructors and the pattern listing. Pattern lists cross as
/// JavaScript describes the user's values (`describe` in `npm/src/matching.js`:
/// each value's kind, its strings and numbers apart); the core reads them
/// ([`pattern_list`]), with its own refusals, then validates and compiles.
#[wasm_bindgen(js_class = Matcher)]
impl JsMatcher {
    /// The patterns of a Variant A or B response body, as JavaScript parsed
    /// and described it ([`ValueKind::NotJson`] and the parser's message
    /// when it is not JSON).
    #[wasm_bindgen(js_name = fromResponse)]
    pub fn from_response(
        kinds: &[u8],
        texts: Vec<String>,
        numbers: &[f64],
    ) -> Result<JsMatcher, JsError> {
        let mut wire = Wire::new(kinds, texts, numbers);
        if kinds.first() == Some(&(ValueKind::NotJson as u8)) {
            let message = wire.texts.next().unwrap_or_default();
            return Err(error(pattern_list::not_json(message)));
        }
        let body = wire.body();
        JsMatcher::compile(pattern_list::read_response(&&body).map_err(error)?)
    }

    /// Patterns given as `[{id, pattern, type?, category?, confidence?}]`
    /// (any iterable), as JavaScript described them.
    #[wasm_bindgen(js_name = fromPatterns)]
    pub fn from_patterns(
        kinds: &[u8],
        texts: Vec<String>,
        numbers: &[f64],
    ) -> Result<JsMatcher, JsError> {
        let list = Wire::new(kinds, texts, numbers).list();
        JsMatcher::compile(pattern_list::read_patterns(&&list).map_err(error)?)
    }

    /// A new matcher with this one's patterns followed by `patterns`.
    #[wasm_bindgen(js_name = withPatterns)]
    pub fn with_patterns(
        &self,
        kinds: &[u8],
        texts: Vec<String>,
        numbers: &[f64],
    ) -> Result<JsMatcher, JsError> {
        let list = Wire::new(kinds, texts, numbers).list();
        let added = pattern_list::read_patterns(&&list).map_err(error)?;
        Ok(JsMatcher::wrap(
            self.inner.with_patterns(added).map_err(error)?,
        ))
    }

    /// The patterns' ids, in order.
    pub fn ids(&self) -> Vec<String> {
        self.column(|p| p.id.clone())
    }

    /// The patterns' texts, in order.
    pub fn texts(&self) -> Vec<String> {
        self.column(|p| p.pattern.clone())
    }

    /// The patterns' kinds, in order, as Variant A's `type` spells them
    /// (`string`, `regex`).
    pub fn kinds(&self) -> Vec<String> {
        self.column(|p| p.kind.name().to_owned())
    }

    /// The patterns' categories, in order.
    pub fn categories(&self) -> Vec<String> {
        self.column(|p| p.category.clone())
    }

    /// The patterns' confidences, in order.
    pub fn confidences(&self) -> Vec<f64> {
        self.column(|p| p.confidence)
    }

    /// The patterns' tags, in order: each pattern's joined by `,` (empty
    /// for none; no tag holds a comma).
    pub fn tags(&self) -> Vec<String> {
        self.inner
            .tags()
            .iter()
            .map(|t| {
                let mut joined = String::new();
                for name in t.names() {
                    if !joined.is_empty() {
                        joined.push(',');
                    }
                    joined.push_str(name);
                }
                joined
            })
            .collect()
    }
}

/// A matcher without the patterns an `exclude` option names: JavaScript
/// gives its lists, the core reads them ([`Exclusions`]) and words every
/// refusal. (Lists rather than an exported exclusions class: the class's
/// glue cost the page more than the lists' conversion.)
#[wasm_bindgen(js_class = Matcher)]
impl JsMatcher {
    /// [`JsMatcher::builtin`] without the excluded patterns
    /// ([`Matcher::builtin_excluding`]); `undefined`: the core's default threshold.
    #[wasm_bindgen(js_name = builtinExcluding)]
    pub fn builtin_excluding(
        min_confidence: Option<f64>,
        ids: Vec<String>,
        categories: Vec<String>,
        tags: Vec<String>,
    ) -> Result<JsMatcher, JsError> {
        let exclusions = exclusions(ids, categories, tags)?;
        let min = min_confidence.unwrap_or(noise_filter_core::DEFAULT_MIN_CONFIDENCE);
        Ok(JsMatcher::wrap(Matcher::builtin_excluding(
            min,
            &exclusions,
        )))
    }

    /// This matcher without the excluded patterns ([`Matcher::excluding`]).
    pub fn excluding(
        &self,
        ids: Vec<String>,
        categories: Vec<String>,
        tags: Vec<String>,
    ) -> Result<JsMatcher, JsError> {
        let exclusions = exclusions(ids, categories, tags)?;
        Ok(JsMatcher::wrap(self.inner.excluding(&exclusions)))
    }
}

/// The "not our code" rule of a `firstParty` option: JavaScript gives its
/// lists, the core reads them ([`FirstParty`]) and words every refusal.
#[wasm_bindgen(js_class = Matcher)]
impl JsMatcher {
    /// Gives this matcher the first-party rule, in place
    /// ([`Matcher::set_first_party`]). JavaScript calls it on a matcher it
    /// has just built (a copy is `excluding` of nothing): cloning a matcher
    /// here would cost the page `Clone`'s code.
    #[wasm_bindgen(js_name = setFirstParty)]
    pub fn set_first_party(
        &mut self,
        origins: Vec<String>,
        paths: Vec<String>,
    ) -> Result<(), JsError> {
        let rule = FirstParty::new(origins, paths).map_err(error)?;
        self.inner.set_first_party(rule);
        Ok(())
    }

    /// The rule's match as a verdict names it: id and category (a match
    /// whose pattern index is one past the last is the rule's).
    #[wasm_bindgen(js_name = firstPartyRule)]
    pub fn first_party_rule() -> Vec<String> {
        vec![
            noise_filter_core::FIRST_PARTY_RULE_ID.to_owned(),
            noise_filter_core::FIRST_PARTY_CATEGORY.to_owned(),
        ]
    }

    /// The rule's match's confidence.
    #[wasm_bindgen(js_name = firstPartyConfidence)]
    pub fn first_party_confidence() -> f64 {
        noise_filter_core::FIRST_PARTY_CONFIDENCE
    }
}

/// The core's reading of an `exclude` option's lists.
fn exclusions(
    ids: Vec<String>,
    categories: Vec<String>,
    tags: Vec<String>,
) -> Result<Exclusions, JsError> {
    Exclusions::default()
        .with_ids(ids)
        .and_then(|e| e.with_categories(categories))
        .and_then(|e| e.with_tags(tags))
        .map_err(error)
}

/// Kinds of value, as `describe` in `npm/src/matching.js` writes them (one
/// byte each, in reading order).
#[wasm_bindgen]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    /// `undefined`: the field is absent.
    Absent = 0,
    /// `null`.
    Null = 1,
    /// A boolean.
    Bool = 2,
    /// A number (in the numbers).
    Number = 3,
    /// A string (in the texts).
    String = 4,
    /// An array or another iterable: its items follow.
    List = 5,
    /// Any other object: its fields follow (a list item's, or a body's
    /// `patterns`).
    Object = 6,
    /// First and only kind of a response body that is not JSON (the text:
    /// why).
    NotJson = 7,
    /// Anything else (a symbol, a bigint).
    Other = 8,
}

impl ValueKind {
    fn of(byte: u8) -> ValueKind {
        [
            ValueKind::Absent,
            ValueKind::Null,
            ValueKind::Bool,
            ValueKind::Number,
            ValueKind::String,
            ValueKind::List,
            ValueKind::Object,
            ValueKind::NotJson,
        ]
        .into_iter()
        .find(|k| *k as u8 == byte)
        .unwrap_or(ValueKind::Other)
    }
}

/// The fields JavaScript describes of each object in a list, in this order.
const FIELDS: &[&str] = &["id", "pattern", "type", "category", "confidence"];

/// A value as JavaScript described it; an object has the fields `names`.
struct Node {
    kind: ValueKind,
    text: String,
    number: f64,
    /// A list's items, or an object's fields.
    items: Vec<Node>,
    names: &'static [&'static str],
}

static ABSENT_NODE: Node = Node::leaf(ValueKind::Absent);

impl Node {
    const fn leaf(kind: ValueKind) -> Node {
        Node {
            kind,
            text: String::new(),
            number: 0.0,
            items: Vec::new(),
            names: &[],
        }
    }
}

impl<'a> Json for &'a Node {
    fn value(&self) -> Value<&'a Node> {
        match self.kind {
            ValueKind::Absent => Value::Absent,
            ValueKind::Null => Value::Null,
            ValueKind::Bool => Value::Bool,
            ValueKind::Number => Value::Number(self.number),
            ValueKind::String => Value::String(self.text.clone()),
            ValueKind::List => Value::List(self.items.iter().collect()),
            ValueKind::Object => Value::Object,
            ValueKind::NotJson | ValueKind::Other => Value::Other,
        }
    }

    fn field(&self, name: &str) -> &'a Node {
        let at = self.names.iter().position(|n| *n == name);
        at.and_then(|i| self.items.get(i)).unwrap_or(&ABSENT_NODE)
    }
}

/// Reads JavaScript's description back into [`Node`]s, in its order.
struct Wire<'a> {
    kinds: std::slice::Iter<'a, u8>,
    texts: std::vec::IntoIter<String>,
    numbers: std::slice::Iter<'a, f64>,
}

impl<'a> Wire<'a> {
    fn new(kinds: &'a [u8], texts: Vec<String>, numbers: &'a [f64]) -> Wire<'a> {
        Wire {
            kinds: kinds.iter(),
            texts: texts.into_iter(),
            numbers: numbers.iter(),
        }
    }

    /// One value, without its items or fields.
    fn node(&mut self) -> Node {
        let kind = self
            .kinds
            .next()
            .map_or(ValueKind::Absent, |&k| ValueKind::of(k));
        let mut node = Node::leaf(kind);
        match node.kind {
            ValueKind::String => node.text = self.texts.next().unwrap_or_default(),
            ValueKind::Number => {
                node.number = self.numbers.next().copied().unwrap_or_default();
            }
            _ => {}
        }
        node
    }

    /// A pattern list: the list, then each item and, of an object, its
    /// [`FIELDS`]; the list is last, so its items are the rest.
    fn list(&mut self) -> Node {
        let mut list = self.node();
        while list.kind == ValueKind::List && self.kinds.len() > 0 {
            let mut item = self.node();
            if item.kind == ValueKind::Object {
                item.items = FIELDS.iter().map(|_| self.node()).collect();
                item.names = FIELDS;
            }
            list.items.push(item);
        }
        list
    }

    /// A response body: the body, then (of an object) its `patterns` list.
    fn body(&mut self) -> Node {
        let mut body = self.node();
        if body.kind == ValueKind::Object {
            body.items = vec![self.list()];
            body.names = &["patterns"];
        }
        body
    }
}

impl JsMatcher {
    fn column<T>(&self, field: impl Fn(&MatcherPattern) -> T) -> Vec<T> {
        self.inner.patterns().iter().map(field).collect()
    }

    fn compile(patterns: impl IntoIterator<Item = MatcherPattern>) -> Result<JsMatcher, JsError> {
        Ok(JsMatcher::wrap(Matcher::new(patterns).map_err(error)?))
    }

    fn wrap(inner: Matcher) -> JsMatcher {
        JsMatcher {
            inner,
            last: Vec::new(),
            input: Vec::new(),
        }
    }

    fn verdict(
        &mut self,
        exception_type: Option<&str>,
        message: Option<&str>,
        frames: Vec<String>,
        user_agent: Option<&str>,
    ) -> u32 {
        let event = noise_filter_core::Event {
            exception_type: exception_type.map(str::to_owned),
            message: message.map(str::to_owned),
            frames,
            user_agent: user_agent.map(str::to_owned),
        };
        self.last = encode(&self.inner.classify(&event));
        (self.last.len() / 2) as u32
    }
}

/// An event's texts as JavaScript concatenated them (see
/// [`JsMatcher::classify`]), borrowed from the buffer.
struct EventTexts<'a> {
    exception_type: Option<&'a str>,
    message: Option<&'a str>,
    /// The frame URLs joined by `\n`.
    frames: Option<&'a str>,
    user_agent: Option<&'a str>,
}

impl<'a> EventTexts<'a> {
    /// Splits `texts` by the UTF-16 `lengths` of type, message and frames;
    /// `None` when the frames do not split into `frame_count` (one holds a
    /// `\n`: the caller passes them apart).
    fn split(
        texts: &'a str,
        lengths: [i32; 3],
        frame_count: u32,
        has_user_agent: bool,
    ) -> Option<EventTexts<'a>> {
        let [exception_type, message, frames, rest] = split_utf16(texts, lengths);
        let count = frames.map_or(0, |f| f.bytes().filter(|&b| b == b'\n').count() + 1);
        (count == frame_count as usize).then_some(EventTexts {
            exception_type,
            message,
            frames,
            user_agent: rest.filter(|_| has_user_agent),
        })
    }

    /// The frame URLs, in order.
    fn frames(&self) -> impl Iterator<Item = &'a str> + use<'a> {
        self.frames.into_iter().flat_map(|f| f.split('\n'))
    }
}

/// Cuts `text` into the texts of `lengths` (UTF-16 code units;
/// [`TextLength::Absent`], or any negative: absent, taking nothing) and the
/// rest.
fn split_utf16(text: &str, lengths: [i32; 3]) -> [Option<&str>; 4] {
    let ascii = text.is_ascii();
    let mut out = [None; 4];
    let mut at = 0;
    for (slot, &length) in out.iter_mut().zip(&lengths) {
        let Ok(units) = usize::try_from(length) else {
            continue;
        };
        let end = if ascii {
            (at + units).min(text.len())
        } else {
            let mut counted = 0;
            let mut end = at;
            for c in text[at..].chars() {
                if counted >= units {
                    break;
                }
                counted += c.len_utf16();
                end += c.len_utf8();
            }
            end
        };
        *slot = Some(&text[at..end]);
        at = end;
    }
    out[3] = Some(&text[at..]);
    out
}

/// A verdict as `[pattern index, text code, …]`.
fn encode(verdict: &Verdict<'_>) -> Vec<u32> {
    let code = |field| match field {
        Field::Message => TextCode::Message as u32,
        Field::UserAgent => TextCode::UserAgent as u32,
        Field::Frame(i) => TextCode::Frame as u32 + i as u32,
    };
    verdict
        .matches
        .iter()
        .flat_map(|m| [m.index as u32, code(m.field)])
        .collect()
}

//! # noise-filter-wasm
//!
//! The wasm-bindgen binding of `noise-filter-core`, the engine of the npm
//! package `noise-filter` (`npm/`). **It only converts types**: JavaScript
//! strings and bytes in, core calls, JavaScript values out. Every decision
//! (routing, auth, rate limit, parameters, shapes, headers, matching) stays
//! in the core, so the package answers with the same bytes as the Spin
//! component and the host.
//!
//! Three groups of exports, each wrapped by hand-written JavaScript in
//! `npm/src/`:
//!
//! - [`Exchange`]: the core's step machine ([`noise_filter_core::handle`]).
//!   The JavaScript handler asks its async stores what each step names and
//!   resumes the step with the answer, until the step is a response.
//! - Store helpers ([`new_key`], [`add_custom_patterns`], …): make the
//!   records the core reads, with the core's own types and validation.
//! - [`JsMatcher`]: the core's [`Matcher`]. A verdict crosses the boundary as
//!   a flat `Uint32Array` (pattern index, text code) so that classifying an
//!   event costs a few strings in and a few integers out.

use noise_filter_core::{
    AccountId, ApiKey, CustomPatterns, Field, KeyRecord, Matcher, MatcherPattern, NewPattern,
    Request, Response, Step, StoreError, StoreLabel, UnixMillis, Verdict, auth::KeyHash, handle,
    store,
};
use wasm_bindgen::prelude::*;

/// The `createHandler` options naming each store, as [`Exchange::store`]
/// reports them.
const KEYS: &str = "keys";
const CUSTOM_PATTERNS: &str = "customPatterns";
const RATE_LIMIT_STORE: &str = "rateLimitStore";

/// One request in flight: the pending [`Step`] of the core.
#[wasm_bindgen]
#[derive(Debug)]
pub struct Exchange {
    step: Option<Step>,
}

#[wasm_bindgen]
impl Exchange {
    /// Starts handling a request received at `now` (Unix milliseconds).
    /// `headers` is flat (`name, value, name, value, …`); each value is a
    /// fetch `ByteString` (one character per byte) and goes to the core as
    /// those bytes.
    #[wasm_bindgen(constructor)]
    pub fn new(method: &str, target: &str, headers: Vec<String>, now: f64) -> Exchange {
        let values: Vec<Vec<u8>> = headers
            .iter()
            .skip(1)
            .step_by(2)
            .map(|v| byte_string(v))
            .collect();
        let pairs: Vec<(&str, &[u8])> = headers
            .iter()
            .step_by(2)
            .zip(&values)
            .map(|(name, value)| (name.as_str(), value.as_slice()))
            .collect();
        let request = Request {
            method,
            target,
            headers: &pairs,
        };
        Exchange {
            step: Some(handle(&request, millis(now))),
        }
    }

    /// What the shell does next: `"get"`, `"increment"`, `"delete"` or
    /// `"respond"`.
    #[wasm_bindgen(getter)]
    pub fn action(&self) -> String {
        match &self.step {
            Some(Step::Get(_)) => "get",
            Some(Step::Increment(_)) => "increment",
            Some(Step::Delete(_)) => "delete",
            Some(Step::Respond(_)) | None => "respond",
        }
        .into()
    }

    /// The `createHandler` option whose store holds [`Exchange::key`]:
    /// `"keys"` (key records), `"customPatterns"` (an account's patterns) or
    /// `"rateLimitStore"` (counters).
    #[wasm_bindgen(getter)]
    pub fn store(&self) -> String {
        let (label, key) = match &self.step {
            Some(Step::Get(s)) => (s.store, s.key.as_str()),
            Some(Step::Increment(s)) => (s.store, s.key.as_str()),
            Some(Step::Delete(s)) => (s.store, s.key.as_str()),
            Some(Step::Respond(_)) | None => return String::new(),
        };
        match label {
            StoreLabel::Rate => RATE_LIMIT_STORE,
            StoreLabel::Default if key.starts_with(store::ACCOUNT_PREFIX) => CUSTOM_PATTERNS,
            StoreLabel::Default => KEYS,
        }
        .into()
    }

    /// The store key the pending step reads, adds to or deletes.
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> String {
        match &self.step {
            Some(Step::Get(s)) => s.key.clone(),
            Some(Step::Increment(s)) => s.key.clone(),
            Some(Step::Delete(s)) => s.key.clone(),
            Some(Step::Respond(_)) | None => String::new(),
        }
    }

    /// What an `"increment"` adds (1 to count, −1 to refund).
    #[wasm_bindgen(getter)]
    pub fn delta(&self) -> f64 {
        match &self.step {
            Some(Step::Increment(s)) => s.delta as f64,
            _ => 0.0,
        }
    }

    /// Resumes a `"get"` with the value read (`undefined`: absent).
    #[wasm_bindgen(js_name = resumeGet)]
    pub fn resume_get(&mut self, value: Option<Vec<u8>>) -> Result<(), JsError> {
        let next = match self.step.take() {
            Some(Step::Get(get)) => get.resume(Ok(value)),
            other => return self.wrong_step(other, "get"),
        };
        self.step = Some(next);
        Ok(())
    }

    /// Resumes an `"increment"` with the counter's new value.
    #[wasm_bindgen(js_name = resumeIncrement)]
    pub fn resume_increment(&mut self, value: f64) -> Result<(), JsError> {
        let next = match self.step.take() {
            Some(Step::Increment(inc)) => inc.resume(Ok(value as i64)),
            other => return self.wrong_step(other, "increment"),
        };
        self.step = Some(next);
        Ok(())
    }

    /// Resumes a `"delete"`.
    #[wasm_bindgen(js_name = resumeDelete)]
    pub fn resume_delete(&mut self) -> Result<(), JsError> {
        let next = match self.step.take() {
            Some(Step::Delete(del)) => del.resume(Ok(())),
            other => return self.wrong_step(other, "delete"),
        };
        self.step = Some(next);
        Ok(())
    }

    /// Resumes the pending step with a store failure (the call threw).
    pub fn fail(&mut self) -> Result<(), JsError> {
        self.step = Some(match self.step.take() {
            Some(Step::Get(get)) => get.resume(Err(StoreError)),
            Some(Step::Increment(inc)) => inc.resume(Err(StoreError)),
            Some(Step::Delete(del)) => del.resume(Err(StoreError)),
            other => return self.wrong_step(other, "store"),
        });
        Ok(())
    }

    /// The response's status (once `action` is `"respond"`).
    #[wasm_bindgen(getter)]
    pub fn status(&self) -> u16 {
        self.response().map_or(0, |r| r.status)
    }

    /// The response's headers, flat (`name, value, …`), lowercase names in
    /// the core's order.
    #[wasm_bindgen(getter)]
    pub fn headers(&self) -> Vec<String> {
        self.response().map_or_else(Vec::new, |r| {
            r.headers
                .iter()
                .flat_map(|(n, v)| [(*n).to_owned(), v.clone()])
                .collect()
        })
    }

    /// The response's body (empty for HEAD, 204 and 304).
    #[wasm_bindgen(getter)]
    pub fn body(&self) -> Vec<u8> {
        self.response().map_or_else(Vec::new, |r| r.body.clone())
    }
}

impl Exchange {
    fn response(&self) -> Option<&Response> {
        match &self.step {
            Some(Step::Respond(response)) => Some(response),
            _ => None,
        }
    }

    fn wrong_step(&mut self, step: Option<Step>, resumed: &str) -> Result<(), JsError> {
        self.step = step;
        Err(JsError::new(&format!(
            "cannot resume a {resumed} step: the pending step is {}",
            self.action()
        )))
    }
}

/// A fetch `ByteString` as bytes: each character below U+0100 is one byte;
/// anything else (which `Headers` never yields) is UTF-8.
fn byte_string(value: &str) -> Vec<u8> {
    if value.chars().all(|c| u32::from(c) < 0x100) {
        value.chars().map(|c| u32::from(c) as u8).collect()
    } else {
        value.as_bytes().to_vec()
    }
}

/// Unix milliseconds from a JavaScript number (negative or NaN: 0).
fn millis(now: f64) -> UnixMillis {
    UnixMillis(now as u64)
}

fn error(message: impl std::fmt::Display) -> JsError {
    JsError::new(&message.to_string())
}

/// Makes a new API key from 24 random bytes the caller took from a CSPRNG.
/// Returns `[key, storeKey, record]`: the key to show once, and the record
/// (JSON) to store under `storeKey` in the `keys` store.
#[wasm_bindgen(js_name = newKey)]
pub fn new_key(
    random: &[u8],
    account: &str,
    label: &str,
    now: f64,
) -> Result<Vec<String>, JsError> {
    let random =
        <[u8; noise_filter_core::auth::KEY_RANDOM_BYTES]>::try_from(random).map_err(|_| {
            error(format!(
                "a key needs exactly {} random bytes, got {}",
                noise_filter_core::auth::KEY_RANDOM_BYTES,
                random.len()
            ))
        })?;
    let account = AccountId::new(account).map_err(error)?;
    let key = ApiKey::from_random(random);
    let record = KeyRecord::new(account, label, millis(now)).to_json();
    Ok(vec![
        key.expose().to_owned(),
        store::key_record_key(&key.hash()),
        utf8(record),
    ])
}

/// The `keys` store key of the record of `key` (to revoke it).
#[wasm_bindgen(js_name = keyStoreKey)]
pub fn key_store_key(key: &str) -> String {
    store::key_record_key(&KeyHash::of(key))
}

/// A stored key record, revoked at `now`.
#[wasm_bindgen(js_name = revokeKeyRecord)]
pub fn revoke_key_record(record: &str, now: f64) -> Result<String, JsError> {
    let mut record =
        KeyRecord::from_json(record.as_bytes()).ok_or_else(|| error("not a key record"))?;
    record.revoke(millis(now));
    Ok(utf8(record.to_json()))
}

/// The account a stored key record belongs to.
#[wasm_bindgen(js_name = keyRecordAccount)]
pub fn key_record_account(record: &str) -> Result<String, JsError> {
    let record =
        KeyRecord::from_json(record.as_bytes()).ok_or_else(|| error("not a key record"))?;
    Ok(record.account.as_str().to_owned())
}

/// The `customPatterns` store key of an account's patterns.
#[wasm_bindgen(js_name = customPatternsKey)]
pub fn custom_patterns_key(account: &str) -> Result<String, JsError> {
    Ok(store::custom_patterns_key(
        &AccountId::new(account).map_err(error)?,
    ))
}

/// Adds `patterns` (an array of `{pattern, type?, id?, category?,
/// confidence?, source?}`) to an account's stored document (`undefined`:
/// none yet), all or none. Returns `[document, id, id, …]`; throws the
/// core's explanation when a pattern is refused.
#[wasm_bindgen(js_name = addCustomPatterns)]
pub fn add_custom_patterns(
    document: Option<String>,
    patterns: JsValue,
    now: f64,
) -> Result<Vec<String>, JsError> {
    let news: Vec<NewPattern> = serde_wasm_bindgen::from_value(patterns)
        .map_err(|e| error(format!("invalid pattern: {e}")))?;
    let mut doc = read_patterns(document.as_deref())?;
    let ids = doc.add_all(news, millis(now)).map_err(error)?;
    Ok(std::iter::once(utf8(doc.encode())).chain(ids).collect())
}

/// Removes pattern `id` from a stored document; `undefined` when it was not
/// there.
#[wasm_bindgen(js_name = removeCustomPattern)]
pub fn remove_custom_pattern(
    document: Option<String>,
    id: &str,
    now: f64,
) -> Result<Option<String>, JsError> {
    let mut doc = read_patterns(document.as_deref())?;
    Ok(doc.remove(id, millis(now)).then(|| utf8(doc.encode())))
}

/// The patterns of a stored document as the service lists them in
/// Variant A (`category` `custom` when the account gave none).
#[wasm_bindgen(js_name = listCustomPatterns)]
pub fn list_custom_patterns(document: Option<String>) -> Result<JsValue, JsError> {
    let doc = read_patterns(document.as_deref())?;
    let listed: Vec<MatcherPattern> = doc.patterns.iter().map(MatcherPattern::from).collect();
    to_js(&listed)
}

fn read_patterns(document: Option<&str>) -> Result<CustomPatterns, JsError> {
    match document {
        None => Ok(CustomPatterns::new()),
        Some(stored) => CustomPatterns::decode(stored.as_bytes())
            .ok_or_else(|| error("not a custom-patterns record")),
    }
}

fn utf8(record: Vec<u8>) -> String {
    // Records are UTF-8 text (JSON, or the core's serving layout of JSON
    // fragments).
    String::from_utf8(record).unwrap_or_default()
}

fn to_js<T: serde::Serialize + ?Sized>(value: &T) -> Result<JsValue, JsError> {
    value
        .serialize(&serde_wasm_bindgen::Serializer::json_compatible())
        .map_err(error)
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

/// Text codes in a verdict: the message, the user agent, then frame `i` as
/// `FRAME + i`.
const MESSAGE: u32 = 0;
const USER_AGENT: u32 = 1;
const FRAME: u32 = 2;

#[wasm_bindgen(js_class = Matcher)]
impl JsMatcher {
    /// The built-in catalog at or above `min_confidence`.
    pub fn builtin(min_confidence: f64) -> JsMatcher {
        JsMatcher::wrap(Matcher::builtin(min_confidence))
    }

    /// The patterns of a Variant A or B response body.
    #[wasm_bindgen(js_name = fromResponse)]
    pub fn from_response(body: &str) -> Result<JsMatcher, JsError> {
        Ok(JsMatcher::wrap(
            Matcher::from_response(body.as_bytes()).map_err(error)?,
        ))
    }

    /// Patterns given as `[{id, pattern, type?, category?, confidence?}]`.
    #[wasm_bindgen(js_name = fromPatterns)]
    pub fn from_patterns(patterns: JsValue) -> Result<JsMatcher, JsError> {
        Ok(JsMatcher::wrap(
            Matcher::new(read_matcher_patterns(patterns)?).map_err(error)?,
        ))
    }

    /// A new matcher with this one's patterns followed by `patterns`.
    #[wasm_bindgen(js_name = withPatterns)]
    pub fn with_patterns(&self, patterns: JsValue) -> Result<JsMatcher, JsError> {
        let added = read_matcher_patterns(patterns)?;
        let all = self.inner.patterns().iter().cloned().chain(added);
        Ok(JsMatcher::wrap(Matcher::new(all).map_err(error)?))
    }

    /// The patterns, in order: `[{id, pattern, type, category, confidence}]`.
    pub fn patterns(&self) -> Result<JsValue, JsError> {
        to_js(self.inner.patterns())
    }

    /// Classifies an event given as its texts concatenated: the exception
    /// type, the message, the `frame_count` frame URLs joined by `\n`, the
    /// user agent. Each length is in UTF-16 code units (JavaScript's
    /// `length`), −1 for an absent text; the user agent is the rest. Returns
    /// the number of matches, or `u32::MAX` when the frames do not split
    /// into `frame_count` (one holds a `\n`: use `classifyFrames`).
    pub fn classify(
        &mut self,
        texts: &str,
        type_len: i32,
        message_len: i32,
        frames_len: i32,
        frame_count: u32,
        has_user_agent: bool,
    ) -> u32 {
        let [exception_type, message, frames, rest] =
            split_utf16(texts, [type_len, message_len, frames_len]);
        let frames: Vec<String> =
            frames.map_or_else(Vec::new, |f| f.split('\n').map(str::to_owned).collect());
        if frames.len() != frame_count as usize {
            return u32::MAX;
        }
        self.verdict(
            exception_type,
            message,
            frames,
            rest.filter(|_| has_user_agent),
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
            _ => u32::MAX,
        };
        self.input = input;
        found
    }

    /// Whether the event written into the input buffer (as for
    /// [`JsMatcher::classify_input`]) is noise: 1 or 0, stopping at the
    /// first match and keeping no verdict; `u32::MAX` when the texts must
    /// cross apart.
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
            return u32::MAX;
        };
        let [exception_type, message, frames, rest] =
            split_utf16(texts, [type_len, message_len, frames_len]);
        let count = frames.map_or(0, |f| f.bytes().filter(|&b| b == b'\n').count() + 1);
        if count != frame_count as usize {
            return u32::MAX;
        }
        u32::from(self.inner.is_noise_texts(
            exception_type,
            message,
            frames.into_iter().flat_map(|f| f.split('\n')),
            rest.filter(|_| has_user_agent),
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
        self.last = encode(self.inner.patterns(), &self.inner.classify(&event));
        (self.last.len() / 2) as u32
    }

    /// The matches of the last classification, flat: pattern index, text
    /// code (0 message, 1 user agent, 2 + i frame i), in the core's order.
    pub fn matches(&self) -> Vec<u32> {
        self.last.clone()
    }
}

impl JsMatcher {
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
        self.last = encode(self.inner.patterns(), &self.inner.classify(&event));
        (self.last.len() / 2) as u32
    }
}

/// Cuts `text` into the texts of `lengths` (UTF-16 code units; −1: absent,
/// taking nothing) and the rest.
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

fn read_matcher_patterns(patterns: JsValue) -> Result<Vec<MatcherPattern>, JsError> {
    serde_wasm_bindgen::from_value(patterns).map_err(|e| error(format!("invalid pattern: {e}")))
}

/// A verdict as `[pattern index, text code, …]`. The core's [`noise_filter_core::Match`]
/// borrows its id from the pattern it reports, so the index is found by
/// address; within one text the core lists matches in pattern order, so the
/// search resumes after the previous match.
fn encode(patterns: &[MatcherPattern], verdict: &Verdict<'_>) -> Vec<u32> {
    let mut out = Vec::with_capacity(verdict.matches.len() * 2);
    let mut previous: Option<(Field, usize)> = None;
    for m in &verdict.matches {
        let from = match previous {
            Some((field, index)) if field == m.field => index + 1,
            _ => 0,
        };
        let found = patterns[from..].iter().position(|p| {
            std::ptr::eq(p.id.as_str(), m.id)
                && std::ptr::eq(p.category.as_str(), m.category)
                && p.confidence.to_bits() == m.confidence.to_bits()
        });
        let Some(offset) = found else { continue };
        let index = from + offset;
        let code = match m.field {
            Field::Message => MESSAGE,
            Field::UserAgent => USER_AGENT,
            Field::Frame(i) => FRAME + i as u32,
        };
        out.extend([index as u32, code]);
        previous = Some((m.field, index));
    }
    out
}

//! The main entry's part of the binding (feature `handler`, default): the
//! endpoint ([`Exchange`]) and the store helpers. The matcher-only wasm
//! (`noise-filter/matcher`) is built without it; the matcher's exports are
//! the same in both (`lib.rs`).

use noise_filter_core::{
    ApiKey, KEY_RANDOM_BYTES, MatcherPattern, NewPattern, RecordKey, RecordKind, Request, Response,
    Step, StoreError, UnixMillis, admin, handle,
};
use wasm_bindgen::prelude::*;

use crate::error;

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

    /// The `createHandler` option whose store holds [`Exchange::key`], by
    /// the kind of record: `"keys"` (key records), `"customPatterns"` (an
    /// account's patterns) or `"rateLimitStore"` (counters).
    #[wasm_bindgen(getter)]
    pub fn store(&self) -> String {
        match self.record().map(RecordKey::kind) {
            Some(RecordKind::ApiKey) => KEYS,
            Some(RecordKind::CustomPatterns) => CUSTOM_PATTERNS,
            Some(RecordKind::RateCounter) => RATE_LIMIT_STORE,
            None => "",
        }
        .into()
    }

    /// The store key the pending step reads, adds to or deletes.
    #[wasm_bindgen(getter)]
    pub fn key(&self) -> String {
        self.record()
            .map_or_else(String::new, |r| r.key().to_owned())
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
        self.response().map_or_else(Vec::new, |r| r.body.to_vec())
    }
}

impl Exchange {
    fn record(&self) -> Option<&RecordKey> {
        match &self.step {
            Some(Step::Get(s)) => Some(&s.record),
            Some(Step::Increment(s)) => Some(&s.record),
            Some(Step::Delete(s)) => Some(&s.record),
            Some(Step::Respond(_)) | None => None,
        }
    }

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

/// How many random bytes [`new_key`] takes (the core's count: 24).
#[wasm_bindgen(js_name = keyRandomBytes)]
pub fn key_random_bytes() -> u32 {
    KEY_RANDOM_BYTES as u32
}

/// Makes a new API key from [`key_random_bytes`] random bytes the caller
/// took from a CSPRNG.
/// Returns `[key, storeKey, record]`: the key to show once, and the record
/// (JSON) to store under `storeKey` in the `keys` store.
#[wasm_bindgen(js_name = newKey)]
pub fn new_key(
    random: &[u8],
    account: &str,
    label: &str,
    now: f64,
) -> Result<Vec<String>, JsError> {
    let made = admin::create_key(random, account, label, millis(now)).map_err(error)?;
    Ok(vec![
        made.key.expose().to_owned(),
        made.record.record.key().to_owned(),
        utf8(made.record.value),
    ])
}

/// The `keys` store key of the record of `key` (to revoke it); `undefined`
/// when `key` does not have the shape of a key (no record can exist).
#[wasm_bindgen(js_name = keyStoreKey)]
pub fn key_store_key(key: &str) -> Option<String> {
    ApiKey::parse(key).map(|key| RecordKey::api_key(&key.hash()).key().to_owned())
}

/// A stored key record (`undefined`: absent), revoked at `now`; `undefined`
/// when there is no record to revoke.
#[wasm_bindgen(js_name = revokeKeyRecord)]
pub fn revoke_key_record(record: Option<String>, now: f64) -> Result<Option<String>, JsError> {
    match admin::revoke_key(record.as_deref().map(str::as_bytes), millis(now)) {
        Ok(revoked) => Ok(Some(utf8(revoked.value))),
        Err(admin::AdminRefusal::NoSuchKey) => Ok(None),
        Err(refusal) => Err(error(refusal)),
    }
}

/// The `customPatterns` store key of an account's patterns.
#[wasm_bindgen(js_name = customPatternsKey)]
pub fn custom_patterns_key(account: &str) -> Result<String, JsError> {
    let record = admin::patterns_record(account).map_err(error)?;
    Ok(record.key().to_owned())
}

/// Adds `patterns` (an array of `{pattern, type?, id?, category?,
/// confidence?, source?}`) to an account's stored record (`undefined`:
/// none yet), all or none. Returns `[record, id, id, …]`; throws the
/// core's explanation when a pattern is refused.
#[wasm_bindgen(js_name = addCustomPatterns)]
pub fn add_custom_patterns(
    document: Option<String>,
    patterns: JsValue,
    now: f64,
) -> Result<Vec<String>, JsError> {
    let news: Vec<NewPattern> = serde_wasm_bindgen::from_value(patterns)
        .map_err(|e| error(format!("invalid pattern: {e}")))?;
    let added = admin::add_patterns(document.as_deref().map(str::as_bytes), news, millis(now))
        .map_err(error)?;
    Ok(std::iter::once(utf8(added.value))
        .chain(added.ids)
        .collect())
}

/// Removes pattern `id` from a stored record; `undefined` when it was not
/// there.
#[wasm_bindgen(js_name = removeCustomPattern)]
pub fn remove_custom_pattern(
    document: Option<String>,
    id: &str,
    now: f64,
) -> Result<Option<String>, JsError> {
    match admin::remove_pattern(document.as_deref().map(str::as_bytes), id, millis(now)) {
        Ok(record) => Ok(Some(utf8(record))),
        Err(admin::AdminRefusal::NoSuchPattern(_)) => Ok(None),
        Err(refusal) => Err(error(refusal)),
    }
}

/// The patterns of a stored record as the service lists them in
/// Variant A (`category` `custom` when the account gave none).
#[wasm_bindgen(js_name = listCustomPatterns)]
pub fn list_custom_patterns(document: Option<String>) -> Result<JsValue, JsError> {
    let patterns = admin::read_patterns(document.as_deref().map(str::as_bytes)).map_err(error)?;
    let listed: Vec<MatcherPattern> = patterns.patterns.iter().map(MatcherPattern::from).collect();
    to_js(&listed)
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

//! The native side of every shell's parity tests: the core's own answers.
//!
//! Runs the shared request fixtures (`core/tests/parity/requests.json`)
//! through the core natively, against its deterministic [`MemoryStore`], and
//! classifies the catalog's labelled evaluation events
//! (`core/catalog/eval.toml`) plus the fixtures' own events with the
//! fixtures' matchers. Prints one JSON document: what the npm package
//! (`npm/test/common/cases.mjs`) and the Python package
//! (`python/tests/test_parity.py`) must answer, byte for byte. The host's
//! tests read the same fixtures (`host/tests/embed.rs`).
//!
//! It lives with the core because every shell compares with it, and it runs
//! the core with its default features: the pre-rendered catalog, which the
//! npm build renders at first use instead, so the npm tests compare the two
//! renderings byte for byte.
//!
//! ```text
//! cargo run -p noise-filter-core --example oracle -- requests.json eval.toml > oracle.json
//! ```

use std::collections::BTreeMap;
use std::error::Error;

use noise_filter_core::{
    Event, FirstParty, Matcher, MatcherPattern, MemoryStore, NewPattern, Request, UnixMillis,
    Verdict, admin, pattern_list, run,
};
use serde::{Deserialize, Serialize};

/// `core/tests/parity/requests.json`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fixtures {
    /// The clock of every request, Unix milliseconds (plus a request's `at`).
    now: u64,
    /// Keys to create before the requests.
    keys: Vec<KeySeed>,
    /// Custom patterns to add before the requests, one `add_all` per account.
    #[serde(default)]
    custom_patterns: Vec<AccountPatterns>,
    /// Requests, in order, against one store.
    requests: Vec<RequestCase>,
    /// Extra patterns for the `custom` matcher (built-ins at 0.5, then these).
    /// Read as the npm package reads them (`pattern_list`).
    #[serde(default)]
    matcher_patterns: Option<serde_json::Value>,
    /// Events to classify besides the evaluation set.
    #[serde(default)]
    events: Vec<Event>,
    /// The `firstParty` matcher's rule (built-ins at 0.5 with it): the
    /// application's origins and path prefixes.
    first_party: FirstPartyFixture,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FirstPartyFixture {
    #[serde(default)]
    origins: Vec<String>,
    #[serde(default)]
    paths: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct KeySeed {
    /// How headers refer to it: `{key:NAME}`.
    name: String,
    /// 24 random bytes, as hex.
    random: String,
    account: String,
    #[serde(default)]
    label: String,
    #[serde(default)]
    revoked: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct AccountPatterns {
    account: String,
    patterns: Vec<NewPattern>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RequestCase {
    name: String,
    #[serde(default = "get")]
    method: String,
    target: String,
    /// Header lines; values may hold `{key:NAME}` and `{etag}` (the ETag of
    /// the latest response that had one).
    #[serde(default)]
    headers: Vec<(String, String)>,
    /// Milliseconds after `now`.
    #[serde(default)]
    at: u64,
    /// Sent this many times; the last answer is recorded, with a count of
    /// every status.
    #[serde(default = "once")]
    repeat: u32,
    /// Every store call fails for this request.
    #[serde(default)]
    store_fails: bool,
}

fn get() -> String {
    "GET".into()
}
fn once() -> u32 {
    1
}

/// `core/catalog/eval.toml`.
#[derive(Debug, Deserialize)]
struct EvalSet {
    event: Vec<EvalEvent>,
}

#[derive(Debug, Deserialize)]
struct EvalEvent {
    label: String,
    message: Option<String>,
    #[serde(default)]
    frames: Vec<String>,
    user_agent: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    name: String,
    status: u16,
    headers: Vec<(String, String)>,
    /// The body as text: every body the core writes is UTF-8, but an
    /// encoded one (with `content-encoding`), which is `bodyHex` instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    body: Option<String>,
    /// An encoded body's bytes, as lowercase hex.
    #[serde(skip_serializing_if = "Option::is_none")]
    body_hex: Option<String>,
    /// With `repeat`: how many answers had each status.
    #[serde(skip_serializing_if = "Option::is_none")]
    statuses: Option<BTreeMap<u16, u32>>,
}

#[derive(Debug, Serialize)]
struct LabelledEvent {
    label: String,
    event: Event,
}

#[derive(Debug, Serialize)]
struct Oracle<'m> {
    requests: Vec<Answer>,
    events: Vec<LabelledEvent>,
    /// Matcher name → one verdict per event.
    verdicts: BTreeMap<&'static str, Vec<Verdict<'m>>>,
    /// Built-in matcher name → its patterns, in order: what each language's
    /// `builtin` must hold (`builtinDefault`: built with no threshold).
    patterns: BTreeMap<&'static str, &'m [MatcherPattern]>,
}

fn main() -> Result<(), Box<dyn Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [requests, eval] = args.as_slice() else {
        return Err("usage: oracle <requests.json> <eval.toml>".into());
    };
    let fixtures: Fixtures = serde_json::from_str(&std::fs::read_to_string(requests)?)?;
    let eval: EvalSet = toml::from_str(&std::fs::read_to_string(eval)?)?;

    let now = UnixMillis(fixtures.now);
    let mut kv = MemoryStore::new();
    let mut keys = BTreeMap::new();
    for seed in &fixtures.keys {
        let made = admin::create_key(&hex24(&seed.random)?, &seed.account, &seed.label, now)?;
        kv.set(&made.record.record, made.record.value);
        if seed.revoked {
            kv.revoke(&made.key, now)?;
        }
        keys.insert(seed.name.clone(), made.key.expose().to_owned());
    }
    for account in fixtures.custom_patterns {
        kv.add_patterns(&account.account, account.patterns, now)?;
    }

    let mut answers = Vec::new();
    let mut etag = String::new();
    for case in &fixtures.requests {
        let headers: Vec<(String, Vec<u8>)> = case
            .headers
            .iter()
            .map(|(name, value)| (name.clone(), substitute(value, &keys, &etag).into_bytes()))
            .collect();
        let headers: Vec<(&str, &[u8])> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let request = Request {
            method: &case.method,
            target: &case.target,
            headers: &headers,
        };
        kv.failing = case.store_fails;
        let mut statuses = BTreeMap::new();
        let mut last = None;
        for _ in 0..case.repeat {
            let response = run(&request, UnixMillis(fixtures.now + case.at), &mut kv);
            *statuses.entry(response.status).or_insert(0) += 1;
            last = Some(response);
        }
        kv.failing = false;
        let response = last.ok_or("repeat must be at least 1")?;
        if let Some(tag) = response.header("etag") {
            etag = tag.to_owned();
        }
        let encoded = response.header("content-encoding").is_some();
        let (body, body_hex) = if encoded {
            let hex = response.body.iter().fold(String::new(), |mut s, b| {
                use std::fmt::Write as _;
                let _ = write!(s, "{b:02x}");
                s
            });
            (None, Some(hex))
        } else {
            (Some(String::from_utf8(response.body.to_vec())?), None)
        };
        answers.push(Answer {
            name: case.name.clone(),
            status: response.status,
            headers: response
                .headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone()))
                .collect(),
            body,
            body_hex,
            statuses: (case.repeat > 1).then_some(statuses),
        });
    }

    let mut events: Vec<LabelledEvent> = eval
        .event
        .into_iter()
        .map(|e| LabelledEvent {
            label: e.label,
            event: Event {
                exception_type: None,
                message: e.message,
                frames: e.frames,
                user_agent: e.user_agent,
            },
        })
        .collect();
    events.extend(fixtures.events.into_iter().map(|event| LabelledEvent {
        label: "fixture".into(),
        event,
    }));

    let body_of = |name: &str| {
        answers
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.body.clone())
            .ok_or(format!("no identity answer to {name:?}"))
    };
    let builtin = Matcher::builtin(0.5);
    let custom = Matcher::new(builtin.patterns().iter().cloned().chain(
        match &fixtures.matcher_patterns {
            Some(list) => pattern_list::read_patterns(&Some(list))?,
            None => Vec::new(),
        },
    ))?;
    let matchers: Vec<(&'static str, Matcher)> = vec![
        ("builtin", builtin),
        ("builtinAll", Matcher::builtin(0.0)),
        // What every language's `builtin` gives without a threshold.
        ("builtinDefault", Matcher::builtin_default()),
        (
            "responseA",
            Matcher::from_response(body_of("A: all patterns")?.as_bytes())?,
        ),
        (
            "responseB",
            Matcher::from_response(body_of("B: all patterns")?.as_bytes())?,
        ),
        ("custom", custom),
        (
            "firstParty",
            Matcher::builtin(0.5).with_first_party(FirstParty::new(
                fixtures.first_party.origins.clone(),
                fixtures.first_party.paths.clone(),
            )?),
        ),
    ];
    let verdicts = matchers
        .iter()
        .map(|(name, matcher)| {
            (
                *name,
                events.iter().map(|e| matcher.classify(&e.event)).collect(),
            )
        })
        .collect();
    let patterns = matchers
        .iter()
        .filter(|(name, _)| name.starts_with("builtin"))
        .map(|(name, matcher)| (*name, matcher.patterns()))
        .collect();
    let oracle = Oracle {
        requests: answers,
        events,
        verdicts,
        patterns,
    };
    println!("{}", serde_json::to_string(&oracle)?);
    Ok(())
}

fn substitute(value: &str, keys: &BTreeMap<String, String>, etag: &str) -> String {
    let mut out = value.replace("{etag}", etag);
    for (name, key) in keys {
        out = out.replace(&format!("{{key:{name}}}"), key);
    }
    out
}

fn hex24(hex: &str) -> Result<[u8; 24], Box<dyn Error>> {
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2).unwrap_or("zz"), 16))
        .collect::<Result<_, _>>()?;
    Ok(bytes
        .try_into()
        .map_err(|_| "random must be 24 bytes of hex")?)
}

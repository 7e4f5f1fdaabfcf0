//! One request, from first byte to response, as a sequence of steps.
//!
//! The core cannot read the store, so it says what it needs and waits:
//!
//! ```text
//! handle ─▶ Get key/<hash> ─▶ Increment rate/<hash>/<w> ─▶ Get rate/<hash>/<w−1>
//!        ─▶ [Delete rate/<hash>/<w−2>] ─▶ [Get account/<a>/patterns]
//!        ─▶ [Increment … −1 (refund a 429 or 304)] ─▶ Respond
//! ```
//!
//! Each step owns the exchange and `resume` consumes it, so a shell cannot
//! skip a step or answer one twice. A shell's whole loop:
//!
//! ```
//! # use noise_filter_core::{handle, Request, Step, UnixMillis};
//! # let request = Request { method: "GET", target: "/v1/filters", headers: &[] };
//! let mut step = handle(&request, UnixMillis(1_700_000_000_000));
//! let response = loop {
//!     step = match step {
//!         Step::Get(get) => get.resume(Ok(None)),          // store.get(get.store, &get.key)
//!         Step::Increment(inc) => inc.resume(Ok(1)),       // store.increment(…, inc.delta)
//!         Step::Delete(del) => del.resume(Ok(())),         // store.delete(…)
//!         Step::Respond(response) => break response,
//!     };
//! };
//! assert_eq!(response.status, 401);
//! ```
//!
//! Order of checks (PRODUCT.md): path, method (OPTIONS answered here, without
//! a key), authentication, rate limit, parameters. A request with bad
//! parameters from a valid key still counts; a key over its limit gets 429
//! whatever it sends.

use std::borrow::Cow;

use crate::auth::{self, KeyHash};
use crate::custom::ServingView;
use crate::error::Rejection;
use crate::http::{Request, Response};
use crate::params::Filter;
use crate::pattern::Variant;
use crate::rate::{self, RateDecision, RateWindow, UnixMillis};
use crate::shape;
use crate::store::{self, AccountId, KeyRecord, StoreLabel};

/// The store failed to answer (connection lost, I/O error). The request is
/// answered 503 and nothing further is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreError;

/// What the shell does next.
#[derive(Debug)]
#[must_use = "a step must be carried out and resumed"]
pub enum Step {
    /// Read a value.
    Get(Get),
    /// Atomically add to a counter.
    Increment(Increment),
    /// Delete a key (a missing key is not an error).
    Delete(Delete),
    /// Send this response; the exchange is over.
    Respond(Response),
}

/// Read `key` from `store`, then [`Get::resume`] with the value (`None`: absent).
#[derive(Debug)]
pub struct Get {
    /// Which store.
    pub store: StoreLabel,
    /// The key to read.
    pub key: String,
    exchange: Exchange,
}

/// Atomically add `delta` to the counter `key` in `store` (a missing counter
/// is 0), then [`Increment::resume`] with the new value.
#[derive(Debug)]
pub struct Increment {
    /// Which store.
    pub store: StoreLabel,
    /// The counter's key.
    pub key: String,
    /// What to add: 1 to count a request, −1 to refund one.
    pub delta: i64,
    exchange: Exchange,
}

/// Delete `key` from `store`, then [`Delete::resume`].
#[derive(Debug)]
pub struct Delete {
    /// Which store.
    pub store: StoreLabel,
    /// The key to delete.
    pub key: String,
    exchange: Exchange,
}

impl Get {
    /// Continues with the value read.
    pub fn resume(self, value: Result<Option<Vec<u8>>, StoreError>) -> Step {
        self.exchange.on_value(value)
    }
}

impl Increment {
    /// Continues with the counter's new value.
    pub fn resume(self, value: Result<i64, StoreError>) -> Step {
        self.exchange.on_count(value)
    }
}

impl Delete {
    /// Continues once the key is deleted. A failed delete only leaves a stale
    /// counter behind, so it does not fail the request.
    pub fn resume(self, _result: Result<(), StoreError>) -> Step {
        self.exchange.on_deleted()
    }
}

/// Starts handling `request` received at `now`.
pub fn handle(request: &Request<'_>, now: UnixMillis) -> Step {
    let head = request.method == "HEAD";
    let Some(variant) = Variant::from_path(request.path()) else {
        return finish_error(head, &Rejection::NotFound, None);
    };
    match request.method {
        "GET" | "HEAD" => {}
        "OPTIONS" => return Step::Respond(preflight()),
        _ => return finish_error(head, &Rejection::MethodNotAllowed, None),
    }
    let hash = match auth::authenticate(&request.header_values("authorization")) {
        Ok(hash) => hash,
        Err(rejection) => return finish_error(head, &rejection, None),
    };
    let if_none_match = {
        let values = request.header_values("if-none-match");
        let joined: Vec<String> = values
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        (!joined.is_empty()).then(|| joined.join(","))
    };
    let key = store::key_record_key(&hash);
    let exchange = Exchange {
        head,
        variant,
        query: request.query().to_owned(),
        if_none_match,
        window: RateWindow::at(now),
        state: State::AwaitKeyRecord,
        hash,
    };
    Step::Get(Get {
        store: StoreLabel::Default,
        key,
        exchange,
    })
}

/// The rate state of an admitted request.
#[derive(Debug, Clone, Copy)]
struct Counted {
    current: u64,
    previous: u64,
}

/// What the exchange waits for.
#[derive(Debug)]
#[allow(clippy::enum_variant_names)] // each state names what it awaits
enum State {
    AwaitKeyRecord,
    AwaitCurrent {
        account: AccountId,
    },
    AwaitPrevious {
        account: AccountId,
        current: u64,
    },
    AwaitCleanup {
        account: AccountId,
        counted: Counted,
    },
    AwaitCustom {
        filter: Filter,
        counted: Counted,
    },
    AwaitRefund {
        response: Response,
    },
}

/// The request's state between steps.
#[derive(Debug)]
struct Exchange {
    head: bool,
    variant: Variant,
    query: String,
    if_none_match: Option<String>,
    window: RateWindow,
    hash: KeyHash,
    state: State,
}

impl Exchange {
    fn counter_key(&self, window: u64) -> String {
        store::counter_key(&self.hash, window)
    }

    fn on_value(mut self, value: Result<Option<Vec<u8>>, StoreError>) -> Step {
        let Ok(value) = value else {
            return self.fail(&Rejection::StoreUnavailable, None);
        };
        match std::mem::replace(&mut self.state, State::AwaitKeyRecord) {
            State::AwaitKeyRecord => {
                let Some(bytes) = value else {
                    return self.fail(&Rejection::InvalidApiKey, None);
                };
                let Some(record) = KeyRecord::from_json(&bytes) else {
                    return self.fail(&Rejection::CorruptRecord, None);
                };
                if !record.is_active() {
                    return self.fail(&Rejection::InvalidApiKey, None);
                }
                let key = self.counter_key(self.window.index);
                self.state = State::AwaitCurrent {
                    account: record.account,
                };
                Step::Increment(Increment {
                    store: StoreLabel::Rate,
                    key,
                    delta: 1,
                    exchange: self,
                })
            }
            State::AwaitPrevious { account, current } => {
                // A counter that cannot be read counts as empty: the limit
                // then errs towards admitting rather than failing requests.
                let previous = rate::decode_counter(value.as_deref()).unwrap_or(0);
                self.on_counted(account, current, previous)
            }
            State::AwaitCustom { filter, counted } => match value {
                None => self.respond_patterns(&filter, None, counted),
                Some(bytes) => match ServingView::parse(&bytes) {
                    Some(view) => self.respond_patterns(&filter, Some(&view), counted),
                    None => self.fail(&Rejection::CorruptRecord, Some(counted)),
                },
            },
            other => unreachable_state(other),
        }
    }

    fn on_count(mut self, value: Result<i64, StoreError>) -> Step {
        match std::mem::replace(&mut self.state, State::AwaitKeyRecord) {
            State::AwaitCurrent { account } => {
                let Ok(current) = value else {
                    return self.fail(&Rejection::StoreUnavailable, None);
                };
                let key = self.counter_key(self.window.index.saturating_sub(1));
                self.state = State::AwaitPrevious {
                    account,
                    current: current.max(0) as u64,
                };
                Step::Get(Get {
                    store: StoreLabel::Rate,
                    key,
                    exchange: self,
                })
            }
            // The refund's outcome does not change the answer already decided.
            State::AwaitRefund { response } => Step::Respond(response),
            other => unreachable_state(other),
        }
    }

    fn on_deleted(mut self) -> Step {
        match std::mem::replace(&mut self.state, State::AwaitKeyRecord) {
            State::AwaitCleanup { account, counted } => self.after_rate(account, counted),
            other => unreachable_state(other),
        }
    }

    fn on_counted(mut self, account: AccountId, current: u64, previous: u64) -> Step {
        match rate::decide(self.window, current, previous) {
            RateDecision::Limited { retry_after } => {
                let rejection = Rejection::RateLimited { retry_after };
                let mut response = error_response(&rejection);
                response
                    .headers
                    .push(("retry-after", retry_after.to_string()));
                push_rate_headers(&mut response, 0, retry_after);
                push_cors(&mut response);
                self.refund(response)
            }
            RateDecision::Admitted { .. } => {
                let counted = Counted { current, previous };
                if current == 1 && self.window.index >= 2 {
                    // First request of a window: the counter two windows back
                    // is no longer read; delete it so counters do not pile up.
                    let key = self.counter_key(self.window.index - 2);
                    self.state = State::AwaitCleanup { account, counted };
                    return Step::Delete(Delete {
                        store: StoreLabel::Rate,
                        key,
                        exchange: self,
                    });
                }
                self.after_rate(account, counted)
            }
        }
    }

    fn after_rate(mut self, account: AccountId, counted: Counted) -> Step {
        let filter = match Filter::parse(&self.query, self.variant) {
            Ok(filter) => filter,
            Err(rejection) => return self.fail(&rejection, Some(counted)),
        };
        if !filter.include_custom {
            return self.respond_patterns(&filter, None, counted);
        }
        let key = store::custom_patterns_key(&account);
        self.state = State::AwaitCustom { filter, counted };
        Step::Get(Get {
            store: StoreLabel::Default,
            key,
            exchange: self,
        })
    }

    fn respond_patterns(
        self,
        filter: &Filter,
        custom: Option<&ServingView<'_>>,
        counted: Counted,
    ) -> Step {
        let (body, etag) = shape::render(self.variant, filter, custom);
        if self
            .if_none_match
            .as_deref()
            .is_some_and(|h| shape::if_none_match(h, &etag))
        {
            // A cached response does not count: refund this request.
            let remaining = rate::remaining(self.window, counted.current - 1, counted.previous);
            let mut response = Response {
                status: 304,
                headers: Vec::new(),
                body: Cow::Borrowed(&[]),
            };
            push_cache_headers(&mut response, etag);
            push_rate_headers(&mut response, remaining, self.window.seconds_left());
            push_cors(&mut response);
            return self.refund(response);
        }
        let remaining = rate::remaining(self.window, counted.current, counted.previous);
        let mut response = Response {
            status: 200,
            headers: vec![("content-type", "application/json".into())],
            body: if self.head { Cow::Borrowed(&[]) } else { body },
        };
        push_cache_headers(&mut response, etag);
        push_rate_headers(&mut response, remaining, self.window.seconds_left());
        push_cors(&mut response);
        Step::Respond(response)
    }

    /// Gives back the request's count, then answers `response`.
    fn refund(mut self, response: Response) -> Step {
        let key = self.counter_key(self.window.index);
        let response = strip_head(self.head, response);
        self.state = State::AwaitRefund { response };
        Step::Increment(Increment {
            store: StoreLabel::Rate,
            key,
            delta: -1,
            exchange: self,
        })
    }

    fn fail(self, rejection: &Rejection, counted: Option<Counted>) -> Step {
        let rate = counted.map(|c| {
            (
                rate::remaining(self.window, c.current, c.previous),
                self.window.seconds_left(),
            )
        });
        finish_error(self.head, rejection, rate)
    }
}

/// A state paired with the wrong kind of step cannot be built through the
/// public API (each step type only resumes into its own states); answer 500
/// rather than panic if it ever happens.
fn unreachable_state(state: State) -> Step {
    debug_assert!(false, "step resumed in state {state:?}");
    finish_error(false, &Rejection::CorruptRecord, None)
}

const RATE_POLICY: &str = "\"per-key\";q=1000;w=60";
const EXPOSED: &str = "ETag, RateLimit, RateLimit-Policy, Retry-After";

fn push_cache_headers(response: &mut Response, etag: String) {
    response
        .headers
        .push(("cache-control", "public, max-age=300".into()));
    response.headers.push(("vary", "Authorization".into()));
    response.headers.push(("etag", etag));
}

fn push_rate_headers(response: &mut Response, remaining: u64, reset: u64) {
    response
        .headers
        .push(("ratelimit-policy", RATE_POLICY.into()));
    response
        .headers
        .push(("ratelimit", format!("\"per-key\";r={remaining};t={reset}")));
}

fn push_cors(response: &mut Response) {
    response
        .headers
        .push(("access-control-allow-origin", "*".into()));
    response
        .headers
        .push(("access-control-expose-headers", EXPOSED.into()));
}

/// The response for a refusal: `{"error": …}`, no-store, plus the headers the
/// refusal calls for.
fn error_response(rejection: &Rejection) -> Response {
    let mut response = Response {
        status: rejection.status(),
        headers: vec![
            ("content-type", "application/json".into()),
            ("cache-control", "no-store".into()),
        ],
        body: Cow::Owned(rejection.body()),
    };
    match rejection {
        Rejection::MalformedAuthorization
        | Rejection::ApiKeyRequired
        | Rejection::InvalidApiKey => response.headers.push(("www-authenticate", "Bearer".into())),
        Rejection::MethodNotAllowed => response.headers.push(("allow", ALLOW.into())),
        _ => {}
    }
    response
}

fn finish_error(head: bool, rejection: &Rejection, rate: Option<(u64, u64)>) -> Step {
    let mut response = error_response(rejection);
    if let Some((remaining, reset)) = rate {
        push_rate_headers(&mut response, remaining, reset);
    }
    push_cors(&mut response);
    Step::Respond(strip_head(head, response))
}

impl Rejection {
    /// The whole response for this refusal, as the core answers it (body,
    /// `no-store`, CORS, and the headers the refusal calls for), for a shell
    /// that must answer without running an exchange ([`Rejection::HandlerFailed`]).
    pub fn response(&self) -> Response {
        let mut response = error_response(self);
        push_cors(&mut response);
        response
    }
}

fn strip_head(head: bool, mut response: Response) -> Response {
    if head {
        response.body = Cow::Borrowed(&[]);
    }
    response
}

const ALLOW: &str = "GET, HEAD, OPTIONS";

/// The CORS preflight answer: browsers send it without credentials.
fn preflight() -> Response {
    Response {
        status: 204,
        headers: vec![
            ("cache-control", "no-store".into()),
            ("allow", ALLOW.into()),
            ("access-control-allow-origin", "*".into()),
            ("access-control-allow-methods", ALLOW.into()),
            ("access-control-allow-headers", "Authorization".into()),
            ("access-control-max-age", "86400".into()),
        ],
        body: Cow::Borrowed(&[]),
    }
}

/// Runs a whole exchange against a synchronous store. For shells whose store
/// calls block (the admin tool, tests, benchmarks); async shells drive the
/// steps themselves.
pub fn run(request: &Request<'_>, now: UnixMillis, store: &mut impl SyncStore) -> Response {
    let mut step = handle(request, now);
    loop {
        step = match step {
            Step::Get(get) => {
                let value = store.get(get.store, &get.key);
                get.resume(value)
            }
            Step::Increment(inc) => {
                let value = store.increment(inc.store, &inc.key, inc.delta);
                inc.resume(value)
            }
            Step::Delete(del) => {
                let result = store.delete(del.store, &del.key);
                del.resume(result)
            }
            Step::Respond(response) => return response,
        }
    }
}

/// A key-value store with blocking calls, as [`run`] drives it.
pub trait SyncStore {
    /// Reads a value.
    fn get(&mut self, store: StoreLabel, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Atomically adds `delta` to a counter (missing: 0); returns the new value.
    fn increment(&mut self, store: StoreLabel, key: &str, delta: i64) -> Result<i64, StoreError>;
    /// Deletes a key (missing: fine).
    fn delete(&mut self, store: StoreLabel, key: &str) -> Result<(), StoreError>;
}

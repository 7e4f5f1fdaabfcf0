//! One request, from first byte to response, as a sequence of steps.
//!
//! The core cannot read the store, so it says what it needs and waits. The
//! whole order of checks is [`handle`] (what the request alone decides)
//! followed by [`Exchange::next`] (what needs the store), top to bottom:
//!
//! | # | check | answer when it fails | store step |
//! |---|---|---|---|
//! | 1 | path is a variant's | 404 | |
//! | 2 | method is GET or HEAD (OPTIONS: the preflight, no key needed) | 405 / 204 | |
//! | 3 | `Authorization: Bearer <well-formed key>` | 401 | |
//! | 4 | the key is known and active | 401 (unreadable: 500) | get the key's record |
//! | 5 | count the request in its window | | increment the counter |
//! | 6 | the previous window's count | | get the previous counter |
//! | 7 | under the limit (sliding window) | 429, refunded | |
//! | 8 | first request of a window: forget the counter two windows back | | delete it |
//! | 9 | the parameters | 400 / 414 | |
//! | 10 | the account's record: its custom patterns (when included) and its exclusions of built-ins | (unreadable: 500) | get it |
//! | 11 | `If-None-Match` is current (in a coding the request accepts) | 304, refunded | |
//! | 12 | the pattern list, in the content coding chosen from `Accept-Encoding` | 200 | |
//!
//! A store that fails a read or the count answers 503 and nothing further is
//! written. A request with bad parameters from a valid key still counts; a
//! key over its limit gets 429 whatever it sends. Every response is written
//! by [`crate::respond`].
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
//!         Step::Get(get) => get.resume(Ok(None)),      // store.get(get.record.label(), get.record.key())
//!         Step::Increment(inc) => inc.resume(Ok(1)),   // store.increment(…, inc.delta)
//!         Step::Delete(del) => del.resume(Ok(())),     // store.delete(…)
//!         Step::Respond(response) => break response,
//!     };
//! };
//! assert_eq!(response.status, 401);
//! ```

use std::borrow::Cow;

use crate::auth::{self, KeyHash};
use crate::coding::AcceptEncoding;
use crate::custom::ServingView;
use crate::error::Rejection;
use crate::http::{Request, Response};
use crate::params::Filter;
use crate::pattern::Variant;
use crate::rate::{self, Allowance, RateDecision, RateWindow, UnixMillis};
use crate::respond;
use crate::shape;
use crate::store::{Counter, KeyRecord, RecordKey};

/// The store failed to answer (connection lost, I/O error, deadline passed).
/// The request is answered 503 and nothing further is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreError;

/// What the shell does next.
#[derive(Debug)]
#[must_use = "a step must be carried out and resumed"]
pub enum Step {
    /// Read a record.
    Get(Get),
    /// Atomically add to a counter.
    Increment(Increment),
    /// Delete a record (a missing one is not an error).
    Delete(Delete),
    /// Send this response; the exchange is over.
    Respond(Response),
}

/// Read `record`, then [`Get::resume`] with its bytes (`None`: absent).
#[derive(Debug)]
pub struct Get {
    /// The record to read: its label and key.
    pub record: RecordKey,
    of: ReadOf,
    exchange: Exchange,
}

/// Atomically add `delta` to the counter `record` (a missing counter is 0),
/// then [`Increment::resume`] with the new value.
#[derive(Debug)]
pub struct Increment {
    /// The counter: its label and key.
    pub record: RecordKey,
    /// What to add: 1 to count a request, −1 to refund one.
    pub delta: i64,
    of: AddFor,
    exchange: Exchange,
}

/// Delete `record`, then [`Delete::resume`].
#[derive(Debug)]
pub struct Delete {
    /// The record to delete: its label and key.
    pub record: RecordKey,
    exchange: Exchange,
}

/// Which answer a [`Get`] brings.
#[derive(Debug, Clone, Copy)]
enum ReadOf {
    KeyRecord,
    PreviousCount,
    LastWindow,
    CustomPatterns,
}

/// What an [`Increment`] is for.
#[derive(Debug)]
enum AddFor {
    /// Counting this request.
    ThisRequest,
    /// Giving this request's count back (a 429 or a 304), then answering.
    Refund(Response),
    /// Moving the key's `last` record to this window.
    LastWindow,
}

impl Get {
    /// Continues with the value read.
    pub fn resume(self, value: Result<Option<Vec<u8>>, StoreError>) -> Step {
        let Get {
            of, mut exchange, ..
        } = self;
        let answers = &mut exchange.answers;
        // Each record is decoded by its own codec as it arrives; what its
        // value means for the request is decided in `next`.
        match of {
            ReadOf::KeyRecord => {
                answers.key_record = Some(value.map(|v| v.map(|b| KeyRecord::decode(&b))));
            }
            ReadOf::PreviousCount => {
                answers.previous = Some(value.map(|v| previous_count(v.as_deref())));
            }
            ReadOf::LastWindow => {
                answers.last_window = Some(value.map(|v| {
                    v.and_then(|bytes| Counter::decode(&bytes))
                        .and_then(|window| u64::try_from(window).ok())
                }));
            }
            ReadOf::CustomPatterns => answers.custom = Some(value),
        }
        exchange.step()
    }
}

impl Increment {
    /// Continues with the counter's new value.
    pub fn resume(self, value: Result<i64, StoreError>) -> Step {
        let Increment {
            of, mut exchange, ..
        } = self;
        match of {
            AddFor::ThisRequest => {
                exchange.answers.count = Some(value);
                exchange.step()
            }
            // The refund's outcome does not change the answer already decided.
            AddFor::Refund(response) => Step::Respond(response),
            // Housekeeping: a failure leaves stale counters behind, it does
            // not fail the request.
            AddFor::LastWindow => {
                exchange.answers.marked = true;
                exchange.step()
            }
        }
    }
}

impl Delete {
    /// Continues once the record is deleted. A failed delete only leaves a
    /// stale counter behind, so it does not fail the request.
    pub fn resume(self, _result: Result<(), StoreError>) -> Step {
        let mut exchange = self.exchange;
        exchange.answers.deleted += 1;
        exchange.step()
    }
}

/// Starts handling `request` received at `now`: checks 1 to 3 (what the
/// request alone decides), then the store-backed ones (`Exchange::next`).
pub fn handle(request: &Request<'_>, now: UnixMillis) -> Step {
    let head = request.method == "HEAD";
    // 1. The path.
    let Some(variant) = Variant::from_path(request.path()) else {
        return Step::Respond(respond::refusal(head, &Rejection::NotFound, None));
    };
    // 2. The method; a preflight is answered without a key.
    match request.method {
        "GET" | "HEAD" => {}
        "OPTIONS" => return Step::Respond(respond::preflight()),
        _ => {
            return Step::Respond(respond::refusal(head, &Rejection::MethodNotAllowed, None));
        }
    }
    // 3. The Authorization header.
    let hash = match auth::authenticate(&request.header_values("authorization")) {
        Ok(hash) => hash,
        Err(rejection) => return Step::Respond(respond::refusal(head, &rejection, None)),
    };
    let if_none_match = {
        let values = request.header_values("if-none-match");
        let joined: Vec<String> = values
            .iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect();
        (!joined.is_empty()).then(|| joined.join(","))
    };
    Exchange {
        head,
        variant,
        query: request.query().to_owned(),
        if_none_match,
        accept_encoding: AcceptEncoding::parse(&request.header_values("accept-encoding")),
        window: RateWindow::at(now),
        now,
        hash,
        answers: Answers::default(),
    }
    .step()
}

/// A store answer: `None` until it arrives.
type Answer<T> = Option<Result<T, StoreError>>;

/// What the store has answered so far, decoded.
#[derive(Debug, Default)]
struct Answers {
    /// The key's record: absent, unreadable (`Some(None)`) or read.
    key_record: Answer<Option<Option<KeyRecord>>>,
    /// This window's count, this request included.
    count: Answer<i64>,
    /// The previous window's count.
    previous: Answer<u64>,
    /// The key's `last` record: the window of its previous first request.
    last_window: Answer<Option<u64>>,
    /// Stale counters deleted so far (in [`rate::stale_windows`]' order).
    deleted: usize,
    /// The `last` record was moved to this window.
    marked: bool,
    /// The account's record (custom patterns, exclusions), as stored.
    custom: Answer<Option<Vec<u8>>>,
}

/// The request's state between steps.
#[derive(Debug)]
struct Exchange {
    head: bool,
    variant: Variant,
    query: String,
    if_none_match: Option<String>,
    accept_encoding: AcceptEncoding,
    window: RateWindow,
    /// When the request came: what a pattern's or an exclusion's end is
    /// compared with.
    now: UnixMillis,
    hash: KeyHash,
    answers: Answers,
}

/// What [`Exchange::next`] decided.
enum Next {
    Read(RecordKey, ReadOf),
    Add(RecordKey, i64, AddFor),
    Delete(RecordKey),
    Respond(Response),
}

impl Exchange {
    /// Checks 4 to 12, in order, with what the store has answered so far:
    /// the first one that needs an answer not yet there asks for it. Runs
    /// again from the top after every answer, so this one function is the
    /// whole order (a check whose answer is in only reads a field).
    fn next(&self) -> Next {
        let answers = &self.answers;
        // 4. The key is known and active.
        let record = match &answers.key_record {
            None => return Next::Read(RecordKey::api_key(&self.hash), ReadOf::KeyRecord),
            Some(Err(StoreError)) => return self.refuse(&Rejection::StoreUnavailable, None),
            Some(Ok(None)) => return self.refuse(&Rejection::InvalidApiKey, None),
            Some(Ok(Some(None))) => return self.refuse(&Rejection::CorruptRecord, None),
            Some(Ok(Some(Some(record)))) => record,
        };
        if !record.is_active() {
            return self.refuse(&Rejection::InvalidApiKey, None);
        }
        // 5. This request counted in its window (atomically: concurrent
        // requests get distinct counts, so the limit never over-admits).
        let current = match answers.count {
            None => return Next::Add(self.counter(0), 1, AddFor::ThisRequest),
            Some(Err(StoreError)) => return self.refuse(&Rejection::StoreUnavailable, None),
            Some(Ok(count)) => count.max(0) as u64,
        };
        // 6. The previous window's count.
        let previous = match answers.previous {
            None => return Next::Read(self.counter(1), ReadOf::PreviousCount),
            Some(Err(StoreError)) => return self.refuse(&Rejection::StoreUnavailable, None),
            Some(Ok(count)) => count,
        };
        // 7. Under the limit; a refused request is refunded.
        let allowance = match rate::rate_decision(self.window, current, previous) {
            RateDecision::Limited { retry_after } => {
                let response =
                    respond::refusal(self.head, &Rejection::RateLimited { retry_after }, None);
                return self.refund(response);
            }
            RateDecision::Admitted { remaining } => self.window.allowance(remaining),
        };
        // 8. The first request of a window deletes the key's counters that
        // are no longer read, whatever the gap since its last request
        // (`rate::stale_windows` says which and why that catches them all),
        // then moves the key's `last` record to this window. Housekeeping:
        // a store error here does not fail the request.
        if current == 1 {
            let read = match &answers.last_window {
                None => {
                    let record = RecordKey::rate_last_window(&self.hash);
                    return Next::Read(record, ReadOf::LastWindow);
                }
                Some(Err(StoreError)) => None,
                Some(Ok(last)) => Some(*last),
            };
            if let Some(last) = read {
                let stale = rate::stale_windows(self.window.index, last);
                if let Some(window) = stale.get(answers.deleted) {
                    let record = RecordKey::rate_counter(&self.hash, *window);
                    return Next::Delete(record);
                }
                if !answers.marked
                    && let Some(delta) = rate::advance_last_window(self.window.index, last)
                {
                    let record = RecordKey::rate_last_window(&self.hash);
                    return Next::Add(record, delta, AddFor::LastWindow);
                }
            }
        }
        // 9. The parameters.
        let filter = match Filter::parse(&self.query, self.variant) {
            Ok(filter) => filter,
            Err(error) => return self.refuse(&error.into(), Some(allowance)),
        };
        // 10. The account's record: its custom patterns, when included, and
        // its exclusions of built-ins, which apply to every answer (with
        // `includeCustom=false` too: docs/CONTRACT.md), so it is read
        // either way; one read, as the two live in one record.
        let custom = match &answers.custom {
            None => {
                let record = RecordKey::custom_patterns(&record.account);
                return Next::Read(record, ReadOf::CustomPatterns);
            }
            Some(Err(StoreError)) => return self.refuse(&Rejection::StoreUnavailable, None),
            Some(Ok(None)) => None,
            Some(Ok(Some(bytes))) => match ServingView::parse_for(bytes, filter.include_custom) {
                Some(view) => Some(view),
                None => return self.refuse(&Rejection::CorruptRecord, Some(allowance)),
            },
        };
        let shaped = shape::render(self.variant, &filter, custom.as_ref(), self.now);
        // The content coding: the acceptable one of highest weight among
        // those the answer is offered in (coding.rs).
        let coding = self.accept_encoding.choose(|c| shaped.offers(c));
        // 11. The client's copy is current: a cached response does not
        // count, so this request is refunded. Its copy may be in another
        // coding than the one chosen, if this request accepts that one.
        if let Some(header) = &self.if_none_match
            && let Some(held) = shape::held(header, &shaped, &self.accept_encoding, coding)
        {
            let refunded = rate::remaining(self.window, current - 1, previous);
            let etag = shaped.etag(held);
            return self.refund(respond::not_modified(etag, self.window.allowance(refunded)));
        }
        // 12. The pattern list. A HEAD answer has every header of the GET's
        // and no body, so none is assembled or compressed.
        let body = if self.head {
            Cow::Borrowed(&[][..])
        } else {
            shaped.body(coding)
        };
        let etag = shaped.etag(coding);
        Next::Respond(respond::patterns(self.head, body, etag, coding, allowance))
    }

    /// Carries out [`Exchange::next`]'s decision.
    fn step(self) -> Step {
        match self.next() {
            Next::Read(record, of) => Step::Get(Get {
                record,
                of,
                exchange: self,
            }),
            Next::Add(record, delta, of) => Step::Increment(Increment {
                record,
                delta,
                of,
                exchange: self,
            }),
            Next::Delete(record) => Step::Delete(Delete {
                record,
                exchange: self,
            }),
            Next::Respond(response) => Step::Respond(response),
        }
    }

    /// This key's counter `back` windows before the current one.
    fn counter(&self, back: u64) -> RecordKey {
        RecordKey::rate_counter(&self.hash, self.window.index.saturating_sub(back))
    }

    /// Gives back this request's count, then answers `response`.
    fn refund(&self, response: Response) -> Next {
        Next::Add(self.counter(0), -1, AddFor::Refund(response))
    }

    fn refuse(&self, rejection: &Rejection, allowance: Option<Allowance>) -> Next {
        Next::Respond(respond::refusal(self.head, rejection, allowance))
    }
}

/// The previous window's count as the limit reads it. A counter that cannot
/// be read counts as empty, and a negative one (more refunds than counts
/// after a store was reset) as zero: the limit then errs towards admitting
/// rather than failing requests.
fn previous_count(value: Option<&[u8]>) -> u64 {
    value.and_then(Counter::decode).unwrap_or(0).max(0) as u64
}

/// Runs a whole exchange against a synchronous store. For shells whose store
/// calls block (the admin tool, tests, benchmarks); async shells drive the
/// steps themselves.
pub fn run(request: &Request<'_>, now: UnixMillis, store: &mut impl SyncStore) -> Response {
    let mut step = handle(request, now);
    loop {
        step = match step {
            Step::Get(get) => {
                let value = store.get(&get.record);
                get.resume(value)
            }
            Step::Increment(inc) => {
                let value = store.increment(&inc.record, inc.delta);
                inc.resume(value)
            }
            Step::Delete(del) => {
                let result = store.delete(&del.record);
                del.resume(result)
            }
            Step::Respond(response) => return response,
        }
    }
}

/// A key-value store with blocking calls, as [`run`] drives it. It finds a
/// record by [`RecordKey::label`] and [`RecordKey::key`].
pub trait SyncStore {
    /// Reads a record.
    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, StoreError>;
    /// Atomically adds `delta` to a counter (missing: 0); returns the new value.
    fn increment(&mut self, record: &RecordKey, delta: i64) -> Result<i64, StoreError>;
    /// Deletes a record (missing: fine).
    fn delete(&mut self, record: &RecordKey) -> Result<(), StoreError>;
}

#[cfg(test)]
mod tests {
    use super::previous_count;

    #[test]
    fn previous_counts_read_in_both_encodings_and_err_towards_admitting() {
        assert_eq!(previous_count(None), 0);
        assert_eq!(previous_count(Some(&7i64.to_le_bytes())), 7);
        assert_eq!(previous_count(Some(b"42")), 42);
        assert_eq!(previous_count(Some(b"12345678")), 12_345_678);
        assert_eq!(previous_count(Some(b"-3")), 0);
        assert_eq!(previous_count(Some(b"xyz")), 0);
    }
}

//! Every response the endpoint gives, with every header on it: the one place
//! a status, a header or a body is put together. The exchange decides which
//! answer a request gets; this writes it.
//!
//! | answer | status | headers |
//! |---|---|---|
//! | [`patterns`] | 200 | `content-type`, `content-encoding` (not for identity), caching (`cache-control`, `vary`, `etag`), rate, CORS |
//! | [`not_modified`] | 304 | caching, rate, CORS |
//! | [`refusal`] | the [`Rejection`]'s | `content-type`, `no-store`, the refusal's own (`www-authenticate`, `allow`, `retry-after`), rate once the key is counted, CORS |
//! | [`preflight`] | 204 | `no-store`, `allow`, the CORS preflight headers |
//! | [`admin`] | the admin API's | `content-type`, `no-store`; no CORS header (`admin_api.rs`) |

use std::borrow::Cow;

use crate::coding::ContentCoding;
use crate::error::Rejection;
use crate::http::Response;
use crate::rate::{self, Allowance};

/// The methods the endpoint answers (`allow`, and the preflight's).
const ALLOW: &str = "GET, HEAD, OPTIONS";
/// The `RateLimit-Policy` of every key (IETF RateLimit headers).
const RATE_POLICY: &str = "\"per-key\";q=1000;w=60";
/// Response headers a browser script may read.
const EXPOSED: &str = "ETag, RateLimit, RateLimit-Policy, Retry-After";
/// How long a browser may reuse a preflight answer.
const PREFLIGHT_MAX_AGE: &str = "86400";

/// The pattern list (200), its body in `coding`. `head`: the body is left
/// out, as for HEAD.
pub(crate) fn patterns(
    head: bool,
    body: Cow<'static, [u8]>,
    etag: String,
    coding: ContentCoding,
    allowance: Allowance,
) -> Response {
    let mut response = Response {
        status: 200,
        headers: vec![("content-type", "application/json".into())],
        body: if head { Cow::Borrowed(&[]) } else { body },
    };
    if let Some(name) = coding.header_value() {
        response.headers.push(("content-encoding", name.into()));
    }
    push_caching(&mut response, etag);
    push_rate(&mut response, allowance);
    push_cors(&mut response);
    response
}

/// The client's copy is current (304): no body, the 200's caching headers.
pub(crate) fn not_modified(etag: String, allowance: Allowance) -> Response {
    let mut response = Response {
        status: 304,
        headers: Vec::new(),
        body: Cow::Borrowed(&[]),
    };
    push_caching(&mut response, etag);
    push_rate(&mut response, allowance);
    push_cors(&mut response);
    response
}

/// A refusal: `{"error": …}`, `no-store`, the headers the refusal calls
/// for, and the key's allowance once its request was counted.
pub(crate) fn refusal(head: bool, rejection: &Rejection, allowance: Option<Allowance>) -> Response {
    let mut response = Response {
        status: rejection.status(),
        headers: vec![
            ("content-type", "application/json".into()),
            ("cache-control", "no-store".into()),
        ],
        body: if head {
            Cow::Borrowed(&[])
        } else {
            Cow::Owned(rejection.body())
        },
    };
    match rejection {
        Rejection::MalformedAuthorization
        | Rejection::ApiKeyRequired
        | Rejection::InvalidApiKey => response.headers.push(("www-authenticate", "Bearer".into())),
        Rejection::MethodNotAllowed => response.headers.push(("allow", ALLOW.into())),
        Rejection::RateLimited { retry_after } => {
            response
                .headers
                .push(("retry-after", retry_after.to_string()));
        }
        _ => {}
    }
    let allowance = match rejection {
        // Over the limit: nothing is left until the window turns.
        Rejection::RateLimited { retry_after } => Some(Allowance {
            remaining: 0,
            reset: *retry_after,
        }),
        _ => allowance,
    };
    if let Some(allowance) = allowance {
        push_rate(&mut response, allowance);
    }
    push_cors(&mut response);
    response
}

/// An answer of the admin API: JSON, never kept by a cache, and without the
/// CORS headers of the endpoint, so a page of another origin cannot read it.
/// The caller adds a refusal's own header (`www-authenticate`, `allow`).
pub(crate) fn admin(head: bool, status: u16, body: Vec<u8>) -> Response {
    Response {
        status,
        headers: vec![
            ("content-type", "application/json".into()),
            ("cache-control", "no-store".into()),
        ],
        body: if head {
            Cow::Borrowed(&[])
        } else {
            Cow::Owned(body)
        },
    }
}

/// The CORS preflight answer: browsers send it without credentials.
pub(crate) fn preflight() -> Response {
    Response {
        status: 204,
        headers: vec![
            ("cache-control", "no-store".into()),
            ("allow", ALLOW.into()),
            ("access-control-allow-origin", "*".into()),
            ("access-control-allow-methods", ALLOW.into()),
            ("access-control-allow-headers", "Authorization".into()),
            ("access-control-max-age", PREFLIGHT_MAX_AGE.into()),
        ],
        body: Cow::Borrowed(&[]),
    }
}

impl Rejection {
    /// The whole response for this refusal, as the core answers it, for a
    /// shell that must answer without running an exchange (the component
    /// trapped: [`Rejection::HandlerFailed`]; the HTTP layer refused the
    /// request before it was one).
    pub fn response(&self) -> Response {
        refusal(false, self, None)
    }
}

fn push_caching(response: &mut Response, etag: String) {
    response
        .headers
        .push(("cache-control", "public, max-age=300".into()));
    // A shared cache must never hand one key's answer to another, nor an
    // answer in one content coding to a client that asked for another.
    response
        .headers
        .push(("vary", "Authorization, Accept-Encoding".into()));
    response.headers.push(("etag", etag));
}

fn push_rate(response: &mut Response, allowance: Allowance) {
    let Allowance { remaining, reset } = allowance;
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

const _: () = assert!(
    rate::RATE_LIMIT == 1000 && rate::RATE_WINDOW_MS == 60_000,
    "RATE_POLICY says q=1000;w=60"
);

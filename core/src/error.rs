//! Every way a request is refused, and the one place that turns each into a
//! status and an `error` text. The Spin component, the host and the npm
//! package all answer through here, so they cannot disagree.

use crate::params::ParamError;

/// Why a request got no pattern list.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Rejection {
    /// The path is neither `/v1/filters` nor `/api/v1/filters` (404).
    NotFound,
    /// The method is not GET, HEAD or OPTIONS (405).
    MethodNotAllowed,
    /// No `Authorization` header, an empty one, one given twice, or one not of
    /// the form `Bearer <token>` with a single token (401).
    MalformedAuthorization,
    /// `Bearer` with an empty or blank token (401).
    ApiKeyRequired,
    /// A token that is not an active key: unknown, revoked, malformed (401).
    InvalidApiKey,
    /// The key is over its limit; it may try again after this many seconds (429).
    RateLimited {
        /// Seconds until a request from this key would be admitted.
        retry_after: u64,
    },
    /// A query parameter has a value the variant does not accept (400).
    BadParameter(ParamError),
    /// The query string is longer than [`crate::MAX_QUERY_LEN`] bytes (414).
    QueryTooLong,
    /// The HTTP request itself is malformed: no `Host` header, or more than
    /// one (400). The shell's HTTP layer finds this before the request is one
    /// the core can read, and answers it through [`Rejection::response`].
    MalformedRequest,
    /// The shell's HTTP layer could not read the request at all: bad bytes
    /// in the request line or a header, an unsupported HTTP version, a
    /// message whose framing contradicts itself (400).
    UnreadableRequest,
    /// The request line is longer than the shell's HTTP layer reads (414);
    /// a long query within that limit is [`Rejection::QueryTooLong`].
    RequestLineTooLong,
    /// The header section is larger, or has more lines, than the shell's
    /// HTTP layer reads (431).
    HeadersTooLarge,
    /// The key-value store failed; nothing was written (503).
    StoreUnavailable,
    /// The runtime around the core could not handle the request at all (the
    /// component trapped or could not be instantiated); the shell answers
    /// this itself, through [`Rejection::response`] (503).
    HandlerFailed,
    /// A record in the store cannot be read (500): written by something other
    /// than the admin tool, or damaged.
    CorruptRecord,
}

impl Rejection {
    /// The HTTP status of this refusal.
    pub fn status(&self) -> u16 {
        match self {
            Rejection::NotFound => 404,
            Rejection::MethodNotAllowed => 405,
            Rejection::MalformedAuthorization
            | Rejection::ApiKeyRequired
            | Rejection::InvalidApiKey => 401,
            Rejection::RateLimited { .. } => 429,
            Rejection::BadParameter(_)
            | Rejection::MalformedRequest
            | Rejection::UnreadableRequest => 400,
            Rejection::QueryTooLong | Rejection::RequestLineTooLong => 414,
            Rejection::HeadersTooLarge => 431,
            Rejection::StoreUnavailable | Rejection::HandlerFailed => 503,
            Rejection::CorruptRecord => 500,
        }
    }

    /// The `error` text of the body.
    pub fn message(&self) -> String {
        match self {
            Rejection::NotFound => "Not found".into(),
            Rejection::MethodNotAllowed => "Method not allowed".into(),
            Rejection::MalformedAuthorization => "Missing or invalid Authorization header".into(),
            Rejection::ApiKeyRequired => "API key required".into(),
            Rejection::InvalidApiKey => "Invalid API key".into(),
            Rejection::RateLimited { .. } => "Rate limit exceeded".into(),
            Rejection::BadParameter(p) => p.to_string(),
            Rejection::QueryTooLong => ParamError::QueryTooLong.to_string(),
            Rejection::MalformedRequest => {
                "Bad request: exactly one Host header is required".into()
            }
            Rejection::UnreadableRequest => "Bad request: not a valid HTTP/1.1 request".into(),
            Rejection::RequestLineTooLong => "Request line too long".into(),
            Rejection::HeadersTooLarge => "Request header fields too large".into(),
            Rejection::StoreUnavailable => {
                "Service unavailable: the key-value store did not answer".into()
            }
            Rejection::CorruptRecord => "Internal error: a stored record cannot be read".into(),
            Rejection::HandlerFailed => {
                "Service unavailable: the request could not be handled".into()
            }
        }
    }

    /// The refusal behind a status that an HTTP layer (hyper, a proxy
    /// library) answers by itself before any request reaches the core: 400,
    /// 414 or 431. The shell replaces such an answer with this one's
    /// [`Rejection::response`], so even those carry the service's body.
    pub fn of_http_layer(status: u16) -> Option<Rejection> {
        match status {
            400 => Some(Rejection::UnreadableRequest),
            414 => Some(Rejection::RequestLineTooLong),
            431 => Some(Rejection::HeadersTooLarge),
            _ => None,
        }
    }

    /// The body: exactly `{"error":"<message>"}`.
    pub fn body(&self) -> Vec<u8> {
        error_body(&self.message())
    }
}

/// `{"error":"<message>"}` with the message JSON-escaped.
pub(crate) fn error_body(message: &str) -> Vec<u8> {
    let mut body = b"{\"error\":".to_vec();
    serde_json::to_writer(&mut body, message).expect("writing to a Vec cannot fail");
    body.push(b'}');
    body
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Rejection {}

impl From<ParamError> for Rejection {
    fn from(error: ParamError) -> Rejection {
        match error {
            ParamError::QueryTooLong => Rejection::QueryTooLong,
            other => Rejection::BadParameter(other),
        }
    }
}

//! Every way a request is refused, and the one place that turns each into a
//! status and an `error` text. The Spin component, the host and the npm
//! package all answer through here, so they cannot disagree.

use crate::params::MAX_QUERY_LEN;
use crate::pattern::Variant;

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
    /// The query string is longer than [`MAX_QUERY_LEN`] bytes (414).
    QueryTooLong,
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

/// What is wrong with a query parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParamError {
    /// A known parameter appears more than once.
    Repeated(&'static str),
    /// `minConfidence` is not a JSON number in [0, 1].
    MinConfidence,
    /// `includeCustom` is not `true` or `false`.
    IncludeCustom,
    /// A `categories` item is empty, blank, or not a category of the variant.
    UnknownCategory {
        /// The variant, whose spelling is expected.
        variant: Variant,
        /// The item as given (cut to 64 characters).
        given: String,
    },
    /// More than [`crate::params::MAX_CATEGORIES`] items in `categories`.
    TooManyCategories,
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
            Rejection::BadParameter(_) => 400,
            Rejection::QueryTooLong => 414,
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
            Rejection::BadParameter(p) => p.message(),
            Rejection::QueryTooLong => {
                format!("Query string too long: at most {MAX_QUERY_LEN} bytes are accepted")
            }
            Rejection::StoreUnavailable => {
                "Service unavailable: the key-value store did not answer".into()
            }
            Rejection::CorruptRecord => "Internal error: a stored record cannot be read".into(),
            Rejection::HandlerFailed => {
                "Service unavailable: the request could not be handled".into()
            }
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

impl ParamError {
    fn message(&self) -> String {
        match self {
            ParamError::Repeated(name) => {
                format!("Invalid query: parameter {name} is given more than once")
            }
            ParamError::MinConfidence => {
                "Invalid minConfidence: expected a number from 0 to 1, such as 0.5".into()
            }
            ParamError::IncludeCustom => "Invalid includeCustom: expected true or false".into(),
            ParamError::UnknownCategory { variant, given } => {
                let mut accepted: Vec<&str> = crate::Category::ALL
                    .iter()
                    .map(|c| c.name(*variant))
                    .collect();
                if *variant == Variant::A {
                    accepted.push(crate::pattern::CUSTOM_CATEGORY_A);
                }
                format!(
                    "Invalid categories: {given:?} is not a category; expected a comma-separated \
                     list of {}",
                    accepted.join(", ")
                )
            }
            ParamError::TooManyCategories => format!(
                "Invalid categories: at most {} values are accepted",
                crate::params::MAX_CATEGORIES
            ),
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Rejection {}

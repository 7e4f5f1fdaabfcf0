//! The admin HTTP API: keys, custom patterns, exclusions and whole accounts
//! over HTTP, served by the component itself under [`PREFIX`], so a
//! deployment whose store no one can reach (a managed Spin platform, a
//! cluster's private Redis) can still be administered. Parsed and answered
//! here, with the same [`crate::admin`] functions the CLI uses (the same
//! refusals, the same all-or-nothing writes), through steps a shell carries
//! out as it does the endpoint's: read records, list keys, and one
//! compare-and-swap per change, so concurrent admins lose nothing.
//!
//! **Off unless configured.** A shell hands in the admin tokens it was
//! configured with ([`AdminTokens::configure`]: a Spin variable marked
//! secret, the host's environment or a file). With none, every path under
//! the prefix answers exactly what any unknown path answers (the endpoint's
//! `404`), and nothing else changes.
//!
//! | # | check | answer when it fails |
//! |---|---|---|
//! | 1 | an admin token is configured | the endpoint's 404, as for any unknown path |
//! | 2 | `Authorization: Bearer <token>`, one of the configured tokens (compared in constant time) | 401 |
//! | 3 | a route of the API | 404 |
//! | 4 | a method of the route | 405 with `allow` |
//! | 5 | the body (at most [`MAX_BODY_BYTES`]) and the query | 413, 400 |
//! | 6 | the change, as [`crate::admin`] decides it | 400, 404, 409, 500 |
//! | 7 | the store | 503 (also when a record kept changing under other admins) |
//!
//! A token is checked before the route, so a client without one learns
//! nothing of the routes. Answers are JSON, `cache-control: no-store`, and
//! carry no CORS header: a page of another origin cannot read them, nor send
//! one of the JSON bodies (its preflight gets a 401). Every change and every
//! refused call comes with one log line ([`AdminAnswer::log`]): who (the
//! token's id, the first 12 hex digits of its SHA-256, never the token),
//! what, when; never a key (a key's hash prefix at most), never a token.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::admin::{self, AdminRefusal, ListedKey};
use crate::auth::KEY_RANDOM_BYTES;
use crate::custom::{CustomPatterns, NewPattern};
use crate::error::{Rejection, error_body};
use crate::exchange::{StoreError, SyncStore};
use crate::exclusion::{Exclusion, NewExclusion};
use crate::http::{Request, Response};
use crate::rate::UnixMillis;
use crate::store::{KeyRecord, Listing, RecordKey};
use crate::until::Until;

/// Every path that starts with this belongs to the admin API (when it is
/// configured). Its routes are under `/admin/v1/`.
pub const PREFIX: &str = "/admin/";
/// The largest body an admin call may send: an account document with the
/// most custom patterns an account may have ([`admin::MAX_IMPORT_BYTES`])
/// and its keys. A shell reads at most one byte more and hands that in, so
/// a larger body is refused (413) without being held whole.
pub const MAX_BODY_BYTES: usize = 2 * admin::MAX_IMPORT_BYTES as usize;
/// Fewest characters of an admin token.
pub const MIN_TOKEN_CHARS: usize = 32;
/// Most characters of an admin token.
pub const MAX_TOKEN_CHARS: usize = 512;
/// Times a change is tried again when another admin changed its record
/// between its read and its compare-and-swap.
const ATTEMPTS: u32 = 16;

/// Every route of the API, under `/admin/v1/`, with the methods it takes
/// (`docs/openapi.json` lists exactly these, under the tag `Admin`).
pub const ROUTES: [(&str, &str); 8] = [
    ("keys", "GET, POST"),
    ("keys/{prefix}/revoke", "POST"),
    ("accounts/{account}/patterns", "GET, POST"),
    ("accounts/{account}/patterns/{id}", "DELETE"),
    ("accounts/{account}/exclusions", "GET, POST"),
    ("accounts/{account}/exclusions/{kind}/{value}", "DELETE"),
    ("accounts/{account}/export", "GET"),
    ("accounts/{account}/import", "POST"),
];

/// Whether `target` (path and query) is under [`PREFIX`]: the shell then
/// answers it with [`handle`], configured or not.
pub fn is_admin(target: &str) -> bool {
    let path = target.split_once('?').map_or(target, |(path, _)| path);
    path.starts_with(PREFIX) || path == "/admin"
}

/// The admin tokens a deployment was configured with, as SHA-256 digests
/// (the tokens themselves are not kept). Several, separated by commas, so a
/// token can be replaced without a moment when none works.
#[derive(Clone)]
pub struct AdminTokens {
    digests: Vec<[u8; 32]>,
}

impl std::fmt::Debug for AdminTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AdminTokens({} configured)", self.digests.len())
    }
}

/// A configured admin token that cannot be one: the API stays off. Says
/// what a token must be, never what was given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminTokenError;

impl std::fmt::Display for AdminTokenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "an admin token is {MIN_TOKEN_CHARS} to {MAX_TOKEN_CHARS} visible ASCII characters \
             other than a comma (`openssl rand -hex 32` makes one; several are separated by \
             commas); the admin API stays off"
        )
    }
}

impl std::error::Error for AdminTokenError {}

impl AdminTokens {
    /// The tokens of a configured value (a Spin variable, an environment
    /// variable, a file's text): `None` when it is empty or blank (the API
    /// is off), an error when a token is too short, too long or holds a
    /// character outside visible ASCII.
    pub fn configure(value: &str) -> Result<Option<AdminTokens>, AdminTokenError> {
        let value = value.trim();
        if value.is_empty() {
            return Ok(None);
        }
        let mut digests = Vec::new();
        for token in value.split(',').map(str::trim) {
            let fits = (MIN_TOKEN_CHARS..=MAX_TOKEN_CHARS).contains(&token.len())
                && token.bytes().all(|b| b.is_ascii_graphic());
            if !fits {
                return Err(AdminTokenError);
            }
            digests.push(Sha256::digest(token.as_bytes()).into());
        }
        Ok(Some(AdminTokens { digests }))
    }

    /// The ids of the tokens (their SHA-256's first 12 hex digits), as
    /// audit lines name them.
    pub fn ids(&self) -> Vec<String> {
        self.digests.iter().map(id_of).collect()
    }

    /// The id of the configured token `presented` is, if it is one. Every
    /// configured digest is compared, each over all its bytes: the time
    /// taken says nothing of how much of a token was right.
    fn check(&self, presented: &str) -> Option<String> {
        let digest: [u8; 32] = Sha256::digest(presented.as_bytes()).into();
        let mut found = None;
        for configured in &self.digests {
            let difference = configured
                .iter()
                .zip(&digest)
                .fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if std::hint::black_box(difference) == 0 {
                found = Some(id_of(configured));
            }
        }
        found
    }
}

fn id_of(digest: &[u8; 32]) -> String {
    digest[..6].iter().map(|b| format!("{b:02x}")).collect()
}

/// What the shell does next for an admin call.
#[derive(Debug)]
#[must_use = "a step must be carried out and resumed"]
pub enum AdminStep {
    /// Read records.
    Read(AdminRead),
    /// List keys of a label.
    List(AdminList),
    /// Compare and swap one record.
    Swap(AdminSwap),
    /// Send this answer (and write its log line); the call is over.
    Respond(AdminAnswer),
}

/// Read `records`, then [`AdminRead::resume`] with their values in the same
/// order (`None`: absent).
#[derive(Debug)]
pub struct AdminRead {
    /// The records to read.
    pub records: Vec<RecordKey>,
    call: Call,
}

/// List the keys of [`Listing::label`] that start with [`Listing::prefix`],
/// then [`AdminList::resume`] with them (in any order).
#[derive(Debug)]
pub struct AdminList {
    /// What to list.
    pub listing: Listing,
    call: Call,
}

/// Write `value` to `record` only if it holds `expected` now (`None`:
/// absent), atomically, then [`AdminSwap::resume`] with whether it was
/// written. Spin's `wasi:keyvalue/atomics` `cas`, a Lua script on Redis,
/// one conditional statement on SQLite.
#[derive(Debug)]
pub struct AdminSwap {
    /// The record.
    pub record: RecordKey,
    /// What it must hold for the write to happen.
    pub expected: Option<Vec<u8>>,
    /// What to write.
    pub value: Vec<u8>,
    call: Call,
}

/// The answer to an admin call, and its log line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AdminAnswer {
    /// The response.
    pub response: Response,
    /// One line for the log (the shell writes it to its log, stderr under
    /// Spin) for a change or a refused call; `None` for a read or when the
    /// API is off. Printable ASCII, no key, no token.
    pub log: Option<String>,
}

impl AdminRead {
    /// Continues with the values read, one per record.
    pub fn resume(self, values: Result<Vec<Option<Vec<u8>>>, StoreError>) -> AdminStep {
        let wanted = self.records.len();
        let values = values.and_then(|v| {
            if v.len() == wanted {
                Ok(v)
            } else {
                Err(StoreError)
            }
        });
        self.call.with(Answer::Read(values))
    }
}

impl AdminList {
    /// Continues with the keys listed.
    pub fn resume(self, keys: Result<Vec<String>, StoreError>) -> AdminStep {
        let prefix = self.listing.prefix().to_owned();
        // What the listing asked for, whatever else a store listed.
        let keys = keys.map(|keys| {
            keys.into_iter()
                .filter(|k| k.starts_with(&prefix))
                .collect()
        });
        self.call.with(Answer::List(keys))
    }
}

impl AdminSwap {
    /// Continues with whether the value was written.
    pub fn resume(self, written: Result<bool, StoreError>) -> AdminStep {
        self.call.with(Answer::Swap(written))
    }
}

/// A store for [`run`]: the endpoint's, plus listing and compare-and-swap.
pub trait AdminStore: SyncStore {
    /// The keys of `listing`'s label that start with its prefix.
    fn list(&mut self, listing: &Listing) -> Result<Vec<String>, StoreError>;
    /// Writes `value` if `record` holds `expected` (`None`: absent); says
    /// whether it did.
    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<&[u8]>,
        value: &[u8],
    ) -> Result<bool, StoreError>;
}

/// Runs a whole admin call against a synchronous store (tests, the Spin
/// component).
pub fn run(
    request: &Request<'_>,
    body: &[u8],
    now: UnixMillis,
    tokens: Option<&AdminTokens>,
    random: [u8; KEY_RANDOM_BYTES],
    store: &mut impl AdminStore,
) -> AdminAnswer {
    let mut step = handle(request, body, now, tokens, random);
    loop {
        step = match step {
            AdminStep::Read(read) => {
                let values = read.records.iter().map(|r| store.get(r)).collect();
                read.resume(values)
            }
            AdminStep::List(list) => {
                let keys = store.list(&list.listing);
                list.resume(keys)
            }
            AdminStep::Swap(swap) => {
                let written = store.swap(&swap.record, swap.expected.as_deref(), &swap.value);
                swap.resume(written)
            }
            AdminStep::Respond(answer) => return answer,
        }
    }
}

/// Starts an admin call: `request` under [`PREFIX`] ([`is_admin`]), its
/// `body` (at most [`MAX_BODY_BYTES`] + 1 bytes of it), received at `now`;
/// `tokens` as configured (`None`: the API is off); `random`: bytes from
/// the shell's CSPRNG, for a key this call may create.
pub fn handle(
    request: &Request<'_>,
    body: &[u8],
    now: UnixMillis,
    tokens: Option<&AdminTokens>,
    random: [u8; KEY_RANDOM_BYTES],
) -> AdminStep {
    let head = request.method == "HEAD";
    // 1. Off: what any unknown path gets, and no line.
    let Some(tokens) = tokens else {
        return AdminStep::Respond(AdminAnswer {
            response: crate::respond::refusal(head, &Rejection::NotFound, None),
            log: None,
        });
    };
    let mut context = Context {
        head,
        method: request.method.to_owned(),
        path: request.path().to_owned(),
        token: None,
        presented: String::new(),
        now,
    };
    // 2. The token.
    let presented = match bearer(&request.header_values("authorization")) {
        Some(token) => token,
        None => return context.refuse(&Refused::MissingToken),
    };
    context.presented = presented.to_owned();
    match tokens.check(presented) {
        Some(id) => context.token = Some(id),
        None => return context.refuse(&Refused::WrongToken),
    }
    // 3 to 5. The route, the method, the body.
    let operation = match route_of(request, body) {
        Ok(operation) => operation,
        Err(refused) => return context.refuse(&refused),
    };
    Call {
        operation,
        context,
        random,
        answers: Vec::new(),
        attempts: 0,
        tried: None,
    }
    .step()
}

/// The one token of `Authorization: Bearer <token>` (scheme in any case).
fn bearer<'a>(values: &[&'a [u8]]) -> Option<&'a str> {
    let [value] = values else { return None };
    let value = std::str::from_utf8(value).ok()?.trim_matches([' ', '\t']);
    let (scheme, token) = value.split_once([' ', '\t'])?;
    let token = token.trim_matches([' ', '\t']);
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty() && !token.contains([' ', '\t']))
        .then_some(token)
}

/// What a call asks for, its route and body read.
#[derive(Debug, Clone)]
enum Operation {
    ListKeys {
        account: Option<String>,
    },
    CreateKey {
        account: String,
        label: String,
    },
    RevokeKey {
        prefix: String,
    },
    ListPatterns {
        account: String,
    },
    AddPatterns {
        account: String,
        news: Vec<NewPattern>,
    },
    RemovePattern {
        account: String,
        id: String,
    },
    ListExclusions {
        account: String,
    },
    AddExclusions {
        account: String,
        news: Vec<NewExclusion>,
    },
    RemoveExclusion {
        account: String,
        kind: String,
        value: String,
    },
    Export {
        account: String,
    },
    Import {
        account: String,
        import: admin::Import,
    },
}

/// Why a call was refused before or instead of its change.
#[derive(Debug)]
enum Refused {
    MissingToken,
    WrongToken,
    NoRoute,
    Method(&'static str),
    TooLarge,
    Body(String),
    Admin(AdminRefusal),
    Store,
    Contended,
}

impl Refused {
    fn status(&self) -> u16 {
        match self {
            Refused::MissingToken | Refused::WrongToken => 401,
            Refused::NoRoute => 404,
            Refused::Method(_) => 405,
            Refused::TooLarge => 413,
            Refused::Body(_) => 400,
            Refused::Store | Refused::Contended => 503,
            Refused::Admin(refusal) => match refusal {
                AdminRefusal::NoKeyWithPrefix(_)
                | AdminRefusal::NoSuchKey
                | AdminRefusal::NoSuchPattern(_)
                | AdminRefusal::NoSuchExclusion(_) => 404,
                AdminRefusal::KeyExists | AdminRefusal::ImportConflict(_) => 409,
                AdminRefusal::UnreadableKeyRecord
                | AdminRefusal::UnreadablePatterns
                | AdminRefusal::RandomBytes { .. } => 500,
                _ => 400,
            },
        }
    }

    fn message(&self) -> String {
        match self {
            Refused::MissingToken => Rejection::MalformedAuthorization.message(),
            Refused::WrongToken => "Invalid admin token".into(),
            Refused::NoRoute => Rejection::NotFound.message(),
            Refused::Method(_) => Rejection::MethodNotAllowed.message(),
            Refused::TooLarge => {
                format!("Request body too large: at most {MAX_BODY_BYTES} bytes are accepted")
            }
            Refused::Body(why) => format!("Invalid request body: {why}"),
            Refused::Admin(refusal) => refusal.to_string(),
            Refused::Store => Rejection::StoreUnavailable.message(),
            Refused::Contended => "Service unavailable: the record kept changing under other \
                                   admins; nothing written, try again"
                .into(),
        }
    }
}

/// Reads the route, the method and the body.
fn route_of(request: &Request<'_>, body: &[u8]) -> Result<Operation, Refused> {
    let path = request.path();
    let rest = path.strip_prefix("/admin/v1/").ok_or(Refused::NoRoute)?;
    let segments: Vec<&str> = rest.split('/').collect();
    let method = request.method;
    if body.len() > MAX_BODY_BYTES {
        return Err(Refused::TooLarge);
    }
    let allow = |allowed: &'static str| -> Result<(), Refused> {
        if allowed.split(", ").any(|m| m == method) {
            Ok(())
        } else {
            Err(Refused::Method(allowed))
        }
    };
    let owned = |s: &str| s.to_owned();
    match segments[..] {
        ["keys"] => {
            allow("GET, POST")?;
            if method == "GET" {
                let account = query_value(request.query(), "account")?;
                Ok(Operation::ListKeys { account })
            } else {
                let new: NewKeyBody = json(body)?;
                Ok(Operation::CreateKey {
                    account: new.account,
                    label: new.label,
                })
            }
        }
        ["keys", prefix, "revoke"] => {
            allow("POST")?;
            Ok(Operation::RevokeKey {
                prefix: owned(prefix),
            })
        }
        ["accounts", account, "patterns"] => {
            allow("GET, POST")?;
            let account = owned(account);
            if method == "GET" {
                Ok(Operation::ListPatterns { account })
            } else {
                let news = one_or_many::<NewPattern>(body)?;
                Ok(Operation::AddPatterns { account, news })
            }
        }
        ["accounts", account, "patterns", id] => {
            allow("DELETE")?;
            Ok(Operation::RemovePattern {
                account: owned(account),
                id: owned(id),
            })
        }
        ["accounts", account, "exclusions"] => {
            allow("GET, POST")?;
            let account = owned(account);
            if method == "GET" {
                Ok(Operation::ListExclusions { account })
            } else {
                let news = one_or_many::<NewExclusion>(body)?;
                Ok(Operation::AddExclusions { account, news })
            }
        }
        ["accounts", account, "exclusions", kind, value] => {
            allow("DELETE")?;
            Ok(Operation::RemoveExclusion {
                account: owned(account),
                kind: owned(kind),
                value: owned(value),
            })
        }
        ["accounts", account, "export"] => {
            allow("GET")?;
            Ok(Operation::Export {
                account: owned(account),
            })
        }
        ["accounts", account, "import"] => {
            allow("POST")?;
            let import = admin::import_account(body, Some(account)).map_err(Refused::Admin)?;
            Ok(Operation::Import {
                account: owned(account),
                import,
            })
        }
        _ => Err(Refused::NoRoute),
    }
}

/// The body of `POST /admin/v1/keys`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewKeyBody {
    account: String,
    #[serde(default)]
    label: String,
}

fn json<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, Refused> {
    serde_json::from_slice(body).map_err(|e| Refused::Body(e.to_string()))
}

/// One object, or an array of them (all or none).
fn one_or_many<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<Vec<T>, Refused> {
    let first = body.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'[') {
        json(body)
    } else {
        json(body).map(|one| vec![one])
    }
}

/// The value of query parameter `name`, if given once (twice: 400).
fn query_value(query: &str, name: &str) -> Result<Option<String>, Refused> {
    let mut found = None;
    for (key, value) in form_urlencoded::parse(query.as_bytes()) {
        if key == name && found.replace(value.into_owned()).is_some() {
            return Err(Refused::Body(format!(
                "parameter {name} is given more than once"
            )));
        }
    }
    Ok(found)
}

/// What every line and answer of one call needs.
#[derive(Debug)]
struct Context {
    /// A HEAD request: answers carry no body.
    head: bool,
    method: String,
    path: String,
    /// The id of the token that authenticated the call.
    token: Option<String>,
    /// The token presented, so a log line can never hold it.
    presented: String,
    now: UnixMillis,
}

impl Context {
    fn refuse(&self, refused: &Refused) -> AdminStep {
        let message = refused.message();
        let mut response = crate::respond::admin(self.head, refused.status(), error_body(&message));
        match refused {
            Refused::MissingToken | Refused::WrongToken => {
                response.headers.push(("www-authenticate", "Bearer".into()));
            }
            Refused::Method(allow) => response.headers.push(("allow", (*allow).into())),
            _ => {}
        }
        // Without a valid token the path is not logged: a token pasted into
        // the URL is not the one presented, so nothing else could take it
        // out of the line (only the tokens' digests are known here).
        let path = match refused {
            Refused::MissingToken | Refused::WrongToken => "-".to_owned(),
            _ => self.printable(&self.path, 256, false),
        };
        let mut line = format!(
            "admin: refused status={} method={} path={path}",
            refused.status(),
            self.printable(&self.method, 24, false),
        );
        if let Some(token) = &self.token {
            line.push_str(&format!(" token={token}"));
        }
        line.push_str(&format!(
            " at={} reason=\"{}\"",
            Until(self.now),
            self.printable(&message, 300, true)
        ));
        AdminStep::Respond(AdminAnswer {
            response,
            log: Some(line),
        })
    }

    fn done(&self, status: u16, body: Vec<u8>, audit: Option<String>) -> AdminStep {
        let log = audit.map(|what| {
            format!(
                "admin: audit token={} {what} at={}",
                self.token.as_deref().unwrap_or("-"),
                Until(self.now)
            )
        });
        AdminStep::Respond(AdminAnswer {
            response: crate::respond::admin(self.head, status, body),
            log,
        })
    }

    /// `text` as a log line may hold it ([`printable`]), the token that was
    /// presented and anything shaped like an API key taken out.
    fn printable(&self, text: &str, max: usize, spaces: bool) -> String {
        let mut text = Cow::Borrowed(text);
        if !self.presented.is_empty() && text.contains(&self.presented) {
            text = Cow::Owned(text.replace(&self.presented, "***"));
        }
        printable(&crate::auth::redact_keys(&text), max, spaces)
    }
}

/// At most `max` characters of `text`, each outside printable ASCII (and
/// `"` and `\`; a space unless `spaces`) written `%XX` per byte, `...` after
/// a cut: a line a client's text cannot break, extend past a few hundred
/// bytes, or add a field to.
fn printable(text: &str, max: usize, spaces: bool) -> String {
    let mut out = String::new();
    for (n, c) in text.chars().enumerate() {
        if n == max {
            out.push_str("...");
            break;
        }
        if c.is_ascii_graphic() && c != '"' && c != '\\' || (spaces && c == ' ') {
            out.push(c);
        } else {
            let mut bytes = [0u8; 4];
            for b in c.encode_utf8(&mut bytes).bytes() {
                out.push_str(&format!("%{b:02X}"));
            }
        }
    }
    out
}

/// One store answer, in the order the call asked.
#[derive(Debug, Clone)]
enum Answer {
    Read(Result<Vec<Option<Vec<u8>>>, StoreError>),
    List(Result<Vec<String>, StoreError>),
    Swap(Result<bool, StoreError>),
}

/// A call between steps: what it asks for, and what the store has answered
/// so far. Its operation runs again from the top after every answer, each
/// store call taking the answer recorded at its place (the operation is a
/// pure function of them), so the whole of each operation reads as one
/// function below; a record that changed under it starts it over.
#[derive(Debug)]
struct Call {
    operation: Operation,
    context: Context,
    random: [u8; KEY_RANDOM_BYTES],
    answers: Vec<Answer>,
    attempts: u32,
    /// What the last try wrote in a compare-and-swap that did not report
    /// success: it may have landed all the same (a store that lost the
    /// report, as Spin's Redis compare-and-swap does), which the next try
    /// checks before it changes anything again.
    tried: Option<Vec<u8>>,
}

/// Why an operation stopped before its answer.
enum Flow {
    /// It needs this store call answered.
    Need(Need),
    /// The store failed.
    Store,
    /// A compare-and-swap did not report that it wrote this value (the
    /// record changed, or the report was lost): start over.
    Changed(Vec<u8>),
    /// Refused.
    Refused(AdminRefusal),
}

enum Need {
    Read(Vec<RecordKey>),
    List(Listing),
    Swap(RecordKey, Option<Vec<u8>>, Vec<u8>),
}

impl From<AdminRefusal> for Flow {
    fn from(refusal: AdminRefusal) -> Flow {
        Flow::Refused(refusal)
    }
}

/// The store as an operation sees it on one run: answers recorded so far.
struct Replay<'a> {
    answers: &'a [Answer],
    at: usize,
}

impl Replay<'_> {
    fn next(&mut self) -> Option<&Answer> {
        let answer = self.answers.get(self.at);
        self.at += 1;
        answer
    }

    fn read(&mut self, records: Vec<RecordKey>) -> Result<Vec<Option<Vec<u8>>>, Flow> {
        match self.next() {
            None => Err(Flow::Need(Need::Read(records))),
            Some(Answer::Read(Ok(values))) => Ok(values.clone()),
            Some(_) => Err(Flow::Store),
        }
    }

    fn get(&mut self, record: &RecordKey) -> Result<Option<Vec<u8>>, Flow> {
        Ok(self.read(vec![record.clone()])?.pop().flatten())
    }

    fn list(&mut self, listing: Listing) -> Result<Vec<String>, Flow> {
        match self.next() {
            None => Err(Flow::Need(Need::List(listing))),
            Some(Answer::List(Ok(keys))) => Ok(keys.clone()),
            Some(_) => Err(Flow::Store),
        }
    }

    fn swap(
        &mut self,
        record: &RecordKey,
        expected: Option<Vec<u8>>,
        value: Vec<u8>,
    ) -> Result<bool, Flow> {
        match self.next() {
            None => Err(Flow::Need(Need::Swap(record.clone(), expected, value))),
            Some(Answer::Swap(Ok(written))) => Ok(*written),
            Some(_) => Err(Flow::Store),
        }
    }

    /// Writes `value` over `expected`, or starts the operation over. A
    /// value already there is not written again (a change made twice, or
    /// one an earlier try made without its report). A swap reported done
    /// is read back: the store's report is not the only word on it
    /// (docs/SERVING.md, "Compare-and-swap under Spin").
    fn replace(
        &mut self,
        record: &RecordKey,
        expected: Option<Vec<u8>>,
        value: Vec<u8>,
    ) -> Result<(), Flow> {
        if expected.as_deref() == Some(value.as_slice()) {
            return Ok(());
        }
        if self.swap(record, expected, value.clone())?
            && self.get(record)?.as_deref() == Some(value.as_slice())
        {
            Ok(())
        } else {
            Err(Flow::Changed(value))
        }
    }

    /// Every key record (for a listing or an export): `(store key, value)`.
    fn key_records(&mut self) -> Result<Vec<(String, Vec<u8>)>, Flow> {
        let keys = self.list(admin::key_listing())?;
        let records: Vec<RecordKey> = keys
            .iter()
            .filter_map(|k| RecordKey::parse_api_key(k).map(|(record, _)| record))
            .collect();
        let values = self.read(records.clone())?;
        Ok(records
            .into_iter()
            .zip(values)
            // A key deleted between the listing and the read is not listed.
            .filter_map(|(record, value)| Some((record.key().to_owned(), value?)))
            .collect())
    }
}

/// An admin answer's body and log line, once the operation is done.
struct Done {
    status: u16,
    body: Vec<u8>,
    audit: Option<String>,
}

impl Call {
    fn with(mut self, answer: Answer) -> AdminStep {
        self.answers.push(answer);
        self.step()
    }

    fn step(mut self) -> AdminStep {
        loop {
            let mut replay = Replay {
                answers: &self.answers,
                at: 0,
            };
            let outcome = perform(
                &self.operation,
                &mut replay,
                self.context.now,
                &self.random,
                self.tried.as_deref(),
            );
            let need = match outcome {
                Ok(done) => return self.context.done(done.status, done.body, done.audit),
                Err(Flow::Refused(refusal)) => {
                    return self.context.refuse(&Refused::Admin(refusal));
                }
                Err(Flow::Store) => return self.context.refuse(&Refused::Store),
                Err(Flow::Changed(value)) => {
                    self.attempts += 1;
                    if self.attempts >= ATTEMPTS {
                        return self.context.refuse(&Refused::Contended);
                    }
                    // Another admin got in between: everything is read
                    // again, the change made again from what is there now
                    // (unless this one's landed after all).
                    self.answers.clear();
                    self.tried = Some(value);
                    continue;
                }
                Err(Flow::Need(need)) => need,
            };
            return match need {
                Need::Read(records) => AdminStep::Read(AdminRead {
                    records,
                    call: self,
                }),
                Need::List(listing) => AdminStep::List(AdminList {
                    listing,
                    call: self,
                }),
                Need::Swap(record, expected, value) => AdminStep::Swap(AdminSwap {
                    record,
                    expected,
                    value,
                    call: self,
                }),
            };
        }
    }
}

/// The ids of the patterns an earlier try added (the last `count` of the
/// record it tried to write), when every one of them is in `current` as it
/// was written: that try landed, only its report was lost. (Ids are never
/// given twice, so no other change can have put them there.)
fn landed_additions(current: Option<&[u8]>, tried: &[u8], count: usize) -> Option<Vec<String>> {
    let tried = CustomPatterns::decode(tried)?;
    let current = CustomPatterns::decode(current?)?;
    let added = &tried.patterns[tried.patterns.len().checked_sub(count)?..];
    added
        .iter()
        .all(|p| current.patterns.contains(p))
        .then(|| added.iter().map(|p| p.id.clone()).collect())
}

/// One operation, from the top, over the answers so far; `tried`: what an
/// earlier try wrote without a report that it landed. A change that may
/// have landed is checked for before it is made again, so a lost report
/// never makes it twice (a pattern added twice, a removal refused as of
/// nothing).
fn perform(
    operation: &Operation,
    store: &mut Replay<'_>,
    now: UnixMillis,
    random: &[u8; KEY_RANDOM_BYTES],
    tried: Option<&[u8]>,
) -> Result<Done, Flow> {
    let done = |status, body: Vec<u8>, audit: Option<String>| {
        Ok(Done {
            status,
            body,
            audit,
        })
    };
    match operation {
        Operation::ListKeys { account } => {
            let records = store.key_records()?;
            let keys = admin::list_keys(&records, account.as_deref())?;
            done(200, body::keys(&keys), None)
        }
        Operation::CreateKey { account, label } => {
            let made = admin::create_key(random, account, label, now)?;
            let record = KeyRecord::decode(&made.record.value).ok_or(AdminRefusal::NoSuchKey)?;
            if !store.swap(&made.record.record, None, made.record.value.clone())?
                // Not reported written: it is, if its bytes are there.
                && store.get(&made.record.record)?.as_ref() != Some(&made.record.value)
            {
                return Err(AdminRefusal::KeyExists.into());
            }
            let hash = made.key.hash();
            let audit = format!("action=keys.create account={account} key={}", hash.short());
            let created = body::created_key(made.key.expose(), &hash, &record);
            done(201, created, Some(audit))
        }
        Operation::RevokeKey { prefix } => {
            let search = admin::key_search(prefix)?;
            let listed = store.list(search.clone())?;
            let (record, hash) = admin::find_key(search.prefix(), &listed)?;
            let current = store.get(&record)?;
            let revocation = admin::revoke_key(current.as_deref(), now)?;
            if revocation.already.is_none() {
                store.replace(&record, current, revocation.value.clone())?;
            }
            // Revoked by this call's earlier try, whose report was lost.
            let ours = tried.and_then(KeyRecord::decode).and_then(|r| r.revoked);
            let already = revocation.already.is_some() && revocation.already != ours;
            let audit = (!already).then(|| {
                format!(
                    "action=keys.revoke account={} key={}",
                    revocation.account,
                    hash.short()
                )
            });
            let at = revocation
                .already
                .clone()
                .or_else(|| KeyRecord::decode(&revocation.value).and_then(|r| r.revoked));
            let revoked = body::Revoked {
                hash: hash.as_str().to_owned(),
                account: revocation.account.to_string(),
                revoked: at.unwrap_or_default(),
                already,
            };
            done(200, body::revoked(&revoked), audit)
        }
        Operation::ListPatterns { account } => {
            let record = admin::patterns_record(account)?;
            let patterns = admin::read_patterns(store.get(&record)?.as_deref())?;
            done(200, body::patterns(&patterns.patterns), None)
        }
        Operation::AddPatterns { account, news } => {
            let record = admin::patterns_record(account)?;
            let current = store.get(&record)?;
            let landed = tried.and_then(|t| landed_additions(current.as_deref(), t, news.len()));
            let ids = match landed {
                Some(ids) => ids,
                None => {
                    let added = admin::add_patterns(current.as_deref(), news.clone(), now)?;
                    store.replace(&record, current, added.value)?;
                    added.ids
                }
            };
            let audit = format!(
                "action=patterns.add account={account} ids={}",
                ids.join(",")
            );
            done(201, body::added(&ids), Some(audit))
        }
        Operation::RemovePattern { account, id } => {
            let record = admin::patterns_record(account)?;
            let current = store.get(&record)?;
            match admin::remove_pattern(current.as_deref(), id, now) {
                Ok(value) => store.replace(&record, current, value)?,
                // Gone since the earlier try, whose report was lost.
                Err(AdminRefusal::NoSuchPattern(_)) if tried.is_some() => {}
                Err(refusal) => return Err(refusal.into()),
            }
            let audit = format!("action=patterns.remove account={account} id={id}");
            done(200, body::removed_pattern(id), Some(audit))
        }
        Operation::ListExclusions { account } => {
            let record = admin::patterns_record(account)?;
            let patterns = admin::read_patterns(store.get(&record)?.as_deref())?;
            done(200, body::exclusions(&patterns.exclusions), None)
        }
        Operation::AddExclusions { account, news } => {
            let record = admin::patterns_record(account)?;
            let current = store.get(&record)?;
            let added = admin::add_exclusions(current.as_deref(), news.clone(), now)?;
            store.replace(&record, current, added.value)?;
            let what: Vec<String> = added
                .exclusions
                .iter()
                .map(|e| match e.until {
                    Some(until) => format!("{}@{until}", e.excluded.stored()),
                    None => e.excluded.stored(),
                })
                .collect();
            let audit = format!(
                "action=exclusions.add account={account} excluded={}",
                what.join(",")
            );
            done(201, body::exclusions(&added.exclusions), Some(audit))
        }
        Operation::RemoveExclusion {
            account,
            kind,
            value,
        } => {
            let record = admin::patterns_record(account)?;
            let current = store.get(&record)?;
            let excluded = match admin::remove_exclusion(current.as_deref(), kind, value, now) {
                Ok((new, excluded)) => {
                    store.replace(&record, current, new)?;
                    excluded
                }
                // Gone since the earlier try, whose report was lost.
                Err(AdminRefusal::NoSuchExclusion(_)) if tried.is_some() => {
                    crate::exclusion::Excluded::named(kind, value).map_err(AdminRefusal::from)?
                }
                Err(refusal) => return Err(refusal.into()),
            };
            let audit = format!(
                "action=exclusions.remove account={account} excluded={}",
                excluded.stored()
            );
            let removed = Exclusion {
                excluded,
                until: None,
            };
            done(200, body::removed_exclusion(&removed), Some(audit))
        }
        Operation::Export { account } => {
            let record = admin::patterns_record(account)?;
            let records = store.key_records()?;
            let current = store.get(&record)?;
            let export = admin::export_account(account, &records, current.as_deref())?;
            done(200, body::export(&export), None)
        }
        Operation::Import { account, import } => {
            let mut records: Vec<RecordKey> =
                import.keys.iter().map(|w| w.record.clone()).collect();
            records.push(import.custom.record.clone());
            let current = store.read(records)?;
            let writes: Vec<&admin::Write> = import.keys.iter().chain([&import.custom]).collect();
            // Every record checked before any is written: a conflict
            // anywhere writes nothing.
            let mut needed = Vec::with_capacity(writes.len());
            for (write, current) in writes.iter().zip(&current) {
                needed.push(admin::import_write(write, current.as_deref())?);
            }
            for (write, needed) in writes.iter().zip(&needed) {
                if *needed {
                    store.replace(&write.record, None, write.value.clone())?;
                }
            }
            let keys = needed[..import.keys.len()].iter().filter(|n| **n).count();
            let custom = needed[import.keys.len()];
            let report = body::Imported {
                account: account.clone(),
                keys_written: keys,
                keys_present: import.keys.len() - keys,
                custom_written: custom,
            };
            let audit = format!(
                "action=account.import account={account} keys_written={keys} custom_written={custom}"
            );
            done(200, body::imported(&report), Some(audit))
        }
    }
}

/// The bodies of the admin API's answers, also what the CLI prints with
/// `--json` for the same command on a local store: one shape either way.
pub mod body {
    use super::*;

    /// A key as listed: its hash (never the key) and record.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Key {
        /// SHA-256 of the key, 64 hex digits.
        pub hash: String,
        /// The account (absent: the record is unreadable).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub account: Option<String>,
        /// Its label.
        #[serde(default)]
        pub label: String,
        /// When it was created.
        #[serde(default)]
        pub created: String,
        /// When it was revoked (absent: active).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub revoked: Option<String>,
    }

    /// `{"keys": [...]}`.
    pub fn keys(keys: &[ListedKey]) -> Vec<u8> {
        let keys: Vec<Key> = keys
            .iter()
            .map(|k| Key {
                hash: k.hash.as_str().to_owned(),
                account: k.record.as_ref().map(|r| r.account.to_string()),
                label: k
                    .record
                    .as_ref()
                    .map(|r| r.label.clone())
                    .unwrap_or_default(),
                created: k
                    .record
                    .as_ref()
                    .map(|r| r.created.clone())
                    .unwrap_or_default(),
                revoked: k.record.as_ref().and_then(|r| r.revoked.clone()),
            })
            .collect();
        to_json(&serde_json::json!({ "keys": keys }))
    }

    /// A new key: the key itself (shown this once, never stored), its hash
    /// and record.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct CreatedKey {
        /// The key.
        pub key: String,
        /// Its SHA-256, 64 hex digits.
        pub hash: String,
        /// Its account.
        pub account: String,
        /// Its label.
        pub label: String,
        /// When it was created.
        pub created: String,
    }

    /// A new key, as JSON ([`CreatedKey`]).
    pub fn created_key(key: &str, hash: &crate::KeyHash, record: &KeyRecord) -> Vec<u8> {
        to_json(&CreatedKey {
            key: key.to_owned(),
            hash: hash.as_str().to_owned(),
            account: record.account.to_string(),
            label: record.label.clone(),
            created: record.created.clone(),
        })
    }

    /// A revocation: the key's hash and account, when it was revoked, and
    /// whether it had been before (then nothing changed).
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Revoked {
        /// The key's hash.
        pub hash: String,
        /// Its account.
        pub account: String,
        /// When it was revoked.
        pub revoked: String,
        /// Whether it had been revoked before.
        pub already: bool,
    }

    /// A revocation, as JSON.
    pub fn revoked(revoked: &Revoked) -> Vec<u8> {
        to_json(revoked)
    }

    /// `{"patterns": [...]}`: every custom pattern of the account, those
    /// whose end has passed included (with their `until`).
    pub fn patterns(patterns: &[crate::CustomPattern]) -> Vec<u8> {
        to_json(&serde_json::json!({ "patterns": patterns }))
    }

    /// `{"ids": [...]}`: the ids of patterns just added.
    pub fn added(ids: &[String]) -> Vec<u8> {
        to_json(&serde_json::json!({ "ids": ids }))
    }

    /// `{"removed": "<id>"}`.
    pub fn removed_pattern(id: &str) -> Vec<u8> {
        to_json(&serde_json::json!({ "removed": id }))
    }

    /// `{"exclusions": [...]}`.
    pub fn exclusions(exclusions: &[Exclusion]) -> Vec<u8> {
        to_json(&serde_json::json!({ "exclusions": exclusions }))
    }

    /// `{"removed": {"id": …}}` or `{"removed": {"category": …}}`.
    pub fn removed_exclusion(exclusion: &Exclusion) -> Vec<u8> {
        to_json(&serde_json::json!({ "removed": exclusion }))
    }

    /// An account document ([`admin::AccountExport`]).
    pub fn export(export: &admin::AccountExport) -> Vec<u8> {
        to_json(export)
    }

    /// What an import wrote.
    #[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
    pub struct Imported {
        /// The account.
        pub account: String,
        /// Keys written.
        pub keys_written: usize,
        /// Keys already there, the same.
        pub keys_present: usize,
        /// Whether the account's record was written (else it was there,
        /// the same).
        pub custom_written: bool,
    }

    /// What an import wrote, as JSON.
    pub fn imported(report: &Imported) -> Vec<u8> {
        to_json(report)
    }

    fn to_json(value: &impl Serialize) -> Vec<u8> {
        serde_json::to_vec(value).expect("plain data serializes")
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    #[test]
    fn tokens_are_configured_checked_and_named_by_their_hash() {
        assert!(AdminTokens::configure("").unwrap().is_none());
        assert!(AdminTokens::configure("  \n").unwrap().is_none());
        assert_eq!(
            AdminTokens::configure("short").unwrap_err(),
            AdminTokenError
        );
        assert!(AdminTokens::configure(&format!("{} x", "a".repeat(40))).is_err());
        assert!(AdminTokens::configure(&"a".repeat(MAX_TOKEN_CHARS + 1)).is_err());
        let (one, two) = ("a".repeat(32), "b".repeat(64));
        let tokens = AdminTokens::configure(&format!(" {one} , {two}\n"))
            .unwrap()
            .unwrap();
        let ids = tokens.ids();
        assert_eq!(ids.len(), 2);
        assert_eq!(tokens.check(&one), Some(ids[0].clone()));
        assert_eq!(tokens.check(&two), Some(ids[1].clone()));
        assert_eq!(tokens.check(&"a".repeat(31)), None);
        assert_eq!(tokens.check(""), None);
        assert_eq!(ids[0].len(), 12);
        assert!(!format!("{tokens:?}").contains(&one));
        assert!(!AdminTokenError.to_string().contains(&one));
    }

    #[test]
    fn log_text_is_printable_and_holds_no_key() {
        assert_eq!(printable("a\"b\\c\nd", 100, true), "a%22b%5Cc%0Ad");
        assert_eq!(printable("a b", 100, true), "a b");
        assert_eq!(printable("a b", 100, false), "a%20b");
        assert_eq!(printable("é", 100, true), "%C3%A9");
        assert_eq!(printable("abcdef", 3, true), "abc...");
        let key = crate::ApiKey::from_random([7; 24]);
        let text = format!("/admin/v1/keys/{}/revoke", key.expose());
        let redacted = crate::auth::redact_keys(&text);
        assert_eq!(redacted, "/admin/v1/keys/nf_***/revoke");
        assert_eq!(crate::auth::redact_keys("nf_ and nf_zz"), "nf_ and nf_zz");
    }

    /// Every route of [`ROUTES`] is one, taking exactly its methods.
    #[test]
    fn the_routes_are_the_ones_listed() {
        for (route, methods) in ROUTES {
            let path = format!(
                "/admin/v1/{}",
                route
                    .replace("{prefix}", "abcdef")
                    .replace("{account}", "acme")
                    .replace("{id}", "custom-1")
                    .replace("{kind}", "id")
                    .replace("{value}", "googlebot")
            );
            for method in ["GET", "POST", "DELETE", "PUT", "PATCH"] {
                let request = Request {
                    method,
                    target: &path,
                    headers: &[],
                };
                match route_of(&request, b"{}") {
                    Err(Refused::NoRoute) => panic!("{method} {path}: no route"),
                    Err(Refused::Method(allow)) => {
                        assert_eq!(allow, methods, "{method} {path}");
                        assert!(!methods.split(", ").any(|m| m == method), "{method} {path}");
                    }
                    _ => assert!(methods.split(", ").any(|m| m == method), "{method} {path}"),
                }
            }
        }
    }

    #[test]
    fn the_prefix_is_everything_under_admin() {
        for yes in [
            "/admin/",
            "/admin",
            "/admin?x",
            "/admin/v1/keys",
            "/admin/v2?x",
            "/admin/v1/keys?account=a",
        ] {
            assert!(is_admin(yes), "{yes}");
        }
        for no in [
            "/v1/filters",
            "/administrator",
            "/api/v1/filters",
            "/v1/admin/",
        ] {
            assert!(!is_admin(no), "{no}");
        }
    }
}

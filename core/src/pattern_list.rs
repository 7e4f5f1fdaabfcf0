//! Reading pattern lists for the matcher: a list of pattern objects
//! (`[{id, pattern, type?, category?, confidence?}]`) or a response body of
//! either variant (`{"patterns": [...]}`), from whatever JSON-like values a
//! shell holds: parsed JSON natively ([`crate::Matcher::from_response`]),
//! JavaScript values in the npm package. The shell only says what each value
//! is ([`Json`]); the core reads the fields, applies the defaults (type
//! `string`, category empty, confidence 1) and words every refusal, so
//! every shell refuses the same lists with the same texts.

use crate::pattern::{InvalidPattern, Kind, MatcherPattern};

/// What a value is, as the shell holding it sees it.
#[derive(Debug)]
pub enum Value<V> {
    /// No value: a missing field (JavaScript's `undefined`).
    Absent,
    /// `null`.
    Null,
    /// A boolean.
    Bool,
    /// A number.
    Number(f64),
    /// A string.
    String(String),
    /// A list (a JavaScript array or other iterable), with its items.
    List(Vec<V>),
    /// An object, whose fields are read with [`Json::field`].
    Object,
    /// Anything else (a JavaScript `bigint` or `symbol`).
    Other,
}

/// A JSON-like value pattern lists are read from.
pub trait Json: Sized {
    /// What this value is.
    fn value(&self) -> Value<Self>;
    /// Field `name` of an object ([`Value::Absent`] when it has none).
    fn field(&self, name: &str) -> Self;
}

/// The patterns of a list of pattern objects; refusals start with
/// `invalid pattern: `.
pub fn read_patterns(list: &impl Json) -> Result<Vec<MatcherPattern>, InvalidPattern> {
    read_list(list.value(), "invalid pattern: ")
}

/// The patterns of a response body of either variant (`{"patterns": [...]}`;
/// absent fields as for [`read_patterns`]); refusals start with
/// `not a pattern list response: `.
pub fn read_response(body: &impl Json) -> Result<Vec<MatcherPattern>, InvalidPattern> {
    match body.value() {
        Value::Object => match body.field("patterns").value() {
            Value::Absent => Err(refuse(RESPONSE, "missing field `patterns`")),
            list => read_list(list, RESPONSE),
        },
        other => Err(refuse(
            RESPONSE,
            format_args!("expected an object with `patterns`, found {}", other.kind()),
        )),
    }
}

/// The refusal of a response body that is not JSON at all (`error`: the
/// parser's explanation).
pub fn not_json(error: impl std::fmt::Display) -> InvalidPattern {
    refuse(RESPONSE, error)
}

const RESPONSE: &str = "not a pattern list response: ";

fn refuse(prefix: &str, what: impl std::fmt::Display) -> InvalidPattern {
    InvalidPattern(format!("{prefix}{what}"))
}

fn read_list<V: Json>(list: Value<V>, prefix: &str) -> Result<Vec<MatcherPattern>, InvalidPattern> {
    // `place`: where in the list (`patterns[2].id: `).
    let wrong = |place: std::fmt::Arguments<'_>, expected: &str, found: &Value<V>| {
        refuse(
            prefix,
            format_args!("{place}expected {expected}, found {}", found.kind()),
        )
    };
    let items = match list {
        Value::List(items) => items,
        other => return Err(wrong(format_args!(""), "a list of patterns", &other)),
    };
    let read = |(i, item): (usize, &V)| {
        match item.value() {
            Value::Object => {}
            other => return Err(wrong(format_args!("patterns[{i}]: "), "an object", &other)),
        }
        // A text field: `None` when absent.
        let text = |name: &str| match item.field(name).value() {
            Value::String(text) => Ok(Some(text)),
            Value::Absent => Ok(None),
            other => Err(wrong(
                format_args!("patterns[{i}].{name}: "),
                "a string",
                &other,
            )),
        };
        let required = |name: &str| {
            text(name)?.ok_or_else(|| {
                refuse(
                    prefix,
                    format_args!("patterns[{i}]: missing field `{name}`"),
                )
            })
        };
        let (id, pattern) = (required("id")?, required("pattern")?);
        let kind = match text("type")?.as_deref() {
            None | Some("string") => Kind::String,
            Some("regex") => Kind::Regex,
            Some(other) => {
                let why =
                    format!("patterns[{i}].type: expected `string` or `regex`, found `{other}`");
                return Err(refuse(prefix, why));
            }
        };
        let category = text("category")?.unwrap_or_default();
        let confidence = match item.field("confidence").value() {
            Value::Absent => 1.0,
            Value::Number(n) if n.is_finite() => n,
            other => {
                let (place, expected) = (format!("patterns[{i}].confidence: "), "a finite number");
                return Err(wrong(format_args!("{place}"), expected, &other));
            }
        };
        Ok(MatcherPattern {
            id,
            pattern,
            kind,
            category,
            confidence,
        })
    };
    items.iter().enumerate().map(read).collect()
}

impl<V> Value<V> {
    /// The kind of value, for refusals (never the value: a number would
    /// bring float formatting into the matcher-only wasm).
    fn kind(&self) -> &'static str {
        match self {
            Value::Absent => "nothing",
            Value::Null => "null",
            Value::Bool => "a boolean",
            Value::Number(n) if n.is_finite() => "a number",
            Value::Number(_) => "a non-finite number",
            Value::String(_) => "a string",
            Value::List(_) => "a list",
            Value::Object => "an object",
            Value::Other => "a value of another type",
        }
    }
}

/// Parsed JSON (`None`: an absent field).
impl Json for Option<&serde_json::Value> {
    fn value(&self) -> Value<Self> {
        use serde_json::Value as J;
        match self {
            None => Value::Absent,
            Some(J::Null) => Value::Null,
            Some(J::Bool(_)) => Value::Bool,
            Some(J::Number(n)) => n.as_f64().map_or(Value::Other, Value::Number),
            Some(J::String(s)) => Value::String(s.clone()),
            Some(J::Array(items)) => Value::List(items.iter().map(Some).collect()),
            Some(J::Object(_)) => Value::Object,
        }
    }

    fn field(&self, name: &str) -> Self {
        self.and_then(|v| v.get(name))
    }
}

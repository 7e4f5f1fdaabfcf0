//! The query parameters: `categories`, `minConfidence`, `includeCustom`.

use crate::pattern::{CUSTOM_CATEGORY_A, Category, DEFAULT_MIN_CONFIDENCE, Variant};

/// Longest query string accepted, in bytes (longer: 414).
pub const MAX_QUERY_LEN: usize = 2048;
/// Most items accepted in `categories` (more: 400).
pub const MAX_CATEGORIES: usize = 16;
/// `includeCustom` when the parameter is absent.
pub const DEFAULT_INCLUDE_CUSTOM: bool = true;

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
    /// More than [`MAX_CATEGORIES`] items in `categories`.
    TooManyCategories,
    /// The query string is longer than [`MAX_QUERY_LEN`] bytes (a 414, not
    /// a 400: [`crate::Rejection::QueryTooLong`]).
    QueryTooLong,
}

/// Which patterns a request asks for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Filter {
    /// Bit `c.index()` set: category `c` is wanted.
    categories: u8,
    /// Custom patterns without a category of their own are wanted (they show
    /// as `custom` in Variant A, as `OTHER` in Variant B).
    uncategorized_custom: bool,
    /// Patterns below this are left out (inclusive threshold).
    pub min_confidence: f64,
    /// The account's custom patterns are included.
    pub include_custom: bool,
}

impl Default for Filter {
    fn default() -> Self {
        Filter {
            categories: 0b11_1111,
            uncategorized_custom: true,
            min_confidence: DEFAULT_MIN_CONFIDENCE,
            include_custom: DEFAULT_INCLUDE_CUSTOM,
        }
    }
}

impl Filter {
    /// Parses the raw query string (the part after `?`, still percent-encoded)
    /// as `variant` reads it. Unknown parameters are ignored.
    pub(crate) fn parse(query: &str, variant: Variant) -> Result<Filter, ParamError> {
        if query.len() > MAX_QUERY_LEN {
            return Err(ParamError::QueryTooLong);
        }
        let bad = Err;
        let mut filter = Filter::default();
        let (mut seen_categories, mut seen_min, mut seen_custom) = (false, false, false);
        for (name, value) in form_urlencoded::parse(query.as_bytes()) {
            match name.as_ref() {
                "categories" => {
                    if std::mem::replace(&mut seen_categories, true) {
                        return bad(ParamError::Repeated("categories"));
                    }
                    (filter.categories, filter.uncategorized_custom) =
                        parse_categories(&value, variant)?;
                }
                "minConfidence" => {
                    if std::mem::replace(&mut seen_min, true) {
                        return bad(ParamError::Repeated("minConfidence"));
                    }
                    filter.min_confidence =
                        parse_confidence(&value).ok_or(ParamError::MinConfidence)?;
                }
                "includeCustom" => {
                    if std::mem::replace(&mut seen_custom, true) {
                        return bad(ParamError::Repeated("includeCustom"));
                    }
                    filter.include_custom = if value.eq_ignore_ascii_case("true") {
                        true
                    } else if value.eq_ignore_ascii_case("false") {
                        false
                    } else {
                        return bad(ParamError::IncludeCustom);
                    };
                }
                _ => {}
            }
        }
        Ok(filter)
    }

    /// Whether a pattern of `category` is wanted.
    pub(crate) fn wants(&self, category: Category) -> bool {
        self.categories & (1 << category.index()) != 0
    }

    /// Whether a custom pattern with `category` (`None`: none of its own) is wanted.
    pub(crate) fn wants_custom(&self, category: Option<Category>, confidence: f64) -> bool {
        self.include_custom
            && confidence >= self.min_confidence
            && match category {
                Some(c) => self.wants(c),
                None => self.uncategorized_custom,
            }
    }
}

fn parse_categories(value: &str, variant: Variant) -> Result<(u8, bool), ParamError> {
    if value.split(',').count() > MAX_CATEGORIES {
        return Err(ParamError::TooManyCategories);
    }
    let (mut bits, mut custom) = (0u8, false);
    for item in value.split(',') {
        if variant == Variant::A && item == CUSTOM_CATEGORY_A {
            custom = true;
        } else if let Some(category) = Category::parse(item, variant) {
            bits |= 1 << category.index();
            // Variant B shows uncategorized custom patterns as OTHER.
            custom |= variant == Variant::B && category == Category::Other;
        } else {
            return Err(ParamError::UnknownCategory {
                variant,
                given: item.chars().take(64).collect(),
            });
        }
    }
    Ok((bits, custom))
}

/// A number as JSON writes one (`0`, `0.5`, `5e-1`), in [0, 1].
fn parse_confidence(value: &str) -> Option<f64> {
    // serde_json reads exactly JSON's number grammar, but skips surrounding
    // whitespace, which the parameter must not have.
    if value.is_empty() || value.bytes().any(|b| b.is_ascii_whitespace()) {
        return None;
    }
    let number: f64 = serde_json::from_str(value).ok()?;
    (0.0..=1.0).contains(&number).then_some(number)
}

impl std::fmt::Display for ParamError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParamError::Repeated(name) => {
                write!(f, "Invalid query: parameter {name} is given more than once")
            }
            ParamError::MinConfidence => {
                f.write_str("Invalid minConfidence: expected a number from 0 to 1, such as 0.5")
            }
            ParamError::IncludeCustom => {
                f.write_str("Invalid includeCustom: expected true or false")
            }
            ParamError::UnknownCategory { variant, given } => {
                let mut accepted: Vec<&str> =
                    Category::ALL.iter().map(|c| c.name(*variant)).collect();
                if *variant == Variant::A {
                    accepted.push(CUSTOM_CATEGORY_A);
                }
                write!(
                    f,
                    "Invalid categories: {given:?} is not a category; expected a comma-separated \
                     list of {}",
                    accepted.join(", ")
                )
            }
            ParamError::TooManyCategories => write!(
                f,
                "Invalid categories: at most {MAX_CATEGORIES} values are accepted"
            ),
            ParamError::QueryTooLong => write!(
                f,
                "Query string too long: at most {MAX_QUERY_LEN} bytes are accepted"
            ),
        }
    }
}

//! Content codings: which ones a request accepts (`Accept-Encoding`, RFC
//! 9110 §12.5.3) and which one an answer is sent in.
//!
//! | `Accept-Encoding` | what is acceptable |
//! |---|---|
//! | absent, or empty | `identity` only |
//! | `gzip`, `x-gzip`, `br`, `identity`, each with an optional `;q=` weight | each at its weight; `q=0` refuses it |
//! | `*` | every coding not named, at its weight |
//! | any other coding (`zstd`, `deflate`, …) or an element that does not parse | nothing: ignored |
//!
//! `identity` is acceptable unless refused (`identity;q=0`, or `*;q=0`
//! without `identity` named), below every coding named with a weight
//! above 0. Of the codings an answer is offered in, the one of highest
//! weight is chosen, ties going to the smaller: `br`, then `gzip`, then
//! `identity`. When none is acceptable, not even `identity`, the answer is
//! `identity` all the same: no refusal (406) is added to the contract.

/// A content coding an answer may be sent in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) enum ContentCoding {
    /// No coding: the bytes as they are (no `Content-Encoding`).
    Identity,
    /// gzip (RFC 1952).
    Gzip,
    /// Brotli (RFC 7932).
    Brotli,
}

impl ContentCoding {
    /// Every coding, in order of preference when two are weighted alike:
    /// the one that gives fewer bytes first.
    pub(crate) const PREFERENCE: [ContentCoding; 3] = [
        ContentCoding::Brotli,
        ContentCoding::Gzip,
        ContentCoding::Identity,
    ];

    /// The coding's name in `Content-Encoding` (none for identity).
    pub(crate) const fn header_value(self) -> Option<&'static str> {
        match self {
            ContentCoding::Identity => None,
            ContentCoding::Gzip => Some("gzip"),
            ContentCoding::Brotli => Some("br"),
        }
    }

    /// The coding a name in `Accept-Encoding` stands for (`x-gzip` is gzip,
    /// RFC 9110 §8.4.1.3), matched case-insensitively.
    fn named(name: &str) -> Option<ContentCoding> {
        if name.eq_ignore_ascii_case("gzip") || name.eq_ignore_ascii_case("x-gzip") {
            Some(ContentCoding::Gzip)
        } else if name.eq_ignore_ascii_case("br") {
            Some(ContentCoding::Brotli)
        } else if name.eq_ignore_ascii_case("identity") {
            Some(ContentCoding::Identity)
        } else {
            None
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// What one request's `Accept-Encoding` accepts: a weight in thousandths
/// per coding named, and for `*`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct AcceptEncoding {
    /// The weight of each coding named (by [`ContentCoding`] order).
    named: [Option<u16>; 3],
    /// The weight of `*`, if given.
    any: Option<u16>,
}

impl AcceptEncoding {
    /// Reads every `Accept-Encoding` line of a request (`values`), in order,
    /// as one comma-separated list. No line: identity only.
    pub(crate) fn parse(values: &[&[u8]]) -> AcceptEncoding {
        let mut accept = AcceptEncoding::default();
        for value in values {
            // A value that is not text names no coding this service knows.
            let Ok(text) = std::str::from_utf8(value) else {
                continue;
            };
            for element in text.split(',') {
                let mut parts = element.split(';');
                let name = parts.next().unwrap_or_default().trim();
                let Some(weight) = weight(parts) else {
                    continue;
                };
                let slot = if name == "*" {
                    &mut accept.any
                } else if let Some(coding) = ContentCoding::named(name) {
                    &mut accept.named[coding.index()]
                } else {
                    continue;
                };
                // Named twice: the higher weight holds (the list is the
                // client's, and either reading accepts what it can decode).
                *slot = Some(slot.map_or(weight, |w| w.max(weight)));
            }
        }
        accept
    }

    /// The weight of `coding`, in thousandths: `None` when it is not
    /// acceptable. Identity not named (nor refused by `*;q=0`) is
    /// acceptable at weight 0, below every coding named with a weight.
    fn weight(&self, coding: ContentCoding) -> Option<u16> {
        let given = self.named[coding.index()].or(self.any);
        match (coding, given) {
            (_, Some(0)) => None,
            (_, Some(w)) => Some(w),
            (ContentCoding::Identity, None) => Some(0),
            (_, None) => None,
        }
    }

    /// Whether `coding` is acceptable at all.
    pub(crate) fn accepts(&self, coding: ContentCoding) -> bool {
        self.weight(coding).is_some()
    }

    /// The coding to send, of those `offered` (identity always is): the
    /// acceptable one of highest weight, ties to [`ContentCoding::PREFERENCE`].
    pub(crate) fn choose(&self, offered: impl Fn(ContentCoding) -> bool) -> ContentCoding {
        let mut best = (ContentCoding::Identity, None);
        for coding in ContentCoding::PREFERENCE {
            if coding != ContentCoding::Identity && !offered(coding) {
                continue;
            }
            let weight = self.weight(coding);
            if weight > best.1 {
                best = (coding, weight);
            }
        }
        best.0
    }
}

/// The weight of an element, from its parameters after the coding's name:
/// `q=` followed by a qvalue (`0`, `0.5`, `1.000`: at most three decimals,
/// at most 1), in thousandths; 1000 without one. `None`: the element does
/// not parse and is ignored, so a coding is never chosen on a weight that
/// was misread.
fn weight<'a>(mut parameters: impl Iterator<Item = &'a str>) -> Option<u16> {
    let Some(parameter) = parameters.next() else {
        return Some(1000);
    };
    let (name, value) = parameter.trim().split_once('=')?;
    if !name.trim_end().eq_ignore_ascii_case("q") || parameters.next().is_some() {
        return None;
    }
    let value = value.trim_start().as_bytes();
    let (whole, fraction) = match value.split_first()? {
        (b'0', rest) => (0u16, rest),
        (b'1', rest) => (1000u16, rest),
        _ => return None,
    };
    let thousandths = match fraction {
        [] => 0,
        [b'.', digits @ ..] if digits.len() <= 3 && digits.iter().all(u8::is_ascii_digit) => digits
            .iter()
            .chain(std::iter::repeat(&b'0'))
            .take(3)
            .fold(0u16, |n, d| n * 10 + u16::from(d - b'0')),
        _ => return None,
    };
    let weight = whole + thousandths;
    (weight <= 1000).then_some(weight)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ContentCoding::{Brotli, Gzip, Identity};

    fn chosen(header: Option<&str>, offered: &[ContentCoding]) -> ContentCoding {
        let values: Vec<&[u8]> = header.map(str::as_bytes).into_iter().collect();
        AcceptEncoding::parse(&values).choose(|c| offered.contains(&c))
    }

    /// One row per rule of the module's table, each named in its failure.
    #[test]
    fn the_coding_chosen_for_each_accept_encoding() {
        let both = [Brotli, Gzip];
        let cases: &[(&str, Option<&str>, &[ContentCoding], ContentCoding)] = &[
            ("no header: identity", None, &both, Identity),
            ("an empty header: identity", Some(""), &both, Identity),
            (
                "a browser's list: br",
                Some("gzip, deflate, br, zstd"),
                &both,
                Brotli,
            ),
            ("Node's fetch: br", Some("gzip, deflate, br"), &both, Brotli),
            ("gzip alone", Some("gzip"), &both, Gzip),
            ("x-gzip is gzip", Some("x-gzip"), &both, Gzip),
            ("names are case-insensitive", Some("GZip"), &both, Gzip),
            ("br not offered: gzip", Some("br, gzip"), &[Gzip], Gzip),
            (
                "only br accepted, not offered",
                Some("br"),
                &[Gzip],
                Identity,
            ),
            ("a higher weight wins", Some("br;q=0.5, gzip"), &both, Gzip),
            (
                "weights with blanks",
                Some("br ; q=0.2 ,gzip;q=0.3"),
                &both,
                Gzip,
            ),
            ("q=0 refuses", Some("br;q=0, gzip;q=0"), &both, Identity),
            (
                "identity named higher",
                Some("gzip;q=0.5, identity"),
                &both,
                Identity,
            ),
            (
                "identity named lower",
                Some("gzip;q=0.5, identity;q=0.4"),
                &both,
                Gzip,
            ),
            ("any coding", Some("*"), &both, Brotli),
            ("any but br", Some("*, br;q=0"), &both, Gzip),
            ("* refuses identity too", Some("*;q=0"), &both, Identity),
            (
                "unknown codings only",
                Some("zstd, deflate, compress"),
                &both,
                Identity,
            ),
            (
                "a weight over 1 is ignored",
                Some("gzip;q=2"),
                &both,
                Identity,
            ),
            (
                "four decimals are ignored",
                Some("gzip;q=0.0001"),
                &both,
                Identity,
            ),
            (
                "another parameter is ignored",
                Some("gzip;level=9"),
                &both,
                Identity,
            ),
            (
                "the lowest weight still beats identity",
                Some("gzip;q=0.001"),
                &both,
                Gzip,
            ),
            (
                "1.000 is full weight",
                Some("br;q=1.000, gzip;q=0.999"),
                &both,
                Brotli,
            ),
            (
                "named twice: the higher weight",
                Some("gzip;q=0, gzip;q=0.1"),
                &both,
                Gzip,
            ),
            ("empty elements are skipped", Some(",, gzip ,"), &both, Gzip),
        ];
        for (name, header, offered, want) in cases {
            assert_eq!(chosen(*header, offered), *want, "{name}");
        }
    }

    #[test]
    fn several_header_lines_read_as_one_list() {
        let accept = AcceptEncoding::parse(&[b"gzip;q=0.5", b"br;q=0.6"]);
        assert_eq!(accept.choose(|_| true), Brotli);
        assert!(accept.accepts(Gzip) && accept.accepts(Identity));
        let refused = AcceptEncoding::parse(&[b"identity;q=0", b"gzip"]);
        assert!(!refused.accepts(Identity));
        let not_text = AcceptEncoding::parse(&[b"gzip\xff"]);
        assert_eq!(not_text.choose(|_| true), Identity);
    }
}

//! Messages folded into groups, and a pattern suggested for a group.
//!
//! Two events belong to the same group when their message texts (`Type:
//! value`) are equal once the parts that vary between occurrences of one
//! error are folded, left to right (docs/REPORT.md, "Normalisation"):
//!
//! | what | folded to |
//! |---|---|
//! | a URL (`scheme://` up to a blank, a quote or a bracket) | `<url>` |
//! | a quoted value (`'…'`, `"…"`, `` `…` ``, opened after a non-alphanumeric character, closed on the same line within 200 bytes) | `'<value>'`, with its own quotes |
//! | a UUID (8-4-4-4-12 hex digits) | `<uuid>` |
//! | a run of letters and digits of 8 or more hex digits, with a digit | `<hex>` |
//! | a run of letters and digits of 16 or more, with a letter and a digit | `<id>` |
//! | any other run of digits | `<n>` |
//! | blanks (spaces, tabs, line breaks) | one space; none at either end |
//!
//! Only the first [`SCAN_BYTES`] of a message are read, and a group's text
//! is cut at [`KEY_CHARS`] characters.
//!
//! A suggestion keeps the group's literal parts and matches each folded
//! part with the class it was folded from (`<n>` as `\d+`, `'<value>'` as
//! `'[^']*'`). It must pass the rules every custom pattern meets
//! (`NewPattern::validate`: the regex subset, linear in a backtracking
//! engine, no catch-all); when the regex does not, the longest literal part
//! is suggested as a substring, when it is specific enough.

use crate::pattern::Kind;

/// The most bytes of a message read.
pub(crate) const SCAN_BYTES: usize = 4096;
/// The most characters of a group's text.
pub(crate) const KEY_CHARS: usize = 300;
/// The longest quoted value folded, in bytes.
const MAX_QUOTED: usize = 200;
/// A substring suggestion needs this many characters besides blanks.
const MIN_LITERAL_CHARS: usize = 8;
/// A suggested substring is cut at this many characters.
const MAX_STRING_CHARS: usize = 200;
/// A suggested regex is cut (at a part's end) below this many bytes.
const MAX_REGEX_BYTES: usize = 400;

/// A part of a normalised message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Text kept as it is.
    Literal(String),
    /// Blanks: `true` when they were exactly one space.
    Blank(bool),
    /// A folded part.
    Folded(Fold),
}

/// What a folded part was.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fold {
    Url,
    Quoted(u8),
    Uuid,
    Hex,
    Id,
    Number,
}

impl Fold {
    fn placeholder(self, out: &mut String) {
        match self {
            Fold::Url => out.push_str("<url>"),
            Fold::Quoted(q) => {
                let q = char::from(q);
                out.push(q);
                out.push_str("<value>");
                out.push(q);
            }
            Fold::Uuid => out.push_str("<uuid>"),
            Fold::Hex => out.push_str("<hex>"),
            Fold::Id => out.push_str("<id>"),
            Fold::Number => out.push_str("<n>"),
        }
    }

    /// The regex (shared subset) of what this fold stands for.
    fn regex(self) -> &'static str {
        match self {
            Fold::Url => r#"[^\s'"`<>()\[\]{}]+"#,
            Fold::Quoted(b'\'') => "'[^']*'",
            Fold::Quoted(b'"') => "\"[^\"]*\"",
            Fold::Quoted(_) => "`[^`]*`",
            Fold::Uuid => "[0-9a-f-]+",
            Fold::Hex => "[0-9a-f]+",
            Fold::Id => "[0-9a-z]+",
            Fold::Number => r"\d+",
        }
    }
}

/// The group text of a message: the normalised message, cut at
/// [`KEY_CHARS`] characters.
pub(crate) fn key(message: &str) -> String {
    let mut key = String::with_capacity(message.len().min(KEY_CHARS + 8));
    let mut chars = 0;
    scan(message, |piece| {
        if chars >= KEY_CHARS {
            return false;
        }
        let before = key.len();
        match piece {
            Part::Literal(text) => key.push_str(text),
            Part::Blank(_) => key.push(' '),
            Part::Folded(fold) => fold.placeholder(&mut key),
        }
        chars += key[before..].chars().count();
        true
    });
    if chars > KEY_CHARS {
        let cut = key
            .char_indices()
            .nth(KEY_CHARS)
            .map_or(key.len(), |(i, _)| i);
        key.truncate(cut);
    }
    key
}

/// The parts of a message, as [`key`] folds them (not cut).
pub(crate) fn pieces(message: &str) -> Vec<Piece> {
    let mut out: Vec<Piece> = Vec::new();
    scan(message, |piece| {
        match piece {
            Part::Literal(text) => match out.last_mut() {
                Some(Piece::Literal(last)) => last.push_str(text),
                _ => out.push(Piece::Literal(text.to_owned())),
            },
            Part::Blank(single) => out.push(Piece::Blank(single)),
            Part::Folded(fold) => out.push(Piece::Folded(fold)),
        }
        true
    });
    out
}

enum Part<'t> {
    Literal(&'t str),
    Blank(bool),
    Folded(Fold),
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric()
}

fn is_blank(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c')
}

/// Calls `emit` with each part of `message` until it returns false.
fn scan<'t>(message: &'t str, mut emit: impl FnMut(Part<'t>) -> bool) {
    let mut end = message.len().min(SCAN_BYTES);
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    let text = &message[..end];
    let b = text.as_bytes();
    // Leading blanks are dropped; trailing ones too (below).
    let mut i = 0;
    while i < b.len() && is_blank(b[i]) {
        i += 1;
    }
    let mut literal = i;
    // Most messages hold no URL: then no word is looked at as a scheme.
    let has_url = b.windows(3).any(|w| w == b"://");
    let flush = |from: usize, to: usize, emit: &mut dyn FnMut(Part<'t>) -> bool| {
        from >= to || emit(Part::Literal(&text[from..to]))
    };
    while i < b.len() {
        let c = b[i];
        let after_word = i > 0 && is_word(b[i - 1]);
        // Blanks.
        if is_blank(c) {
            let start = i;
            while i < b.len() && is_blank(b[i]) {
                i += 1;
            }
            if i == b.len() {
                // Trailing blanks: the text before them, and nothing else.
                flush(literal, start, &mut emit);
                return;
            }
            if !flush(literal, start, &mut emit) || !emit(Part::Blank(i - start == 1 && c == b' '))
            {
                return;
            }
            literal = i;
            continue;
        }
        // A quoted value.
        if matches!(c, b'\'' | b'"' | b'`')
            && !after_word
            && let Some(close) = closing_quote(b, i)
        {
            if !flush(literal, i, &mut emit) || !emit(Part::Folded(Fold::Quoted(c))) {
                return;
            }
            i = close + 1;
            literal = i;
            continue;
        }
        if !is_word(c) || after_word {
            i += 1;
            continue;
        }
        // A URL: scheme://…
        if has_url
            && c.is_ascii_alphabetic()
            && let Some(end) = url_end(b, i)
        {
            if !flush(literal, i, &mut emit) || !emit(Part::Folded(Fold::Url)) {
                return;
            }
            i = end;
            literal = i;
            continue;
        }
        // A run of letters and digits.
        let start = i;
        while i < b.len() && is_word(b[i]) {
            i += 1;
        }
        let run = &b[start..i];
        if let Some(end) = uuid_end(b, start) {
            if !flush(literal, start, &mut emit) || !emit(Part::Folded(Fold::Uuid)) {
                return;
            }
            i = end;
            literal = i;
            continue;
        }
        let has_digit = run.iter().any(u8::is_ascii_digit);
        if !has_digit {
            continue;
        }
        let fold = if run.len() >= 8 && run.iter().all(u8::is_ascii_hexdigit) {
            Some(Fold::Hex)
        } else if run.len() >= 16 && run.iter().any(u8::is_ascii_alphabetic) {
            Some(Fold::Id)
        } else {
            None
        };
        if let Some(fold) = fold {
            if !flush(literal, start, &mut emit) || !emit(Part::Folded(fold)) {
                return;
            }
            literal = i;
            continue;
        }
        // Digits inside the run, each run of them a number.
        let mut j = start;
        while j < i {
            if b[j].is_ascii_digit() {
                let digits = j;
                while j < i && b[j].is_ascii_digit() {
                    j += 1;
                }
                if !flush(literal, digits, &mut emit) || !emit(Part::Folded(Fold::Number)) {
                    return;
                }
                literal = j;
            } else {
                j += 1;
            }
        }
    }
    let mut end = b.len();
    while end > literal && is_blank(b[end - 1]) {
        end -= 1;
    }
    flush(literal, end, &mut emit);
}

/// Where the quote opened at `open` closes: the same quote on the same line
/// within [`MAX_QUOTED`] bytes, not followed by a letter or digit.
fn closing_quote(b: &[u8], open: usize) -> Option<usize> {
    let quote = b[open];
    let limit = (open + 1 + MAX_QUOTED).min(b.len());
    let mut j = open + 1;
    while j < limit {
        match b[j] {
            b'\n' | b'\r' => return None,
            q if q == quote => {
                return (b.get(j + 1).is_none_or(|&n| !is_word(n))).then_some(j);
            }
            _ => j += 1,
        }
    }
    None
}

/// The end of a URL starting at `start` (a letter after a non-word
/// character): a scheme of letters, digits, `+ - .`, then `://`, then
/// anything up to a blank, a quote or a bracket.
fn url_end(b: &[u8], start: usize) -> Option<usize> {
    let mut j = start;
    while j < b.len()
        && j - start < 32
        && (b[j].is_ascii_alphanumeric() || matches!(b[j], b'+' | b'-' | b'.'))
    {
        j += 1;
    }
    if !b[j..].starts_with(b"://") {
        return None;
    }
    j += 3;
    while j < b.len()
        && !is_blank(b[j])
        && !matches!(
            b[j],
            b'\'' | b'"' | b'`' | b'<' | b'>' | b'(' | b')' | b'[' | b']' | b'{' | b'}'
        )
    {
        j += 1;
    }
    Some(j)
}

/// The end of a UUID starting at `start`, not followed by a word character.
fn uuid_end(b: &[u8], start: usize) -> Option<usize> {
    let mut j = start;
    for (n, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
        if n > 0 {
            if b.get(j) != Some(&b'-') {
                return None;
            }
            j += 1;
        }
        let part = b.get(j..j + len)?;
        if !part.iter().all(u8::is_ascii_hexdigit) {
            return None;
        }
        j += len;
    }
    (b.get(j).is_none_or(|&n| !is_word(n))).then_some(j)
}

/// A pattern suggested for a group: its text and kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Suggested {
    pub pattern: String,
    pub kind: Kind,
}

/// The pattern suggested for a message's group, before validation: a
/// substring when nothing varies (and blanks are single spaces), else a
/// regex; `fallback` is the longest literal part as a substring, for when
/// the regex is refused.
pub(crate) fn suggest(pieces: &[Piece]) -> (Option<Suggested>, Option<Suggested>) {
    // Leading and trailing folded parts and blanks say nothing a substring
    // search needs.
    let keep = |p: &Piece| matches!(p, Piece::Literal(_));
    let Some(first) = pieces.iter().position(keep) else {
        return (None, None);
    };
    let last = pieces.iter().rposition(keep).unwrap_or(first);
    let core = &pieces[first..=last];
    let fallback = longest_literal(core);
    let simple = core
        .iter()
        .all(|p| matches!(p, Piece::Literal(_) | Piece::Blank(true)));
    if simple {
        let mut text = String::new();
        for p in core {
            match p {
                Piece::Literal(l) => text.push_str(l),
                _ => text.push(' '),
            }
        }
        let text = cut_chars(&text, MAX_STRING_CHARS);
        let enough = text.chars().filter(|c| !c.is_whitespace()).count() >= MIN_LITERAL_CHARS;
        return (
            enough.then_some(Suggested {
                pattern: text,
                kind: Kind::String,
            }),
            None,
        );
    }
    let mut regex = String::new();
    for p in core {
        let before = regex.len();
        match p {
            Piece::Literal(l) => escape_regex(l, &mut regex),
            Piece::Blank(true) => regex.push(' '),
            Piece::Blank(false) => regex.push_str(r"\s+"),
            Piece::Folded(fold) => regex.push_str(fold.regex()),
        }
        if regex.len() > MAX_REGEX_BYTES {
            regex.truncate(before);
            break;
        }
    }
    // A cut may have left a trailing blank or class: end on a literal.
    while regex.ends_with(' ') {
        regex.pop();
    }
    (
        Some(Suggested {
            pattern: regex,
            kind: Kind::Regex,
        }),
        fallback,
    )
}

fn longest_literal(pieces: &[Piece]) -> Option<Suggested> {
    let mut best: Option<String> = None;
    let mut run = String::new();
    let close = |run: &mut String, best: &mut Option<String>| {
        let trimmed = run.trim();
        if trimmed.chars().filter(|c| !c.is_whitespace()).count() >= MIN_LITERAL_CHARS
            && best.as_ref().is_none_or(|b| trimmed.len() > b.len())
        {
            *best = Some(trimmed.to_owned());
        }
        run.clear();
    };
    for p in pieces {
        match p {
            Piece::Literal(l) => run.push_str(l),
            Piece::Blank(true) => run.push(' '),
            _ => close(&mut run, &mut best),
        }
    }
    close(&mut run, &mut best);
    best.map(|text| Suggested {
        pattern: cut_chars(&text, MAX_STRING_CHARS),
        kind: Kind::String,
    })
}

fn cut_chars(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((i, _)) => text[..i].to_owned(),
        None => text.to_owned(),
    }
}

/// Appends `literal` with the regex syntax characters escaped.
fn escape_regex(literal: &str, out: &mut String) {
    for c in literal.chars() {
        if matches!(
            c,
            '\\' | '^'
                | '$'
                | '.'
                | '|'
                | '?'
                | '*'
                | '+'
                | '('
                | ')'
                | '['
                | ']'
                | '{'
                | '}'
                | '/'
        ) {
            out.push('\\');
        }
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One row per rule of the table in the module's documentation.
    #[test]
    fn folds_what_varies() {
        let cases = [
            ("Loading chunk 42 failed.", "Loading chunk <n> failed."),
            (
                "TypeError: Cannot read properties of undefined (reading 'map')",
                "TypeError: Cannot read properties of undefined (reading '<value>')",
            ),
            (
                "Failed to fetch https://api.example.com/v2/items?id=7 (status 503)",
                "Failed to fetch <url> (status <n>)",
            ),
            (
                "Request 3f2a9c1e-0b4d-4c2a-9e1f-7a6b5c4d3e2f timed out",
                "Request <uuid> timed out",
            ),
            (
                "chunk index-4f2a9c1b.js missing",
                "chunk index-<hex>.js missing",
            ),
            ("token AbCdEfGh12345678xyz expired", "token <id> expired"),
            ("can't   find\n\tit  ", "can't find it"),
            ("v8 utf8 h264", "v<n> utf<n> h<n>"),
            (
                r#"Unexpected token "<" in JSON"#,
                r#"Unexpected token "<value>" in JSON"#,
            ),
            ("deadbeef is a word", "deadbeef is a word"),
        ];
        for (message, expected) in cases {
            assert_eq!(key(message), expected, "{message}");
        }
    }

    #[test]
    fn group_texts_are_cut() {
        let long = "x".repeat(1000);
        assert_eq!(key(&long).chars().count(), KEY_CHARS);
        let wide = "é".repeat(1000);
        assert_eq!(key(&wide).chars().count(), KEY_CHARS);
    }

    #[test]
    fn suggestions_keep_literals_and_match_folded_parts_by_class() {
        let s = |m: &str| suggest(&pieces(m));
        assert_eq!(
            s("Loading chunk 42 failed.").0,
            Some(Suggested {
                pattern: r"Loading chunk \d+ failed\.".into(),
                kind: Kind::Regex
            })
        );
        assert_eq!(
            s("Loading chunk 42 failed.").1,
            Some(Suggested {
                pattern: "Loading chunk".into(),
                kind: Kind::String
            })
        );
        assert_eq!(
            s("ResizeObserver loop limit exceeded").0,
            Some(Suggested {
                pattern: "ResizeObserver loop limit exceeded".into(),
                kind: Kind::String
            })
        );
        // Nothing but folded parts: nothing to suggest.
        assert_eq!(s("42 'x' https://a.b/c"), (None, None));
        assert_eq!(
            s("Error: 'abc' at 12").0,
            Some(Suggested {
                pattern: r"Error: '[^']*' at".into(),
                kind: Kind::Regex
            })
        );
    }
}

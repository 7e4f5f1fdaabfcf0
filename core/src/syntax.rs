//! The regular-expression subset that means the same in ECMAScript and in Rust.
//!
//! A Variant A `regex` pattern is published as an ECMAScript regular expression,
//! applied by clients as `new RegExp(pattern, "i")`. The core matches with Rust's
//! `regex` crate (linear time, no backtracking). The two engines agree only on a
//! subset, so every regex — built-in (checked in `build.rs`, which includes this
//! file) or custom (checked when an account adds it) — must stay inside it:
//!
//! - literals, escaped punctuation, `\t \n \r \f \v`, `\xHH`, `\uHHHH`;
//! - `.`, `\d \D \w \W \s \S`, `^ $ \b \B` (no `m` flag, so `^`/`$` anchor the text);
//! - bracket classes of literals, ranges and `\d \w \s` (and their negations);
//! - groups `( )` and `(?: )`, alternation, `* + ? {n} {n,} {n,m}`, greedy or lazy.
//!
//! Everything else is refused with the construct named: look-around and
//! back-references (no linear-time engine has them), inline flags, `\p{..}`,
//! `\A \z`, POSIX and nested classes, named groups, `\<`.
//!
//! Inside the subset the two engines still differ in how they read a few escapes,
//! so [`translate`] rewrites the pattern into the Rust spelling of the ECMAScript
//! meaning: `\d` and `\w` are ASCII-only in ECMAScript, `\s` is ECMAScript's
//! whitespace set, `\b` is the ASCII word boundary and `.` excludes all four line
//! terminators. The one residual difference is case folding outside ASCII: Rust
//! folds with Unicode simple case folding, ECMAScript (without the `u` flag) with
//! `toUpperCase`; they differ on rare characters such as U+017F (ſ) and U+212A
//! (Kelvin sign). ARCHITECTURE.md records this.
//!
//! # Linear in every engine
//!
//! The subset keeps Rust's engine linear, not a backtracking one such as
//! JavaScript's, which tries the ways a regex can match one by one, and
//! whose `RegExp.test` retries from every position of the text. A regex the
//! service publishes (built-in, or a custom one when it is added: [`validate`])
//! must also keep such an engine linear, up to a factor the regex bounds:
//!
//! 1. A repetition that can repeat (`*`, `+`, `{n,}`, `{n,m}` with `m` ≥ 2)
//!    may hold an unbounded one only if one repetition reads, before the
//!    next one's, a character the inner one cannot match (`(\.\d+)+`,
//!    `([\w-]+\.)+`); `(a+)+`, `(x+x+)+y` and `(\w+\s?)*` are refused: the
//!    text could be split between the repetitions in exponentially many
//!    ways. Three levels of repetition around an unbounded one are refused.
//! 2. Inside an unbounded repetition, each text is matched one way only: its
//!    body does not match the empty text, its alternatives and optional
//!    parts start with characters that nothing else there can start with
//!    (`(a|ab)*` is refused), and inside any repetition that can repeat, an
//!    unbounded one stops at one place only: what follows it begins with a
//!    character it cannot match (`;(b +\s{1,3})+;` is refused). Elsewhere,
//!    alternatives that start alike and optional parts that start like what
//!    follows them are allowed, but the ways they give multiply, and at most
//!    [`MAX_WAYS`] are accepted (`(a|a){30}` and `a?a?a?a?a?a?a?` are
//!    refused).
//! 3. Every unbounded repetition (a *run*) is *delimited*: on every way to
//!    it, the regex reads a character the run cannot match (`;[^;]*`,
//!    `\(type=[\w-]+`), or a `\b` before a run of word characters; or the
//!    regex is anchored with `^`. Then a search that starts again at each
//!    position never reads the run's stretch of text twice (`a.*b` and
//!    `\d+$` are refused: a text of `a`s or of digits makes them quadratic).
//!    Likewise between two runs: the way from the first to the second
//!    reads a character one of them cannot match, or the second begins with
//!    a character the first cannot match, or the first (a repeated group)
//!    ends each repetition with a character the second cannot match
//!    (`;\w+\s?\w+` is refused, `\d+(\.\d+)+` and `(\d+\.)+\d+` are not).
//!
//! Sets are compared as the case-insensitive matcher reads them. The rules
//! are meant to be sufficient, not necessary: they refuse some regexes a
//! backtracking engine runs in linear time, and each refusal says what to
//! write instead.
//! An independent checker (`recheck`, from the npm registry) runs over the
//! catalog and over accepted and refused samples in CI (`npm/test/redos/`).
//! A matcher built from a list reads any regex of the subset ([`translate`]):
//! with Rust's `regex` it matches in linear time itself, and a list served by
//! an older deployment may hold regexes that these rules now refuse (with
//! the `host-regex` feature the shell's engine runs them: a backtracking
//! one is linear only on regexes that meet these rules).
//!
//! # Not a catch-all
//!
//! As a substring pattern needs 3 visible characters, every match of a
//! published regex holds at least [`MIN_REGEX_LITERALS`] characters written
//! literally (a character, up to case; `^` and `$` count as one each, as they
//! pin the match to an end of the text): `.`, `^`, `|`, `()`, `\w{5}` and
//! `^.*$` are refused, `^w\d+$` and `Loading chunk \d+` are not.
//!
//! This file is compiled twice: into the crate, and into `build.rs` through
//! `#[path]`, so the catalog is validated at build time by the same code that
//! validates custom patterns at run time. It may only use `regex` and
//! `regex-syntax`.

use regex_syntax::ast::{
    self, AssertionKind, Ast, ClassPerlKind, ClassSet, ClassSetItem, GroupKind, HexLiteralKind,
    LiteralKind, SpecialLiteralKind,
};
use regex_syntax::hir::{Class, ClassUnicode, ClassUnicodeRange, Hir, HirKind};

/// Longest regex source accepted, in bytes.
pub const MAX_REGEX_LEN: usize = 512;
/// The bound on a regex's size once compiled, in bytes of the Thompson NFA
/// that Rust's `regex` builds for it as a 64-bit machine counts them:
/// refuses patterns such as `(a{100}){100}` whose automaton would be huge.
/// The core applies it itself (`compiled_size.rs`), in every build and
/// on every machine; the `regex` crate is given the same bound, which the
/// core's own check reaches first.
pub(crate) const REGEX_SIZE_LIMIT: usize = 256 * 1024;
/// Deepest nesting of groups and repetitions accepted.
pub(crate) const REGEX_NEST_LIMIT: u32 = 32;

/// ECMAScript's `\s`: WhiteSpace and LineTerminator code points.
const JS_SPACE: &str =
    r"\t\n\x0B\x0C\r \xA0\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}";

/// Why a regex is not in the shared subset. The text is shown to the person who
/// tried to add the pattern, so it names the construct and the fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError(pub String);

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Checks that `pattern` is in the shared subset and returns its Rust spelling
/// (without the case-insensitive flag, which the caller adds).
///
/// This is what a matcher accepts: it matches in linear time whatever the
/// regex. What the service publishes must also pass [`validate_regex`].
pub fn translate_regex(pattern: &str) -> Result<String, SyntaxError> {
    translate_and_compile(pattern).map(|(rust, _)| rust)
}

/// Checks that `pattern` may be published (a built-in regex, a custom one):
/// in the shared subset, linear in a backtracking engine and not a
/// catch-all (module docs). Returns its Rust spelling, as [`translate_regex`].
pub fn validate_regex(pattern: &str) -> Result<String, SyntaxError> {
    let rust = translate_regex(pattern)?;
    let ast = parse(pattern)?;
    let shape = Shape::of(&ast, pattern);
    linear::check(&shape)?;
    check_not_catch_all(&shape)?;
    Ok(rust)
}

fn parse(pattern: &str) -> Result<Ast, SyntaxError> {
    if pattern.is_empty() {
        return Err(SyntaxError("regex is empty".into()));
    }
    if pattern.len() > MAX_REGEX_LEN {
        return Err(SyntaxError(format!(
            "regex is {} bytes long; at most {MAX_REGEX_LEN} are accepted",
            pattern.len()
        )));
    }
    ast::parse::ParserBuilder::new()
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|e| SyntaxError(format!("regex does not parse: {}", e.kind())))
}

/// [`translate`], and the regex compiled as the matcher runs it (which is
/// how the translation is checked), for a caller that keeps both.
pub(crate) fn translate_and_compile(pattern: &str) -> Result<(String, Regex), SyntaxError> {
    let rust = rust_spelling(pattern)?;
    // Parsed once, as the engine reads it: the size bound counts that form,
    // and the shell's engine (`host-regex`) is written from it.
    let hir = parse_for_engine(&rust)?;
    crate::compiled_size::check(&hir)?;
    // Compile as the matcher will, so a pattern that validates always
    // compiles later (the matcher compiles a built-in regex, validated here
    // by build.rs, only when a text first needs it).
    let regex = compile_parsed(&rust, &hir)?;
    Ok((rust, regex))
}

/// A regex's Rust spelling parsed as the matcher's engine reads it:
/// case-insensitively, within the nesting bound, as Rust's `regex` parses
/// it (so a refusal reads the same in every build).
pub(crate) fn parse_for_engine(rust: &str) -> Result<Hir, SyntaxError> {
    regex_syntax::ParserBuilder::new()
        .case_insensitive(true)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .parse(rust)
        .map_err(|e| SyntaxError(format!("regex does not compile: {e}")))
}

/// The Rust spelling of a pattern in the subset, not yet checked by
/// compiling it.
pub(crate) fn rust_spelling(pattern: &str) -> Result<String, SyntaxError> {
    let ast = parse(pattern)?;
    let mut out = String::with_capacity(pattern.len() + 16);
    emit(&ast, &mut out)?;
    Ok(out)
}

/// The regex engine the matcher runs: Rust's `regex` (`rust_regex.rs`), or
/// with the `host-regex` feature the shell's own (`host_regex.rs`).
/// build.rs, which includes this file, checks with Rust's either way.
#[cfg(not(feature = "host-regex"))]
pub(crate) use crate::rust_regex::{
    Regex, RegexSet, compile, compile_parsed, compile_set, lowercase,
};

#[cfg(feature = "host-regex")]
pub(crate) use crate::host_regex::{
    Regex, RegexSet, compile, compile_parsed, compile_set, lowercase,
};

fn refuse(what: &str) -> SyntaxError {
    SyntaxError(format!(
        "{what} is outside the regex subset shared by ECMAScript and Rust \
         (see docs: literals, classes, groups, alternation, quantifiers, ^ $ \\b)"
    ))
}

fn emit(ast: &Ast, out: &mut String) -> Result<(), SyntaxError> {
    match ast {
        Ast::Empty(_) => Ok(()),
        Ast::Flags(_) => Err(refuse("an inline flag group such as (?i)")),
        Ast::Literal(lit) => emit_literal(lit, out),
        Ast::Dot(_) => {
            out.push_str(r"[^\n\r\x{2028}\x{2029}]");
            Ok(())
        }
        Ast::Assertion(a) => {
            out.push_str(match a.kind {
                AssertionKind::StartLine => "^",
                AssertionKind::EndLine => "$",
                AssertionKind::WordBoundary => r"(?-u:\b)",
                AssertionKind::NotWordBoundary => r"(?-u:\B)",
                AssertionKind::StartText | AssertionKind::EndText => {
                    return Err(refuse(r"\A or \z"));
                }
                _ => return Err(refuse(r"a word-boundary form other than \b and \B")),
            });
            Ok(())
        }
        Ast::ClassUnicode(_) => Err(refuse(r"a Unicode class such as \p{L}")),
        Ast::ClassPerl(p) => {
            emit_perl_standalone(p.kind.clone(), p.negated, out);
            Ok(())
        }
        Ast::ClassBracketed(b) => emit_bracketed(b, out),
        Ast::Repetition(rep) => {
            out.push_str("(?:");
            emit(&rep.ast, out)?;
            out.push(')');
            match &rep.op.kind {
                ast::RepetitionKind::ZeroOrOne => out.push('?'),
                ast::RepetitionKind::ZeroOrMore => out.push('*'),
                ast::RepetitionKind::OneOrMore => out.push('+'),
                ast::RepetitionKind::Range(r) => match r {
                    ast::RepetitionRange::Exactly(n) => out.push_str(&format!("{{{n}}}")),
                    ast::RepetitionRange::AtLeast(n) => out.push_str(&format!("{{{n},}}")),
                    ast::RepetitionRange::Bounded(n, m) => {
                        out.push_str(&format!("{{{n},{m}}}"));
                    }
                },
            }
            if !rep.greedy {
                out.push('?');
            }
            Ok(())
        }
        Ast::Group(g) => {
            match &g.kind {
                GroupKind::CaptureIndex(_) => out.push('('),
                GroupKind::CaptureName { .. } => return Err(refuse("a named group")),
                GroupKind::NonCapturing(flags) => {
                    if !flags.items.is_empty() {
                        return Err(refuse("a group with flags such as (?i:...)"));
                    }
                    out.push_str("(?:");
                }
            }
            emit(&g.ast, out)?;
            out.push(')');
            Ok(())
        }
        Ast::Alternation(alt) => {
            for (i, a) in alt.asts.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                emit(a, out)?;
            }
            Ok(())
        }
        Ast::Concat(c) => {
            for a in &c.asts {
                emit(a, out)?;
            }
            Ok(())
        }
    }
}

/// Checks a literal's spelling and returns the character it stands for.
fn literal_char(lit: &ast::Literal) -> Result<char, SyntaxError> {
    match &lit.kind {
        LiteralKind::Verbatim | LiteralKind::Meta | LiteralKind::Superfluous => Ok(lit.c),
        LiteralKind::Octal => Err(refuse("an octal escape")),
        LiteralKind::HexFixed(HexLiteralKind::X | HexLiteralKind::UnicodeShort) => Ok(lit.c),
        LiteralKind::HexFixed(HexLiteralKind::UnicodeLong) => Err(refuse(r"\UXXXXXXXX")),
        LiteralKind::HexBrace(_) => Err(refuse(r"a braced escape such as \x{..}")),
        LiteralKind::Special(kind) => match kind {
            SpecialLiteralKind::Tab
            | SpecialLiteralKind::LineFeed
            | SpecialLiteralKind::CarriageReturn
            | SpecialLiteralKind::FormFeed
            | SpecialLiteralKind::VerticalTab => Ok(lit.c),
            SpecialLiteralKind::Bell => Err(refuse(r"\a")),
            SpecialLiteralKind::Space => Err(refuse(r"an escaped space")),
        },
    }
}

fn push_char(c: char, out: &mut String) {
    if regex_syntax::is_meta_character(c) {
        out.push('\\');
        out.push(c);
    } else if c.is_control() || c.is_whitespace() {
        out.push_str(&format!("\\x{{{:X}}}", c as u32));
    } else {
        out.push(c);
    }
}

fn emit_literal(lit: &ast::Literal, out: &mut String) -> Result<(), SyntaxError> {
    push_char(literal_char(lit)?, out);
    Ok(())
}

/// The members of an ECMAScript class escape, as class-body text.
fn perl_members(kind: &ClassPerlKind) -> &'static str {
    match kind {
        ClassPerlKind::Digit => "0-9",
        ClassPerlKind::Word => "0-9A-Za-z_",
        ClassPerlKind::Space => JS_SPACE,
    }
}

fn emit_perl_standalone(kind: ClassPerlKind, negated: bool, out: &mut String) {
    out.push('[');
    if negated {
        out.push('^');
    }
    out.push_str(perl_members(&kind));
    out.push(']');
}

fn emit_bracketed(class: &ast::ClassBracketed, out: &mut String) -> Result<(), SyntaxError> {
    out.push('[');
    if class.negated {
        out.push('^');
    }
    match &class.kind {
        ClassSet::BinaryOp(_) => return Err(refuse("a class set operation (&&, --, ~~)")),
        ClassSet::Item(item) => emit_class_item(item, out)?,
    }
    out.push(']');
    Ok(())
}

fn emit_class_item(item: &ClassSetItem, out: &mut String) -> Result<(), SyntaxError> {
    match item {
        ClassSetItem::Empty(_) => Err(refuse("an empty class")),
        ClassSetItem::Literal(lit) => emit_literal(lit, out),
        ClassSetItem::Range(r) => {
            push_char(literal_char(&r.start)?, out);
            out.push('-');
            push_char(literal_char(&r.end)?, out);
            Ok(())
        }
        ClassSetItem::Ascii(_) => Err(refuse("a POSIX class such as [[:alpha:]]")),
        ClassSetItem::Unicode(_) => Err(refuse(r"a Unicode class such as \p{L}")),
        ClassSetItem::Perl(p) => {
            if p.negated {
                // A nested class is a union in Rust: [a\D] reads [a[^0-9]].
                emit_perl_standalone(p.kind.clone(), true, out);
            } else {
                out.push_str(perl_members(&p.kind));
            }
            Ok(())
        }
        ClassSetItem::Bracketed(_) => Err(refuse("a nested class")),
        ClassSetItem::Union(u) => {
            for item in &u.items {
                emit_class_item(item, out)?;
            }
            Ok(())
        }
    }
}

// The rules a published regex meets beyond the subset (module docs,
// "Linear in every engine" and "Not a catch-all").

/// Fewest characters written literally that every match of a published
/// regex holds: as a substring pattern needs 3 visible characters
/// (`custom.rs`), a regex must carry as much text of its own.
pub const MIN_REGEX_LITERALS: u32 = 3;

/// Most ways in which a published regex, outside its unbounded repetitions,
/// may match one text from one position. Each way is one more pass a
/// backtracking engine may make over the rest of the regex; alternatives
/// that start alike (`Cannot set|Cannot assign`) and optional parts that
/// may start like what follows them (`.?x`) multiply them, and counted
/// repetitions of such parts multiply them exponentially (`(a|a){30}`).
pub(crate) const MAX_WAYS: u64 = 64;

/// A regex as the rules read it: each character as the set the
/// case-insensitive matcher compares it with, groups dropped, and each part
/// with its text in the pattern, for refusals.
#[derive(Debug)]
enum Shape<'p> {
    /// One character of a set (a literal, `.`, a class).
    Char(ClassUnicode),
    /// `^`: the start of the text (there is no `m` flag).
    Start,
    /// `$`: the end of the text.
    End,
    /// `\b`.
    WordBoundary,
    /// `\B`.
    NotWordBoundary,
    Concat(Vec<Shape<'p>>, &'p str),
    Alternation(Vec<Shape<'p>>, &'p str),
    Repeat {
        body: Box<Shape<'p>>,
        min: u32,
        /// `None`: unbounded (`*`, `+`, `{n,}`), a *run* below.
        max: Option<u32>,
        text: &'p str,
    },
}

impl<'p> Shape<'p> {
    /// The shape of `ast`, a regex already found in the subset.
    fn of(ast: &Ast, pattern: &'p str) -> Shape<'p> {
        let text = |span: &ast::Span| {
            pattern
                .get(span.start.offset..span.end.offset)
                .unwrap_or("")
        };
        match ast {
            Ast::Empty(_) | Ast::Flags(_) => Shape::Concat(Vec::new(), ""),
            Ast::Literal(_)
            | Ast::Dot(_)
            | Ast::ClassPerl(_)
            | Ast::ClassBracketed(_)
            | Ast::ClassUnicode(_) => Shape::Char(char_set(ast)),
            Ast::Assertion(a) => match a.kind {
                AssertionKind::StartLine | AssertionKind::StartText => Shape::Start,
                AssertionKind::EndLine | AssertionKind::EndText => Shape::End,
                AssertionKind::WordBoundary => Shape::WordBoundary,
                _ => Shape::NotWordBoundary,
            },
            Ast::Repetition(rep) => {
                let (min, max) = match &rep.op.kind {
                    ast::RepetitionKind::ZeroOrOne => (0, Some(1)),
                    ast::RepetitionKind::ZeroOrMore => (0, None),
                    ast::RepetitionKind::OneOrMore => (1, None),
                    ast::RepetitionKind::Range(ast::RepetitionRange::Exactly(n)) => (*n, Some(*n)),
                    ast::RepetitionKind::Range(ast::RepetitionRange::AtLeast(n)) => (*n, None),
                    ast::RepetitionKind::Range(ast::RepetitionRange::Bounded(n, m)) => {
                        (*n, Some(*m))
                    }
                };
                Shape::Repeat {
                    body: Box::new(Shape::of(&rep.ast, pattern)),
                    min,
                    max,
                    text: text(&rep.span),
                }
            }
            Ast::Group(g) => Shape::of(&g.ast, pattern),
            Ast::Alternation(alt) => Shape::Alternation(
                alt.asts.iter().map(|a| Shape::of(a, pattern)).collect(),
                text(&alt.span),
            ),
            Ast::Concat(c) => Shape::Concat(
                c.asts.iter().map(|a| Shape::of(a, pattern)).collect(),
                text(&c.span),
            ),
        }
    }

    /// Whether it can match the empty text.
    fn nullable(&self) -> bool {
        match self {
            Shape::Char(_) => false,
            Shape::Start | Shape::End | Shape::WordBoundary | Shape::NotWordBoundary => true,
            Shape::Concat(parts, _) => parts.iter().all(Shape::nullable),
            Shape::Alternation(branches, _) => branches.iter().any(Shape::nullable),
            Shape::Repeat { body, min, .. } => *min == 0 || body.nullable(),
        }
    }

    /// The characters a non-empty match can start with.
    fn first(&self) -> ClassUnicode {
        let mut set = ClassUnicode::empty();
        match self {
            Shape::Char(c) => set.union(c),
            Shape::Start | Shape::End | Shape::WordBoundary | Shape::NotWordBoundary => {}
            Shape::Concat(parts, _) => {
                for part in parts {
                    set.union(&part.first());
                    if !part.nullable() {
                        break;
                    }
                }
            }
            Shape::Alternation(branches, _) => {
                for branch in branches {
                    set.union(&branch.first());
                }
            }
            Shape::Repeat { body, max, .. } => {
                if *max != Some(0) {
                    set.union(&body.first());
                }
            }
        }
        set
    }

    /// Every character a match can hold.
    fn chars(&self) -> ClassUnicode {
        let mut set = ClassUnicode::empty();
        self.each_char(&mut |c| set.union(c));
        set
    }

    fn each_char(&self, f: &mut dyn FnMut(&ClassUnicode)) {
        match self {
            Shape::Char(c) => f(c),
            Shape::Start | Shape::End | Shape::WordBoundary | Shape::NotWordBoundary => {}
            Shape::Concat(parts, _) | Shape::Alternation(parts, _) => {
                for part in parts {
                    part.each_char(f);
                }
            }
            Shape::Repeat { body, max, .. } => {
                if *max != Some(0) {
                    body.each_char(f);
                }
            }
        }
    }

    /// The fewest characters written literally (one character, up to case)
    /// that a match holds; `^` and `$` count as one each, as they pin the
    /// match to one end of the text (`^w\d+$` is no catch-all).
    fn min_literals(&self) -> u32 {
        match self {
            Shape::Char(c) => u32::from(is_literal(c)),
            Shape::Start | Shape::End => 1,
            Shape::WordBoundary | Shape::NotWordBoundary => 0,
            Shape::Concat(parts, _) => parts
                .iter()
                .fold(0, |n, part| n.saturating_add(part.min_literals())),
            Shape::Alternation(branches, _) => {
                branches.iter().map(Shape::min_literals).min().unwrap_or(0)
            }
            Shape::Repeat { body, min, .. } => body.min_literals().saturating_mul(*min),
        }
    }

    /// Whether it can repeat its body twice or more.
    fn repeats(&self) -> bool {
        matches!(self, Shape::Repeat { max, .. } if max.is_none_or(|m| m >= 2))
    }

    /// The unbounded repetitions (runs) in it, in the order of the text.
    fn runs<'s>(&'s self, out: &mut Vec<&'s Shape<'p>>) {
        match self {
            Shape::Concat(parts, _) | Shape::Alternation(parts, _) => {
                for part in parts {
                    part.runs(out);
                }
            }
            Shape::Repeat { body, max, .. } => {
                body.runs(out);
                if max.is_none() {
                    out.push(self);
                }
            }
            _ => {}
        }
    }

    fn text(&self) -> &'p str {
        match self {
            Shape::Concat(_, text) | Shape::Alternation(_, text) | Shape::Repeat { text, .. } => {
                text
            }
            _ => "",
        }
    }
}

/// The set of characters one atom of the subset (a literal, `.`, a class)
/// matches case-insensitively, read from its translation by the parser the
/// matcher uses. Its case folding (Unicode's simple folding) relates a few
/// more characters than ECMAScript's, never fewer: sets only overlap more,
/// so the rules below only err towards refusing.
fn char_set(atom: &Ast) -> ClassUnicode {
    let mut rust = String::new();
    let hir = emit(atom, &mut rust).ok().and_then(|()| {
        regex_syntax::ParserBuilder::new()
            .case_insensitive(true)
            .build()
            .parse(&rust)
            .ok()
    });
    let single = |c: char| ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
    match hir.as_ref().map(Hir::kind) {
        Some(HirKind::Class(Class::Unicode(class))) => class.clone(),
        Some(HirKind::Literal(lit)) => {
            match std::str::from_utf8(&lit.0).map(|s| s.chars().next()) {
                Ok(Some(c)) => single(c),
                _ => any_char(),
            }
        }
        // Not reached for a regex of the subset; every character is the
        // answer that refuses most.
        _ => any_char(),
    }
}

fn any_char() -> ClassUnicode {
    ClassUnicode::new([ClassUnicodeRange::new('\0', char::MAX)])
}

/// Whether `set` is one character up to case (`a`, `[kK]`, `\.`).
fn is_literal(set: &ClassUnicode) -> bool {
    let Some(c) = set.ranges().first().map(ClassUnicodeRange::start) else {
        return false;
    };
    let mut orbit = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
    orbit.case_fold_simple();
    orbit == *set
}

fn disjoint(a: &ClassUnicode, b: &ClassUnicode) -> bool {
    let mut both = a.clone();
    both.intersect(b);
    both.ranges().is_empty()
}

/// Whether every character of `set` is a word character of `\b` (ASCII
/// letters, digits, `_`; and the two characters Unicode folds into ASCII
/// letters, U+017F and U+212A, which only the matcher's folding adds).
fn is_wordy(set: &ClassUnicode) -> bool {
    let word = ClassUnicode::new([
        ClassUnicodeRange::new('0', '9'),
        ClassUnicodeRange::new('A', 'Z'),
        ClassUnicodeRange::new('_', '_'),
        ClassUnicodeRange::new('a', 'z'),
        ClassUnicodeRange::new('\u{17F}', '\u{17F}'),
        ClassUnicodeRange::new('\u{212A}', '\u{212A}'),
    ]);
    let mut rest = set.clone();
    rest.difference(&word);
    rest.ranges().is_empty()
}

/// Refuses a regex that can match while holding fewer than
/// [`MIN_REGEX_LITERALS`] literal characters.
fn check_not_catch_all(shape: &Shape<'_>) -> Result<(), SyntaxError> {
    if shape.min_literals() >= MIN_REGEX_LITERALS {
        return Ok(());
    }
    Err(SyntaxError(format!(
        "regex can match a text that holds fewer than {MIN_REGEX_LITERALS} of its literal \
         characters, so it matches nearly every event (as ., ^, | or () do); as a string \
         pattern needs {MIN_REGEX_LITERALS} visible characters, every match of a regex must hold \
         at least {MIN_REGEX_LITERALS} characters written literally (^ and $ count as one each), \
         such as `Loading chunk \\d+` or `^w\\d+$`"
    )))
}

/// The rule that keeps a published regex linear in a backtracking engine
/// such as JavaScript's (module docs, "Linear in every engine").
mod linear {
    use super::{ClassUnicode, MAX_WAYS, Shape, SyntaxError, disjoint, is_wordy};

    pub(super) fn check(shape: &Shape<'_>) -> Result<(), SyntaxError> {
        nesting(shape, None)?;
        ways(shape, &ClassUnicode::empty(), None)?;
        let mut runs = Vec::new();
        shape.runs(&mut runs);
        let runs: Vec<Run<'_, '_>> = runs
            .into_iter()
            .map(|shape| {
                let chars = shape.chars();
                Run {
                    wordy: is_wordy(&chars),
                    chars,
                    shape,
                }
            })
            .collect();
        for target in 0..runs.len() {
            delimited(shape, &runs, target)?;
        }
        Ok(())
    }

    /// Rule 1: a repetition that can repeat twice or more may hold an
    /// unbounded one (whether one repetition of it is delimited from the
    /// next is [`delimited`]'s), but not one that holds another: a third
    /// level would make that walk exponential in the regex's depth, and no
    /// regex of this kind needs it.
    fn nesting(shape: &Shape<'_>, outer: Option<&str>) -> Result<(), SyntaxError> {
        match shape {
            Shape::Concat(parts, _) | Shape::Alternation(parts, _) => {
                parts.iter().try_for_each(|part| nesting(part, outer))
            }
            Shape::Repeat { body, text, .. } => {
                let mut inner = Vec::new();
                body.runs(&mut inner);
                match (outer, inner.first()) {
                    (Some(outer), Some(inner)) if shape.repeats() => Err(SyntaxError(format!(
                        "`{outer}` repeats `{text}`, which repeats a part that holds a repetition \
                         of its own (`{}`): three levels of repetition around an unbounded one \
                         are more than this check follows; spell one level out",
                        inner.text()
                    ))),
                    _ if shape.repeats() && !inner.is_empty() => nesting(body, Some(text)),
                    _ => nesting(body, outer),
                }
            }
            _ => Ok(()),
        }
    }

    /// Rule 2: the ways in which `shape` can match one text from one position,
    /// `follow` being what can come right after it; at most [`MAX_WAYS`],
    /// and exactly one inside an unbounded repetition, whose body must not
    /// match the empty text; inside `around`, a repetition that can repeat,
    /// an unbounded repetition stops at one place only.
    fn ways(
        shape: &Shape<'_>,
        follow: &ClassUnicode,
        around: Option<&str>,
    ) -> Result<u64, SyntaxError> {
        let n = match shape {
            Shape::Char(_)
            | Shape::Start
            | Shape::End
            | Shape::WordBoundary
            | Shape::NotWordBoundary => 1,
            Shape::Concat(parts, _) => {
                let mut n = 1u64;
                let mut after = follow.clone();
                for part in parts.iter().rev() {
                    n = n.saturating_mul(ways(part, &after, around)?);
                    let mut starts = part.first();
                    if part.nullable() {
                        starts.union(&after);
                    }
                    after = starts;
                }
                n
            }
            Shape::Alternation(branches, _) => {
                // A branch is tried, and its way counts, whenever the next
                // character could start it.
                let entries: Vec<(ClassUnicode, bool)> = branches
                    .iter()
                    .map(|b| {
                        let mut starts = b.first();
                        if b.nullable() {
                            starts.union(follow);
                        }
                        (starts, b.nullable())
                    })
                    .collect();
                let each = branches
                    .iter()
                    .map(|b| ways(b, follow, around))
                    .collect::<Result<Vec<u64>, _>>()?;
                let overlap = |(a, a_empty): &(ClassUnicode, bool),
                               (b, b_empty): &(ClassUnicode, bool)| {
                    (*a_empty && *b_empty) || !disjoint(a, b)
                };
                (0..branches.len())
                    .map(|i| {
                        (0..branches.len())
                            .filter(|&j| i == j || overlap(&entries[i], &entries[j]))
                            .fold(0u64, |n, j| n.saturating_add(each[j]))
                    })
                    .max()
                    .unwrap_or(1)
            }
            Shape::Repeat {
                body,
                min,
                max,
                text,
            } => {
                // After one pass of the body comes another, or what follows.
                let mut next = body.first();
                next.union(follow);
                let inner = ways(
                    body,
                    &next,
                    if shape.repeats() { Some(text) } else { around },
                )?;
                match max {
                    None if body.nullable() => {
                        return Err(SyntaxError(format!(
                            "`{text}` repeats a part that can match the empty text: a \
                             backtracking engine may try every way of splitting a text into \
                             such parts; make the repeated part match at least one character"
                        )));
                    }
                    None if inner > 1 => {
                        return Err(SyntaxError(format!(
                            "`{text}` repeats a part that can match the same text in more than \
                             one way (alternatives or optional parts that start alike): a \
                             backtracking engine may try every way, exponentially many; make \
                             the alternatives inside start with different characters, such as \
                             `(ab?)*` for `(a|ab)*`"
                        )));
                    }
                    // Inside a repetition, each place where an unbounded one
                    // can stop is one more way for every repetition.
                    None => match around {
                        Some(around) if !disjoint(&body.first(), follow) => {
                            return Err(SyntaxError(format!(
                                "`{text}` can stop at more than one place before what follows \
                                 it inside `{around}`, and each repetition of `{around}` \
                                 multiplies those ways: a backtracking engine may try them \
                                 all, exponentially many; make what follows `{text}` begin \
                                 with a character it cannot match, such as `(\\.\\d+)+`, or \
                                 repeat one part only, such as `[\\w\\s]*` for `(\\w+\\s?)*`"
                            )));
                        }
                        // Elsewhere, where it stops is [`delimited`]'s.
                        _ => 1,
                    },
                    Some(max) => {
                        let stops =
                            if max > min && (body.nullable() || !disjoint(&body.first(), follow)) {
                                u64::from(*max) - u64::from(*min) + 1
                            } else {
                                1
                            };
                        inner.saturating_pow(*max).saturating_mul(stops)
                    }
                }
            }
        };
        if n > MAX_WAYS {
            return Err(SyntaxError(format!(
                "`{}` can match one text in more than {MAX_WAYS} ways (alternatives or optional \
                 parts that start alike, or counted repetitions of them): a backtracking engine \
                 tries each; make alternatives start with different characters, such as \
                 `Cannot (set|assign)` for `Cannot set|Cannot assign`",
                shape.text()
            )));
        }
        Ok(n)
    }

    /// An unbounded repetition, with the characters it can match.
    struct Run<'s, 'p> {
        shape: &'s Shape<'p>,
        chars: ClassUnicode,
        /// Every one of `chars` is a word character: `\b` cannot hold
        /// between two of them.
        wordy: bool,
    }

    /// Where the text read by the run `runs[target]` may have been read
    /// before by another attempt: a search that starts at another position
    /// (`start`, unless the regex is anchored with `^`), or another place
    /// where an earlier run stopped (`runs`).
    #[derive(Clone, Default)]
    struct Pending {
        start: bool,
        runs: Vec<usize>,
    }

    impl Pending {
        fn union(mut self, other: Pending) -> Pending {
            self.start |= other.start;
            for r in other.runs {
                if !self.runs.contains(&r) {
                    self.runs.push(r);
                }
            }
            self
        }
    }

    /// Rule 3: every run is *delimited*: on every way to it, from the start of
    /// an unanchored search and from every earlier run, the regex reads a
    /// character that the run cannot match, or one that the earlier run
    /// cannot match. Then attempts from different positions, and from
    /// different stops of an earlier run, read disjoint stretches of the
    /// text with it, and a search reads each character a bounded number of
    /// times.
    fn delimited(root: &Shape<'_>, runs: &[Run<'_, '_>], target: usize) -> Result<(), SyntaxError> {
        let mut found = None;
        walk(
            root,
            runs,
            target,
            Pending {
                start: true,
                runs: Vec::new(),
            },
            &mut found,
        );
        let Some(pending) = found else {
            return Ok(());
        };
        let run = runs[target].shape.text();
        if pending.runs.contains(&target) {
            let group = repeating_ancestor(root, runs[target].shape).map_or(run, Shape::text);
            return Err(SyntaxError(format!(
                "`{group}` repeats `{run}` with nothing between one repetition and the next \
                 that `{run}` cannot match: a backtracking engine may try every way of splitting \
                 a text between the repetitions, exponentially many; begin or end each \
                 repetition with a character `{run}` excludes, such as `(\\.\\d+)+`, or \
                 repeat one part only, such as `[\\w\\s]*` for `(\\w+\\s?)*`"
            )));
        }
        if let Some(&earlier) = pending.runs.first() {
            return Err(SyntaxError(format!(
                "`{}` and `{run}` can match the same characters with nothing between them that \
                 one of them cannot match: a backtracking engine tries every way of splitting a \
                 text between them, in time that grows with the square of its length or faster; \
                 separate them by a character one of them excludes, such as `;\\w+\\s\\w+` \
                 for `;\\w+\\s?\\w+`, or make them one repetition",
                runs[earlier].shape.text()
            )));
        }
        if pending.start {
            return Err(SyntaxError(format!(
                "`{run}` can be reached from any position of a text without a character it \
                 cannot match: a search that retries at each position (as JavaScript's \
                 RegExp.test does) reads the same text with it again from each, in time that \
                 grows with the square of the text's length; anchor the regex with ^, or put \
                 before the repetition a character that it excludes, such as `Loading chunk \
                 [^ ]* failed` for `Loading chunk .* failed`"
            )));
        }
        Ok(())
    }

    /// What is pending after `shape`, given what is pending before it;
    /// `found`: what is pending where the target run begins.
    fn walk<'s, 'p>(
        shape: &'s Shape<'p>,
        runs: &[Run<'s, 'p>],
        target: usize,
        mut pending: Pending,
        found: &mut Option<Pending>,
    ) -> Pending {
        match shape {
            Shape::Char(set) => {
                if disjoint(set, &runs[target].chars) {
                    pending = Pending::default();
                } else {
                    pending.runs.retain(|&r| !disjoint(set, &runs[r].chars));
                }
                pending
            }
            Shape::Start => {
                pending.start = false;
                pending
            }
            Shape::WordBoundary => {
                if runs[target].wordy {
                    pending = Pending::default();
                } else {
                    pending.runs.retain(|&r| !runs[r].wordy);
                }
                pending
            }
            Shape::End | Shape::NotWordBoundary => pending,
            Shape::Concat(parts, _) => parts.iter().fold(pending, |pending, part| {
                walk(part, runs, target, pending, found)
            }),
            Shape::Alternation(branches, _) => branches
                .iter()
                .map(|b| walk(b, runs, target, pending.clone(), found))
                .fold(Pending::default(), Pending::union),
            Shape::Repeat { body, min, max, .. } => {
                let this = runs.iter().position(|r| std::ptr::eq(r.shape, shape));
                if this == Some(target) {
                    // An earlier run that cannot match a character the
                    // target begins with stops where the target begins, or
                    // the target does not begin.
                    let mut first = Vec::new();
                    edge(body, Side::First, &mut first);
                    pending
                        .runs
                        .retain(|&r| !first.iter().any(|c| disjoint(c, &runs[r].chars)));
                    if pending.start || !pending.runs.is_empty() {
                        let seen = found.take().unwrap_or_default();
                        *found = Some(seen.union(pending));
                    }
                    // Past the target, only the target itself matters to it,
                    // when a repetition around it comes back to it.
                    return Pending {
                        start: false,
                        runs: vec![target],
                    };
                }
                let taken = walk(body, runs, target, pending.clone(), found);
                // A body without runs clears no more when read twice; one
                // with runs is read again after itself, which is how a run
                // meets itself, or a later run of the body, from the previous
                // repetition ([`nesting`] keeps this to one level).
                let mut inner = Vec::new();
                body.runs(&mut inner);
                let taken = if shape.repeats() && !inner.is_empty() {
                    let again = walk(body, runs, target, taken.clone(), found);
                    taken.union(again)
                } else {
                    taken
                };
                let mut after = if *min == 0 {
                    pending.union(taken)
                } else {
                    taken
                };
                if let (Some(this), None) = (this, max) {
                    // Where this run stops, it has just read the last
                    // character of a repetition: one the target cannot
                    // match keeps the target's text of each stop apart.
                    let mut last = Vec::new();
                    edge(body, Side::Last, &mut last);
                    if !last.iter().any(|c| disjoint(c, &runs[target].chars)) {
                        after.runs.push(this);
                    }
                }
                after
            }
        }
    }

    #[derive(Clone, Copy, PartialEq)]
    enum Side {
        First,
        Last,
    }

    /// The characters every match of `shape` begins (or ends) with, one
    /// set per position, as far as they are certain; returns whether all of
    /// `shape` was read (so the next part's characters follow).
    fn edge<'s>(shape: &'s Shape<'_>, side: Side, out: &mut Vec<&'s ClassUnicode>) -> bool {
        match shape {
            Shape::Char(c) => {
                out.push(c);
                true
            }
            Shape::Start | Shape::End | Shape::WordBoundary | Shape::NotWordBoundary => true,
            Shape::Concat(parts, _) => {
                if side == Side::First {
                    parts.iter().all(|part| edge(part, side, out))
                } else {
                    parts.iter().rev().all(|part| edge(part, side, out))
                }
            }
            Shape::Alternation(..) => false,
            Shape::Repeat { body, min, .. } => {
                if *min >= 1 {
                    edge(body, side, out);
                }
                false
            }
        }
    }

    /// The innermost repetition that can repeat and holds `run`, if any.
    fn repeating_ancestor<'s, 'p>(shape: &'s Shape<'p>, run: &Shape<'p>) -> Option<&'s Shape<'p>> {
        match shape {
            Shape::Concat(parts, _) | Shape::Alternation(parts, _) => {
                parts.iter().find_map(|part| repeating_ancestor(part, run))
            }
            Shape::Repeat { body, .. } => repeating_ancestor(body, run).or_else(|| {
                let mut inner = Vec::new();
                body.runs(&mut inner);
                (shape.repeats() && inner.iter().any(|r| std::ptr::eq(*r, run))).then_some(shape)
            }),
            _ => None,
        }
    }
}

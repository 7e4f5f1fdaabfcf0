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
//! This file is compiled twice: into the crate, and into `build.rs` through
//! `#[path]`, so the catalog is validated at build time by the same code that
//! validates custom patterns at run time. It may only use `regex` and
//! `regex-syntax`.

use regex_syntax::ast::{
    self, AssertionKind, Ast, ClassPerlKind, ClassSet, ClassSetItem, GroupKind, HexLiteralKind,
    LiteralKind, SpecialLiteralKind,
};

/// Longest regex source accepted, in bytes.
pub const MAX_REGEX_LEN: usize = 512;
/// Compiled-size bound handed to the `regex` crate: refuses patterns such as
/// `(a{100}){100}` whose automaton would be huge.
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
pub fn translate(pattern: &str) -> Result<String, SyntaxError> {
    translate_and_compile(pattern).map(|(rust, _)| rust)
}

/// [`translate`], and the regex compiled as the matcher runs it (which is
/// how the translation is checked), for a caller that keeps both.
pub(crate) fn translate_and_compile(pattern: &str) -> Result<(String, regex::Regex), SyntaxError> {
    if pattern.is_empty() {
        return Err(SyntaxError("regex is empty".into()));
    }
    if pattern.len() > MAX_REGEX_LEN {
        return Err(SyntaxError(format!(
            "regex is {} bytes long; at most {MAX_REGEX_LEN} are accepted",
            pattern.len()
        )));
    }
    let ast = ast::parse::ParserBuilder::new()
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .parse(pattern)
        .map_err(|e| SyntaxError(format!("regex does not parse: {}", e.kind())))?;
    let mut out = String::with_capacity(pattern.len() + 16);
    emit(&ast, &mut out)?;
    // Compile as the matcher will, so a pattern that validates always
    // compiles later (the matcher compiles a built-in regex, validated here
    // by build.rs, only when a text first needs it).
    let regex = compile(&out).map_err(|e| match e {
        regex::Error::CompiledTooBig(_) => {
            SyntaxError("regex is too large once compiled; simplify its repetitions".into())
        }
        other => SyntaxError(format!("regex does not compile: {other}")),
    })?;
    Ok((out, regex))
}

/// Compiles a translated regex as the matcher runs it: case-insensitive,
/// within the size and nesting bounds.
pub(crate) fn compile(rust: &str) -> Result<regex::Regex, regex::Error> {
    regex::RegexBuilder::new(rust)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
}

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

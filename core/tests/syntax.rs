//! The regex subset shared by ECMAScript and Rust: what is accepted, what is
//! refused (with the construct named), and that the translation gives the
//! ECMAScript meaning.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

use noise_filter_core::translate_regex as translate;

macro_rules! accepted {
    ($($name:ident: $pattern:expr;)*) => {$(
        #[test]
        fn $name() {
            if let Err(e) = translate($pattern) {
                panic!("{:?} should be accepted: {e}", $pattern);
            }
        }
    )*};
}

macro_rules! refused {
    ($($name:ident: $pattern:expr => $mentions:expr;)*) => {$(
        #[test]
        fn $name() {
            match translate($pattern) {
                Ok(t) => panic!("{:?} should be refused, got {t:?}", $pattern),
                Err(e) => assert!(e.0.contains($mentions), "{:?}: {e} should mention {:?}", $pattern, $mentions),
            }
        }
    )*};
}

accepted! {
    literal: "Script error";
    anchored_optional_dot: r"^Script error\.?$";
    escaped_slash: r"chrome-extension:\/\/";
    alternation_group: "^(ChunkLoadError: )?Loading (CSS )?chunk [\\w-]+ failed";
    non_capturing: "(?:a|b)c";
    classes_and_escapes: r"[a-z0-9_\-]+\d\s\w\S\D\W";
    counted_repetition: r"x{2}y{1,}z{1,3}";
    lazy: r"a+?b*?c??";
    hex_and_unicode_escapes: r"\x41\u0042";
    control_escapes: r"\t\n\r\f\v";
    word_boundary: r"\bbot\b\B";
    negated_perl_in_class: r"[a\D]";
}

refused! {
    lookahead: "a(?=b)" => "does not parse";
    lookbehind: "(?<=a)b" => "does not parse";
    backreference: r"(a)\1" => "does not parse";
    inline_flag: "(?i)abc" => "inline flag";
    flag_group: "(?i:abc)" => "flags";
    unicode_class: r"\p{L}" => "Unicode class";
    text_anchor: r"\Aabc\z" => r"\A or \z";
    posix_class: "[[:alpha:]]" => "POSIX";
    nested_class: "[a[b]]" => "nested class";
    set_operation: "[a-z&&[^x]]" => "set operation";
    named_group: "(?<year>\\d{4})" => "named group";
    braced_hex: r"\x{41}" => "braced escape";
    long_unicode: r"\U00000041" => r"\UXXXXXXXX";
    bell: r"\a" => r"\a";
    angle_word_boundary: r"\<word" => "word-boundary";
    empty: "" => "empty";
    unbalanced: "(abc" => "does not parse";
    too_long: &"a".repeat(600) => "at most 512";
    too_large_compiled: "(\\w{100}){100}" => "too large";
}

/// The translation reads escapes as ECMAScript does.
#[test]
fn translation_has_ecmascript_meaning() {
    let cases: &[(&str, &str, bool)] = &[
        // \d and \w are ASCII-only in ECMAScript.
        (r"^\d$", "٣", false),
        (r"^\d$", "7", true),
        (r"^\w+$", "héllo", false),
        (r"^\w+$", "hello_1", true),
        // \s includes U+FEFF in ECMAScript.
        (r"^\s$", "\u{FEFF}", true),
        (r"^\s$", "\u{A0}", true),
        // . stops at every line terminator, \r included.
        (r"^a.b$", "a\rb", false),
        (r"^a.b$", "a\u{2028}b", false),
        (r"^a.b$", "a-b", true),
        // \b is an ASCII word boundary.
        (r"\bbot\b", "robot", false),
        (r"\bbot\b", "a bot here", true),
        (r"é\b", "éa", true),
        // Case-insensitive as new RegExp(p, "i").
        (
            r"^loading chunk \d+ failed",
            "Loading CHUNK 12 failed.",
            true,
        ),
        // ^ and $ anchor the whole text (no m flag).
        (r"^b$", "a\nb", false),
    ];
    for &(pattern, text, expected) in cases {
        let rust = translate(pattern).unwrap();
        let regex = regex::RegexBuilder::new(&rust)
            .case_insensitive(true)
            .build()
            .unwrap();
        assert_eq!(
            regex.is_match(text),
            expected,
            "{pattern:?} on {text:?} (as {rust:?})"
        );
    }
}

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

use noise_filter_core::validate_regex as validate;

/// What the service publishes (a built-in regex, a custom one) is checked
/// further: linear in a backtracking engine such as JavaScript's, and no
/// catch-all (docs/CONTRACT.md, "Matching").
macro_rules! published {
    ($($name:ident: $pattern:expr;)*) => {$(
        #[test]
        fn $name() {
            if let Err(e) = validate($pattern) {
                panic!("{:?} should be accepted for publishing: {e}", $pattern);
            }
        }
    )*};
}

macro_rules! not_published {
    ($($name:ident: $pattern:expr => $mentions:expr;)*) => {$(
        #[test]
        fn $name() {
            match validate($pattern) {
                Ok(t) => panic!("{:?} should be refused for publishing, got {t:?}", $pattern),
                Err(e) => assert!(e.0.contains($mentions), "{:?}: {e} should mention {:?}", $pattern, $mentions),
            }
            // The matcher still reads it (a list served by an older
            // deployment): it matches in linear time whatever the regex.
            if let Err(e) = translate($pattern) {
                panic!("{:?} is in the subset: {e}", $pattern);
            }
        }
    )*};
}

// Patterns such as teams write them, and the shapes of the built-in catalog.
published! {
    team_script_error: r"^Script error\.?$";
    team_loading_chunk: r"Loading chunk [\w-]+ failed";
    team_loading_chunk_digits: r"^(ChunkLoadError: )?Loading chunk \d+ failed\.?";
    team_resize_observer: "ResizeObserver loop (limit exceeded|completed with undelivered notifications)";
    team_extension_scheme: r"^(chrome|moz|safari(-web)?)-extension:\/\/";
    team_facebook_hosts: r"graph\.facebook\.com|connect\.facebook\.net";
    team_not_defined: r"\b(zaraz|fbq|gtag|_hsq) is not defined";
    team_cannot_read: r"Cannot read properties of (null|undefined) \(reading '[^']*'\)";
    team_version: r"Chrome\/\d+\.\d+\.\d+";
    team_version_repeated: r"Chrome\/\d+(\.\d+)+";
    team_version_counted: r"Chrome(\.\d+){3}";
    team_host: r"^https?:\/\/([\w-]+\.)+example\.com\/";
    team_dotted_number: r"Version (\d+\.)+\d+ failed";
    team_ip_address: r"(\d{1,3}\.){3}\d{1,3}";
    team_word_then_bot: r"\b\w+bot\/\d";
    team_anchored_id: r"^w\d+$";
    team_word: r"\bwidget\b";
    catalog_compatible_token: r"\(compatible; ?[^;)]*(bot|crawler|spider)\b";
    catalog_leading_product_token: r"^[\w.-]*(bot|crawler|spider)\/\d";
    catalog_commented_product_token: r"[;(] ?[\w.-]*(bot|crawler|spider)\/\d";
    catalog_cefsharp: r"Object Not Found Matching Id:\d+, MethodName:\w+, ParamCount:\d+";
    catalog_alternatives_alike: r"(Cannot redefine property|Cannot assign to read only property|Cannot set property) .?(ethereum|web3|tronWeb|tronLink|trustwallet)\b";
    catalog_hex_global: r"\ba0_0x[0-9a-f]{3,} is not defined";
    lazy_run: r"\(compatible;[^()]*?(bot|crawler)\b";
}

not_published! {
    // Exponential in a backtracking engine: a repetition inside a repetition
    // that can stop at several places in each repetition.
    nested_plus: "(a+)+" => "`a+` can stop at more than one place before what follows it inside `(a+)+`";
    nested_overlapping_plus: "(x+x+)+y" => "can stop at more than one place";
    nested_word_space: r"(\w+\s?)*" => "can stop at more than one place";
    nested_alternatives: "x(a+|b)+y" => "can stop at more than one place";
    nested_three_deep: "x((;a+)+)+y" => "three levels of repetition";
    nested_run_stops_anywhere: ";(b + {1,3}|a)+;" => "can stop at more than one place";
    // ... or a repeated part that matches one text in several ways.
    repeated_alternatives_alike: "x(a|ab)*y" => "in more than one way";
    repeated_empty_part: "x(a?)*y" => "empty text";
    counted_alternatives_alike: "x(a|a){30}y" => "more than 64 ways";
    chained_options: "xa?a?a?a?a?a?a?aaaaaaay" => "more than 64 ways";
    nested_counts: "x(a{1,10}){1,10}y" => "more than 64 ways";
    // Quadratic under a search that retries at every position.
    dot_star_between: "a.*b" => "from any position";
    dot_star_in_words: "Loading chunk .* failed" => "from any position";
    run_at_the_end: r"\d+$" => "from any position";
    run_without_delimiter: r"\(compatible;[^)]*(https?:\/\/|www\.)" => "from any position";
    // Polynomial from one position: two runs over the same characters.
    adjacent_runs: r";\w+\s?\w+;" => "can match the same characters";
    runs_through_a_shared_character: r"x[ac]*c[^!]*!" => "can match the same characters";
    // Catch-alls: they match nearly every event.
    catch_all_dot: "." => "fewer than 3";
    catch_all_caret: "^" => "fewer than 3";
    catch_all_bar: "|" => "fewer than 3";
    catch_all_empty_group: "()" => "fewer than 3";
    catch_all_two_letters: "ab" => "fewer than 3";
    catch_all_short_branch: "abc|x" => "fewer than 3";
    catch_all_classes: r"\w{5}" => "fewer than 3";
    catch_all_any_line: "^.*$" => "fewer than 3";
}

#[cfg(feature = "endpoint")]
#[test]
fn a_custom_regex_is_refused_with_the_rule_named_and_nothing_changes() {
    use noise_filter_core::{CustomPatterns, Kind, NewPattern, UnixMillis};
    let mut doc = CustomPatterns::new();
    let before = doc.clone();
    let regex = |pattern: &str| NewPattern {
        kind: Kind::Regex,
        ..NewPattern::string(pattern)
    };
    let err = doc.add(regex("(a+)+$"), UnixMillis(0)).unwrap_err();
    assert!(err.0.contains("`(a+)+`"), "{err}");
    let err = doc.add(regex("^"), UnixMillis(0)).unwrap_err();
    assert!(err.0.contains("nearly every event"), "{err}");
    assert_eq!(doc, before);
    doc.add(regex(r"^Retry \d+ failed$"), UnixMillis(0))
        .unwrap();
}

//! The "not our code" rule: an event none of whose stack frames is in the
//! application's own code is noise (category `third-party-script`).
//!
//! No pattern can say this: the scripts a browser extension, an in-app
//! browser or a privacy tool injects into a page come from random UUID
//! paths, `app:///…inject.bundle.js`, Safari's `webkit-masked-url://hidden/`,
//! hosts no list can know. What the application knows is where its own
//! code lives: its origins (`https://app.example.com`) and, where frames are
//! file paths or one origin serves more than the application, path prefixes
//! (`/srv/app/`, `/static/app/`). The rule is off unless given
//! ([`Matcher::with_first_party`]).
//!
//! **All frames, not the innermost.** An event is noise when every frame
//! that has a place is elsewhere; one frame of the application's own code
//! anywhere in the stack keeps it. Two reasons (docs/DECISIONS.md):
//! dropping is the costly mistake (a real bug lost; a noise event kept is
//! one more line in the tracker), and the application's own code calling
//! into a third-party library that throws (a CDN's jQuery fed a bad
//! selector, an SDK given a wrong argument) is the application's bug, which
//! an innermost-frame rule would drop. And the event does not say which end
//! is innermost: the core keeps the order its reader gave (Sentry lists the
//! innermost frame last, a V8 `stack` first). The case the innermost rule
//! would add (an extension's script throwing inside the application's call,
//! when it wraps `fetch` or `addEventListener`) is named by its URL, which
//! the catalog's browser-extension patterns match in any frame.
//!
//! **Frames with no place count for neither side**: an empty name,
//! `<anonymous>`, `native`, `[native code]`, `eval` code, `node:` modules,
//! relative file names, and the browser's own scripts (`resource://`,
//! `chrome://`). A frame has a place when it is a URL with an authority
//! (`scheme://host[:port]/…`; `blob:` URLs are read as the URL they wrap)
//! or an absolute path (`/…`). An event with no placed frame (none at all,
//! or only such frames) is never noise by this rule.

use std::sync::Arc;

use crate::matcher::Matcher;

/// The id of the first-party rule's match in a verdict. No catalog pattern
/// has it (a test checks), nor an account's (theirs begin `custom-`).
pub const FIRST_PARTY_RULE_ID: &str = "first-party-rule";

/// The category of the first-party rule's match.
pub const FIRST_PARTY_CATEGORY: &str = "third-party-script";

/// The confidence of the first-party rule's match: the application said
/// where its code is, so an event with none of it is noise by its own word.
pub const FIRST_PARTY_CONFIDENCE: f64 = 1.0;

/// Schemes of the browser's own scripts: frames of these have no place.
const BROWSER_SCHEMES: &[&str] = &["chrome", "resource"];

/// Why a first-party option was refused (the text says which entry and why).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidFirstParty(pub String);

impl std::fmt::Display for InvalidFirstParty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidFirstParty {}

/// Where the application's own code lives: origins and path prefixes.
///
/// Kept small on purpose: the npm page's wasm holds it, within a budget
/// (docs/BENCHMARKS.md, "npm: wasm sizes"). The origins are kept as given
/// and read with the frames' reader ([`place`]), so one parser serves both.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstParty {
    origins: Vec<String>,
    paths: Vec<String>,
}

impl FirstParty {
    /// The rule with these `origins` (`scheme://host[:port]`) and `paths`
    /// (prefixes starting with `/`); at least one of either. Refused with a
    /// text naming the entry (`firstParty: origins[0]: …`).
    pub fn new(origins: Vec<String>, paths: Vec<String>) -> Result<FirstParty, InvalidFirstParty> {
        // One loop and one refusal text for both lists: each site of a
        // formatted text is code in the page's wasm.
        for (list, entries) in [("origins", &origins), ("paths", &paths)] {
            let is_path = list == "paths";
            for (at, entry) in entries.iter().enumerate() {
                let valid = if is_path {
                    is_path_prefix(entry)
                } else {
                    is_origin(entry)
                };
                if !valid {
                    let expected = if is_path { PATH } else { ORIGIN };
                    return Err(InvalidFirstParty(format!(
                        "firstParty: {list}[{at}]: `{entry}` is not {expected}"
                    )));
                }
            }
        }
        if origins.is_empty() && paths.is_empty() {
            return Err(InvalidFirstParty(
                "firstParty: no origins and no paths (every frame would be elsewhere: \
                 give the application's own, or leave the option out)"
                    .into(),
            ));
        }
        Ok(FirstParty { origins, paths })
    }

    /// The origins, as given.
    pub fn origins(&self) -> &[String] {
        &self.origins
    }

    /// The path prefixes, as given.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Whether `frame` is the application's own code: `Some(true)` or
    /// `Some(false)` for a frame with a place, `None` for one without.
    pub fn is_own(&self, frame: &str) -> Option<bool> {
        let frame = place(frame)?;
        let own_origin = !frame.scheme.is_empty()
            && self.origins.iter().filter_map(|o| place(o)).any(|o| {
                o.scheme.eq_ignore_ascii_case(frame.scheme)
                    && o.host.eq_ignore_ascii_case(frame.host)
                    && o.port == frame.port
            });
        Some(
            own_origin
                || self
                    .paths
                    .iter()
                    .any(|p| frame.path.starts_with(p.as_str())),
        )
    }

    /// The index of the frame the rule reports when it calls the event
    /// noise: the last placed frame, when every placed frame is elsewhere
    /// (in Sentry's order, the innermost). `None`: some frame is the
    /// application's own, or no frame has a place.
    pub(crate) fn elsewhere<'t>(&self, frames: impl IntoIterator<Item = &'t str>) -> Option<usize> {
        let mut seen = Seen::Nothing;
        for (i, frame) in frames.into_iter().enumerate() {
            self.see(&mut seen, i, frame);
        }
        match seen {
            Seen::Elsewhere(i) => Some(i),
            Seen::Nothing | Seen::Own => None,
        }
    }

    /// Takes frame `i` into what the rule has `seen` of an event so far
    /// (the matcher's `is_noise` reads the frames once, for its patterns
    /// and the rule together).
    pub(crate) fn see(&self, seen: &mut Seen, i: usize, frame: &str) {
        if *seen == Seen::Own {
            return;
        }
        match self.is_own(frame) {
            Some(true) => *seen = Seen::Own,
            Some(false) => *seen = Seen::Elsewhere(i),
            None => {}
        }
    }
}

/// What the rule has seen of an event's frames so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Seen {
    /// No placed frame.
    Nothing,
    /// Placed frames, all elsewhere; the last one's index.
    Elsewhere(usize),
    /// A frame of the application's own.
    Own,
}

/// What an origin entry must be, as its refusal says.
const ORIGIN: &str = "an origin (scheme://host[:port], as https://app.example.com)";
/// What a path entry must be, as its refusal says.
const PATH: &str = "a path prefix (starting with one /, as /static/app/ or /srv/app/)";

/// Bytes no entry holds: a query, a fragment, a user, a wildcard, a space.
fn has_stray_byte(text: &str) -> bool {
    text.bytes()
        .any(|b| matches!(b, b'?' | b'#' | b'@' | b'*' | b' '))
}

/// `scheme://host[:port]`, a trailing `/` allowed; a host (for http and
/// https), a port of digits.
fn is_origin(text: &str) -> bool {
    place(text).is_some_and(|origin| {
        !origin.scheme.is_empty()
            && !has_stray_byte(text)
            && (origin.path.is_empty() || origin.path == "/")
            && !(origin.host.is_empty()
                && origin.scheme.len() >= 4
                && origin.scheme[..4].eq_ignore_ascii_case("http"))
            && origin.port.bytes().all(|b| b.is_ascii_digit())
    })
}

/// A prefix starting with one `/`.
fn is_path_prefix(text: &str) -> bool {
    !has_stray_byte(text) && place(text).is_some_and(|p| p.scheme.is_empty())
}

/// A placed frame (or an origin entry): scheme, host and port (empty for a
/// bare path; the port empty too when it is the scheme's default, as
/// browsers write `https://a.example`), and the path.
struct Place<'a> {
    scheme: &'a str,
    host: &'a str,
    port: &'a str,
    path: &'a str,
}

/// Where `frame` is, or `None` when it has no place (see the module doc).
/// Byte by byte rather than with `str`'s pattern searches: each of those
/// is more code in the page's wasm.
fn place(frame: &str) -> Option<Place<'_>> {
    let frame = frame.strip_prefix("blob:").unwrap_or(frame);
    let end = frame
        .bytes()
        .position(|b| b == b'?' || b == b'#')
        .unwrap_or(frame.len());
    let frame = &frame[..end];
    let bytes = frame.as_bytes();
    if bytes.first() == Some(&b'/') {
        return (bytes.get(1) != Some(&b'/')).then_some(Place {
            scheme: "",
            host: "",
            port: "",
            path: frame,
        });
    }
    let colon = frame.bytes().position(|b| b == b':')?;
    let scheme = &frame[..colon];
    let rest = frame[colon + 1..].strip_prefix("//")?;
    if !is_scheme(scheme)
        || BROWSER_SCHEMES
            .iter()
            .any(|s| s.eq_ignore_ascii_case(scheme))
    {
        return None;
    }
    let slash = rest.bytes().position(|b| b == b'/').unwrap_or(rest.len());
    let (authority, path) = rest.split_at(slash);
    // An IPv6 host keeps its brackets, and the colons inside them.
    let (host, port) = match authority.bytes().rposition(|b| b == b':') {
        Some(at) if !authority.ends_with(']') => (&authority[..at], &authority[at + 1..]),
        _ => (authority, ""),
    };
    let default = (port == "443" && scheme.eq_ignore_ascii_case("https"))
        || (port == "80" && scheme.eq_ignore_ascii_case("http"));
    Some(Place {
        scheme,
        host,
        port: if default { "" } else { port },
        path,
    })
}

/// An URL scheme: a letter, then letters, digits, `+`, `-`, `.`.
fn is_scheme(scheme: &str) -> bool {
    scheme
        .as_bytes()
        .first()
        .is_some_and(u8::is_ascii_alphabetic)
        && scheme
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
}

impl Matcher {
    /// This matcher with the first-party rule: an event whose placed frames
    /// are all outside `first_party` is noise, its verdict holding a match
    /// of id [`FIRST_PARTY_RULE_ID`] (category `third-party-script`, of the
    /// last placed frame), besides any pattern's.
    pub fn with_first_party(mut self, first_party: FirstParty) -> Matcher {
        self.set_first_party(first_party);
        self
    }

    /// [`Matcher::with_first_party`] in place: for a binding that has just
    /// built the matcher (a copy of it would cost the page the code of
    /// `Clone`).
    pub fn set_first_party(&mut self, first_party: FirstParty) {
        self.first_party = Some(Arc::new(first_party));
    }

    /// The first-party rule, if this matcher has it.
    pub fn first_party(&self) -> Option<&FirstParty> {
        self.first_party.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> FirstParty {
        FirstParty::new(
            vec!["https://app.example.com".into(), "app://".into()],
            vec!["/srv/app/".into()],
        )
        .expect("valid")
    }

    #[test]
    fn frames_with_a_place_are_own_or_elsewhere() {
        let rule = rule();
        for own in [
            "https://app.example.com/main.js",
            "HTTPS://App.Example.com:443/x.js",
            "blob:https://app.example.com/2f1c",
            "app:///main.jsbundle",
            "/srv/app/views.py",
            "https://cdn.example.net/srv/app/x.js",
        ] {
            assert_eq!(rule.is_own(own), Some(true), "{own}");
        }
        for elsewhere in [
            "https://app.example.com:8443/main.js",
            "http://app.example.com/main.js",
            "https://evil.example/app.example.com/x.js",
            "chrome-extension://abcdefghijklmnop/content.js",
            "moz-extension://2f1c0a9e-1d2b-4c3d-8e9f-0a1b2c3d4e5f/inject.js",
            "safari-web-extension://2F1C0A9E/script.js",
            "webkit-masked-url://hidden/",
            "/usr/lib/python3/site-packages/x.py",
        ] {
            assert_eq!(rule.is_own(elsewhere), Some(false), "{elsewhere}");
        }
        for nowhere in [
            "",
            "<anonymous>",
            "native",
            "[native code]",
            "node:internal/process",
            "app/views.py",
            "resource://gre/modules/x.sys.mjs",
            "chrome://global/content/x.js",
            "//cdn.example/x.js",
        ] {
            assert_eq!(rule.is_own(nowhere), None, "{nowhere}");
        }
    }

    #[test]
    fn refusals_name_the_entry() {
        fn strings(list: &[&str]) -> Vec<String> {
            list.iter().map(|s| (*s).to_owned()).collect()
        }
        let refused = |o: &[&str], p: &[&str]| {
            FirstParty::new(strings(o), strings(p))
                .expect_err("refused")
                .0
        };
        assert_eq!(
            refused(&["app.example.com"], &[]),
            "firstParty: origins[0]: `app.example.com` is not an origin \
             (scheme://host[:port], as https://app.example.com)"
        );
        for origin in [
            "https://",
            "https://a.example/static/",
            "https://a.example:8o80",
            "https://*.example",
            "https://user@a.example",
            "https://a.example?x",
            "chrome://settings",
            "1http://a.example",
        ] {
            assert!(
                refused(&["https://a.example", origin], &[]).starts_with(&format!(
                    "firstParty: origins[1]: `{origin}` is not an origin"
                )),
                "{origin}"
            );
        }
        assert_eq!(
            refused(&[], &["static/"]),
            "firstParty: paths[0]: `static/` is not a path prefix \
             (starting with one /, as /static/app/ or /srv/app/)"
        );
        assert!(refused(&[], &["/a?b"]).starts_with("firstParty: paths[0]: `/a?b` is not"));
        assert!(refused(&[], &["//cdn"]).starts_with("firstParty: paths[0]: `//cdn` is not"));
        assert!(refused(&[], &[]).starts_with("firstParty: no origins and no paths"));
        let kept = FirstParty::new(
            strings(&["HTTPS://A.example:443/", "app://", "http://[::1]:8080"]),
            strings(&["/"]),
        )
        .expect("valid");
        assert_eq!(
            kept.origins(),
            ["HTTPS://A.example:443/", "app://", "http://[::1]:8080"]
        );
        assert_eq!(kept.is_own("https://a.example/x.js"), Some(true));
        assert_eq!(kept.is_own("http://[::1]:8080/x.js"), Some(true));
        assert_eq!(kept.is_own("http://[::1]/x.js"), Some(true), "the path /");
    }
}

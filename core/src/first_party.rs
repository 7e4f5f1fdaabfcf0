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
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FirstParty {
    origins: Vec<Origin>,
    paths: Vec<String>,
}

/// An origin, its scheme and host lowercased, a default port left out.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: String,
    port: Option<u16>,
}

impl FirstParty {
    /// The rule with these `origins` (`scheme://host[:port]`) and `paths`
    /// (prefixes starting with `/`); at least one of either. Refused with a
    /// text naming the entry (`firstParty: origins[0]: …`).
    pub fn new<O: AsRef<str>, P: AsRef<str>>(
        origins: impl IntoIterator<Item = O>,
        paths: impl IntoIterator<Item = P>,
    ) -> Result<FirstParty, InvalidFirstParty> {
        let mut rule = FirstParty::default();
        for (at, origin) in origins.into_iter().enumerate() {
            let origin = origin.as_ref();
            rule.origins.push(parse_origin(origin).map_err(|why| {
                InvalidFirstParty(format!(
                    "firstParty: origins[{at}]: `{origin}` {why} \
                     (an origin is scheme://host[:port], as https://app.example.com)"
                ))
            })?);
        }
        for (at, path) in paths.into_iter().enumerate() {
            let path = path.as_ref();
            if !path.starts_with('/') || path.starts_with("//") {
                return Err(InvalidFirstParty(format!(
                    "firstParty: paths[{at}]: `{path}` is not a path prefix \
                     (one starts with a single /, as /static/app/ or /srv/app/)"
                )));
            }
            if path.contains(['?', '#']) || path.chars().any(char::is_whitespace) {
                return Err(InvalidFirstParty(format!(
                    "firstParty: paths[{at}]: `{path}` holds a query, a fragment or a space \
                     (a path prefix is matched against a frame's path only)"
                )));
            }
            rule.paths.push(path.to_owned());
        }
        if rule.origins.is_empty() && rule.paths.is_empty() {
            return Err(InvalidFirstParty(
                "firstParty: no origins and no paths (every frame would be elsewhere: \
                 give the application's own, or leave the option out)"
                    .into(),
            ));
        }
        Ok(rule)
    }

    /// The origins, as `scheme://host[:port]` (lowercased, a default port
    /// left out).
    pub fn origins(&self) -> Vec<String> {
        self.origins
            .iter()
            .map(|o| match o.port {
                Some(port) => format!("{}://{}:{port}", o.scheme, o.host),
                None => format!("{}://{}", o.scheme, o.host),
            })
            .collect()
    }

    /// The path prefixes, as given.
    pub fn paths(&self) -> &[String] {
        &self.paths
    }

    /// Whether `frame` is the application's own code: `Some(true)` or
    /// `Some(false)` for a frame with a place, `None` for one without.
    pub fn is_own(&self, frame: &str) -> Option<bool> {
        let place = place(frame)?;
        let own_origin = place.origin.is_some_and(|(scheme, host, port)| {
            self.origins.iter().any(|o| {
                o.scheme.eq_ignore_ascii_case(scheme)
                    && o.host.eq_ignore_ascii_case(host)
                    && o.port == port
            })
        });
        Some(
            own_origin
                || self
                    .paths
                    .iter()
                    .any(|p| place.path.starts_with(p.as_str())),
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

/// A placed frame: its origin (absent for a bare path) and its path.
struct Place<'a> {
    /// Scheme, host, port (`None`: the scheme's default or none given;
    /// `Some(0)` stands for a port that is not a number, which no origin has).
    origin: Option<(&'a str, &'a str, Option<u16>)>,
    path: &'a str,
}

/// Where `frame` is, or `None` when it has no place (see the module doc).
fn place(frame: &str) -> Option<Place<'_>> {
    let frame = frame.trim();
    let frame = frame.strip_prefix("blob:").unwrap_or(frame);
    let before_query = |s: &str| s.find(['?', '#']).map_or(s.len(), |end| end);
    if frame.starts_with('/') && !frame.starts_with("//") {
        return Some(Place {
            origin: None,
            path: &frame[..before_query(frame)],
        });
    }
    let (scheme, rest) = frame.split_once("://")?;
    if !is_scheme(scheme)
        || BROWSER_SCHEMES
            .iter()
            .any(|s| s.eq_ignore_ascii_case(scheme))
    {
        return None;
    }
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let after = &rest[end..];
    let path = &after[..before_query(after)];
    // user:password@ is no part of the origin.
    let authority = authority.rsplit_once('@').map_or(authority, |(_, a)| a);
    let (host, port) = split_port(authority);
    let port = match port {
        None => None,
        Some(digits) => Some(digits.parse::<u16>().unwrap_or(0)),
    };
    Some(Place {
        origin: Some((scheme, host, normal_port(scheme, port))),
        path,
    })
}

/// `host[:port]` split, an IPv6 host kept in its brackets.
fn split_port(authority: &str) -> (&str, Option<&str>) {
    let host_end = if authority.starts_with('[') {
        authority.find(']').map_or(authority.len(), |at| at + 1)
    } else {
        authority.rfind(':').unwrap_or(authority.len())
    };
    let (host, rest) = authority.split_at(host_end);
    (host, rest.strip_prefix(':'))
}

/// The port, `None` when it is the scheme's default (browsers write
/// `https://a.example`, a user may write `https://a.example:443`).
fn normal_port(scheme: &str, port: Option<u16>) -> Option<u16> {
    let default = match scheme.to_ascii_lowercase().as_str() {
        "http" | "ws" => Some(80),
        "https" | "wss" => Some(443),
        _ => None,
    };
    port.filter(|p| Some(*p) != default)
}

/// An URL scheme: a letter, then letters, digits, `+`, `-`, `.`.
fn is_scheme(scheme: &str) -> bool {
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// Reads an origin option; `Err`: why not, to follow the origin in the text.
fn parse_origin(origin: &str) -> Result<Origin, &'static str> {
    let Some((scheme, rest)) = origin.split_once("://") else {
        return Err("has no scheme://");
    };
    if !is_scheme(scheme) {
        return Err("has no valid scheme");
    }
    // A trailing `/` is how an origin is often copied from the address bar.
    let authority = rest.strip_suffix('/').unwrap_or(rest);
    if authority.contains(['/', '?', '#']) {
        return Err("has a path, a query or a fragment (give a path prefix in paths)");
    }
    if authority.contains('@')
        || authority.contains('*')
        || authority.chars().any(char::is_whitespace)
    {
        return Err("has a user, a wildcard or a space");
    }
    let (host, port) = split_port(authority);
    let scheme = scheme.to_ascii_lowercase();
    if host.is_empty() && matches!(scheme.as_str(), "http" | "https" | "ws" | "wss") {
        return Err("has no host");
    }
    let port = match port {
        None => None,
        Some(digits) => match digits.parse::<u16>() {
            Ok(port) if port > 0 && digits.bytes().all(|b| b.is_ascii_digit()) => Some(port),
            _ => return Err("has a port that is not a number from 1 to 65535"),
        },
    };
    Ok(Origin {
        port: normal_port(&scheme, port),
        scheme,
        host: host.to_ascii_lowercase(),
    })
}

impl Matcher {
    /// This matcher with the first-party rule: an event whose placed frames
    /// are all outside `first_party` is noise, its verdict holding a match
    /// of id [`FIRST_PARTY_RULE_ID`] (category `third-party-script`, of the
    /// last placed frame), besides any pattern's.
    pub fn with_first_party(mut self, first_party: FirstParty) -> Matcher {
        self.first_party = Some(first_party);
        self
    }

    /// The first-party rule, if this matcher has it.
    pub fn first_party(&self) -> Option<&FirstParty> {
        self.first_party.as_ref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule() -> FirstParty {
        FirstParty::new(["https://app.example.com", "app://"], ["/srv/app/"]).expect("valid")
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
        let refused = |o: &[&str], p: &[&str]| FirstParty::new(o, p).expect_err("refused").0;
        assert!(
            refused(&["app.example.com"], &[])
                .starts_with("firstParty: origins[0]: `app.example.com` has no scheme://")
        );
        assert!(
            refused(&["https://a.example", "https://"], &[])
                .starts_with("firstParty: origins[1]: `https://` has no host")
        );
        assert!(refused(&["https://a.example/static/"], &[]).contains("has a path"));
        assert!(refused(&["https://a.example:99999"], &[]).contains("port"));
        assert!(refused(&["https://*.example"], &[]).contains("wildcard"));
        assert!(
            refused(&[], &["static/"])
                .starts_with("firstParty: paths[0]: `static/` is not a path prefix")
        );
        assert!(refused(&[], &["/a?b"]).contains("query"));
        assert!(refused(&[], &[]).starts_with("firstParty: no origins and no paths"));
        assert_eq!(
            FirstParty::new(["HTTPS://A.example:443/"], [""; 0])
                .expect("valid")
                .origins(),
            ["https://a.example"]
        );
    }
}

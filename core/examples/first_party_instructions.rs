//! Instructions an event costs with and without the first-party rule, for a
//! count under valgrind (`callgrind`), which does not move with the
//! machine's load as a clock does (docs/BENCHMARKS.md, "Core: the
//! first-party rule").
//!
//! `first_party_instructions <with|without> <clean|noisy|third_party> <events>`:
//! the built-in catalog (default threshold), with the rule of
//! `https://shop.example.com` or without, `is_noise` then `classify` of the
//! event `events` times. Run it for two counts; the difference over the
//! difference of counts is one event's cost, the build left out.
#![allow(clippy::unwrap_used)] // a measuring tool states its expectations by unwrapping

use std::hint::black_box;

use noise_filter_core::{Event, FirstParty, Matcher};

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 \
                      (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

fn event(kind: &str) -> Event {
    let frames: &[&str] = match kind {
        "clean" => &[
            "https://shop.example.com/assets/index-3f2a9c71.js",
            "https://shop.example.com/assets/vendor-react-8d1e.js",
        ],
        "noisy" => &[
            "chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn/inpage.js",
            "https://shop.example.com/assets/index-3f2a9c71.js",
        ],
        "third_party" => &[
            "https://cdn.injected.example/7f3a9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b.js",
            "<anonymous>",
        ],
        other => panic!("no event {other}"),
    };
    let message = if kind == "noisy" {
        "Cannot redefine property: ethereum"
    } else {
        "Cannot read properties of undefined (reading 'items')"
    };
    Event {
        exception_type: Some("TypeError".into()),
        message: Some(message.into()),
        frames: frames.iter().map(|f| (*f).to_owned()).collect(),
        user_agent: Some(CHROME.into()),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, rule, kind, count] = args.as_slice() else {
        panic!("usage: first_party_instructions <with|without> <clean|noisy|third_party> <events>");
    };
    let count: usize = count.parse().unwrap();
    let mut matcher = Matcher::builtin_default();
    if rule == "with" {
        let own = FirstParty::new(vec!["https://shop.example.com".into()], Vec::new()).unwrap();
        matcher.set_first_party(own);
    }
    let event = event(kind);
    for _ in 0..count {
        black_box(matcher.is_noise(black_box(&event)));
        black_box(matcher.classify(black_box(&event)).noise);
    }
}

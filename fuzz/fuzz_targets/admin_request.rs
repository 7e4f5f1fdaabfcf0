//! The admin API's request parser and everything behind it: any method,
//! target, headers and body, against a store with a key, custom patterns
//! and exclusions, the API on. Never a panic; every refusal a well-formed
//! `{"error": ...}`; no 5xx from a store that works; the log line printable
//! ASCII, without the token.
#![no_main]

use libfuzzer_sys::fuzz_target;
use noise_filter_core::admin_api::{self, AdminTokens};
use noise_filter_core::{ApiKey, MemoryStore, NewExclusion, NewPattern, Request, UnixMillis};

const TOKEN: &str = "fuzzing-admin-token-0123456789abcdef";

fuzz_target!(|data: &[u8]| {
    // Layout: method \n target \n (name: value \n)* \n body, with the
    // admin token substituted for the word TOKEN so the fuzzer reaches past
    // authentication, and an API key for the word KEY.
    let now = UnixMillis(1_763_800_000_000);
    let key = ApiKey::from_random([9; 24]);
    let mut kv = MemoryStore::new()
        .with_key(&key, "fuzz")
        .with_patterns("fuzz", vec![NewPattern::string("fuzzed-noise")])
        .with_exclusions(
            "fuzz",
            vec![NewExclusion {
                id: Some("googlebot".into()),
                ..NewExclusion::default()
            }],
        );
    let tokens = AdminTokens::configure(TOKEN).expect("a valid token").expect("on");

    let text = String::from_utf8_lossy(data)
        .replace("TOKEN", TOKEN)
        .replace("KEY", key.expose());
    let (head, body) = text.split_once("\n\n").unwrap_or((&text, ""));
    let mut lines = head.split('\n');
    let method = lines.next().unwrap_or("");
    let target = lines.next().unwrap_or("");
    let headers: Vec<(&str, &[u8])> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n, v.trim_start().as_bytes()))
        .collect();
    let request = Request { method, target, headers: &headers };
    let answer = admin_api::run(&request, body.as_bytes(), now, Some(&tokens), [3; 24], &mut kv);
    let response = answer.response;
    if response.status >= 400 && method != "HEAD" {
        let value: serde_json::Value =
            serde_json::from_slice(&response.body).expect("error body is JSON");
        assert!(value["error"].is_string() && value.as_object().unwrap().len() == 1);
    }
    assert!(response.status < 500, "no 5xx without a store failure");
    if let Some(line) = answer.log {
        assert!(line.bytes().all(|b| (b' '..=b'~').contains(&b)), "{line:?}");
        assert!(!line.contains(TOKEN) && !line.contains(key.expose()), "{line}");
    }
});

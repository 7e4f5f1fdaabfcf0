//! The request entry point: any method, target and headers, against a store
//! with one valid key and custom patterns. Never a panic; every refusal a
//! well-formed `{"error": ...}`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use noise_filter_core::{ApiKey, MemoryStore, NewPattern, Request, UnixMillis, run};

fuzz_target!(|data: &[u8]| {
    // Layout: method \n target \n (name: value \n)*, with a valid key
    // substituted for the word KEY so the fuzzer reaches past authentication.
    let now = UnixMillis(1_763_800_000_000);
    let key = ApiKey::from_random([9; 24]);
    let mut kv = MemoryStore::new()
        .with_key(&key, "fuzz")
        .with_patterns("fuzz", vec![NewPattern::string("fuzzed-noise")]);

    let text = String::from_utf8_lossy(data).replace("KEY", key.expose());
    let mut lines = text.split('\n');
    let method = lines.next().unwrap_or("");
    let target = lines.next().unwrap_or("");
    let headers: Vec<(&str, &[u8])> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n, v.trim_start().as_bytes()))
        .collect();
    let response = run(&Request { method, target, headers: &headers }, now, &mut kv);
    if response.status >= 400 && method != "HEAD" {
        let value: serde_json::Value = serde_json::from_slice(&response.body).expect("error body is JSON");
        assert!(value["error"].is_string() && value.as_object().unwrap().len() == 1);
    }
    assert!(response.status < 500, "no 5xx without a store failure");
});

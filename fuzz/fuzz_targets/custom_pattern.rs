//! Custom-pattern validation: any JSON the admin tool may be handed. Never a
//! panic; on refusal nothing changes; what is accepted round-trips through
//! the stored layout and compiles in the matcher.
#![no_main]

use libfuzzer_sys::fuzz_target;
use noise_filter_core::{CustomPatterns, Matcher, MatcherPattern, NewPattern, UnixMillis};

fuzz_target!(|data: &[u8]| {
    let Ok(news) = serde_json::from_slice::<Vec<NewPattern>>(data) else { return };
    let mut doc = CustomPatterns::new();
    let before = doc.clone();
    match doc.add_all(news, UnixMillis(0)) {
        Err(_) => assert_eq!(doc, before),
        Ok(_) => {
            let back = CustomPatterns::decode(&doc.encode()).expect("own record reads back");
            assert_eq!(back, doc);
            Matcher::new(doc.patterns.iter().map(MatcherPattern::from)).expect("validated patterns compile");
        }
    }
});

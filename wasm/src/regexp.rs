//! The JavaScript engine's `RegExp` as the core's regex engine (the core's
//! `host-regex` feature): the matcher-only wasm then carries no regex
//! engine of its own (docs/NPM.md, "Two wasms").
//!
//! Only a conversion: the core writes each regex's source
//! (`noise_filter_core::use_regex_engine`), with the flags it names, and
//! asks whether it matches a text; this compiles and tests it. The core
//! also lowercases texts with the engine's `toLowerCase()`, the very
//! function its matching rule is written in.

use std::cell::RefCell;

use noise_filter_core::{REGEX_FLAGS, RegexEngine, use_regex_engine};
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The runtime's global `RegExp`.
    type RegExp;

    #[wasm_bindgen(constructor, catch)]
    fn new(source: &str, flags: &str) -> Result<RegExp, JsValue>;

    /// `RegExp.prototype.test`: no `g` or `y` flag, so `lastIndex` is
    /// neither read nor written. Caught: an engine that gives up on a text
    /// (a stack overflow) throws, and that must not unwind through the wasm.
    #[wasm_bindgen(method, catch)]
    fn test(this: &RegExp, text: &str) -> Result<bool, JsValue>;

    /// A JavaScript string.
    type JsText;

    /// `String.prototype.toLowerCase`.
    #[wasm_bindgen(method, js_name = toLowerCase)]
    fn to_lower_case(this: &JsText) -> String;
}

thread_local! {
    /// Every regex compiled, with its source: a matcher built again from
    /// the same patterns (`withPatterns`, `excluding`) finds its regexes
    /// here, so the list grows only with distinct regexes.
    static COMPILED: RefCell<Vec<(Box<str>, RegExp)>> = const { RefCell::new(Vec::new()) };
}

fn compile(source: &str) -> Option<u32> {
    COMPILED.with_borrow_mut(|compiled| {
        if let Some(at) = compiled.iter().position(|(s, _)| **s == *source) {
            return u32::try_from(at).ok();
        }
        let regexp = RegExp::new(source, REGEX_FLAGS).ok()?;
        compiled.push((source.into(), regexp));
        u32::try_from(compiled.len() - 1).ok()
    })
}

fn is_match(handle: u32, text: &str) -> bool {
    COMPILED.with_borrow(|compiled| {
        compiled
            .get(handle as usize)
            .is_some_and(|(_, regexp)| regexp.test(text).unwrap_or(false))
    })
}

fn lowercase(text: &str) -> String {
    JsValue::from_str(text)
        .unchecked_into::<JsText>()
        .to_lower_case()
}

/// Runs when the module is instantiated, before any matcher is built.
#[wasm_bindgen(start)]
fn start() {
    use_regex_engine(RegexEngine {
        compile,
        is_match,
        lowercase,
    });
}

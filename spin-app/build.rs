//! Gives the component enough linear memory up front for a whole request
//! (the pattern list is ~90 KB of JSON, rendered and copied out), so an
//! instance never grows its memory. Under a pooling host each `memory.grow`
//! is an `mprotect` and a TLB shootdown, and again when the slot is reset;
//! with the memory there from the start, a request costs neither.

/// 4 MiB: Rust's 1 MiB stack, the static data, and room for the heap.
const INITIAL_MEMORY: u32 = 4 << 20;

fn main() {
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("wasm32") {
        println!("cargo:rustc-link-arg-cdylib=--initial-memory={INITIAL_MEMORY}");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

//! # noise-filter-spin
//!
//! The noise-filter endpoint as a Spin HTTP component (spin-sdk 5.2,
//! `wasm32-wasip2`). The handler only moves data: request in, ask the core
//! what it needs, read and write the key-value store, answer. Every decision
//! is `noise-filter-core`'s.
//!
//! - [`glue`]: plain Rust, tested natively with a map: turns the request into
//!   the core's [`Request`](noise_filter_core::Request), drives the core's
//!   steps against two store labels, and frames the response.
//! - `component` (wasm32 only): the `#[http_component]` handler and the
//!   store labels over `wasi:keyvalue` (`kv`).
//!
//! Store labels (`spin.toml` → `key_value_stores`): `default` holds key
//! records and custom patterns, `rate` holds the per-key, per-minute counters
//! (atomic increment through `wasi:keyvalue/atomics`). The key layout is in
//! `docs/SERVING.md`.

pub mod glue;
#[cfg(test)]
mod map_buckets;

/// Writes one line to the runtime's log (stderr). `eprintln!` panics when
/// stderr cannot be written (the host's log volume is full), which would
/// trap the component and turn a logged store error into a failed request;
/// a log line that cannot be written is dropped instead. The line and its
/// newline go in one write: `writeln!` on the unbuffered stderr writes each
/// piece on its own, and Spin appends every instance's pieces to one log
/// file, so lines of concurrent requests ran into each other there.
#[cfg(target_arch = "wasm32")]
macro_rules! log {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut line = format!($($arg)*);
        line.push('\n');
        let _ = std::io::stderr().write_all(line.as_bytes());
    }};
}

#[cfg(target_arch = "wasm32")]
#[allow(unsafe_code)] // the macro's `export_name` glue; no unsafe of our own
mod component;
#[cfg(target_arch = "wasm32")]
mod kv;

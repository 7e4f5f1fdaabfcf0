//! # noise-filter-embed
//!
//! The core as a WebAssembly component that any wasmtime embedding loads:
//! the WIT world `noise-filter:core/embed` (`wit/core.wit`), built for
//! `wasm32-wasip2` by `cargo xtask embed build`.
//!
//! This crate decides nothing. Each export converts its arguments to the
//! core's types, calls the core's public API, and converts the answer back;
//! the store import is the core's [`SyncStore`] over the embedder's
//! functions. The Python package (`python/`) is its first user.
//!
//! | export | the core's |
//! |---|---|
//! | `matching.matcher` | [`Matcher`]: `builtin`, `new`, `from_response`, `classify`, `is_noise`, `patterns` |
//! | `endpoint.handle` | [`noise_filter_core::run`] over the imported store |
//! | `admin.*` | [`noise_filter_core::admin`]'s pure functions |
//!
//! The bindings and the exports exist only in the component
//! (`target_arch = "wasm32"`); natively the crate is empty. The Python
//! package's parity tests compare with the core's native oracle
//! (`core/examples/oracle.rs`), as the npm package's do.

#[cfg(target_arch = "wasm32")]
mod component;

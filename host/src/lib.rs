//! `noise-filter-host` as a library: what the server binary
//! (`src/main.rs`: `serve` and the admin CLI) and the benchmark tools
//! (`examples/bench`) share. Not published; its API is this crate's own.
//!
//! - [`serve`]: the HTTP server, an instance pool of the Spin component
//!   under wasmtime, one instance per request in flight.
//! - [`guest`]: what one component instance sees of the host (WASI,
//!   wasi:http, the key-value imports), translated to a store session.
//! - [`store`]: the key-value stores behind the component's labels
//!   (SQLite in Spin's layout, memory, Redis).
//! - [`metrics`]: Prometheus metrics and the admin listener (probes).
//! - [`connections`]: the public listener's header-read deadline and drain.
//! - [`refusal`]: the HTTP layer's own refusals rewritten as the core's.
//! - [`logs`]: `tracing` lines to stderr, written in batches.
//! - [`admin`]: keys and custom patterns on those stores, as the core
//!   decides them.

pub mod admin;
pub mod connections;
pub mod guest;
pub mod logs;
pub mod metrics;
pub mod refusal;
pub mod serve;
pub mod store;

//! `noise-filter-host` as a library: what the server binary
//! (`src/main.rs`: `serve` and the admin CLI) and the benchmark tools
//! (`examples/bench`) share. Not published; its API is this crate's own.
//!
//! - [`serve`]: the HTTP server, an instance pool of the Spin component
//!   under wasmtime, one instance per request in flight.
//! - [`instance`]: what one component instance sees of the host (WASI,
//!   wasi:http, the key-value imports), translated to a store session.
//! - [`store`]: the key-value stores behind the component's labels
//!   (SQLite in Spin's layout, memory, Redis).
//! - [`connections`]: what a connection may hold and for how long (both
//!   listeners' accept loop, the drain).
//! - [`ops`]: the operations listener (probes, metrics).
//! - [`metrics`]: the Prometheus metrics.
//! - [`refusal`]: the HTTP layer's own refusals rewritten as the core's.
//! - [`logs`]: `tracing` lines to stderr, written in batches.
//! - [`admin`]: keys, custom patterns, exclusions and accounts on those
//!   stores, or through a deployment's admin API ([`remote`]), as the core
//!   decides them.
//! - [`report`]: `noise-filter report`, the noise report over an export
//!   (reading, fetching the list, writing what the core renders).

pub mod admin;
pub mod connections;
pub mod instance;
pub mod logs;
pub mod metrics;
pub mod ops;
pub mod refusal;
pub mod remote;
pub mod report;
pub mod serve;
pub mod store;

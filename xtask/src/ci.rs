//! `cargo xtask ci`: sets up and runs every test.

use crate::util::{self, Result};

/// Runs every test suite of the project.
pub(crate) fn run(_args: &[String]) -> Result {
    util::run(util::cargo().args(["test", "--workspace", "--exclude", "noise-filter-spin"]))
}

/// Runs the core's tests compiled to wasm32-wasip2 under wasmtime.
pub(crate) fn wasm_test() -> Result {
    Err("not yet".into())
}

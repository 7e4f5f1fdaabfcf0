//! `cargo xtask <task>`: everything beyond one cargo command.
//!
//! | task | what it does |
//! |---|---|
//! | `serve` | sets up (targets, builds) and runs the server on the embedded SQLite store |
//! | `ci` | sets up and runs every test: what `.ci/run` and the README run |
//! | `component` | builds the Spin component (`wasm32-wasip2`) |
//! | `embed` | the core as a component for any wasmtime embedding, and the Python package: `build`, `wheel`, `test`, `bench` |
//! | `npm` | builds the npm package (wasm-bindgen, wasm-opt) into `npm/dist` |
//! | `wasm-test` | runs the core's tests compiled to `wasm32-wasip1` under Node's WASI |
//! | `catalog refresh` | installs the current isbot and crawler-user-agents from npm and prints what the catalog misses and what upstream dropped (changes nothing) |
//! | `fuzz` | runs each fuzz target of `fuzz/` for a while (default 30 s) with the pinned nightly |

mod catalog;
mod ci;
mod component;
mod embed;
mod fuzz;
mod npm;
mod util;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (task, rest) = match args.split_first() {
        Some((task, rest)) => (task.as_str(), rest),
        None => ("help", &[][..]),
    };
    let result = match task {
        "serve" => component::serve(rest),
        "ci" => ci::run(rest),
        "component" => component::build().map(|_| ()),
        "embed" => embed::run(rest),
        "npm" => npm::build(rest),
        "wasm-test" => ci::wasm_test(),
        "fuzz" => fuzz::run(rest),
        "catalog" => catalog::run(rest),
        _ => {
            eprintln!(
                "usage: cargo xtask <serve|ci|component|embed|npm|wasm-test|fuzz|catalog refresh>\n\
                 see xtask/src/main.rs for what each does"
            );
            return ExitCode::from(2);
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask {task}: {e}");
            ExitCode::FAILURE
        }
    }
}

//! `cargo xtask fuzz [SECONDS]`: runs each cargo-fuzz target of `fuzz/`
//! (the request entry point, the admin API's, custom-pattern validation)
//! for SECONDS each
//! (default 30), with the pinned nightly and cargo-fuzz, both installed when
//! missing. A panic, a sanitizer report or a crash fails the run; libFuzzer
//! prints the input and leaves it in `fuzz/artifacts/<target>/`. CI runs it
//! as a smoke test: the targets build, and a short run from an empty corpus
//! finds nothing.

use crate::util::{self, Result};

/// The fuzz targets (`fuzz/Cargo.toml`).
const TARGETS: [&str; 3] = ["request", "admin_request", "custom_pattern"];

/// The cargo-fuzz release this is known to work with.
const CARGO_FUZZ_VERSION: &str = "0.13.2";

/// Seconds per target when none are given.
const DEFAULT_SECONDS: u32 = 30;

pub(crate) fn run(args: &[String]) -> Result {
    let seconds = match args {
        [] => DEFAULT_SECONDS,
        [seconds] => seconds
            .parse()
            .map_err(|_| format!("not a number of seconds: {seconds:?}"))?,
        _ => return Err("usage: cargo xtask fuzz [SECONDS]".to_owned()),
    };
    util::ensure_nightly()?;
    ensure_cargo_fuzz()?;
    // Its own target dir: sanitizer flags rebuild everything they touch.
    let target_dir = util::target_dir().join("fuzz");
    for target in TARGETS {
        util::run(
            util::nightly_cargo()
                .env("CARGO_TARGET_DIR", &target_dir)
                .args(["fuzz", "run", target, "--"])
                .arg(format!("-max_total_time={seconds}"))
                // Quiet: the periodic status lines would fill the CI log.
                .arg("-print_final_stats=1")
                .arg("-verbosity=0"),
        )?;
    }
    Ok(())
}

/// Installs cargo-fuzz at the pinned version unless that version is there.
fn ensure_cargo_fuzz() -> Result {
    util::ensure_cargo_tool(
        util::nightly_cargo().args(["fuzz", "--version"]),
        &util::CargoTool {
            krate: "cargo-fuzz",
            version: CARGO_FUZZ_VERSION,
            locked: true,
        },
    )
}

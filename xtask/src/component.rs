//! The Spin component and the server (`cargo xtask component`, `cargo xtask serve`).

use std::path::PathBuf;
use std::process::Command;

use crate::util::{self, Result};

/// The Rust target of the component.
const TARGET: &str = "wasm32-wasip2";
/// The cargo profile of the component (root `Cargo.toml`: built for speed).
const PROFILE: &str = "component";
/// The cargo profile of the server binary (root `Cargo.toml`: LTO).
const SERVER_PROFILE: &str = "server";

/// Builds the Spin component; returns the path of the `.wasm` file.
pub(crate) fn build() -> Result<PathBuf> {
    build_package("noise-filter-spin")
}

/// Builds `package` as a `wasm32-wasip2` component in the `component`
/// profile (the Spin component, the embeddable core); returns its `.wasm`.
pub(crate) fn build_package(package: &str) -> Result<PathBuf> {
    util::ensure_targets(&[TARGET])?;
    util::run(util::cargo().args([
        "build",
        "--package",
        package,
        "--target",
        TARGET,
        "--profile",
        PROFILE,
    ]))?;
    let wasm = util::target_dir()
        .join(TARGET)
        .join(PROFILE)
        .join(format!("{}.wasm", package.replace('-', "_")));
    if !wasm.is_file() {
        return Err(format!("the build left no component at {}", wasm.display()));
    }
    eprintln!("component: {}", wasm.display());
    Ok(wasm)
}

/// Sets up (target, component, host in the `server` profile) and starts the server on
/// the embedded default store, passing `args` to `noise-filter serve`.
pub(crate) fn serve(args: &[String]) -> Result {
    // `cargo xtask serve -- --listen …`: the `--` is cargo's habit, not ours.
    let args = match args.split_first() {
        Some((first, rest)) if first == "--" => rest,
        _ => args,
    };
    let wasm = build()?;
    util::run(util::cargo().args([
        "build",
        "--profile",
        SERVER_PROFILE,
        "--package",
        "noise-filter-host",
    ]))?;
    let host = util::target_dir().join(SERVER_PROFILE).join("noise-filter");
    let mut cmd = Command::new(&host);
    // The README's run command: a first run on an empty store gets a demo
    // key to try (a server started any other way never mints one).
    cmd.current_dir(util::root()).args(["serve", "--demo-key"]);
    if !args
        .iter()
        .any(|a| a == "--component" || a.starts_with("--component="))
    {
        cmd.arg("--component").arg(&wasm);
    }
    cmd.args(args);
    eprintln!("$ {} serve {}", host.display(), args.join(" "));
    exec(cmd)
}

#[cfg(unix)]
fn exec(mut cmd: Command) -> Result {
    use std::os::unix::process::CommandExt as _;
    // Replaces this process: Ctrl-C and signals go straight to the server.
    Err(format!("cannot start the server: {}", cmd.exec()))
}

#[cfg(not(unix))]
fn exec(mut cmd: Command) -> Result {
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start the server: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("the server stopped: {status}"))
    }
}

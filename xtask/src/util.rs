//! Small helpers shared by the tasks: running commands, finding paths.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The error type of every task: a message for the terminal.
pub(crate) type Result<T = ()> = std::result::Result<T, String>;

/// The workspace root (the parent of `xtask/`). `cargo run` sets
/// `CARGO_MANIFEST_DIR` when it starts the binary too: read it then, so a
/// binary built by another checkout sharing the target dir still works on
/// the checkout cargo was called in.
pub(crate) fn root() -> PathBuf {
    let manifest = std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from);
    manifest
        .parent()
        .map_or_else(|| Path::new(".").to_owned(), Path::to_owned)
}

/// Cargo's target directory, as cargo resolves it for this workspace.
pub(crate) fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| root().join("target"), PathBuf::from)
}

/// Runs `cmd`, echoing it, and fails with its exit status.
pub(crate) fn run(cmd: &mut Command) -> Result {
    eprintln!("$ {}", show(cmd));
    let status = cmd
        .status()
        .map_err(|e| format!("cannot start {}: {e}", show(cmd)))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("`{}` failed: {status}", show(cmd)))
    }
}

/// A cargo command in the workspace root.
pub(crate) fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.current_dir(root());
    cmd
}

/// Whether `program` answers `--version`.
pub(crate) fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Whether `program` runs and exits successfully with `arg` (for tools
/// without `--version`, as nginx: `-v`).
pub(crate) fn have_command(program: &str, arg: &str) -> bool {
    Command::new(program)
        .arg(arg)
        .output()
        .is_ok_and(|o| o.status.success())
}

/// How a tool is installed from crates.io when missing.
pub(crate) struct CargoTool<'a> {
    /// The crate (`cargo install <krate>`).
    pub(crate) krate: &'a str,
    /// The pinned version; also what `probe`'s output must contain.
    pub(crate) version: &'a str,
    /// Whether to install with the crate's own lock file.
    pub(crate) locked: bool,
}

/// Installs `tool` unless `probe` (its `--version`) already prints the
/// pinned version.
pub(crate) fn ensure_cargo_tool(probe: &mut Command, tool: &CargoTool<'_>) -> Result {
    let installed = probe
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(tool.version));
    if installed {
        return Ok(());
    }
    let mut install = cargo();
    install.args(["install", tool.krate, "--version", tool.version]);
    if tool.locked {
        install.arg("--locked");
    }
    run(&mut install)
}

/// Adds the rustup targets the builds need (a no-op when present).
pub(crate) fn ensure_targets(targets: &[&str]) -> Result {
    if !have("rustup") {
        return Ok(());
    }
    run(Command::new("rustup")
        .arg("target")
        .arg("add")
        .args(targets))
}

fn show(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| a.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The pinned nightly toolchain: it builds the npm package's matcher-only
/// wasm (so a release is built by the compiler it was measured with) and
/// runs the fuzz targets. `$NOISE_FILTER_NIGHTLY` overrides.
const NIGHTLY: &str = "nightly-2026-05-19";

/// The nightly toolchain's name.
pub(crate) fn nightly() -> String {
    std::env::var("NOISE_FILTER_NIGHTLY").unwrap_or_else(|_| NIGHTLY.to_owned())
}

/// The nightly toolchain with `rust-src`, installed when missing (minimal
/// profile). An installed toolchain is not updated.
pub(crate) fn ensure_nightly() -> Result {
    let toolchain = nightly();
    let installed = Command::new("rustup")
        .args(["run", &toolchain, "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed {
        run(Command::new("rustup").args([
            "toolchain",
            "install",
            &toolchain,
            "--profile",
            "minimal",
        ]))?;
    }
    run(Command::new("rustup").args(["component", "add", "rust-src", "--toolchain", &toolchain]))
}

/// `cargo` of the nightly toolchain, run at the repository's root, free of
/// the settings the stable `cargo xtask` passes down to its children.
pub(crate) fn nightly_cargo() -> Command {
    let mut cmd = Command::new("rustup");
    cmd.current_dir(root())
        .args(["run", &nightly(), "cargo"])
        .env_remove("RUSTC")
        .env_remove("RUSTDOC")
        .env_remove("RUSTUP_TOOLCHAIN")
        .env_remove("CARGO_ENCODED_RUSTFLAGS");
    cmd
}

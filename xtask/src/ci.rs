//! `cargo xtask ci`: sets up a fresh machine and runs every test.
//!
//! What `.ci/run` and the README's test command run. Stages, in order:
//!
//! 1. setup: rustup targets; Debian packages the suites drive for real
//!    (`redis-server` for the Redis store tests, `openssl` for their TLS
//!    certificates, `chromium` for the browser tests, `nginx` and `curl` for
//!    a public site's proxy and build-time list), installed when missing and the user is root; the Spin CLI
//!    (`SPIN_BIN` when set, else `spin` on PATH, else the one
//!    `../shared/tools/spin/install` unpacks), so the host's `spin` tests run
//!    the component under real `spin up`;
//! 2. `cargo fmt --check`; `cargo clippy` on every target, warnings denied
//!    (and on the embeddable component for `wasm32-wasip2`, the one crate
//!    whose code only exists there);
//! 3. the Spin component (the host's integration tests serve it);
//! 4. every native test of the workspace (core, host, wasm binding, xtask);
//!    the host's include the component under real `spin up` (`host/tests/spin.rs`);
//!    the core's have its `report` feature (the host's binary needs it), so
//!    the report's tests run here (`core/tests/report.rs`, `host/tests/report.rs`);
//! 5. the Spin component's glue, natively; the core's tests again with the
//!    feature sets the npm wasms use (without default features: the
//!    matcher-only core; with `endpoint` only: the catalog rendered at
//!    first use);
//! 6. the core's tests compiled to `wasm32-wasip1`, run under Node's WASI;
//! 7. the core builds for `wasm32-unknown-unknown` and `wasm32-wasip2`, and
//!    its benchmarks compile;
//! 8. the embeddable component and the Python package (`cargo xtask embed
//!    test`): a virtual environment from PyPI, pytest against the native
//!    core's answers, the Redis store against a `redis-server` of its own,
//!    the Sentry integration with the real sentry-sdk, the client against
//!    the host binary the native tests built;
//! 9. the npm package: build (its matcher-only wasm with the pinned nightly
//!    the xtask installs), then its suites in Node (with the ReDoS checker
//!    `recheck` over the catalog's and sample custom regexes, and the report
//!    command against the Rust binary's), Bun, Deno, workerd and Chromium
//!    (the report's page too), tsc 5.9, 6.0 and 7.0 on its types and the
//!    README's snippets, and nginx in front of the host binary the native
//!    tests built (a public site's proxy: required here, not skipped);
//! 10. the fuzz targets, 30 s each from an empty corpus (`cargo xtask fuzz`,
//!     with that nightly and cargo-fuzz, installed when missing).

use std::cell::OnceCell;
use std::path::PathBuf;
use std::process::Command;
use std::time::Instant;

use crate::util::{self, Result};

const TARGETS: [&str; 3] = ["wasm32-unknown-unknown", "wasm32-wasip1", "wasm32-wasip2"];

/// Runs every test suite of the project.
pub(crate) fn run(_args: &[String]) -> Result {
    let started = Instant::now();
    let mut stages: Vec<(&str, f64)> = Vec::new();
    let mut stage = |name: &'static str, work: &dyn Fn() -> Result| -> Result {
        eprintln!("\n==> {name}");
        let t = Instant::now();
        let outcome = work();
        stages.push((name, t.elapsed().as_secs_f64()));
        outcome.map_err(|e| format!("stage '{name}' failed: {e}"))
    };
    let spin: OnceCell<Option<PathBuf>> = OnceCell::new();
    stage("setup", &|| {
        util::ensure_targets(&TARGETS)?;
        ensure_debian_packages(&[
            ("redis-server", "redis-server"),
            ("chromium", "chromium"),
            ("openssl", "openssl"),
            ("nginx", "nginx"),
            ("curl", "curl"),
        ])?;
        let _ = spin.set(find_spin()?);
        Ok(())
    })?;
    stage("format", &|| {
        util::run(util::cargo().args(["fmt", "--all", "--check"]))
    })?;
    stage("lints", &|| {
        util::run(util::cargo().args([
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "--deny",
            "warnings",
        ]))?;
        util::run(util::cargo().args([
            "clippy",
            "-p",
            "noise-filter-embed",
            "--target",
            "wasm32-wasip2",
            "--",
            "--deny",
            "warnings",
        ]))
    })?;
    stage("spin component", &|| crate::component::build().map(|_| ()))?;
    stage("native tests", &|| {
        let mut cmd = util::cargo();
        cmd.args(["test", "--workspace", "--exclude", "noise-filter-spin"]);
        if let Some(Some(bin)) = spin.get() {
            cmd.env("SPIN_BIN", bin);
        }
        util::run(&mut cmd)
    })?;
    stage("spin glue tests", &|| {
        util::run(util::cargo().args(["test", "-p", "noise-filter-spin"]))
    })?;
    stage("core tests, npm feature sets", &|| {
        // The matcher-only wasm's core (its doctests show the endpoint, so
        // they are left out), then the main npm wasm's (no `prerendered`,
        // no `literal-prefilters`).
        for features in [&["--lib", "--tests"][..], &["--features", "endpoint"][..]] {
            util::run(
                util::cargo()
                    .args(["test", "-p", "noise-filter-core", "--no-default-features"])
                    .args(features),
            )?;
        }
        Ok(())
    })?;
    stage("core tests under wasm", &wasm_test)?;
    stage("core builds for wasm, benches compile", &|| {
        for target in ["wasm32-unknown-unknown", "wasm32-wasip2"] {
            util::run(util::cargo().args([
                "build",
                "-p",
                "noise-filter-core",
                "--target",
                target,
            ]))?;
        }
        // With the report, so its million-event benchmark compiles too.
        util::run(util::cargo().args([
            "bench",
            "-p",
            "noise-filter-core",
            "--features",
            "report",
            "--no-run",
        ]))
    })?;
    stage("embeddable component, python package", &|| {
        crate::embed::test(crate::embed::Host::Required)
    })?;
    stage("npm package", &|| {
        crate::npm::build(&["test".to_owned(), crate::npm::REQUIRE_HOST_FLAG.to_owned()])
    })?;
    stage("fuzz", &|| crate::fuzz::run(&[]))?;
    eprintln!(
        "\nci: every stage passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    for (name, secs) in stages {
        eprintln!("  {secs:>7.1} s  {name}");
    }
    Ok(())
}

/// Runs the core's tests compiled to `wasm32-wasip1` under Node's WASI
/// (`xtask/wasi/run.mjs` is cargo's runner for that target): the same
/// assertions, the catalog and the matcher in a real wasm runtime.
pub(crate) fn wasm_test() -> Result {
    util::ensure_targets(&["wasm32-wasip1"])?;
    let runner = format!(
        "node --no-warnings {}",
        util::root().join("xtask/wasi/run.mjs").display()
    );
    util::run(
        util::cargo()
            .env("CARGO_TARGET_WASM32_WASIP1_RUNNER", runner)
            .args([
                "test",
                "-p",
                "noise-filter-core",
                "--target",
                "wasm32-wasip1",
            ]),
    )
}

/// The Spin CLI the host's `spin` tests drive: `SPIN_BIN`, else `spin` on
/// PATH, else the Spin 4.0.2 that `../shared/tools/spin/install` (beside the
/// repository, where CI puts it) unpacks. `None`, said aloud, when there is
/// none: those tests then report themselves skipped.
pub(crate) fn find_spin() -> Result<Option<PathBuf>> {
    if let Some(bin) = std::env::var_os("SPIN_BIN") {
        return Ok(Some(PathBuf::from(bin)));
    }
    if on_path("spin") {
        return Ok(None); // the tests find it on PATH themselves
    }
    let install = util::root().join("../shared/tools/spin/install");
    if !install.is_file() {
        eprintln!(
            "no Spin CLI (SPIN_BIN, PATH, {}): the Spin tests will be skipped",
            install.display()
        );
        return Ok(None);
    }
    let out = Command::new(&install)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", install.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed: {}",
            install.display(),
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
    eprintln!("spin: {}", bin.display());
    Ok(Some(bin))
}

/// Installs missing Debian packages (`(command, package)` pairs) when this
/// is a Debian machine and we are root; otherwise says what is missing.
fn ensure_debian_packages(wanted: &[(&str, &str)]) -> Result {
    let missing: Vec<&str> = wanted
        .iter()
        .filter(|(command, _)| !on_path(command))
        .map(|(_, package)| *package)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0"));
    if !root || !on_path("apt-get") {
        return Err(format!(
            "missing {}: install them (Debian: apt-get install {})",
            missing.join(", "),
            missing.join(" ")
        ));
    }
    util::run(Command::new("apt-get").arg("update").arg("-qq"))?;
    util::run(
        Command::new("apt-get")
            .env("DEBIAN_FRONTEND", "noninteractive")
            .args(["install", "-y", "-qq", "--no-install-recommends"])
            .args(&missing),
    )
}

pub(crate) fn on_path(command: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|dir| dir.join(command).is_file()))
}

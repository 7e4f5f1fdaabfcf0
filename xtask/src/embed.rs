//! The core as a WebAssembly component for any wasmtime embedding, and the
//! Python package on it (`cargo xtask embed <build|wheel|test|bench>`).
//!
//! | subcommand | what it does |
//! |---|---|
//! | `build` (default) | builds `noise-filter-embed` for `wasm32-wasip2` (the component of the WIT world `noise-filter:core/embed`), copies it into `python/src/noise_filter/`, prints its size raw and gzip, and, with `wasm-tools` on the PATH, checks it imports nothing beyond the store and WASI's CLI basics |
//! | `wheel` | `build`, then the wheel into `<target>/python/dist` |
//! | `test` | `build`, the native oracle (`core/examples/oracle.rs`, as the npm tests use it), a virtual environment under `<target>/python/venv` from PyPI (`wasmtime`, `pytest`, `redis`, `sentry-sdk`, `mypy`), the package installed from `python/` (a wheel build: the `.wasm` inside), then pytest; the client's tests against the real host run when a host binary is built (`NOISE_FILTER_HOST_BIN`, else the newest `noise-filter` of the target folder; `cargo xtask ci` always has one) |
//! | `bench` | `build`, the environment, then `python/bench/is_noise.py` |

use std::path::PathBuf;
use std::process::Command;

use crate::util::{self, Result};

/// The shared request fixtures of the parity tests, from the repository's root.
pub(crate) const PARITY_FIXTURES: &str = "core/tests/parity/requests.json";
/// What the Python virtual environment needs from PyPI.
const PYPI: &[&str] = &[
    "wasmtime>=50,<51",
    "pytest",
    "redis>=5",
    // The Sentry integration's tests drive the real SDK.
    "sentry-sdk>=2,<3",
    // Type-checks the package and the README's snippets (tests/test_types.py).
    "mypy",
    "setuptools>=61",
    "wheel",
];
/// Import prefixes the component may have: its own store, and the WASI
/// interfaces Rust's standard library links (docs/DECISIONS.md).
const ALLOWED_IMPORTS: &[&str] = &[
    "noise-filter:core/",
    "wasi:io/",
    "wasi:cli/",
    "wasi:random/insecure-seed",
];

pub(crate) fn run(args: &[String]) -> Result {
    match args.first().map(String::as_str) {
        None | Some("build") => build().map(|_| ()),
        Some("wheel") => wheel(),
        Some("test") => test(Host::IfBuilt),
        Some("bench") => bench(),
        Some(other) => Err(format!(
            "unknown subcommand {other:?}: use build, wheel, test or bench"
        )),
    }
}

fn python_dir() -> PathBuf {
    util::root().join("python")
}

fn work_dir() -> PathBuf {
    util::target_dir().join("python")
}

/// Builds the component and places it in the Python package.
pub(crate) fn build() -> Result<PathBuf> {
    let wasm = crate::component::build_package("noise-filter-embed")?;
    let shipped = python_dir().join("src/noise_filter/noise_filter_core.wasm");
    std::fs::copy(&wasm, &shipped).map_err(|e| {
        format!(
            "cannot copy {} to {}: {e}",
            wasm.display(),
            shipped.display()
        )
    })?;
    let raw = std::fs::metadata(&shipped).map_or(0, |m| m.len());
    let gzip = Command::new("gzip")
        .args(["-9", "-c"])
        .arg(&shipped)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| o.stdout.len());
    eprintln!(
        "component: {} ({raw} bytes, {} gzip -9)",
        shipped.display(),
        gzip.map_or_else(|| "?".to_owned(), |n| format!("{n} bytes"))
    );
    check_imports(&shipped)?;
    Ok(shipped)
}

/// With `wasm-tools` installed: the component imports only what the world
/// says and what Rust's std links (no `wasi:http`, nothing of Spin).
fn check_imports(wasm: &std::path::Path) -> Result {
    if !util::have("wasm-tools") {
        eprintln!(
            "(wasm-tools not installed: imports not listed here; host/tests/embed.rs checks them through wasmtime)"
        );
        return Ok(());
    }
    let out = Command::new("wasm-tools")
        .args(["component", "wit"])
        .arg(wasm)
        .output()
        .map_err(|e| format!("cannot run wasm-tools: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "wasm-tools component wit failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let wit = String::from_utf8_lossy(&out.stdout);
    let imports: Vec<&str> = wit
        .lines()
        .filter_map(|l| l.trim().strip_prefix("import "))
        .map(|l| l.trim_end_matches(';'))
        .collect();
    let unexpected: Vec<&&str> = imports
        .iter()
        .filter(|i| !ALLOWED_IMPORTS.iter().any(|a| i.starts_with(a)))
        .collect();
    if !unexpected.is_empty() {
        return Err(format!("the component imports {unexpected:?}"));
    }
    eprintln!("imports: {}", imports.join(", "));
    Ok(())
}

/// The virtual environment (created once, reused): its python.
fn venv() -> Result<PathBuf> {
    let dir = work_dir().join("venv");
    let python = dir.join("bin/python");
    if !python.is_file() {
        std::fs::create_dir_all(work_dir()).map_err(|e| e.to_string())?;
        util::run(Command::new("python3").args(["-m", "venv"]).arg(&dir))?;
    }
    let pip_install = || {
        let mut pip = Command::new(&python);
        pip.args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
        ]);
        pip
    };
    util::run(pip_install().args(PYPI))?;
    // A wheel build from the folder, as a user's `pip install python/`.
    util::run(
        pip_install()
            .args(["--no-deps", "--no-build-isolation", "--force-reinstall"])
            .arg(python_dir()),
    )?;
    Ok(python)
}

fn wheel() -> Result {
    build()?;
    let python = venv()?;
    util::run(
        Command::new(&python)
            .args([
                "-m",
                "pip",
                "wheel",
                "--quiet",
                "--no-deps",
                "--no-build-isolation",
            ])
            .arg("--wheel-dir")
            .arg(work_dir().join("dist"))
            .arg(python_dir()),
    )?;
    eprintln!("wheel: {}", work_dir().join("dist").display());
    Ok(())
}

/// The native core's answers to the shared fixtures: what Python must give
/// (`core/examples/oracle.rs`: one native side for every embedding's parity
/// tests).
fn oracle() -> Result<PathBuf> {
    util::run(util::cargo().args(["build", "-p", "noise-filter-core", "--example", "oracle"]))?;
    let exe = util::target_dir().join("debug/examples/oracle");
    let out = Command::new(&exe)
        .arg(util::root().join(PARITY_FIXTURES))
        .arg(util::root().join("core/catalog/eval.toml"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if !out.status.success() {
        return Err(format!(
            "the oracle failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    std::fs::create_dir_all(work_dir()).map_err(|e| e.to_string())?;
    let path = work_dir().join("oracle.json");
    std::fs::write(&path, out.stdout).map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(path)
}

/// Whether the client's tests against the real host must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Host {
    /// When a host binary is there (`NOISE_FILTER_HOST_BIN`, else one in
    /// the target folder); skipped, and said, when none is.
    IfBuilt,
    /// Always (`cargo xtask ci`: its native tests built the host's binary,
    /// `<target>/debug/noise-filter`, and the Spin component).
    Required,
}

/// The host binary the client's tests start, if any: `NOISE_FILTER_HOST_BIN`,
/// else the newest `noise-filter` of the target folder's profiles.
pub(crate) fn host_binary(want: Host) -> Result<Option<PathBuf>> {
    if let Some(bin) = std::env::var_os("NOISE_FILTER_HOST_BIN") {
        return Ok(Some(PathBuf::from(bin)));
    }
    let newest = ["debug", "release", "server"]
        .iter()
        .map(|profile| util::target_dir().join(profile).join("noise-filter"))
        .filter_map(|bin| Some((std::fs::metadata(&bin).ok()?.modified().ok()?, bin)))
        .max()
        .map(|(_, bin)| bin);
    match (newest, want) {
        (Some(bin), _) => Ok(Some(bin)),
        (None, Host::Required) => Err(format!(
            "no noise-filter in {}: the native tests build it",
            util::target_dir().display()
        )),
        (None, Host::IfBuilt) => {
            eprintln!(
                "no noise-filter built: the client's tests against the real host are skipped \
                 (cargo build -p noise-filter-host builds it)"
            );
            Ok(None)
        }
    }
}

pub(crate) fn test(want: Host) -> Result {
    build()?;
    let oracle = oracle()?;
    let python = venv()?;
    // Run from the tests' folder so `noise_filter` is the installed wheel,
    // not the source tree.
    let mut pytest = Command::new(&python);
    pytest
        .current_dir(python_dir())
        .env("NOISE_FILTER_ORACLE", &oracle)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]);
    if let Some(host) = host_binary(want)? {
        // The host serves the Spin component (built here when stale).
        let component = crate::component::build()?;
        eprintln!("host for the client's tests: {}", host.display());
        pytest
            .env("NOISE_FILTER_HOST_BIN", &host)
            .env("NOISE_FILTER_COMPONENT", &component);
    }
    util::run(&mut pytest)
}

fn bench() -> Result {
    build()?;
    let python = venv()?;
    util::run(
        Command::new(&python)
            .current_dir(python_dir())
            .arg("bench/is_noise.py")
            .arg(util::root().join("core/catalog/eval.toml")),
    )
}

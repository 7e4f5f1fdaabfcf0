//! `cargo xtask npm [build|test|bench]`: the npm package `noise-filter`.
//!
//! | mode | what it does |
//! |---|---|
//! | `build` (default) | two wasm32 builds of `noise-filter-wasm` (the main entry's, and the matcher-only one without its `handler` feature), `wasm-bindgen`, `wasm-opt`, assembles `npm/dist`, prints sizes |
//! | `test` | `build`, the native oracle, the Rust binary `noise-filter` (the report's parity test runs both commands), `npm pack`, installs the tarball into `npm/test`, writes the README's snippets (from the README itself) and runs every suite: Node (with the ReDoS checker `recheck` over every published regex: `node/redos.test.mjs`; the report against the Rust binary's: `node/report.test.mjs`), Bun, Deno, workerd, headless Chromium (Vite; the report's page: `browser/report.test.mjs`), nginx in front of the host binary when one is built (`--require-host`: must be), compressed answers read by Chromium's and Node's `fetch` from that host and from its component under real Spin (`served/decode.test.mjs`), `tsc` 5.9, 6.0 and 7.0 |
//! | `bench` | `build`, the oracle (for its events), then `npm/test/bench/matcher.mjs`, the catalog's regexes in V8 on long texts (`npm/test/bench/regex.mjs`), and the report over a million events (the core's benchmark writes them and times the native report; `npm/test/bench/report.mjs` times the npm command and the page in Chromium) |
//!
//! The matcher-only wasm, the one a browser page downloads, is built with a
//! pinned nightly, `-Z build-std` and `-C panic=immediate-abort`: that is
//! what brings it under 200 KB gzip (docs/NPM.md, "Size"). The xtask
//! installs that toolchain and `rust-src` with rustup when missing.
//! `--stable` (any mode) builds it with stable Rust instead, as the main
//! wasm always is.
//!
//! Works from a clean clone: it adds the rustup target, installs the pinned
//! `wasm-bindgen-cli` when missing and the npm dev dependencies (`binaryen`
//! for `wasm-opt`; the test project's runtimes and tools) from their lock
//! files. Only Chromium comes from the system (`apt-get install chromium`).

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::embed::Host;
use crate::util::{self, Result};

/// Must equal the workspace's `wasm-bindgen = "=…"` pin: the CLI and the
/// library have to agree on the ABI.
const WASM_BINDGEN_VERSION: &str = "0.2.130";
const WASM_TARGET: &str = "wasm32-unknown-unknown";
/// `wasm-opt` flags: the features rustc enables for wasm32 by default, and
/// `-O1`: on this module `-Oz`/`-Os` shrink the raw file a little more but
/// grow the gzip size (by ~18 KB), at the same speed (docs/NPM.md).
/// `--converge` (−33 B gzip) and `--low-memory-unused` (−305 B: constant
/// addresses folded into offsets): wasm-ld lays the 1 MiB stack first,
/// growing down, so the low 1 KiB is only reached by a stack about to
/// overflow, which traps below 0 either way.
const WASM_OPT_FLAGS: &[&str] = &[
    "-O1",
    "--converge",
    "--low-memory-unused",
    "--enable-bulk-memory",
    "--enable-nontrapping-float-to-int",
    "--enable-sign-ext",
    "--enable-reference-types",
    "--enable-multivalue",
];
/// The hand-written files of the package, copied into `dist/` as they are.
const SOURCES: &[&str] = &[
    "api.js",
    "node.js",
    "deno.js",
    "browser.js",
    "workerd.js",
    "init.js",
    "matching.js",
    "trackers.js",
    "client.js",
    "loading.js",
    "matcher-api.js",
    "matcher-node.js",
    "matcher-deno.js",
    "matcher-browser.js",
    "matcher-workerd.js",
    "matcher-init.js",
    "cli.js",
    "index.d.ts",
    "init.d.ts",
    "matcher.d.ts",
    "matcher-init.d.ts",
];
/// One wasm of the package.
struct Wasm {
    /// wasm-bindgen's `--out-name`: it writes `<name>.js` and `<name>_bg.wasm`.
    name: &'static str,
    /// The glue's name in `dist/`.
    glue: &'static str,
    /// Features of `noise-filter-wasm`.
    cargo_args: &'static [&'static str],
    /// The matcher-only wasm (built with the pinned nightly unless `--stable`).
    matcher_only: bool,
}

/// The main entry's wasm (handler and matcher), then the matcher-only wasm
/// of `noise-filter/matcher` (the binding without its `handler` feature,
/// the core without `endpoint`).
const WASMS: [Wasm; 2] = [
    Wasm {
        name: "noise_filter",
        glue: "glue.js",
        cargo_args: &[],
        matcher_only: false,
    },
    Wasm {
        name: "noise_filter_matcher",
        glue: "matcher-glue.js",
        // `js-regex`: its regexes run in the JavaScript engine's `RegExp`.
        cargo_args: &["--no-default-features", "--features", "js-regex"],
        matcher_only: true,
    },
];
/// The TypeScript compilers the types are checked with: the suite's name
/// and the test project's package (`npm/test/package.json`).
const TYPESCRIPTS: [(&str, &str); 3] = [
    ("tsc 5.9", "typescript"),
    ("tsc 6.0", "typescript-6"),
    ("tsc 7.0", "typescript-7"),
];
/// Chromium, as Debian installs it (`apt-get install chromium`).
const CHROMIUM: &str = "/usr/bin/chromium";

/// Entry point of `cargo xtask npm`.
pub(crate) fn build(args: &[String]) -> Result {
    same_checkout()?;
    let abort = if args.iter().any(|a| a == STABLE_FLAG) {
        ImmediateAbort::No
    } else {
        ImmediateAbort::Nightly
    };
    // `cargo xtask ci` has built the host: the proxy suite must run there.
    let host = if args.iter().any(|a| a == REQUIRE_HOST_FLAG) {
        Host::Required
    } else {
        Host::IfBuilt
    };
    let mode = args.iter().find(|a| !a.starts_with("--"));
    match mode.map(String::as_str) {
        None | Some("build") => build_package(abort).map(|_| ()),
        Some("test") => test(abort, host),
        Some("bench") => bench(abort),
        Some(other) => Err(format!(
            "unknown mode {other:?}: use build, test or bench (optionally with {STABLE_FLAG})"
        )),
    }
}

/// `cargo xtask npm test --require-host`: the suite of a public site's
/// proxy (nginx in front of the host binary) must run, not be skipped when
/// no host is built (`cargo xtask ci`).
pub(crate) const REQUIRE_HOST_FLAG: &str = "--require-host";

/// `cargo xtask npm <mode> --stable`: the matcher-only wasm with stable Rust
/// (225,881 B gzip instead of 191,887 B; same answers).
const STABLE_FLAG: &str = "--stable";
/// How the matcher-only wasm is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ImmediateAbort {
    /// Stable Rust, `panic = "abort"` (the `wasm` profile), like the main wasm.
    No,
    /// Nightly, std rebuilt (`-Z build-std`) with `-C panic=immediate-abort`:
    /// a panic traps at once instead of formatting a message first. To
    /// JavaScript it is the same `RuntimeError: unreachable` (wasm32 has no
    /// stderr for the message), and the formatting machinery only panics
    /// used goes away (33 KB gzip). Also `-Z fmt-debug=none`: `Debug`
    /// output is empty; nothing the matcher entry answers is written with
    /// `Debug` (its refusal texts are `Display`, and the suites compare
    /// every one with the main entry's, built without it), and it is 7 KB gzip.
    Nightly,
}

/// `cargo build` of one wasm; returns the built file.
fn cargo_build_wasm(wasm: &Wasm, abort: ImmediateAbort) -> Result<PathBuf> {
    let use_nightly = abort == ImmediateAbort::Nightly && wasm.matcher_only;
    let target_dir = if use_nightly {
        // Its own target dir: other RUSTFLAGS and std would rebuild the
        // stable artefacts every time.
        util::target_dir().join("immediate-abort")
    } else {
        util::target_dir()
    };
    let mut cmd = if use_nightly {
        let mut cmd = util::nightly_cargo();
        cmd.env(
            "RUSTFLAGS",
            "-Zunstable-options -Cpanic=immediate-abort -Zfmt-debug=none",
        )
        .env("CARGO_TARGET_DIR", &target_dir);
        cmd
    } else {
        util::cargo()
    };
    cmd.args([
        "build",
        "--package",
        "noise-filter-wasm",
        "--target",
        WASM_TARGET,
        "--profile",
        "wasm",
    ])
    .args(wasm.cargo_args)
    // regex-syntax parses and translates a regex when it is compiled (a
    // custom pattern, a built-in regex at its first use), never while a text
    // is matched: at opt-level `z` the matcher-only wasm is 4.7 KB gzip
    // smaller, compiling a regex ~1.4 ms instead of ~1 ms, matching as fast
    // (docs/BENCHMARKS.md, "npm: wasm sizes").
    .arg("--config")
    .arg("profile.wasm.package.regex-syntax.opt-level=\"z\"");
    if use_nightly {
        cmd.args(["-Z", "build-std=std,panic_abort"]);
        // std as the prebuilt one is: at opt-level 3 (the profile's `s`
        // made the matcher ~13% slower, for 0.3 KB gzip less).
        for krate in ["core", "alloc", "std"] {
            cmd.arg("--config")
                .arg(format!("profile.wasm.package.{krate}.opt-level=3"));
        }
    }
    util::run(&mut cmd)?;
    Ok(target_dir
        .join(WASM_TARGET)
        .join("wasm")
        .join("noise_filter_wasm.wasm"))
}

/// Refuses to run for another checkout than the one cargo was called in.
/// Two checkouts sharing one `CARGO_TARGET_DIR` share `debug/xtask`, and
/// this task empties `npm/dist` and `npm/pkg` of the tree it was built from.
fn same_checkout() -> Result {
    let root = util::root();
    match std::env::current_dir() {
        Ok(cwd) if !cwd.starts_with(&root) => Err(format!(
            "this xtask binary was built from {}, not from {}: another checkout shares \
             CARGO_TARGET_DIR; rebuild it (touch xtask/src/main.rs) or use a target dir of its own",
            root.display(),
            cwd.display()
        )),
        _ => Ok(()),
    }
}

fn npm_dir() -> PathBuf {
    util::root().join("npm")
}

/// Builds `npm/dist`; returns the tarball-ready package folder (`npm/`).
fn build_package(abort: ImmediateAbort) -> Result<PathBuf> {
    let npm = npm_dir();
    let pkg = npm.join("pkg");
    let dist = npm.join("dist");
    util::ensure_targets(&[WASM_TARGET])?;
    ensure_wasm_bindgen()?;
    if abort == ImmediateAbort::Nightly {
        util::ensure_nightly()?;
    }
    npm_install(&npm)?;
    reset_dir(&pkg)?;
    reset_dir(&dist)?;
    let mut sizes = Vec::new();
    for wasm in WASMS {
        // One cargo output path for both builds: each is bound before the
        // next build overwrites it.
        let built = cargo_build_wasm(&wasm, abort)?;
        // One wasm-bindgen target for every runtime: `web` glue is plain ESM
        // with `initSync`; each runtime's entry (src/*.js) only loads the bytes.
        util::run(
            Command::new(wasm_bindgen())
                .args([
                    "--target",
                    "web",
                    "--out-name",
                    wasm.name,
                    "--no-typescript",
                ])
                .args(["--remove-name-section", "--remove-producers-section"])
                .arg("--out-dir")
                .arg(&pkg)
                .arg(&built),
        )?;
        let bg = format!("{}_bg.wasm", wasm.name);
        util::run(
            npx(&npm, "wasm-opt")
                .args(WASM_OPT_FLAGS)
                .arg(pkg.join(&bg))
                .arg("-o")
                .arg(dist.join(&bg)),
        )?;
        copy(
            &pkg.join(format!("{}.js", wasm.name)),
            &dist.join(wasm.glue),
        )?;
        sizes.push((bg.clone(), pkg.join(&bg), dist.join(&bg)));
    }
    for file in SOURCES {
        copy(&npm.join("src").join(file), &dist.join(file))?;
    }
    // The repository's license, in the package (npm packs a LICENSE beside
    // package.json; the copy is not versioned).
    copy(&util::root().join("LICENSE"), &npm.join("LICENSE"))?;
    report_sizes(&npm, &sizes)?;
    Ok(npm)
}

/// Installs `wasm-bindgen-cli` at the pinned version unless it is on PATH.
fn ensure_wasm_bindgen() -> Result {
    util::ensure_cargo_tool(
        Command::new(wasm_bindgen()).arg("--version"),
        &util::CargoTool {
            krate: "wasm-bindgen-cli",
            version: WASM_BINDGEN_VERSION,
            // Not locked: with `--locked`, a dependency its lock file names
            // is missing from the registry these machines use.
            locked: false,
        },
    )
}

/// `wasm-bindgen`, preferring the one cargo installs.
fn wasm_bindgen() -> PathBuf {
    let home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cargo")));
    home.map(|h| h.join("bin").join("wasm-bindgen"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| "wasm-bindgen".into())
}

/// Installs `dir`'s locked dev dependencies unless `node_modules` is newer
/// than the lock file.
fn npm_install(dir: &Path) -> Result {
    let lock = dir.join("package-lock.json");
    let installed = dir.join("node_modules").join(".package-lock.json");
    let fresh = match (std::fs::metadata(&lock), std::fs::metadata(&installed)) {
        (Ok(l), Ok(i)) => matches!((l.modified(), i.modified()), (Ok(l), Ok(i)) if i >= l),
        _ => false,
    };
    if fresh {
        return Ok(());
    }
    // `npm install`, not `npm ci`: npm 11 writes lock files without the
    // other platforms' optional packages (bun, deno, rollup binaries) and
    // then `npm ci` refuses them as out of sync; `install` follows the lock.
    // Install scripts run: bun's puts its binary (from the platform optional
    // dependency, no download) where `node_modules/.bin/bun` points.
    util::run(npm_in(dir).args(["install", "--no-audit", "--no-fund"]))
}

fn npm_in(dir: &Path) -> Command {
    let mut cmd = Command::new("npm");
    cmd.current_dir(dir);
    cmd
}

/// A binary of `dir`'s `node_modules`.
fn npx(dir: &Path, bin: &str) -> Command {
    let mut cmd = Command::new(dir.join("node_modules").join(".bin").join(bin));
    cmd.current_dir(dir);
    cmd
}

fn reset_dir(dir: &Path) -> Result {
    if dir.exists() {
        std::fs::remove_dir_all(dir)
            .map_err(|e| format!("cannot remove {}: {e}", dir.display()))?;
    }
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

fn copy(from: &Path, to: &Path) -> Result {
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("cannot copy {} to {}: {e}", from.display(), to.display()))
}

/// Prints each wasm's raw, gzip and brotli sizes before and after
/// `wasm-opt`, and writes them to `npm/pkg/sizes.json`.
fn report_sizes(npm: &Path, wasms: &[(String, PathBuf, PathBuf)]) -> Result {
    let mut cmd = Command::new("node");
    cmd.current_dir(npm)
        .arg("scripts/sizes.cjs")
        .arg(npm.join("pkg").join("sizes.json"));
    for (name, before, after) in wasms {
        cmd.arg(name).arg(before).arg(after);
    }
    util::run(&mut cmd)
}

/// Runs the native oracle over the shared fixtures into `npm/pkg/oracle.json`,
/// and copies the fixtures beside it (`npm/pkg/requests.json`), where the
/// tests of every runtime import both from (bundlers included).
fn oracle(npm: &Path) -> Result {
    let fixtures = util::root().join(crate::embed::PARITY_FIXTURES);
    copy(&fixtures, &npm.join("pkg").join("requests.json"))?;
    // The report's templates in Sentry's shapes (core/tests/report/).
    let report = util::root().join("core").join("tests").join("report");
    let into = npm.join("pkg").join("report");
    reset_dir(&into)?;
    for name in ["sentry-api-event.json", "sentry-event.json"] {
        copy(&report.join(name), &into.join(name))?;
    }
    let out = npm.join("pkg").join("oracle.json");
    let file =
        std::fs::File::create(&out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    util::run(
        util::cargo()
            .args([
                "run",
                "--quiet",
                "--package",
                "noise-filter-core",
                "--example",
                "oracle",
                "--",
            ])
            .arg(&fixtures)
            .arg(util::root().join("core").join("catalog").join("eval.toml"))
            .stdout(file),
    )
}

/// Packs the package and installs the tarball into the test project, as a
/// user would install it.
fn install_into_tests(npm: &Path) -> Result<PathBuf> {
    let pkg = npm.join("pkg");
    check_packing(npm)?;
    util::run(
        npm_cmd_quiet(npm)
            .args(["pack", "--pack-destination"])
            .arg(&pkg),
    )?;
    let version = package_version(npm)?;
    let tarball = pkg.join(format!("noise-filter-{version}.tgz"));
    let tests = npm.join("test");
    npm_install(&tests)?;
    util::run(
        npm_in(&tests)
            .args([
                "install",
                "--no-save",
                "--no-audit",
                "--no-fund",
                "--ignore-scripts",
            ])
            .arg(&tarball),
    )?;
    Ok(tests)
}

/// What a publish ships: `npm pack` holds every file the package's entries
/// load (`scripts/prepack.cjs --list`, read from package.json and the built
/// modules' imports), and the `prepack` step refuses a package whose built
/// files are missing (tried on a copy of package.json and the script alone,
/// as a fresh checkout has them).
fn check_packing(npm: &Path) -> Result {
    let listed = Command::new("node")
        .arg(npm.join("scripts/prepack.cjs"))
        .arg("--list")
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if !listed.status.success() {
        return Err("scripts/prepack.cjs --list failed".into());
    }
    let required = String::from_utf8_lossy(&listed.stdout).into_owned();
    let dry_run = npm_in(npm)
        .args(["pack", "--dry-run", "--json", "--silent"])
        .output()
        .map_err(|e| format!("cannot run npm pack --dry-run: {e}"))?;
    if !dry_run.status.success() {
        return Err(format!(
            "npm pack --dry-run failed: {}",
            String::from_utf8_lossy(&dry_run.stderr)
        ));
    }
    let report: serde_json::Value = serde_json::from_slice(&dry_run.stdout)
        .map_err(|e| format!("npm pack --dry-run --json: {e}"))?;
    let packed: Vec<&str> = report[0]["files"]
        .as_array()
        .ok_or("npm pack --dry-run --json lists no files")?
        .iter()
        .filter_map(|f| f["path"].as_str())
        .collect();
    let missing: Vec<&str> = required.lines().filter(|f| !packed.contains(f)).collect();
    if !missing.is_empty() {
        return Err(format!("npm pack would leave out {missing:?}"));
    }
    eprintln!(
        "npm pack: {} files, every one the entries load among them",
        packed.len()
    );

    let fresh = npm.join("pkg").join("fresh-checkout");
    reset_dir(&fresh)?;
    reset_dir(&fresh.join("scripts"))?;
    copy(&npm.join("package.json"), &fresh.join("package.json"))?;
    copy(
        &npm.join("scripts/prepack.cjs"),
        &fresh.join("scripts/prepack.cjs"),
    )?;
    let refused = Command::new("node")
        .arg(fresh.join("scripts/prepack.cjs"))
        .output()
        .map_err(|e| format!("cannot run node: {e}"))?;
    if refused.status.success() {
        return Err("prepack let a package without its built files be packed".into());
    }
    Ok(())
}

fn npm_cmd_quiet(dir: &Path) -> Command {
    let mut cmd = npm_in(dir);
    cmd.arg("--silent");
    cmd
}

fn package_version(npm: &Path) -> Result<String> {
    let text = std::fs::read_to_string(npm.join("package.json"))
        .map_err(|e| format!("cannot read npm/package.json: {e}"))?;
    let after = text
        .split("\"version\"")
        .nth(1)
        .ok_or("npm/package.json has no version")?;
    let version = after
        .split('"')
        .nth(1)
        .ok_or("npm/package.json: unreadable version")?;
    Ok(version.to_owned())
}

/// The Rust binary `noise-filter` (dev profile), which the report's parity
/// test runs beside the npm command: built here (incrementally; CI's native
/// tests built its dependencies already).
fn rust_binary() -> Result<PathBuf> {
    util::run(util::cargo().args([
        "build",
        "--quiet",
        "--package",
        "noise-filter-host",
        "--bin",
        "noise-filter",
    ]))?;
    Ok(util::target_dir().join("debug").join("noise-filter"))
}

/// `build`, then every suite against the installed package.
fn test(abort: ImmediateAbort, host: Host) -> Result {
    let npm = build_package(abort)?;
    oracle(&npm)?;
    let binary = rust_binary()?;
    let tests = install_into_tests(&npm)?;
    // The README snippets, from the README files themselves, where the
    // suites below (tsc included) find them.
    util::run(
        Command::new("node")
            .current_dir(&tests)
            .arg("readme/extract.mjs"),
    )?;
    let mut suites: Vec<(&str, Command)> = vec![
        ("node", {
            let mut c = Command::new("node");
            c.current_dir(&tests)
                .args([
                    "--test",
                    "node/suite.test.mjs",
                    "node/node.test.mjs",
                    "node/readme.test.mjs",
                    "node/client.test.mjs",
                    "node/sentry.test.mjs",
                    // Bugsnag, Rollbar and Honeybadger with their real SDKs; every
                    // integration's verdicts against the matcher's (Datadog RUM and
                    // PostHog run in Chromium: browser/trackers.js).
                    "node/trackers.test.mjs",
                    "node/redos.test.mjs",
                    // The catalog's bot patterns against isbot, from the registry.
                    "node/bots.test.mjs",
                    // The matcher-only wasm's regexes (the JavaScript engine's
                    // RegExp) against the main entry's (Rust's `regex`).
                    "node/regex-engine.test.mjs",
                    "node/failsoft.test.mjs",
                    "node/report.test.mjs",
                ])
                .env("NOISE_FILTER_BIN", &binary);
            // The 150 KB budget of what a page downloads holds for the
            // shipped build (immediate abort), not for `--stable`.
            if abort == ImmediateAbort::Nightly {
                c.arg("node/size.test.mjs");
            }
            c
        }),
        ("bun", {
            let mut c = npx(&tests, "bun");
            // Bun alone stops a test after 5 s; Node and Deno have no
            // such limit, and a loaded CI machine compiles the catalog slowly.
            c.args(["test", "--timeout", "60000", "./node/suite.test.mjs"]);
            c
        }),
        ("deno", {
            let mut c = npx(&tests, "deno");
            c.args([
                "test",
                "--allow-read",
                "--allow-env",
                "--no-check",
                "node/suite.test.mjs",
            ]);
            c
        }),
        ("workerd", {
            let mut c = Command::new("node");
            c.current_dir(&tests)
                .args(["--test", "workerd/workerd.test.mjs"]);
            c
        }),
        ("chromium", {
            let mut c = Command::new("node");
            c.current_dir(&tests)
                .args([
                    "--test",
                    "browser/browser.test.mjs",
                    "browser/pages.test.mjs",
                    "browser/report.test.mjs",
                ])
                .env("CHROMIUM", CHROMIUM);
            c
        }),
    ];
    // A public site's pages behind the proxy docs/NPM.md configures: nginx
    // in front of the real host binary, which serves the Spin component.
    if let Some(proxy) = proxy_suite(&tests, host)? {
        suites.push(("proxy", proxy));
    }
    // Compressed answers read by Chromium's and Node's fetch from the host
    // binary and from the component under real Spin.
    if let Some(served) = served_suite(&tests, host)? {
        suites.push(("served", served));
    }
    // The types and the README's TypeScript under each TypeScript the
    // package supports: 5.9, 6.0 and 7.0 (the native compiler, published
    // as `typescript` 7), installed side by side under aliases.
    for (name, package) in TYPESCRIPTS {
        for config in [
            "tsconfig.json",
            "tsconfig.page.json",
            "tsconfig.trackers.json",
        ] {
            let mut c = Command::new("node");
            c.current_dir(&tests)
                .arg(Path::new("node_modules").join(package).join("bin/tsc"))
                .args(["--noEmit", "-p", config]);
            suites.push((name, c));
        }
    }
    let mut failed = Vec::new();
    for (name, mut cmd) in suites {
        eprintln!("== npm test: {name}");
        if let Err(e) = util::run(&mut cmd) {
            eprintln!("{e}");
            failed.push(name);
        }
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("npm suites failed: {}", failed.join(", ")))
    }
}

/// The proxy suite (`npm/test/proxy/`) with the host binary and its
/// component, or `None` (said aloud) when there is no host or no nginx and
/// `host` allows skipping it.
fn proxy_suite(tests: &Path, host: Host) -> Result<Option<Command>> {
    let Some(bin) = crate::embed::host_binary(host)? else {
        eprintln!("no host binary: the suite of a public site's proxy is skipped");
        return Ok(None);
    };
    if !util::have_command("nginx", "-v") {
        return match host {
            Host::Required => Err("nginx is missing (Debian: apt-get install nginx)".into()),
            Host::IfBuilt => {
                eprintln!(
                    "no nginx: the suite of a public site's proxy is skipped (apt-get install nginx)"
                );
                Ok(None)
            }
        };
    }
    let component = crate::component::build()?;
    let mut c = Command::new("node");
    c.current_dir(tests)
        .args(["--test", "proxy/proxy.test.mjs"])
        .env("NOISE_FILTER_HOST_BIN", bin)
        .env("NOISE_FILTER_COMPONENT", component);
    Ok(Some(c))
}

/// The suite of compressed answers read by real clients
/// (`npm/test/served/`): the host binary and its component, and Spin when
/// there is one (`SPIN_BIN`, PATH, or the one CI unpacks); `None`, said
/// aloud, when there is no host and `host` allows skipping it.
fn served_suite(tests: &Path, host: Host) -> Result<Option<Command>> {
    let Some(bin) = crate::embed::host_binary(host)? else {
        eprintln!("no host binary: the suite of compressed answers from real servers is skipped");
        return Ok(None);
    };
    let component = crate::component::build()?;
    let mut c = Command::new("node");
    c.current_dir(tests)
        .args(["--test", "served/decode.test.mjs"])
        .env("NOISE_FILTER_HOST_BIN", bin)
        .env("NOISE_FILTER_COMPONENT", component)
        .env("CHROMIUM", CHROMIUM);
    match crate::ci::find_spin()? {
        Some(spin) => {
            c.env("SPIN_BIN", spin);
        }
        // On PATH: the suite runs `spin` itself.
        None if crate::ci::on_path("spin") => {
            c.env("SPIN_BIN", "spin");
        }
        // find_spin has said the Spin half will be skipped.
        None => {}
    }
    Ok(Some(c))
}

/// `build`, then the matcher benchmark (events from the oracle's output),
/// the catalog's regexes in V8, and the report over a million events
/// (natively, then the npm command and its page).
fn bench(abort: ImmediateAbort) -> Result {
    let npm = build_package(abort)?;
    oracle(&npm)?;
    let tests = install_into_tests(&npm)?;
    for script in ["bench/matcher.mjs", "bench/regex.mjs"] {
        util::run(Command::new("node").current_dir(&tests).arg(script))?;
    }
    // The core's benchmark writes the file (once) and the page.
    util::run(util::cargo().args([
        "bench",
        "--package",
        "noise-filter-core",
        "--features",
        "report",
        "--bench",
        "report",
    ]))?;
    let dir = util::target_dir().join("report-bench");
    util::run(
        Command::new("node")
            .current_dir(&tests)
            .arg("bench/report.mjs")
            .arg(dir.join("sentry-1000000.jsonl"))
            .arg(dir.join("sentry-1000000.html"))
            .env("CHROMIUM", CHROMIUM),
    )
}

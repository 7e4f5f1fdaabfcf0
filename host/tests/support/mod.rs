//! What every integration test shares: the component build, temporary state
//! folders, the host binary (server and admin tool) and a raw HTTP client
//! that sees the response exactly as sent (header order included).
//!
//! **The component.** Tests need `noise_filter_spin.wasm`. The first test of
//! each test binary runs `cargo build -p noise-filter-spin --target
//! wasm32-wasip2 --profile component` once (a no-op when it is up to date), into
//! the same target folder as the host binary under test, so the host's
//! default component path finds it. Set `NOISE_FILTER_COMPONENT` to use a
//! component built elsewhere instead.
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

pub mod table;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use noise_filter_core::{MemoryStore, Request, Response, StoreLabel, UnixMillis};

/// The instant the component's clock is fixed at: 40 s into a rate window,
/// so nothing rolls over during a test.
pub const NOW_MS: u64 = 1_763_800_000_000;
/// The same, as the core takes it.
pub const NOW: UnixMillis = UnixMillis(NOW_MS);

/// The host binary under test.
pub fn host_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_noise-filter"))
}

/// The cargo target folder the host binary was built in.
pub fn target_dir() -> PathBuf {
    host_bin()
        .parent()
        .and_then(Path::parent)
        .expect("<target>/<profile>/binary")
        .to_owned()
}

/// The component, built once per test binary.
pub fn component() -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if let Some(path) = std::env::var_os("NOISE_FILTER_COMPONENT") {
                return PathBuf::from(path);
            }
            let root = Path::new(env!("CARGO_MANIFEST_DIR"))
                .parent()
                .expect("workspace root");
            let status = Command::new(env!("CARGO"))
                .current_dir(root)
                .args([
                    "build",
                    "--quiet",
                    "-p",
                    "noise-filter-spin",
                    "--target",
                    "wasm32-wasip2",
                ])
                .args(["--profile", "component", "--target-dir"])
                .arg(target_dir())
                .status()
                .expect("cargo runs");
            assert!(
                status.success(),
                "building the component failed (rustup target add wasm32-wasip2?)"
            );
            let wasm = target_dir().join("wasm32-wasip2/component/noise_filter_spin.wasm");
            assert!(wasm.is_file(), "no component at {}", wasm.display());
            wasm
        })
        .clone()
}

/// A fresh folder, removed when dropped.
#[derive(Debug)]
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let unique = format!(
            "nf-host-{name}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        );
        let dir = std::env::temp_dir().join(unique);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The SQLite file the host uses in this state folder.
    pub fn db(&self) -> PathBuf {
        self.0.join("sqlite_key_value.db")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The host binary with `--state-dir` and any store options.
pub fn host_cmd(state: &Path, store_args: &[&str]) -> Command {
    let mut cmd = Command::new(host_bin());
    cmd.arg("--state-dir").arg(state).args(store_args);
    cmd
}

/// Runs an admin command; returns its output whatever the status.
pub fn admin(state: &Path, store_args: &[&str], args: &[&str]) -> Output {
    host_cmd(state, store_args)
        .args(args)
        .output()
        .expect("host binary runs")
}

/// Runs an admin command that must succeed; returns stdout.
pub fn admin_ok(state: &Path, store_args: &[&str], args: &[&str]) -> String {
    let out = admin(state, store_args, args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Runs an admin command that must fail; returns stderr.
pub fn admin_err(state: &Path, store_args: &[&str], args: &[&str]) -> String {
    let out = admin(state, store_args, args);
    assert!(
        !out.status.success(),
        "{args:?} should have failed: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

/// `patterns add --account <account> --pattern <pattern>`; returns its output.
pub fn add_pattern(state: &Path, store_args: &[&str], account: &str, pattern: &str) -> String {
    admin_ok(
        state,
        store_args,
        &[
            "patterns",
            "add",
            "--account",
            account,
            "--pattern",
            pattern,
        ],
    )
}

/// Creates a key; returns it.
pub fn create_key(state: &Path, store_args: &[&str], account: &str) -> String {
    let out = admin_ok(
        state,
        store_args,
        &["keys", "create", "--account", account, "--label", "test"],
    );
    let key = out.trim().to_owned();
    assert!(key.starts_with("nf_") && key.len() == 51, "{out}");
    key
}

/// A running server, killed (SIGKILL) when dropped.
#[derive(Debug)]
pub struct Host {
    pub child: Child,
    /// `127.0.0.1:port`.
    pub addr: String,
    /// Everything it printed on stdout after the first line.
    pub greeting: Arc<std::sync::Mutex<String>>,
    /// The file its stderr goes to.
    stderr: PathBuf,
}

impl Host {
    /// Starts `serve` on a free port with the clock fixed at [`NOW_MS`].
    pub fn start(state: &Path, store_args: &[&str]) -> Host {
        Host::start_with(state, store_args, &["--fixed-time-ms", &NOW_MS.to_string()])
    }

    /// Starts `serve` on a free port with extra `serve` arguments.
    pub fn start_with(state: &Path, store_args: &[&str], extra: &[&str]) -> Host {
        Host::start_command(state, host_cmd(state, store_args), extra)
    }

    /// Starts `serve` on a free port through `command`: the host binary and
    /// its store arguments, or a wrapper of it (`prlimit … <host> …`).
    pub fn start_command(state: &Path, mut command: Command, extra: &[&str]) -> Host {
        let stderr_path = state.join(format!("host-{}.stderr", unique()));
        let stderr = std::fs::File::create(&stderr_path).unwrap();
        let mut child = command
            .args(["serve", "--listen", "127.0.0.1:0", "--component"])
            .arg(component())
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("host starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut first = String::new();
        stdout.read_line(&mut first).unwrap();
        let addr = first
            .trim()
            .strip_prefix("listening on http://")
            .unwrap_or_else(|| panic!("first line: {first:?}"))
            .to_owned();
        let greeting = Arc::new(std::sync::Mutex::new(String::new()));
        let sink = greeting.clone();
        std::thread::spawn(move || {
            let mut line = String::new();
            while stdout.read_line(&mut line).unwrap_or(0) > 0 {
                sink.lock().unwrap().push_str(&line);
                line.clear();
            }
        });
        Host {
            child,
            addr,
            greeting,
            stderr: stderr_path,
        }
    }

    /// Sends one request on a new connection.
    pub fn send(&self, method: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
        send(&self.addr, method, target, headers)
    }

    /// `GET target` with `Authorization: Bearer key`.
    pub fn get(&self, target: &str, key: &str) -> Reply {
        self.send(
            "GET",
            target,
            &[("authorization", &format!("Bearer {key}"))],
        )
    }

    /// A call of the admin API with `token` (JSON body when given).
    pub fn admin(&self, method: &str, target: &str, token: &str, body: Option<&str>) -> Reply {
        let auth = format!("Bearer {token}");
        send_body(
            &self.addr,
            method,
            target,
            &[("authorization", &auth)],
            body.map(str::as_bytes),
        )
    }

    /// What it printed on stderr so far (lines reach the file within the
    /// log's flush interval, 100 ms).
    pub fn stderr_so_far(&self) -> String {
        std::fs::read_to_string(&self.stderr).unwrap_or_default()
    }

    /// SIGINT (Ctrl-C), as an operator stops it; waits for it to exit and
    /// returns what it printed on stderr.
    pub fn interrupt(&mut self) -> String {
        let status = Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -INT failed");
        let exit = self.child.wait().unwrap();
        assert!(exit.success(), "stopped with {exit}");
        std::fs::read_to_string(&self.stderr).unwrap()
    }

    /// SIGKILL, and wait for it to be gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.kill();
    }
}

fn unique() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

/// A response as it came over the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub status: u16,
    /// Header lines in wire order, names lowercased.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Reply {
    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The `error` text of a JSON error body.
    pub fn error(&self) -> String {
        let v: serde_json::Value = serde_json::from_slice(&self.body)
            .unwrap_or_else(|_| panic!("not JSON: {}", String::from_utf8_lossy(&self.body)));
        v["error"].as_str().expect("an error field").to_owned()
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("JSON body")
    }

    /// The pattern ids of a 200 body.
    pub fn ids(&self) -> Vec<String> {
        self.json()["patterns"]
            .as_array()
            .unwrap_or_else(|| {
                panic!(
                    "no pattern list: {} {}",
                    self.status,
                    String::from_utf8_lossy(&self.body)
                )
            })
            .iter()
            .map(|p| p["id"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The headers without the framing the host adds (`content-length`,
    /// `date`, and `connection: close` echoing the test client's), checking
    /// that the length is right.
    pub fn without_framing(&self) -> Vec<(String, String)> {
        if let Some(length) = self.header("content-length") {
            assert_eq!(length, self.body.len().to_string(), "content-length");
        }
        self.headers
            .iter()
            .filter(|(n, _)| !matches!(n.as_str(), "content-length" | "date" | "connection"))
            .cloned()
            .collect()
    }
}

/// Sends one request (`connection: close`) and reads the whole response.
pub fn send(addr: &str, method: &str, target: &str, headers: &[(&str, &str)]) -> Reply {
    send_body(addr, method, target, headers, None)
}

/// [`send`] with a body (`content-length` framed) when given.
pub fn send_body(
    addr: &str,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Reply {
    let mut stream = connect(addr);
    let mut head = format!("{method} {target} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        head.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(body) = body {
        stream.write_all(body).unwrap();
    }
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    parse(&raw)
}

/// [`send`] to a server that may be gone: `None` when the connection is
/// refused or cut before a whole response head came (one attempt, no retry).
pub fn try_send(addr: &str, method: &str, target: &str, headers: &[(&str, &str)]) -> Option<Reply> {
    let mut stream = TcpStream::connect(addr).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .ok()?;
    let mut head = format!("{method} {target} HTTP/1.1\r\nhost: {addr}\r\nconnection: close\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).ok()?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).ok()?;
    raw.windows(4)
        .any(|w| w == b"\r\n\r\n")
        .then(|| parse(&raw))
}

fn connect(addr: &str) -> TcpStream {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match TcpStream::connect(addr) {
            Ok(stream) => {
                stream
                    .set_read_timeout(Some(Duration::from_secs(60)))
                    .unwrap();
                return stream;
            }
            Err(e) if Instant::now() < deadline => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("cannot connect to {addr}: {e}"),
        }
    }
}

fn parse(raw: &[u8]) -> Reply {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .unwrap_or_else(|| panic!("no header end in {:?}", String::from_utf8_lossy(raw)));
    let head = std::str::from_utf8(&raw[..split]).unwrap();
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap();
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let headers = lines
        .map(|line| {
            let (name, value) = line.split_once(':').unwrap();
            (name.trim().to_ascii_lowercase(), value.trim().to_owned())
        })
        .collect();
    Reply {
        status,
        headers,
        body: raw[split + 4..].to_vec(),
    }
}

/// The `default` label of a SQLite store file, as a core [`MemoryStore`]
/// (the rate label starts empty, as the host's in-memory one does).
pub fn memory_copy(db: &Path) -> MemoryStore {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT key, value FROM spin_key_value WHERE store = 'default'")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .unwrap();
    let mut kv = MemoryStore::new();
    for row in rows {
        let (key, value) = row.unwrap();
        kv.copy_in(StoreLabel::Default, &key, value);
    }
    kv
}

/// The `default` label of a Redis (`key/…` and `account/…` values), as a
/// core [`MemoryStore`].
pub fn memory_copy_of_redis(url: &str) -> MemoryStore {
    let mut con = redis::Client::open(url).unwrap().get_connection().unwrap();
    let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
    let mut kv = MemoryStore::new();
    for key in keys
        .into_iter()
        .filter(|k| k.starts_with("key/") || k.starts_with("account/"))
    {
        let value: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut con).unwrap();
        kv.copy_in(StoreLabel::Default, &key, value);
    }
    kv
}

/// The core's answer, natively, at [`NOW`].
pub fn core_answer(
    kv: &mut MemoryStore,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
) -> Response {
    core_answer_at(kv, method, target, headers, NOW)
}

/// The core's answer, natively, at `at`.
pub fn core_answer_at(
    kv: &mut MemoryStore,
    method: &str,
    target: &str,
    headers: &[(&str, &str)],
    at: UnixMillis,
) -> Response {
    let lines: Vec<(&str, &[u8])> = headers.iter().map(|(n, v)| (*n, v.as_bytes())).collect();
    noise_filter_core::run(
        &Request {
            method,
            target,
            headers: &lines,
        },
        at,
        kv,
    )
}

/// A port nothing listens on now (the OS's next free one).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Asserts that a reply is the core's response, byte for byte, framing aside.
pub fn assert_same(reply: &Reply, core: &Response, what: &str) {
    assert_eq!(reply.status, core.status, "{what}: status");
    let want: Vec<(String, String)> = core
        .headers
        .iter()
        .map(|(n, v)| ((*n).to_owned(), v.clone()))
        .collect();
    assert_eq!(reply.without_framing(), want, "{what}: headers");
    assert_eq!(
        String::from_utf8_lossy(&reply.body),
        String::from_utf8_lossy(&core.body),
        "{what}: body"
    );
}

/// Concurrent clients of the rate-limit tests.
pub const CLIENTS: usize = 16;
/// Requests per key per minute.
pub const LIMIT_PER_MINUTE: usize = 1000;

/// Sends `total` GETs from [`CLIENTS`] threads; returns (200s, 429s, 429
/// replies sampled).
pub fn burst(host: &Host, key: &str, total: usize) -> (usize, usize, Vec<Reply>) {
    let sent = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let (addr, key, sent) = (host.addr.clone(), key.to_owned(), sent.clone());
            std::thread::spawn(move || {
                let (mut ok, mut limited, mut samples) = (0, 0, Vec::new());
                let auth = format!("Bearer {key}");
                while sent.fetch_add(1, Ordering::SeqCst) < total {
                    let reply = send(&addr, "GET", "/api/v1/filters", &[("authorization", &auth)]);
                    match reply.status {
                        200 => ok += 1,
                        429 => {
                            limited += 1;
                            if samples.len() < 3 {
                                samples.push(reply);
                            }
                        }
                        other => panic!(
                            "unexpected {other}: {}",
                            String::from_utf8_lossy(&reply.body)
                        ),
                    }
                }
                (ok, limited, samples)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .fold((0, 0, Vec::new()), |mut acc, (o, l, s)| {
            acc.0 += o;
            acc.1 += l;
            acc.2.extend(s);
            acc
        })
}

/// Sends `total` requests from `key`, spread over `addrs` by 12 client
/// threads; a request whose connection fails (its host was killed) counts
/// as unanswered, and its thread moves on to the next host, as a load
/// balancer would. Returns (200s, 429s, unanswered).
pub fn spread(addrs: &[String], key: &str, total: usize) -> (usize, usize, usize) {
    let sent = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..12)
        .map(|i| {
            let (addrs, mut at) = (addrs.to_vec(), i % addrs.len());
            let (sent, auth) = (sent.clone(), format!("Bearer {key}"));
            std::thread::spawn(move || {
                let (mut ok, mut limited, mut lost) = (0, 0, 0);
                while sent.fetch_add(1, Ordering::SeqCst) < total {
                    let answer = try_send(
                        &addrs[at],
                        "GET",
                        "/v1/filters",
                        &[("authorization", &auth)],
                    );
                    match answer.map(|reply| reply.status) {
                        Some(200) => ok += 1,
                        Some(429) => limited += 1,
                        Some(other) => panic!("unexpected {other}"),
                        None => {
                            lost += 1;
                            at = (at + 1) % addrs.len();
                        }
                    }
                }
                (ok, limited, lost)
            })
        })
        .collect();
    threads
        .into_iter()
        .map(|t| t.join().unwrap())
        .fold((0, 0, 0), |a, (o, l, x)| (a.0 + o, a.1 + l, a.2 + x))
}

/// `r=` of the `RateLimit` header.
pub fn remaining(reply: &Reply) -> u64 {
    let header = reply.header("ratelimit").expect("RateLimit header");
    let r = header
        .split(';')
        .find_map(|p| p.strip_prefix("r="))
        .expect("r=");
    r.parse().unwrap()
}

/// A real `redis-server` on a port of its own, started by the test, with its
/// files in a temporary folder; killed when dropped.
pub struct RedisServer {
    child: Child,
    pub port: u16,
    /// `redis://127.0.0.1:port`.
    pub url: String,
    extra: Vec<String>,
    dir: TempDir,
}

impl RedisServer {
    /// Starts one with nothing on disk (`--save ''`, no append-only file);
    /// `None`, after saying so, when `redis-server` is not installed (CI
    /// installs it).
    pub fn start() -> Option<RedisServer> {
        RedisServer::start_with(&["--save", "", "--appendonly", "no"])
    }

    /// Starts one with extra `redis-server` arguments.
    pub fn start_with(extra: &[&str]) -> Option<RedisServer> {
        let extra: Vec<String> = extra.iter().map(|s| (*s).to_owned()).collect();
        RedisServer::start_fresh(|| extra.clone())
    }

    /// Starts one with arguments made afresh for each try. A port found
    /// free can be taken before `redis-server` binds it (by another test's
    /// server, or as the source port of an outgoing connection: a cluster's
    /// nodes open many), so a server that exits at once is started again on
    /// new ports, up to five times.
    pub fn start_fresh(mut extra: impl FnMut() -> Vec<String>) -> Option<RedisServer> {
        if Command::new("redis-server")
            .arg("--version")
            .output()
            .is_err()
        {
            println!("SKIPPED: redis-server is not on PATH (apt-get install redis-server)");
            return None;
        }
        let mut failures = Vec::new();
        for _ in 0..5 {
            let port = free_port();
            let dir = TempDir::new("redis");
            let extra = extra();
            match RedisServer::spawn(port, &extra, dir.path()) {
                Ok(child) => {
                    return Some(RedisServer {
                        child,
                        port,
                        url: format!("redis://127.0.0.1:{port}"),
                        extra,
                        dir,
                    });
                }
                Err(failure) => failures.push(failure),
            }
        }
        panic!(
            "redis-server did not come up in 5 tries:\n{}",
            failures.join("\n")
        );
    }

    /// Starts `redis-server` and waits until it answers PING; its output
    /// goes to `redis.log` in its folder, quoted when it does not come up.
    // The child is returned to a `RedisServer`, whose `Drop` waits for it.
    #[allow(clippy::zombie_processes)]
    fn spawn(port: u16, extra: &[String], dir: &Path) -> Result<Child, String> {
        let log_path = dir.join("redis.log");
        let log = std::fs::File::create(&log_path).expect("redis.log");
        let mut child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .args(extra)
            .arg("--dir")
            .arg(dir)
            .stdout(log.try_clone().expect("redis.log"))
            .stderr(log)
            .spawn()
            .expect("redis-server starts");
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(mut s) = TcpStream::connect(("127.0.0.1", port)) {
                let mut buf = [0u8; 7];
                if s.write_all(b"PING\r\n").is_ok()
                    && s.read_exact(&mut buf).is_ok()
                    && &buf == b"+PONG\r\n"
                {
                    return Ok(child);
                }
            }
            let exited = matches!(child.try_wait(), Ok(Some(_)));
            if exited || Instant::now() >= deadline {
                let _ = child.kill();
                let _ = child.wait();
                let log = std::fs::read_to_string(&log_path).unwrap_or_default();
                let tail: Vec<&str> = log.lines().rev().take(5).collect();
                return Err(format!(
                    "port {port}: {}: {}",
                    if exited { "exited" } else { "no PONG in 10 s" },
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGKILL: the server is gone at once, as in a crash.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port and folder (after [`Self::kill`]).
    pub fn restart(&mut self) {
        self.child = RedisServer::spawn(self.port, &self.extra, self.dir.path())
            .unwrap_or_else(|failure| panic!("redis-server did not come back: {failure}"));
    }

    /// SIGSTOP (`resume`: SIGCONT): connections stay open and nothing
    /// answers, as with a server that hangs or a network that drops packets.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT after [`Self::pause`].
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill {signal} failed");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.resume_quietly();
        self.kill();
    }
}

impl RedisServer {
    fn resume_quietly(&self) {
        // Quietly: a killed server's process is gone.
        let _ = Command::new("kill")
            .args(["-CONT", &self.child.id().to_string()])
            .stderr(Stdio::null())
            .status();
    }
}

/// A real Redis Cluster started by the test: `redis-server
/// --cluster-enabled yes` processes joined by `redis-cli --cluster create`,
/// three masters (each with a replica when asked), nothing on disk but
/// each node's cluster file; every node killed when dropped.
pub struct RedisCluster {
    /// Masters first, then their replicas, as `--cluster create` pairs them.
    pub nodes: Vec<RedisServer>,
    /// `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`: the masters.
    pub url: String,
    /// `rediss+cluster://…` on the masters' TLS ports, when started with
    /// TLS.
    pub tls_url: Option<String>,
}

/// How long a cluster node may be silent before the others fail it over
/// (`cluster-node-timeout`): short, so a test's failover takes seconds.
pub const CLUSTER_NODE_TIMEOUT_MS: u64 = 1_000;

impl RedisCluster {
    /// Three masters, and with `replicas` one replica each. `None`, after
    /// saying so, when `redis-server` or `redis-cli` is not installed.
    pub fn start(replicas: bool) -> Option<RedisCluster> {
        RedisCluster::start_with(replicas, None)
    }

    /// The same, and with `tls` each node also listens for TLS on a port
    /// of its own (`tls_url`), with the cluster's bus over TLS too; the
    /// plain ports stay open for the test's own checks.
    pub fn start_with(replicas: bool, tls: Option<&TlsFiles>) -> Option<RedisCluster> {
        if Command::new("redis-cli").arg("--version").output().is_err() {
            println!("SKIPPED: redis-cli is not on PATH (apt-get install redis-tools)");
            return None;
        }
        let timeout = CLUSTER_NODE_TIMEOUT_MS.to_string();
        let count = if replicas { 6 } else { 3 };
        let (mut nodes, mut tls_ports) = (Vec::new(), Vec::new());
        for _ in 0..count {
            let mut tls_port = String::new();
            let node = RedisServer::start_fresh(|| {
                // The bus on a port of its own: port + 10000, the default,
                // may be taken or past 65535.
                let bus = free_port().to_string();
                tls_port = free_port().to_string();
                let mut args: Vec<String> = [
                    "--save",
                    "",
                    "--appendonly",
                    "no",
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    "nodes.conf",
                    "--cluster-node-timeout",
                    &timeout,
                    "--cluster-port",
                    &bus,
                ]
                .map(str::to_owned)
                .to_vec();
                if let Some(files) = tls {
                    args.extend(
                        [
                            "--tls-port",
                            &tls_port,
                            "--tls-cluster",
                            "yes",
                            "--tls-cert-file",
                            &files.cert,
                            "--tls-key-file",
                            &files.key,
                            "--tls-ca-cert-file",
                            &files.ca,
                            "--tls-auth-clients",
                            "no",
                        ]
                        .map(str::to_owned),
                    );
                }
                args
            })?;
            tls_ports.push(format!("127.0.0.1:{tls_port}"));
            nodes.push(node);
        }
        let addrs: Vec<String> = nodes
            .iter()
            .map(|n| format!("127.0.0.1:{}", n.port))
            .collect();
        // With TLS the nodes meet over it: their addresses are the TLS
        // ports.
        let mut create = Command::new("redis-cli");
        match tls {
            Some(files) => create
                .args(["--tls", "--cacert", &files.ca, "--cluster", "create"])
                .args(&tls_ports),
            None => create.args(["--cluster", "create"]).args(&addrs),
        };
        let out = create
            .args(["--cluster-replicas", if replicas { "1" } else { "0" }])
            .arg("--cluster-yes")
            .output()
            .expect("redis-cli runs");
        assert!(
            out.status.success(),
            "redis-cli --cluster create: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let cluster = RedisCluster {
            url: format!("redis+cluster://{}", addrs[..3].join(",")),
            tls_url: tls.map(|_| format!("rediss+cluster://{}", tls_ports[..3].join(","))),
            nodes,
        };
        cluster.wait_until_ready();
        Some(cluster)
    }

    /// Until every node sees the cluster whole (`cluster_state:ok`, every
    /// node known) and every replica is in sync with its master.
    fn wait_until_ready(&self) {
        let deadline = Instant::now() + Duration::from_secs(20);
        for node in &self.nodes {
            loop {
                let info = node.info("CLUSTER", "INFO");
                let replication = node.info("INFO", "replication");
                let ready = info.contains("cluster_state:ok")
                    && info.contains(&format!("cluster_known_nodes:{}", self.nodes.len()))
                    && (replication.contains("role:master")
                        || replication.contains("master_link_status:up"));
                if ready {
                    break;
                }
                assert!(
                    Instant::now() < deadline,
                    "cluster not ready on {}: {info}{replication}",
                    node.port
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        }
    }

    /// The node that is master of `key`'s slot now, asked of `via`.
    pub fn master_of(&self, key: &str, via: usize) -> usize {
        let mut con = redis::Client::open(self.nodes[via].url.as_str())
            .unwrap()
            .get_connection()
            .unwrap();
        let slot: i64 = redis::cmd("CLUSTER")
            .arg("KEYSLOT")
            .arg(key)
            .query(&mut con)
            .unwrap();
        let ranges: Vec<(i64, i64, (String, u16))> = redis::cmd("CLUSTER")
            .arg("SLOTS")
            .query::<Vec<redis::Value>>(&mut con)
            .unwrap()
            .into_iter()
            .map(|range| {
                let redis::Value::Array(range) = range else {
                    panic!("{range:?}")
                };
                let master: Vec<redis::Value> = redis::from_redis_value(&range[2]).unwrap();
                (
                    redis::from_redis_value(&range[0]).unwrap(),
                    redis::from_redis_value(&range[1]).unwrap(),
                    (
                        redis::from_redis_value(&master[0]).unwrap(),
                        redis::from_redis_value(&master[1]).unwrap(),
                    ),
                )
            })
            .collect();
        let (_, _, (_, port)) = ranges
            .iter()
            .find(|(start, end, _)| (*start..=*end).contains(&slot))
            .unwrap_or_else(|| panic!("no master for slot {slot}"));
        self.nodes.iter().position(|n| n.port == *port).unwrap()
    }

    /// The indexes of the nodes that are masters now (of those running).
    pub fn masters(&self, running: &[usize]) -> Vec<usize> {
        running
            .iter()
            .copied()
            .filter(|i| {
                self.nodes[*i]
                    .info("INFO", "replication")
                    .contains("role:master")
            })
            .collect()
    }

    /// The `default` label (`key/…` and `account/…` values) gathered from
    /// the masters among `running`, as a core [`MemoryStore`].
    pub fn memory_copy(&self, running: &[usize]) -> MemoryStore {
        let mut kv = MemoryStore::new();
        for i in self.masters(running) {
            let mut con = redis::Client::open(self.nodes[i].url.as_str())
                .unwrap()
                .get_connection()
                .unwrap();
            let keys: Vec<String> = redis::cmd("KEYS").arg("*").query(&mut con).unwrap();
            for key in keys
                .into_iter()
                .filter(|k| k.starts_with("key/") || k.starts_with("account/"))
            {
                let value: Vec<u8> = redis::cmd("GET").arg(&key).query(&mut con).unwrap();
                kv.copy_in(StoreLabel::Default, &key, value);
            }
        }
        kv
    }
}

impl RedisServer {
    /// The text of an `INFO`-like command (`CLUSTER INFO`, `INFO
    /// replication`); empty when the server does not answer.
    pub fn info(&self, command: &str, section: &str) -> String {
        redis::Client::open(self.url.as_str())
            .and_then(|c| c.get_connection_with_timeout(Duration::from_secs(1)))
            .and_then(|mut con| redis::cmd(command).arg(section).query(&mut con))
            .unwrap_or_default()
    }
}

/// Runs `openssl` with `args` in `dir`.
fn openssl(dir: &Path, args: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(args)
        .output()
        .expect("openssl runs (apt-get install openssl)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A private certificate authority and a server certificate it signed for
/// `127.0.0.1`, made by `openssl`: the paths of the PEM files.
pub struct TlsFiles {
    pub cert: String,
    pub key: String,
    pub ca: String,
}

impl TlsFiles {
    /// Makes them in `dir`.
    pub fn private_authority(dir: &Path) -> TlsFiles {
        let ec = [
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
        ];
        let ca = [
            &["req", "-x509"][..],
            &ec,
            &["-keyout", "ca.key", "-out", "ca.crt"],
        ]
        .concat();
        openssl(
            dir,
            &[
                &ca[..],
                &["-days", "2", "-subj", "/CN=noise-filter test CA"],
            ]
            .concat(),
        );
        let csr = [
            &["req"][..],
            &ec,
            &["-keyout", "server.key", "-out", "server.csr"],
        ]
        .concat();
        openssl(dir, &[&csr[..], &["-subj", "/CN=127.0.0.1"]].concat());
        std::fs::write(dir.join("ext"), "subjectAltName=IP:127.0.0.1\n").unwrap();
        openssl(
            dir,
            &[
                "x509",
                "-req",
                "-in",
                "server.csr",
                "-CA",
                "ca.crt",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-out",
                "server.crt",
                "-days",
                "2",
                "-extfile",
                "ext",
            ],
        );
        let file = |name: &str| dir.join(name).display().to_string();
        TlsFiles {
            cert: file("server.crt"),
            key: file("server.key"),
            ca: file("ca.crt"),
        }
    }
}

//! Logs: `tracing` lines to stderr, written in batches by a thread of their
//! own.
//!
//! Lines are formatted where they happen, by tracing-subscriber's own text
//! or JSON formatter, and queued as bytes. A thread of the log's own writes
//! the queue out every [`FLUSH_EVERY`], or as soon as [`FLUSH_AT`] bytes are
//! waiting: one `write` for many lines instead of one per request (the
//! file's position lock and the write path per line were ~5 µs a request
//! under load; docs/BENCHMARKS.md), and a reader of the log pipe that stops
//! reading never stalls a request.
//!
//! **Bounded.** If stderr stops taking lines, the queue stops at
//! [`MAX_PENDING`] bytes (counted exactly: the queue holds the formatted
//! bytes) and further lines are dropped and counted, never waited for; the
//! count is written once stderr takes lines again. Every text a client
//! controls goes into a line through [`Printable`]: at most a fixed number
//! of bytes, printable ASCII only, so no client can make a line longer than
//! a few hundred bytes or forge a second line or field.
//!
//! **The component's own lines** (its stderr: a store failure, the admin
//! API's audit and refusal lines) are log events too ([`ComponentStderr`]):
//! each line one event of target `component`, so `--log-format json` stays
//! one JSON object per line and the queue's bound holds for them as well.
//!
//! **A process ending** writes what is queued, waiting at most
//! [`FINAL_FLUSH`] for stderr to take it ([`Logs`] does when dropped): a
//! stopping server never hangs on a log reader that went away or stalled.
//! A process killed outright can lose the last [`FLUSH_EVERY`] of lines.

use std::fmt::Write as _;
use std::io::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

/// The longest a line waits in memory.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// Bytes that make the writer thread write at once.
pub const FLUSH_AT: usize = 64 * 1024;
/// Bytes held at most while stderr does not take them.
pub const MAX_PENDING: usize = 8 * 1024 * 1024;
/// The longest an ending process waits for stderr to take its last lines.
pub const FINAL_FLUSH: Duration = Duration::from_secs(1);

/// The log format.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per line, fields flattened.
    Json,
}

/// A text a client sent, as a log line may hold it: at most `max` bytes of
/// it, every byte outside printable ASCII (spaces, quotes, backslashes and
/// every control or non-ASCII character included) written as `%XX`, as a
/// URL writes it, and `...` after a text that was cut. So a method, path or
/// request id never makes a line longer than `3 * max + 3` bytes, never
/// ends it, and never looks like another field (`status=200` after a
/// Unicode space) to a reader of either format. A `%` the client sent stays
/// as it is: a path is logged as the client encoded it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Printable(String);

impl Printable {
    /// `text`, its first `max` bytes written printable.
    pub fn new(text: &[u8], max: usize) -> Printable {
        let kept = &text[..text.len().min(max)];
        let mut out = String::with_capacity(kept.len() + 3);
        for &byte in kept {
            if byte.is_ascii_graphic() && byte != b'"' && byte != b'\\' {
                out.push(char::from(byte));
            } else {
                // Writing to a String cannot fail.
                let _ = write!(out, "%{byte:02X}");
            }
        }
        if kept.len() < text.len() {
            out.push_str("...");
        }
        Printable(out)
    }

    /// The text as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Printable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// Bytes of a method an access line keeps (the longest standard method,
/// `OPTIONS`, has 7; an extension method may be as long as the request line).
pub const MAX_LOGGED_METHOD: usize = 24;
/// Bytes of a path an access line keeps.
pub const MAX_LOGGED_PATH: usize = 512;

/// What the access log says of one request: never the key, only the first
/// characters of its hash (the same prefix `keys list` shows), so a line can
/// be matched to a key without holding it.
#[derive(Debug)]
pub struct AccessLine {
    /// The request's method.
    pub method: Printable,
    /// The request's path, without the query.
    pub path: Printable,
    /// The start of the hash of the request's key, if it presented one.
    pub key: Option<String>,
    /// The request's id.
    pub request_id: RequestId,
}

/// A request's id: the client's `X-Request-Id`, or the host's own
/// (`<pid>-<n>`), written out only when a line names it.
#[derive(Debug)]
pub enum RequestId {
    /// The client's own.
    Client(Printable),
    /// The host's `n`th request.
    Host(u64),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The process id, read once: `getpid` is a system call.
        static PID: OnceLock<u32> = OnceLock::new();
        match self {
            RequestId::Client(id) => f.write_str(id.as_str()),
            RequestId::Host(n) => write!(f, "{}-{n}", PID.get_or_init(std::process::id)),
        }
    }
}

impl AccessLine {
    /// Logs the request's line: its answer's `status`, the time it `took`.
    pub fn log(&self, status: u16, took: Duration) {
        tracing::info!(
            target: "access",
            method = %self.method,
            path = %self.path,
            status,
            latency_us = u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
            key = self.key.as_deref().unwrap_or("-"),
            request_id = %self.request_id,
        );
    }
}

/// Longest line of the component's that a log event carries, in bytes; the
/// rest of a longer one is dropped and the line ends in `...`.
pub const MAX_COMPONENT_LINE: usize = 4096;

/// The stderr the host gives each instance of the component: every line it
/// writes becomes one log event (target `component`, level `info`),
/// formatted and queued like the host's own, instead of bytes written
/// around the log (which broke `--log-format json`'s one object per line).
/// Each stream keeps at most [`MAX_COMPONENT_LINE`] bytes of an unfinished
/// line; bytes outside printable ASCII are written `%XX`, so a line cannot
/// end early or carry a control sequence.
#[derive(Debug, Clone, Copy, Default)]
pub struct ComponentStderr;

impl wasmtime_wasi::cli::IsTerminal for ComponentStderr {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl wasmtime_wasi::cli::StdoutStream for ComponentStderr {
    fn p2_stream(&self) -> Box<dyn wasmtime_wasi::p2::OutputStream> {
        Box::new(ComponentLines::default())
    }

    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(ComponentLines::default())
    }
}

/// One stream of the component's stderr: bytes until a line ends.
#[derive(Debug, Default)]
struct ComponentLines {
    line: Vec<u8>,
    /// The line was longer than [`MAX_COMPONENT_LINE`].
    cut: bool,
}

impl ComponentLines {
    /// Takes bytes the component wrote; logs each line they end.
    fn take(&mut self, bytes: &[u8]) {
        for line in self.lines(bytes) {
            tracing::info!(target: "component", "{line}");
        }
    }

    /// The lines `bytes` end, as logged; the rest waits for its newline.
    fn lines(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut lines = Vec::new();
        for &byte in bytes {
            match byte {
                b'\n' => lines.push(self.finish()),
                _ if self.line.len() < MAX_COMPONENT_LINE => self.line.push(byte),
                _ => self.cut = true,
            }
        }
        lines
    }

    /// The line so far, as logged (printable ASCII, `...` when cut).
    fn finish(&mut self) -> String {
        let mut text = String::with_capacity(self.line.len() + 3);
        for &byte in self.line.iter().filter(|b| **b != b'\r') {
            if (b' '..=b'~').contains(&byte) {
                text.push(char::from(byte));
            } else {
                let _ = write!(text, "%{byte:02X}");
            }
        }
        if std::mem::take(&mut self.cut) {
            text.push_str("...");
        }
        self.line.clear();
        text
    }
}

impl Drop for ComponentLines {
    fn drop(&mut self) {
        // A last line without its newline is still a line.
        if !self.line.is_empty() || self.cut {
            let line = self.finish();
            tracing::info!(target: "component", "{line}");
        }
    }
}

impl wasmtime_wasi::p2::OutputStream for ComponentLines {
    fn write(&mut self, bytes: bytes::Bytes) -> wasmtime_wasi::p2::StreamResult<()> {
        self.take(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> wasmtime_wasi::p2::StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> wasmtime_wasi::p2::StreamResult<usize> {
        // Whatever is written is taken at once (the log's queue bounds it).
        Ok(64 * 1024)
    }
}

#[wasmtime_wasi::async_trait]
impl wasmtime_wasi::p2::Pollable for ComponentLines {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for ComponentLines {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        self.take(buf);
        std::task::Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

/// Lines not yet written.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// Lines dropped since the last write, while the queue was full.
    dropped: u64,
    /// Bytes ever queued, and ever written (or lost to a failed write):
    /// a flush waits until the second reaches what the first was.
    queued: u64,
    written: u64,
    /// A flush is waiting: write now, not at the next tick.
    urgent: bool,
}

struct Sink {
    pending: Mutex<Pending>,
    /// Wakes the writer thread early: a full batch, or a flush.
    ready: Condvar,
    /// Wakes flushes: a batch was written.
    written: Condvar,
}

/// The capacity the writer's buffer keeps after a write: a steady batch's
/// size (a stall's 8 MiB is given back).
const KEEP: usize = 4 * FLUSH_AT;

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| Sink {
        pending: Mutex::new(Pending::default()),
        ready: Condvar::new(),
        written: Condvar::new(),
    })
}

/// A lock that a panicking holder cannot make unusable: logs go on.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Sink {
    fn queue(&self, line: &[u8]) {
        let mut pending = lock(&self.pending);
        if pending.bytes.len() + line.len() > MAX_PENDING {
            pending.dropped += 1;
            return;
        }
        pending.bytes.extend_from_slice(line);
        pending.queued += line.len() as u64;
        if pending.bytes.len() >= FLUSH_AT {
            self.ready.notify_one();
        }
    }

    /// The writer thread: the only writer of stderr while it runs. A write
    /// that fails (a full disk under the log file) loses those lines, never
    /// fails anything else.
    fn run_writer(&self) {
        let mut batch = Vec::new();
        loop {
            let dropped = {
                let mut pending = lock(&self.pending);
                if pending.bytes.len() < FLUSH_AT && !pending.urgent {
                    pending = self
                        .ready
                        .wait_timeout(pending, FLUSH_EVERY)
                        .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
                }
                pending.urgent = false;
                std::mem::swap(&mut pending.bytes, &mut batch);
                std::mem::take(&mut pending.dropped)
            };
            if !batch.is_empty() || dropped > 0 {
                let mut stderr = std::io::stderr().lock();
                let _ = stderr.write_all(&batch);
                if dropped > 0 {
                    let _ = writeln!(
                        stderr,
                        "noise-filter: {dropped} log lines dropped: stderr did not take them"
                    );
                }
                let _ = stderr.flush();
            }
            let mut pending = lock(&self.pending);
            pending.written += batch.len() as u64;
            self.written.notify_all();
            drop(pending);
            batch.clear();
            batch.shrink_to(KEEP);
        }
    }

    /// Waits until every line queued before the call is written, at most
    /// `within`; says whether they were.
    fn flush(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let mut pending = lock(&self.pending);
        let target = pending.queued;
        pending.urgent = true;
        self.ready.notify_one();
        while pending.written < target {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            pending = self
                .written
                .wait_timeout(pending, left)
                .map_or_else(|poisoned| poisoned.into_inner().0, |(guard, _)| guard);
        }
        true
    }
}

/// Set when the writer thread could not start: lines go straight out.
static UNBUFFERED: AtomicBool = AtomicBool::new(false);

/// Queues `line` (whole lines of text) with the log's other lines.
fn write_line(line: &[u8]) {
    if UNBUFFERED.load(Ordering::Relaxed) {
        let _ = std::io::stderr().write_all(line);
    } else {
        sink().queue(line);
    }
}

/// What the fmt layer writes each event's line into: the formatter writes
/// a whole line in one call.
struct LineWriter;

impl std::io::Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        write_line(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Logging for the process's lifetime: writes the pending lines when
/// dropped, waiting at most [`FINAL_FLUSH`] (keep it until `main` returns).
#[must_use = "pending log lines are written when this is dropped"]
#[derive(Debug)]
pub struct Logs(());

impl Logs {
    /// Writes a line of plain text (a command's error, say) after the lines
    /// queued before it, and waits for stderr to take them, at most
    /// [`FINAL_FLUSH`].
    pub fn say(&self, text: &str) {
        let mut line = text.to_owned();
        line.push('\n');
        write_line(line.as_bytes());
        self.flush();
    }

    /// Writes every pending line now, waiting at most [`FINAL_FLUSH`];
    /// says whether stderr took them all in that time.
    pub fn flush(&self) -> bool {
        UNBUFFERED.load(Ordering::Relaxed) || sink().flush(FINAL_FLUSH)
    }
}

impl Drop for Logs {
    fn drop(&mut self) {
        self.flush();
    }
}

/// Starts logging through `tracing` to stderr in `format`; `RUST_LOG`
/// filters (default `info`).
pub fn init(format: LogFormat) -> Logs {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(|| LineWriter)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // Its own report of a failed write is an `eprintln!`, which panics
        // when stderr cannot be written either.
        .log_internal_errors(false);
    match format {
        LogFormat::Text => logs.init(),
        LogFormat::Json => logs.json().flatten_event(true).init(),
    }
    let spawned = std::thread::Builder::new()
        .name("log-writer".into())
        .spawn(|| sink().run_writer());
    if spawned.is_err() {
        // No thread to write batches: each line is written as it comes.
        UNBUFFERED.store(true, Ordering::Relaxed);
    }
    Logs(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    #[test]
    fn a_clients_text_is_printable_ascii_and_bounded() {
        let cases: [(&[u8], usize, &str); 8] = [
            (b"/v1/filters", 512, "/v1/filters"),
            (b"GET", 24, "GET"),
            // Spaces, quotes and backslashes cannot start another field.
            (b"/a status=200", 512, "/a%20status=200"),
            (b"/a\"b\\c%41", 512, "/a%22b%5Cc%41"),
            // Line ends of every kind: ASCII, C1 (U+0085), U+2028, and a
            // non-breaking space.
            (b"/a\r\nb", 512, "/a%0D%0Ab"),
            (
                "/a\u{85}\u{2028}\u{a0}b".as_bytes(),
                512,
                "/a%C2%85%E2%80%A8%C2%A0b",
            ),
            // Not UTF-8 at all.
            (b"/\xff\x00", 512, "/%FF%00"),
            (b"PROPFINDXYZ", 8, "PROPFIND..."),
        ];
        for (text, max, want) in cases {
            assert_eq!(Printable::new(text, max).as_str(), want, "{text:?}");
        }
        // However long the input, the output is bounded.
        let long = vec![0xE2u8; 100_000];
        let out = Printable::new(&long, MAX_LOGGED_PATH);
        assert_eq!(out.as_str().len(), 3 * MAX_LOGGED_PATH + 3);
        assert!(out.as_str().bytes().all(|b| b.is_ascii_graphic()));
    }

    #[test]
    fn the_components_lines_are_whole_printable_and_bounded() {
        let mut stream = ComponentLines::default();
        assert!(
            stream.lines(b"admin: audit token=").is_empty(),
            "not ended yet"
        );
        assert_eq!(
            stream.lines(b"ab action=x\nsecond\r\nthird"),
            ["admin: audit token=ab action=x", "second"]
        );
        assert_eq!(stream.lines(b"\x1b[2J\tend\n"), ["third%1B[2J%09end"]);
        let long = vec![b'x'; 3 * MAX_COMPONENT_LINE];
        let lines = stream.lines(&[&long[..], b"\nnext\n"].concat());
        assert_eq!(lines.len(), 2);
        assert_eq!(lines[0].len(), MAX_COMPONENT_LINE + 3);
        assert!(lines[0].ends_with("..."));
        assert_eq!(lines[1], "next");
        assert!(stream.line.capacity() <= 2 * MAX_COMPONENT_LINE, "bounded");
    }

    #[test]
    fn the_host_request_id_names_the_process() {
        let id = RequestId::Host(7).to_string();
        assert_eq!(id, format!("{}-7", std::process::id()));
    }
}

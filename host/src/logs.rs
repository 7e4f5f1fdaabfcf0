//! Logs: `tracing` lines to stderr, written in batches.
//!
//! Every request writes an access line. Written one `write` each, from
//! every worker thread into one file, they cost about 5 µs of CPU a request
//! under load (the file's position lock and the write path, per line), and a
//! stalled reader of the log pipe would stall the requests writing to it.
//! So a line is copied into a buffer in memory, and a thread of its own
//! writes the buffer out every [`FLUSH_EVERY`], or as soon as it holds
//! [`FLUSH_AT`] bytes: the same trade an access log's `buffer`/`flush`
//! settings make in other servers. Lines keep their order. If stderr stops
//! taking them, the buffer stops at [`MAX_PENDING`] and further lines are
//! dropped and counted, never waited for; the count is logged once stderr
//! takes lines again. A process ending normally writes everything first
//! ([`Logs`] flushes when dropped); a process killed outright can lose the
//! last [`FLUSH_EVERY`] of lines.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

/// The longest a line waits in memory.
pub const FLUSH_EVERY: Duration = Duration::from_millis(100);
/// Bytes that make the writer thread write at once.
pub const FLUSH_AT: usize = 64 * 1024;
/// Bytes held at most while stderr does not take them.
pub const MAX_PENDING: usize = 8 * 1024 * 1024;

/// The log format.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per line, fields flattened.
    Json,
}

/// Lines not yet written.
#[derive(Default)]
struct Pending {
    bytes: Vec<u8>,
    /// Lines dropped since the last write, while the buffer was full.
    dropped: u64,
}

struct Sink {
    pending: Mutex<Pending>,
    /// Wakes the writer thread early: a full batch, or a flush.
    ready: Condvar,
    /// Serializes writes to stderr (the thread's and [`Logs::flush`]'s).
    writing: Mutex<()>,
}

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| Sink {
        pending: Mutex::new(Pending::default()),
        ready: Condvar::new(),
        writing: Mutex::new(()),
    })
}

/// A lock that a panicking holder cannot make unusable: logs go on.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Sink {
    fn push(&self, line: &[u8]) {
        let mut pending = lock(&self.pending);
        if pending.bytes.len() + line.len() > MAX_PENDING {
            pending.dropped += 1;
            return;
        }
        pending.bytes.extend_from_slice(line);
        if pending.bytes.len() >= FLUSH_AT {
            self.ready.notify_one();
        }
    }

    /// Writes out what is pending. A write that fails (a full disk under
    /// the log file) loses those lines, never fails anything else.
    fn write_out(&self) {
        let _writing = lock(&self.writing);
        let (bytes, dropped) = {
            let mut pending = lock(&self.pending);
            let dropped = std::mem::take(&mut pending.dropped);
            (std::mem::take(&mut pending.bytes), dropped)
        };
        if bytes.is_empty() && dropped == 0 {
            return;
        }
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(&bytes);
        if dropped > 0 {
            let _ = writeln!(
                stderr,
                "noise-filter-host: {dropped} log lines dropped: stderr did not take them"
            );
        }
        let _ = stderr.flush();
    }

    fn run_writer(&self) {
        loop {
            {
                let pending = lock(&self.pending);
                if pending.bytes.len() < FLUSH_AT {
                    let _ = self.ready.wait_timeout(pending, FLUSH_EVERY);
                }
            }
            self.write_out();
        }
    }
}

/// Set when the writer thread could not start: lines go straight out.
static UNBUFFERED: AtomicBool = AtomicBool::new(false);

/// What the fmt layer writes each event's line into.
struct LineWriter;

impl Write for LineWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if UNBUFFERED.load(Ordering::Relaxed) {
            let _ = std::io::stderr().write_all(buf);
        } else {
            sink().push(buf);
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Logging for the process's lifetime: writes every pending line when
/// dropped (keep it until `main` returns).
#[must_use = "pending log lines are written when this is dropped"]
#[derive(Debug)]
pub struct Logs(());

impl Logs {
    /// Writes every pending line now.
    pub fn flush(&self) {
        sink().write_out();
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

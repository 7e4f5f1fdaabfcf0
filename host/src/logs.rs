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
    /// Serializes writes to stderr (the thread's and [`Logs::flush`]'s),
    /// and holds the buffer not in use: the two buffers take turns, so a
    /// batch fills one that already has its capacity (a fresh one grew by
    /// doubling, with a copy and, past 128 KiB, new pages every batch).
    writing: Mutex<Vec<u8>>,
}

/// The capacity a spare buffer keeps after a write: a steady batch's size
/// (a stall's 8 MiB is given back).
const KEEP: usize = 4 * FLUSH_AT;

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| Sink {
        pending: Mutex::new(Pending::default()),
        ready: Condvar::new(),
        writing: Mutex::new(Vec::new()),
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
        let mut bytes = lock(&self.writing);
        let dropped = {
            let mut pending = lock(&self.pending);
            if pending.bytes.is_empty() && pending.dropped == 0 {
                return;
            }
            std::mem::swap(&mut pending.bytes, &mut *bytes);
            std::mem::take(&mut pending.dropped)
        };
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(&bytes);
        bytes.clear();
        bytes.shrink_to(KEEP);
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

/// Each line's timestamp, exactly as tracing-subscriber's default
/// (`SystemTime`: RFC 3339, UTC, microseconds, `2026-11-25T07:07:00.123456Z`),
/// written by humantime in one piece: the default formats seven padded
/// numbers through `core::fmt`, a visible part of an access line's cost.
#[derive(Debug, Clone, Copy)]
struct LineTime;

impl tracing_subscriber::fmt::time::FormatTime for LineTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        write!(
            w,
            "{}",
            humantime::format_rfc3339_micros(std::time::SystemTime::now())
        )
    }
}

/// The text format: tracing-subscriber's own (`Full`), with the access
/// lines (one a request) written here to the same bytes without
/// `core::fmt` for each part.
///
/// The default formatter writes each field as `write!("{}{}{:?}", name,
/// "=", value)` through its styling wrappers, so a line was a dozen
/// `core::fmt` calls (and `char`-by-`char` escaping of the key's hash).
/// Here an access line without ANSI colours and outside any span is the
/// timestamp, ` INFO access: `, and its fields as `name=value`: numbers and
/// plain strings written directly, anything else as the default formatter
/// writes it (`{:?}`). Any other event, or an access line with a
/// `message`, is the default formatter's.
#[derive(Debug)]
struct TextLines {
    full: tracing_subscriber::fmt::format::Format<tracing_subscriber::fmt::format::Full, LineTime>,
}

/// Writes an access line's fields as tracing-subscriber's `DefaultVisitor`
/// does with no ANSI colours: `name=value`, space-separated, values as
/// `{:?}` (a `%` field's `Display`).
struct AccessFields<'a, 'w> {
    writer: &'a mut tracing_subscriber::fmt::format::Writer<'w>,
    first: bool,
    result: std::fmt::Result,
}

impl AccessFields<'_, '_> {
    fn name(&mut self, field: &tracing::field::Field) {
        if self.result.is_err() {
            return;
        }
        if !std::mem::take(&mut self.first) {
            self.result = self.writer.write_char(' ');
        }
        if self.result.is_ok() {
            self.result = self
                .writer
                .write_str(field.name())
                .and_then(|()| self.writer.write_char('='));
        }
    }
}

impl tracing::field::Visit for AccessFields<'_, '_> {
    fn record_u64(&mut self, field: &tracing::field::Field, value: u64) {
        self.name(field);
        if self.result.is_ok() {
            self.result = self.writer.write_str(itoa::Buffer::new().format(value));
        }
    }

    fn record_str(&mut self, field: &tracing::field::Field, value: &str) {
        // `{:?}` of a string: quoted, with escapes; the same without them
        // when it has nothing to escape.
        let plain = value
            .bytes()
            .all(|b| (b' '..=b'~').contains(&b) && b != b'"' && b != b'\\');
        if !plain {
            return self.record_debug(field, &value);
        }
        self.name(field);
        if self.result.is_ok() {
            self.result = self
                .writer
                .write_char('"')
                .and_then(|()| self.writer.write_str(value))
                .and_then(|()| self.writer.write_char('"'));
        }
    }

    fn record_debug(&mut self, field: &tracing::field::Field, value: &dyn std::fmt::Debug) {
        self.name(field);
        if self.result.is_ok() {
            self.result = write!(self.writer, "{value:?}");
        }
    }
}

impl<S, N> tracing_subscriber::fmt::FormatEvent<S, N> for TextLines
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
    N: for<'a> tracing_subscriber::fmt::FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &tracing_subscriber::fmt::FmtContext<'_, S, N>,
        mut writer: tracing_subscriber::fmt::format::Writer<'_>,
        event: &tracing::Event<'_>,
    ) -> std::fmt::Result {
        use tracing_subscriber::fmt::time::FormatTime as _;
        let meta = event.metadata();
        let ours = meta.target() == "access"
            && *meta.level() == tracing::Level::INFO
            && !writer.has_ansi_escapes()
            && meta.fields().iter().all(|f| {
                let name = f.name();
                name != "message" && !name.starts_with("log.") && !name.starts_with("r#")
            })
            && ctx.event_scope().is_none();
        if !ours {
            return self.full.format_event(ctx, writer, event);
        }
        if LineTime.format_time(&mut writer).is_err() {
            writer.write_str("<unknown time>")?;
        }
        writer.write_str("  INFO access: ")?;
        let mut fields = AccessFields {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        event.record(&mut fields);
        fields.result?;
        writer.write_char('\n')
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
        .with_timer(LineTime)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        // Its own report of a failed write is an `eprintln!`, which panics
        // when stderr cannot be written either.
        .log_internal_errors(false);
    match format {
        LogFormat::Text => logs
            .event_format(TextLines {
                full: tracing_subscriber::fmt::format().with_timer(LineTime),
            })
            .init(),
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
    use tracing_subscriber::fmt::format::Writer;
    use tracing_subscriber::fmt::time::FormatTime;

    /// `YYYY-MM-DDTHH:MM:SS.`: a timestamp up to its fraction of a second.
    const TO_SECOND: usize = 20;

    fn formatted(timer: &impl FormatTime) -> String {
        let mut out = String::new();
        timer.format_time(&mut Writer::new(&mut out)).unwrap();
        out
    }

    /// What a subscriber with `format` writes for an access line and
    /// another event, timestamps cut off.
    fn lines_of<E>(format: E) -> Vec<String>
    where
        E: tracing_subscriber::fmt::FormatEvent<
                tracing_subscriber::Registry,
                tracing_subscriber::fmt::format::DefaultFields,
            > + Send
            + Sync
            + 'static,
    {
        use std::sync::Arc;
        #[derive(Clone, Default)]
        struct Buffer(Arc<Mutex<Vec<u8>>>);
        impl Write for Buffer {
            fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
                lock(&self.0).extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .event_format(format)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let id = format_args!("{}-{}", 41, 7);
            tracing::info!(
                target: "access",
                method = %"GET",
                path = %"/v1/filters",
                status = 200u16,
                latency_us = 1234u64,
                key = "0a1b2c3d",
                request_id = %id,
            );
            tracing::info!(target: "access", method = %"GET", key = "we\"ird\\", status = 0u64);
            tracing::info!(target: "access", status = 431u16, "refused by the HTTP layer");
            tracing::warn!(target: "access", status = 500u16, latency_us = 18_446_744_073_709_551_615u64);
            tracing::info!(ready_ms = 12u64, "component ready");
        });
        let text = String::from_utf8(lock(&buffer.0).clone()).unwrap();
        text.lines()
            .map(|line| line.get(TO_SECOND + 7..).unwrap_or(line).to_owned())
            .collect()
    }

    #[test]
    fn access_lines_are_the_default_formatters_bytes() {
        let ours = lines_of(TextLines {
            full: tracing_subscriber::fmt::format().with_timer(LineTime),
        });
        let theirs = lines_of(tracing_subscriber::fmt::format());
        assert_eq!(ours.len(), 5, "{ours:?}");
        assert_eq!(ours, theirs);
        assert_eq!(
            ours[0],
            "  INFO access: method=GET path=/v1/filters status=200 latency_us=1234 \
             key=\"0a1b2c3d\" request_id=41-7"
        );
    }

    #[test]
    fn the_timestamp_is_tracing_subscribers_own() {
        // The same second from both (retried if one ticks between them).
        let (ours, theirs) = loop {
            let theirs = formatted(&tracing_subscriber::fmt::time::SystemTime);
            let ours = formatted(&LineTime);
            if ours[..TO_SECOND] == theirs[..TO_SECOND] {
                break (ours, theirs);
            }
        };
        assert_eq!(ours.len(), theirs.len(), "{ours} {theirs}");
        assert!(
            ours.ends_with('Z') && ours.as_bytes()[TO_SECOND - 1] == b'.',
            "{ours}"
        );
    }
}

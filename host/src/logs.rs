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
/// with the date and time up to the second formatted once per second and
/// thread rather than for every line: `core::fmt` with padding for seven
/// numbers was a visible part of an access line's cost.
#[derive(Debug, Clone, Copy)]
struct LineTime;

/// `YYYY-MM-DDTHH:MM:SS.`
const PREFIX: usize = 20;

/// Year, month and day of a day counted from 1970-01-01 (the proleptic
/// Gregorian calendar; Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `YYYY-MM-DDTHH:MM:SS.` of a second since the epoch, for years 0 to 9999.
fn prefix_of(secs: u64) -> Option<[u8; PREFIX]> {
    let days = i64::try_from(secs / 86_400).ok()?;
    let (year, month, day) = civil_from_days(days);
    if !(0..=9999).contains(&year) {
        return None;
    }
    let of_day = secs % 86_400;
    let mut out = *b"0000-00-00T00:00:00.";
    let mut put = |at: usize, width: usize, mut n: u64| {
        for i in (at..at + width).rev() {
            out[i] = b'0' + (n % 10) as u8;
            n /= 10;
        }
    };
    put(0, 4, year as u64);
    put(5, 2, u64::from(month));
    put(8, 2, u64::from(day));
    put(11, 2, of_day / 3600);
    put(14, 2, of_day / 60 % 60);
    put(17, 2, of_day % 60);
    Some(out)
}

impl tracing_subscriber::fmt::time::FormatTime for LineTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        thread_local! {
            static SECOND: std::cell::Cell<(u64, [u8; PREFIX])> =
                const { std::cell::Cell::new((u64::MAX, [0; PREFIX])) };
        }
        let now = std::time::SystemTime::now();
        let Ok(since) = now.duration_since(std::time::UNIX_EPOCH) else {
            return tracing_subscriber::fmt::time::SystemTime.format_time(w);
        };
        let secs = since.as_secs();
        let (cached, mut prefix) = SECOND.get();
        if cached != secs {
            let Some(made) = prefix_of(secs) else {
                return tracing_subscriber::fmt::time::SystemTime.format_time(w);
            };
            prefix = made;
            SECOND.set((secs, prefix));
        }
        let mut micros = *b"000000Z";
        let mut n = since.subsec_micros();
        for digit in micros[..6].iter_mut().rev() {
            *digit = b'0' + (n % 10) as u8;
            n /= 10;
        }
        // Both are ASCII digits and punctuation.
        w.write_str(std::str::from_utf8(&prefix).map_err(|_| std::fmt::Error)?)?;
        w.write_str(std::str::from_utf8(&micros).map_err(|_| std::fmt::Error)?)
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
            let mut digits = [0u8; 20];
            let mut at = digits.len();
            let mut n = value;
            loop {
                at -= 1;
                digits[at] = b'0' + (n % 10) as u8;
                n /= 10;
                if n == 0 {
                    break;
                }
            }
            // ASCII digits.
            self.result = std::str::from_utf8(&digits[at..])
                .map_err(|_| std::fmt::Error)
                .and_then(|text| self.writer.write_str(text));
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

    fn formatted(timer: &impl FormatTime) -> String {
        let mut out = String::new();
        timer.format_time(&mut Writer::new(&mut out)).unwrap();
        out
    }

    #[test]
    fn dates_from_days() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_417), (2025, 11, 25));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(&prefix_of(0).unwrap(), b"1970-01-01T00:00:00.");
        assert_eq!(&prefix_of(951_868_799).unwrap(), b"2000-02-29T23:59:59.");
        assert_eq!(&prefix_of(1_795_653_296).unwrap(), b"2026-11-26T00:34:56.");
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
            .map(|line| line.get(PREFIX + 7..).unwrap_or(line).to_owned())
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
        // The same second from both (retried if one ticks between them),
        // twice: the second time from the cache.
        for _ in 0..2 {
            let (ours, theirs) = loop {
                let theirs = formatted(&tracing_subscriber::fmt::time::SystemTime);
                let ours = formatted(&LineTime);
                if ours[..PREFIX] == theirs[..PREFIX] {
                    break (ours, theirs);
                }
            };
            assert_eq!(ours.len(), theirs.len(), "{ours} {theirs}");
            assert!(
                ours.ends_with('Z') && ours.as_bytes()[PREFIX - 1] == b'.',
                "{ours}"
            );
        }
    }
}

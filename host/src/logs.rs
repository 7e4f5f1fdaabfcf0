//! Logs: `tracing` lines to stderr, written in batches.
//!
//! Every request writes an access line. Formatted and written one `write`
//! each on the request's own thread, they cost about 5 µs of CPU a request
//! under load (the file's position lock and the write path, per line), and a
//! stalled reader of the log pipe would stall the requests writing to it.
//! So a request only queues what its line says ([`AccessLine`], a few
//! fields), and a thread of its own turns the queue into `tracing` events
//! and writes their lines out every [`FLUSH_EVERY`], or as soon as
//! [`FLUSH_AT`] bytes are waiting: the same trade an access log's
//! `buffer`/`flush` settings make in other servers. Formatting a batch in a
//! row also costs a fraction of formatting each line between a request's
//! other work, where the formatter's code and data are out of the caches.
//! An access line is the same event with the same fields, filtered by
//! `RUST_LOG` and formatted by the subscriber like any other, stamped with
//! the time its request finished, not the time it is written.
//!
//! Every other event is formatted where it happens and queued as a line.
//! Lines keep their order: a request's access line follows the events logged
//! during it. If stderr stops taking them, the queue stops at
//! [`MAX_PENDING`] bytes and further lines are dropped and counted, never
//! waited for; the count is logged once stderr takes lines again. A process
//! ending normally writes everything first ([`Logs`] flushes when dropped);
//! a process killed outright can lose the last [`FLUSH_EVERY`] of lines.

use std::cell::{Cell, RefCell};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, SystemTime};

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

/// What the access log says of one request: never the key, only the first
/// characters of its hash (the same prefix `keys list` shows), so a line can
/// be matched to a key without holding it.
#[derive(Debug)]
pub struct AccessLine {
    /// The request's method.
    pub method: hyper::Method,
    /// The request's path, without the query.
    pub path: String,
    /// The start of the hash of the request's key, if it gave one.
    pub key: Option<String>,
    /// The request's id.
    pub request_id: RequestId,
}

/// A request's id: the client's `X-Request-Id`, or the host's own
/// (`<pid>-<n>`), written out only when a line names it.
#[derive(Debug)]
pub enum RequestId {
    /// The client's own.
    Client(String),
    /// The host's `n`th request.
    Host(u64),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The process id, read once: `getpid` is a system call.
        static PID: OnceLock<u32> = OnceLock::new();
        match self {
            RequestId::Client(id) => f.write_str(id),
            RequestId::Host(n) => write!(f, "{}-{n}", PID.get_or_init(std::process::id)),
        }
    }
}

impl AccessLine {
    /// Logs the request's line: its answer's `status`, the time it `took`,
    /// stamped now. Queued for the writer thread, not formatted here.
    pub fn log(self, status: u16, took: Duration) {
        if !tracing::enabled!(target: "access", tracing::Level::INFO) {
            return;
        }
        let done = Finished {
            line: self,
            status,
            took,
            at: SystemTime::now(),
        };
        if UNBUFFERED.load(Ordering::Relaxed) {
            done.emit();
        } else {
            sink().queue(Entry::Access(done));
        }
    }
}

/// An access line with its request's outcome.
#[derive(Debug)]
struct Finished {
    line: AccessLine,
    status: u16,
    took: Duration,
    /// When the request finished: the line's timestamp.
    at: SystemTime,
}

impl Finished {
    /// The `tracing` event, stamped with the request's time.
    fn emit(&self) {
        LINE_AT.with(|at| at.set(Some(self.at)));
        let line = &self.line;
        tracing::info!(
            target: "access",
            method = %line.method,
            path = %line.path,
            status = self.status,
            latency_us = u64::try_from(self.took.as_micros()).unwrap_or(u64::MAX),
            key = line.key.as_deref().unwrap_or("-"),
            request_id = %line.request_id,
        );
        LINE_AT.with(|at| at.set(None));
    }

    /// About the bytes its line takes, for the queue's bounds.
    fn size(&self) -> usize {
        const FIXED: usize = 160;
        let id = match &self.line.request_id {
            RequestId::Client(id) => id.len(),
            RequestId::Host(_) => 0,
        };
        FIXED + self.line.path.len() + id
    }
}

thread_local! {
    /// The time an access line being emitted on this thread is stamped with.
    static LINE_AT: Cell<Option<SystemTime>> = const { Cell::new(None) };
    /// Where this thread's formatted lines go while it writes the queue out
    /// (the writer thread, or a flush): straight into the batch, in order.
    static BATCH: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// A queued line.
#[derive(Debug)]
enum Entry {
    /// An access line, formatted when written out.
    Access(Finished),
    /// Another event's line, formatted.
    Line(Vec<u8>),
}

/// Lines not yet written.
#[derive(Default)]
struct Pending {
    entries: Vec<Entry>,
    /// About the bytes `entries` will take.
    bytes: usize,
    /// Lines dropped since the last write, while the queue was full.
    dropped: u64,
}

/// The writer's state between batches.
#[derive(Default)]
struct Writing {
    /// The queue not in use: the two take turns, so a batch fills one that
    /// already has its capacity.
    spare: Vec<Entry>,
    /// The batch's bytes (kept between batches for the same reason: a fresh
    /// buffer grows by doubling, with a copy and, past 128 KiB, new pages).
    out: Vec<u8>,
}

struct Sink {
    pending: Mutex<Pending>,
    /// Wakes the writer thread early: a full batch, or a flush.
    ready: Condvar,
    /// Serializes writes to stderr (the thread's and [`Logs::flush`]'s).
    writing: Mutex<Writing>,
}

/// The capacity the batch buffer keeps after a write: a steady batch's size
/// (a stall's 8 MiB is given back).
const KEEP: usize = 4 * FLUSH_AT;

fn sink() -> &'static Sink {
    static SINK: OnceLock<Sink> = OnceLock::new();
    SINK.get_or_init(|| Sink {
        pending: Mutex::new(Pending::default()),
        ready: Condvar::new(),
        writing: Mutex::new(Writing::default()),
    })
}

/// A lock that a panicking holder cannot make unusable: logs go on.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Emits the queued `entries` in order, each access line's event stamped
/// with its request's time; the lines go wherever the subscriber writes
/// them (while writing out: the batch).
fn emit_all(entries: &mut Vec<Entry>) {
    for entry in entries.drain(..) {
        match entry {
            Entry::Access(done) => done.emit(),
            Entry::Line(bytes) => {
                BATCH.with(|batch| {
                    if let Some(out) = batch.borrow_mut().as_mut() {
                        out.extend_from_slice(&bytes);
                    }
                });
            }
        }
    }
}

impl Sink {
    fn queue(&self, entry: Entry) {
        let size = match &entry {
            Entry::Access(done) => done.size(),
            Entry::Line(bytes) => bytes.len(),
        };
        let mut pending = lock(&self.pending);
        if pending.bytes + size > MAX_PENDING {
            pending.dropped += 1;
            return;
        }
        pending.entries.push(entry);
        pending.bytes += size;
        if pending.bytes >= FLUSH_AT {
            self.ready.notify_one();
        }
    }

    /// Writes out what is queued. A write that fails (a full disk under
    /// the log file) loses those lines, never fails anything else.
    fn write_out(&self) {
        let mut writing = lock(&self.writing);
        let Writing { spare, out } = &mut *writing;
        let dropped = {
            let mut pending = lock(&self.pending);
            if pending.entries.is_empty() && pending.dropped == 0 {
                return;
            }
            std::mem::swap(&mut pending.entries, spare);
            pending.bytes = 0;
            std::mem::take(&mut pending.dropped)
        };
        BATCH.with(|batch| *batch.borrow_mut() = Some(std::mem::take(out)));
        emit_all(spare);
        *out = BATCH
            .with(|batch| batch.borrow_mut().take())
            .unwrap_or_default();
        let mut stderr = std::io::stderr().lock();
        let _ = stderr.write_all(out);
        out.clear();
        out.shrink_to(KEEP);
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
                if pending.bytes < FLUSH_AT {
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
        let batched = BATCH.with(|batch| match batch.borrow_mut().as_mut() {
            Some(out) => {
                out.extend_from_slice(buf);
                true
            }
            None => false,
        });
        if !batched {
            if UNBUFFERED.load(Ordering::Relaxed) {
                let _ = std::io::stderr().write_all(buf);
            } else {
                sink().queue(Entry::Line(buf.to_vec()));
            }
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

/// Each line's timestamp (now; for an access line, when its request
/// finished), exactly as tracing-subscriber's default
/// (`SystemTime`: RFC 3339, UTC, microseconds, `2026-11-25T07:07:00.123456Z`),
/// written by humantime in one piece: the default formats seven padded
/// numbers through `core::fmt`, a visible part of an access line's cost.
#[derive(Debug, Clone, Copy)]
struct LineTime;

impl tracing_subscriber::fmt::time::FormatTime for LineTime {
    fn format_time(&self, w: &mut tracing_subscriber::fmt::format::Writer<'_>) -> std::fmt::Result {
        let at = LINE_AT.with(Cell::get).unwrap_or_else(SystemTime::now);
        write!(w, "{}", humantime::format_rfc3339_micros(at))
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

    /// What a test subscriber writes to.
    #[derive(Clone, Default)]
    struct Buffer(std::sync::Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            lock(&self.0).extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

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
    fn a_queued_access_line_is_stamped_with_its_requests_time() {
        let buffer = Buffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .event_format(TextLines {
                full: tracing_subscriber::fmt::format().with_timer(LineTime),
            })
            .finish();
        let finished = |path: &str, micros: u64| {
            Entry::Access(Finished {
                line: AccessLine {
                    method: hyper::Method::HEAD,
                    path: path.to_owned(),
                    key: None,
                    request_id: RequestId::Client("r-1".to_owned()),
                },
                status: 304,
                took: Duration::from_micros(87),
                at: SystemTime::UNIX_EPOCH + Duration::from_micros(micros),
            })
        };
        let mut entries = vec![
            finished("/v1/filters", 1_500_000),
            finished("/api/v1/filters", 86_400_000_001),
        ];
        tracing::subscriber::with_default(subscriber, || {
            emit_all(&mut entries);
            // Events after them are stamped with the time again.
            tracing::info!("after");
        });
        let text = String::from_utf8(lock(&buffer.0).clone()).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[..2],
            [
                "1970-01-01T00:00:01.500000Z  INFO access: method=HEAD path=/v1/filters \
                 status=304 latency_us=87 key=\"-\" request_id=r-1",
                "1970-01-02T00:00:00.000001Z  INFO access: method=HEAD path=/api/v1/filters \
                 status=304 latency_us=87 key=\"-\" request_id=r-1",
            ]
        );
        assert!(!lines[2].starts_with("1970"), "{}", lines[2]);
        assert!(entries.is_empty());
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

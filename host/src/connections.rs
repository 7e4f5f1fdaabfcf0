//! The public listener's connections: the header-read (idle) deadline and
//! the drain on shutdown, without a timer per request.
//!
//! hyper's own `header_read_timeout` makes a tokio `Sleep` every time it
//! starts reading a request head, registers it in the runtime's timer wheel
//! and drops it once the head is read: on a kept-alive connection, once per
//! request (with a clock read and the wheel's lock, ~0.9 k cycles a request
//! under load; docs/BENCHMARKS.md). hyper-util's graceful shutdown polls a
//! `watch` channel with every poll of the connection, which takes one of
//! the channel's shared locks each time. Here instead:
//!
//! - each connection has a [`Progress`] counter that its own task bumps,
//!   with plain relaxed stores, when a request starts, when it ends, and
//!   whenever bytes are written to the socket; the count is odd while a
//!   request is being handled;
//! - one sweeper task for the whole listener looks at every counter
//!   [`TICKS`] times per deadline: a connection that is not handling a
//!   request and whose counter has not moved for a whole deadline (by the
//!   clock, read once a tick) is closed. The deadline is thus enforced to
//!   a tenth of itself: a client that sends no complete head (silent, or
//!   dripping bytes: reads do not count) or stays idle between requests is
//!   closed between 1 and 1.1 deadlines after the connection opened or its
//!   last answer was written;
//! - a drain (SIGTERM, SIGINT) flags every connection and wakes it once:
//!   idle ones close, ones with a request in flight finish it first.
//!
//! What a request costs here: two relaxed stores and a branch in the
//! service, one relaxed store per write to the socket, one relaxed load per
//! poll of the connection. No clock is read for it.

use std::collections::HashMap;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

/// Checks per deadline: how finely it is enforced.
pub const TICKS: u32 = 10;

/// Nothing asked of the connection.
const RUN: u8 = 0;
/// Its deadline passed while it was idle: close it.
const EXPIRE: u8 = 1;
/// The server is stopping: finish what is in flight, then close.
const DRAIN: u8 = 2;

/// What a connection's task and the sweeper share.
#[derive(Debug, Default)]
pub struct Progress {
    /// Bumped by the connection's task only (so a load and a store, no
    /// read-modify-write): +1 when a request starts, +1 when it ends (odd
    /// while one is handled), +2 for every write that sent bytes.
    count: AtomicU64,
    /// What the sweeper asks ([`RUN`], [`EXPIRE`], [`DRAIN`]).
    signal: AtomicU8,
    /// The count the sweeper saw unchanged for a whole deadline, when it
    /// set [`EXPIRE`]: the task closes only if it still reads that.
    expired_at: AtomicU64,
    /// The connection task's waker, for the sweeper's signals.
    waker: Mutex<Option<Waker>>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Progress {
    fn bump(&self, by: u64) {
        // Only the connection's own task writes the count.
        let count = self.count.load(Ordering::Relaxed);
        self.count.store(count.wrapping_add(by), Ordering::Relaxed);
    }

    /// A request's head was read and the service called.
    pub fn request_started(&self) {
        self.bump(1);
    }

    /// The service answered (its body may still be being written).
    pub fn request_ended(&self) {
        self.bump(1);
    }

    fn signal(&self, signal: u8) {
        self.signal.store(signal, Ordering::Release);
        if let Some(waker) = lock(&self.waker).as_ref() {
            waker.wake_by_ref();
        }
    }
}

/// Ends a request's span in [`Progress`] even if its future is dropped.
#[derive(Debug)]
pub struct InFlight<'a>(&'a Progress);

impl<'a> InFlight<'a> {
    /// Marks a request started until the guard is dropped.
    pub fn start(progress: &'a Progress) -> InFlight<'a> {
        progress.request_started();
        InFlight(progress)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.request_ended();
    }
}

/// A sweeper's view of one connection.
#[derive(Debug)]
struct Tracked {
    progress: Arc<Progress>,
    /// The count at the last tick, and the tick that first saw it; `None`
    /// before the first tick.
    seen: Option<(u64, Instant)>,
    /// Told to close for the count it has now.
    told: bool,
}

#[derive(Debug, Default)]
struct Registry {
    open: HashMap<u64, Tracked>,
    next: u64,
}

/// Every open connection of a listener, their deadline and their drain.
#[derive(Debug)]
pub struct Connections {
    registry: Mutex<Registry>,
    draining: AtomicBool,
    /// Wakes [`Connections::drain`] when a connection ends.
    ended: tokio::sync::Notify,
}

impl Connections {
    /// Connections whose deadline is `deadline`; starts the sweeper that
    /// enforces it (on the current tokio runtime), which ends with the last
    /// `Arc`.
    pub fn new(deadline: Duration) -> Arc<Connections> {
        let connections = Arc::new(Connections {
            registry: Mutex::new(Registry::default()),
            draining: AtomicBool::new(false),
            ended: tokio::sync::Notify::new(),
        });
        let tick = (deadline / TICKS).max(Duration::from_millis(1));
        let weak = Arc::downgrade(&connections);
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval(tick);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            ticks.tick().await;
            loop {
                ticks.tick().await;
                // The clock, once a tick, rather than a count of ticks:
                // tokio fires an interval's tick up to a few milliseconds
                // short of its period after a late one, so ten ticks can be
                // a little less than a deadline.
                let now = Instant::now();
                let Some(connections) = weak.upgrade() else {
                    return;
                };
                connections.sweep(now, deadline);
            }
        });
        connections
    }

    /// Looks at every connection once, at `now`: one that is idle (no
    /// request being handled) and whose count has not moved since a tick at
    /// least `deadline` ago is told to close.
    fn sweep(&self, now: Instant, deadline: Duration) {
        let mut registry = lock(&self.registry);
        for tracked in registry.open.values_mut() {
            let count = tracked.progress.count.load(Ordering::Relaxed);
            let busy = count % 2 == 1;
            let since = match tracked.seen {
                Some((seen, since)) if seen == count && !busy => since,
                _ => {
                    tracked.seen = Some((count, now));
                    tracked.told = false;
                    continue;
                }
            };
            if !tracked.told && now.duration_since(since) >= deadline {
                tracked.told = true;
                tracked.progress.expired_at.store(count, Ordering::Relaxed);
                tracked.progress.signal(EXPIRE);
            }
        }
    }

    /// Watches `connection` (hyper's): closes it when its deadline passes
    /// while idle, shuts it down gracefully on a drain. `progress` must be
    /// the one its service and socket report to.
    pub fn watch<C>(self: &Arc<Self>, connection: C, progress: Arc<Progress>) -> Watched<C> {
        let id = {
            let mut registry = lock(&self.registry);
            let id = registry.next;
            registry.next += 1;
            registry.open.insert(
                id,
                Tracked {
                    progress: progress.clone(),
                    seen: None,
                    told: false,
                },
            );
            id
        };
        if self.draining.load(Ordering::Acquire) {
            progress.signal.store(DRAIN, Ordering::Release);
        }
        Watched {
            connection,
            progress,
            waker: None,
            draining: false,
            connections: self.clone(),
            id,
        }
    }

    /// Connections open now.
    pub fn count(&self) -> usize {
        lock(&self.registry).open.len()
    }

    /// Tells every connection to finish what it is handling and close;
    /// returns once none is open.
    pub async fn drain(&self) {
        self.draining.store(true, Ordering::Release);
        for tracked in lock(&self.registry).open.values() {
            tracked.progress.signal(DRAIN);
        }
        loop {
            let ended = self.ended.notified();
            if self.count() == 0 {
                return;
            }
            ended.await;
        }
    }
}

/// The connection is closed: its deadline passed with no request in flight.
#[derive(Debug)]
pub struct Expired;

/// A hyper connection under a [`Connections`]' watch.
#[derive(Debug)]
pub struct Watched<C> {
    connection: C,
    progress: Arc<Progress>,
    /// The waker last given to the sweeper (a task's waker does not change
    /// from poll to poll: compared, not cloned, each time).
    waker: Option<Waker>,
    /// `graceful_shutdown` was called.
    draining: bool,
    connections: Arc<Connections>,
    id: u64,
}

/// A connection that can finish its exchange and close.
pub trait GracefulShutdown {
    /// Stops keep-alive: closes when idle, after the request in flight.
    fn graceful_shutdown(self: Pin<&mut Self>);
}

impl<I, S, B> GracefulShutdown for hyper::server::conn::http1::Connection<I, S>
where
    S: hyper::service::HttpService<hyper::body::Incoming, ResBody = B>,
    S::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
    I: hyper::rt::Read + hyper::rt::Write + Unpin,
    B: hyper::body::Body + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    fn graceful_shutdown(self: Pin<&mut Self>) {
        hyper::server::conn::http1::Connection::graceful_shutdown(self);
    }
}

impl<C> Future for Watched<C>
where
    C: Future + GracefulShutdown + Unpin,
{
    type Output = Result<C::Output, Expired>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if !this.waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            let waker = cx.waker().clone();
            *lock(&this.progress.waker) = Some(waker.clone());
            this.waker = Some(waker);
        }
        match this.progress.signal.load(Ordering::Acquire) {
            RUN => {}
            EXPIRE => {
                // The sweeper's view may be a tick old: close only if no
                // request started or byte was written since.
                let count = this.progress.count.load(Ordering::Relaxed);
                if count == this.progress.expired_at.load(Ordering::Relaxed) {
                    return Poll::Ready(Err(Expired));
                }
                let _ = this.progress.signal.compare_exchange(
                    EXPIRE,
                    RUN,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                );
            }
            _ => {
                if !this.draining {
                    this.draining = true;
                    Pin::new(&mut this.connection).graceful_shutdown();
                }
            }
        }
        Pin::new(&mut this.connection).poll(cx).map(Ok)
    }
}

impl<C> Drop for Watched<C> {
    fn drop(&mut self) {
        lock(&self.connections.registry).open.remove(&self.id);
        self.connections.ended.notify_waiters();
    }
}

/// A socket whose successful writes count as progress.
#[derive(Debug)]
pub struct Counted<T> {
    inner: T,
    progress: Arc<Progress>,
}

impl<T> Counted<T> {
    /// Wraps `inner`, reporting to `progress`.
    pub fn new(inner: T, progress: Arc<Progress>) -> Self {
        Counted { inner, progress }
    }

    fn wrote(&self, written: &Poll<std::io::Result<usize>>) {
        if let Poll::Ready(Ok(n)) = written
            && *n > 0
        {
            self.progress.bump(2);
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Counted<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Counted<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.wrote(&written);
        written
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let written = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.wrote(&written);
        written
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    /// A connection that never finishes on its own.
    struct Forever {
        shut: bool,
    }

    impl Future for Forever {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
            if self.shut {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }

    impl GracefulShutdown for Forever {
        fn graceful_shutdown(mut self: Pin<&mut Self>) {
            self.shut = true;
        }
    }

    #[tokio::test]
    async fn an_idle_connection_closes_after_its_deadline_a_busy_one_does_not() {
        let deadline = Duration::from_millis(300);
        let connections = Connections::new(deadline);
        let idle = Arc::new(Progress::default());
        let busy = Arc::new(Progress::default());
        let started = std::time::Instant::now();
        let idle_task = tokio::spawn(connections.watch(Forever { shut: false }, idle.clone()));
        let busy_task = tokio::spawn(connections.watch(Forever { shut: false }, busy.clone()));
        busy.request_started();
        assert!(matches!(idle_task.await.unwrap(), Err(Expired)));
        let took = started.elapsed();
        // The tick's own lateness on a loaded machine is the slack above.
        assert!(took >= deadline && took < deadline * 3, "{took:?}");
        assert_eq!(connections.count(), 1);
        // A request in flight keeps it open however long it takes; once it
        // ends, a deadline of quiet closes it too.
        tokio::time::sleep(deadline * 3).await;
        assert!(!busy_task.is_finished());
        busy.request_ended();
        let ended = std::time::Instant::now();
        assert!(matches!(busy_task.await.unwrap(), Err(Expired)));
        assert!(ended.elapsed() >= deadline);
    }

    #[tokio::test]
    async fn a_drain_shuts_every_connection_down() {
        let connections = Connections::new(Duration::from_secs(3600));
        let tasks: Vec<_> = (0..3)
            .map(|_| {
                tokio::spawn(
                    connections.watch(Forever { shut: false }, Arc::new(Progress::default())),
                )
            })
            .collect();
        tokio::task::yield_now().await;
        connections.drain().await;
        for task in tasks {
            assert!(task.await.unwrap().is_ok());
        }
        assert_eq!(connections.count(), 0);
    }
}

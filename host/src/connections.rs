//! What a connection may hold, and for how long: the accept loop that both
//! listeners (the public one and the operations one) run.
//!
//! - **At most `max_connections` open.** At the cap the loop stops
//!   accepting: the next client waits in the kernel's backlog instead of
//!   costing a file descriptor, so the process never runs out of them
//!   (which would make `accept` fail for everyone).
//! - **A head within `header_read_timeout`**, on a new connection and after
//!   each answer on a kept-alive one (so it is also the idle timeout):
//!   hyper's own header-read timeout, on tokio's timer. A client that sends
//!   nothing, or drips the bytes of a head, is closed after it.
//! - **At most `max_age` per connection.** Then it is shut down gracefully:
//!   an idle one closes at once, one with a request in flight closes after
//!   that answer; one still busy `grace` later (a body dripped in, an
//!   answer never read) is closed outright. A client that keeps a
//!   connection alive with a request just before each idle deadline gives
//!   its slot back within `max_age + grace`, and the clients waiting in the
//!   backlog get their turn.
//! - **A drain** (SIGTERM, SIGINT) stops the loop and shuts every
//!   connection down the same way; [`Connections::drain`] returns when the
//!   last one has closed (every slot is free again).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use hyper_util::server::graceful::GracefulConnection;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, watch};

/// The most bytes of a request head hyper buffers: what one connection can
/// make the server hold before its head is complete (hyper's default is
/// ~400 KiB). Room for a request line of 64 KiB, the longest hyper reads
/// (longer is a 414), with ordinary headers.
pub const MAX_HEAD_BUFFER: usize = 80 * 1024;

/// What a slow, idle or abusive client may hold.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Time to send a request's whole head, counted from when the server
    /// starts waiting for it: on a new connection, and after the last byte
    /// of an answer on a kept-alive one, so it is also the idle keep-alive
    /// timeout.
    pub header_read_timeout: Duration,
    /// Most connections open at once. Keep it below the process's
    /// `ulimit -n`, with room for the other listener and the stores.
    pub max_connections: usize,
    /// How long one connection may stay open, however busy.
    pub max_age: Duration,
    /// How long a connection told to close (its age reached, a drain) may
    /// take to finish the request in flight before it is closed outright.
    pub grace: Duration,
}

impl ConnectionLimits {
    /// The public listener's defaults.
    pub const PUBLIC: ConnectionLimits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(10),
        max_connections: 1024,
        max_age: Duration::from_secs(60),
        grace: Duration::from_secs(10),
    };

    /// The operations listener's: a few scrapers and probes, each request
    /// answered from memory or within a store's deadline.
    pub const OPERATIONS: ConnectionLimits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(5),
        max_connections: 32,
        max_age: Duration::from_secs(60),
        grace: Duration::from_secs(5),
    };
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits::PUBLIC
    }
}

/// The open connections of one listener.
#[derive(Debug)]
pub struct Connections {
    limits: ConnectionLimits,
    slots: Arc<Semaphore>,
    /// `true` once draining: every connection shuts down.
    draining: watch::Sender<bool>,
    /// Whether connections count in `noise_filter_open_connections`.
    counted: bool,
}

impl Connections {
    /// Connections under `limits`; `counted`: reported in the open
    /// connections' gauge.
    pub fn new(limits: ConnectionLimits, counted: bool) -> Connections {
        Connections {
            limits,
            slots: Arc::new(Semaphore::new(limits.max_connections)),
            draining: watch::Sender::new(false),
            counted,
        }
    }

    /// The limits connections are held to.
    pub fn limits(&self) -> &ConnectionLimits {
        &self.limits
    }

    /// Accepts connections on `listener` until `stop` resolves (returns
    /// what it resolved to), serving each with the connection `serve` makes
    /// of its socket.
    pub async fn accept<T, C, F>(
        &self,
        listener: &TcpListener,
        stop: impl Future<Output = T>,
        mut serve: F,
    ) -> T
    where
        F: FnMut(TcpStream) -> C,
        C: GracefulConnection + Send + 'static,
        C::Error: std::fmt::Display + IsIncomplete,
    {
        let mut stop = std::pin::pin!(stop);
        loop {
            // A free slot first: at the cap, the next client waits in the
            // kernel's backlog rather than costing a file descriptor.
            let slot = tokio::select! {
                slot = self.slots.clone().acquire_owned() => match slot {
                    Ok(slot) => slot,
                    // Closed: never, `self` holds the semaphore and
                    // never closes it.
                    Err(_) => return stop.await,
                },
                stopped = &mut stop => return stopped,
            };
            let socket = tokio::select! {
                accepted = listener.accept() => match accepted {
                    Ok((socket, _)) => socket,
                    Err(e) => {
                        // Out of file descriptors and the like: wait, go on.
                        tracing::warn!("accept failed: {e}");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                },
                stopped = &mut stop => return stopped,
            };
            let _ = socket.set_nodelay(true);
            let connection = serve(socket);
            let (limits, draining, counted) =
                (self.limits, self.draining.subscribe(), self.counted);
            if counted {
                crate::metrics::metrics().connections(1);
            }
            tokio::spawn(async move {
                supervise(connection, limits, draining).await;
                if counted {
                    crate::metrics::metrics().connections(-1);
                }
                drop(slot);
            });
        }
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.limits.max_connections - self.slots.available_permits()
    }

    /// Tells every connection to finish what it is handling and close;
    /// returns once none is open, or `false` after `within`.
    pub async fn drain(&self, within: Duration) -> bool {
        self.draining.send_replace(true);
        let all = u32::try_from(self.limits.max_connections).unwrap_or(u32::MAX);
        tokio::time::timeout(within, self.slots.acquire_many(all))
            .await
            .is_ok()
    }
}

/// A connection error that only says the client went away mid-request.
pub trait IsIncomplete {
    /// The client closed the connection before a whole request.
    fn is_incomplete(&self) -> bool;
}

impl IsIncomplete for hyper::Error {
    fn is_incomplete(&self) -> bool {
        self.is_incomplete_message()
    }
}

/// Runs `connection` until it ends, its age is reached or a drain starts;
/// then shuts it down gracefully, and closes it outright after the grace.
async fn supervise<C>(connection: C, limits: ConnectionLimits, mut draining: watch::Receiver<bool>)
where
    C: GracefulConnection,
    C::Error: std::fmt::Display + IsIncomplete,
{
    let mut connection = std::pin::pin!(connection);
    let why = tokio::select! {
        ended = connection.as_mut() => return report(ended),
        () = tokio::time::sleep(limits.max_age) => "its age limit",
        _ = draining.wait_for(|draining| *draining) => "the drain",
    };
    connection.as_mut().graceful_shutdown();
    match tokio::time::timeout(limits.grace, connection).await {
        Ok(ended) => report(ended),
        Err(_) => tracing::debug!(
            "connection closed: still busy {:?} after {why}",
            limits.grace
        ),
    }
}

fn report<E: std::fmt::Display + IsIncomplete>(ended: Result<(), E>) {
    if let Err(e) = ended
        && !e.is_incomplete()
    {
        tracing::debug!("connection closed: {e}");
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;
    use hyper_util::rt::{TokioIo, TokioTimer};
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _, DuplexStream};
    use tokio::time::Instant;

    const LIMITS: ConnectionLimits = ConnectionLimits {
        header_read_timeout: Duration::from_secs(10),
        max_connections: 4,
        max_age: Duration::from_secs(60),
        grace: Duration::from_secs(5),
    };

    /// A connection served by `supervise` over an in-memory pipe, its
    /// service reading each request's whole body: the client's end, the
    /// task, and the drain's sender.
    fn connect() -> (
        DuplexStream,
        tokio::task::JoinHandle<()>,
        watch::Sender<bool>,
    ) {
        let (client, server) = tokio::io::duplex(64 * 1024);
        let service = hyper::service::service_fn(
            |request: hyper::Request<hyper::body::Incoming>| async move {
                let body = request.into_body().collect().await?.to_bytes();
                Ok::<_, hyper::Error>(hyper::Response::new(http_body_util::Full::new(body)))
            },
        );
        let connection = hyper::server::conn::http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(LIMITS.header_read_timeout)
            .serve_connection(TokioIo::new(server), service);
        let (draining, watching) = watch::channel(false);
        let task = tokio::spawn(supervise(connection, LIMITS, watching));
        (client, task, draining)
    }

    /// Sends one request and reads its answer; empty once the server has
    /// closed the connection.
    async fn exchange(client: &mut DuplexStream) -> String {
        let request = b"GET / HTTP/1.1\r\nHost: x\r\ncontent-length: 2\r\n\r\nok";
        if client.write_all(request).await.is_err() {
            return String::new();
        }
        let mut answer = vec![0u8; 1024];
        let n = client.read(&mut answer).await.unwrap_or(0);
        String::from_utf8_lossy(&answer[..n]).into_owned()
    }

    #[tokio::test(start_paused = true)]
    async fn a_silent_client_is_closed_after_the_header_read_timeout() {
        let started = Instant::now();
        let (_client, task, _draining) = connect();
        task.await.unwrap();
        let took = started.elapsed();
        assert!(
            took >= LIMITS.header_read_timeout && took < LIMITS.header_read_timeout * 2,
            "{took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_kept_alive_just_inside_the_idle_deadline_ends_at_its_age() {
        let started = Instant::now();
        let (mut client, task, _draining) = connect();
        let step = LIMITS.header_read_timeout - Duration::from_millis(1);
        let mut answered = 0;
        while !task.is_finished() && started.elapsed() < LIMITS.max_age * 3 {
            let answer = exchange(&mut client).await;
            if answer.is_empty() {
                break; // closed
            }
            assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
            answered += 1;
            tokio::time::sleep(step).await;
        }
        task.await.unwrap();
        let took = started.elapsed();
        assert!(answered >= 6, "{answered}");
        assert!(
            took >= LIMITS.max_age && took <= LIMITS.max_age + LIMITS.header_read_timeout,
            "closed after {took:?}"
        );
    }

    #[tokio::test(start_paused = true)]
    async fn a_connection_still_busy_after_its_grace_is_closed_outright() {
        let started = Instant::now();
        let (mut client, task, _draining) = connect();
        // A body announced and dripped, a byte a second: the request never
        // ends, and reads are not a head, so no header timeout applies.
        client
            .write_all(b"POST / HTTP/1.1\r\nHost: x\r\ncontent-length: 100000\r\n\r\n")
            .await
            .unwrap();
        let drip = tokio::spawn(async move {
            while client.write_all(b"x").await.is_ok() {
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        });
        task.await.unwrap();
        let took = started.elapsed();
        assert!(
            took >= LIMITS.max_age + LIMITS.grace
                && took < LIMITS.max_age + LIMITS.grace + Duration::from_secs(2),
            "closed after {took:?}"
        );
        drip.abort();
    }

    #[tokio::test(start_paused = true)]
    async fn a_drain_closes_idle_connections_and_lets_a_request_finish() {
        let (_idle, idle_task, draining) = connect();
        let (mut busy, busy_task, busy_draining) = connect();
        // A request whose body is still coming when the drain starts.
        busy.write_all(b"POST / HTTP/1.1\r\nHost: x\r\ncontent-length: 4\r\n\r\nab")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
        let started = Instant::now();
        draining.send_replace(true);
        busy_draining.send_replace(true);
        idle_task.await.unwrap();
        assert!(
            started.elapsed() < Duration::from_millis(10),
            "the idle one closes at once"
        );
        assert!(
            !busy_task.is_finished(),
            "the busy one finishes its request"
        );
        busy.write_all(b"cd").await.unwrap();
        let mut answer = String::new();
        busy.read_to_string(&mut answer).await.unwrap();
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("abcd"), "{answer}");
        busy_task.await.unwrap();
    }
}

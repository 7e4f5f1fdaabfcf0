//! `serve`: the component under wasmtime, behind a hyper server.
//!
//! The component is compiled once at start and pre-instantiated
//! ([`ProxyPre`]); instances come from the pooling allocator. An instance
//! that finished a request cleanly serves the next one, up to
//! `--max-instance-reuse-count` requests (as `wasmtime serve` and Spin reuse
//! WASI 0.3 instances); 1 gives every request a fresh instance. The host adds
//! nothing to the component's answer but framing.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;
use wasmtime::component::{Component, Linker};
use wasmtime::{
    Cache, CacheConfig, Config, Enabled, Engine, InstanceAllocationStrategy,
    PoolingAllocationConfig, Store,
};
use wasmtime_wasi::{HostWallClock, WasiCtx};
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::Scheme;
use wasmtime_wasi_http::p2::bindings::{Proxy, ProxyPre};
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;

use crate::connections::{Connections, Counted, Expired, InFlight, Progress};
use crate::guest::{self, Guest};
use crate::logs::{AccessLine, RequestId};
use crate::store::Stores;

/// Most instances alive at once (requests in flight).
const MAX_INSTANCES: u32 = 256;

/// Requests an instance serves before it is dropped, by default: the
/// default of `wasmtime serve` and of Spin for WASI 0.3 components. Instance
/// and teardown then cost under 1 % of what they cost per request.
pub const DEFAULT_REUSE: u32 = 128;

/// Most idle instances kept for reuse; each holds a pool slot and its
/// resident memory.
const MAX_IDLE: usize = 64;

/// What `serve` needs.
#[derive(Debug)]
pub struct ServeOptions {
    /// Address to bind; port 0 picks a free one.
    pub listen: SocketAddr,
    /// The component file.
    pub component: PathBuf,
    /// Milliseconds since the epoch that the component's wall clock always
    /// reads (tests); `None`: the real clock.
    pub fixed_time_ms: Option<u64>,
    /// Requests one instance serves before it is dropped (≥ 1).
    pub reuse: u32,
    /// What a connection may hold and for how long.
    pub limits: ConnectionLimits,
    /// Where to serve the probes and metrics (`None`: nowhere).
    pub admin_listen: Option<SocketAddr>,
}

/// Connection hygiene: what a slow, idle or abusive client may hold.
#[derive(Debug, Clone, Copy)]
pub struct ConnectionLimits {
    /// Time to send a request's whole head, counted from when the server
    /// starts waiting for it: on a new connection, and after the last byte
    /// of an answer on a kept-alive one, so it is also the idle keep-alive
    /// timeout. A slowloris client that drips header bytes is closed after
    /// it. Enforced to a tenth of itself (`connections.rs`): such a
    /// connection closes between 1 and 1.1 times this after it went quiet.
    pub header_read_timeout: Duration,
    /// Most connections open at once. Beyond it the server stops accepting:
    /// new clients wait in the kernel's backlog until a connection ends
    /// (the header timeout frees slots held by slow clients), and the
    /// process never runs out of file descriptors (which made `accept`
    /// fail for everyone). Keep it below the process's `ulimit -n`.
    pub max_connections: usize,
    /// How long a stopping server (SIGTERM, SIGINT) waits for requests in
    /// flight before it exits anyway.
    pub shutdown_timeout: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> Self {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            max_connections: 1024,
            shutdown_timeout: Duration::from_secs(10),
        }
    }
}

/// A wall clock that always reads the same instant.
#[derive(Debug, Clone, Copy)]
struct FixedClock(Duration);

impl HostWallClock for FixedClock {
    fn resolution(&self) -> Duration {
        Duration::from_millis(1)
    }
    fn now(&self) -> Duration {
        self.0
    }
}

/// What every request is served with: the pre-instantiated component, the
/// stores, the clock.
pub struct Server {
    pre: ProxyPre<Guest>,
    stores: Arc<Stores>,
    clock: Option<FixedClock>,
    /// Requests one instance may serve before it is dropped (1: a fresh
    /// instance for every request).
    reuse: u32,
    /// Instances that finished a request cleanly and may take another,
    /// most recently used last (its pages are the warmest).
    idle: std::sync::Mutex<Vec<Warm>>,
    /// Requests handed to the component, and instances made for them: said
    /// when the server stops.
    requests: AtomicU64,
    instances: AtomicU64,
}

/// What a connection's service holds: the server, and the connection's
/// progress for its deadline.
struct Conn {
    server: Arc<Server>,
    progress: Arc<Progress>,
}

/// An instance between two requests.
pub struct Warm {
    pub store: Store<Guest>,
    pub proxy: Proxy,
    /// Requests it has served.
    pub served: u32,
}

/// Compiles the component and links it against WASI, wasi:http and the
/// key-value imports.
pub fn prepare(component: &std::path::Path) -> anyhow::Result<ProxyPre<Guest>> {
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(MAX_INSTANCES)
        .total_core_instances(MAX_INSTANCES * 8)
        .total_memories(MAX_INSTANCES * 2)
        .total_tables(MAX_INSTANCES * 4)
        .max_memory_size(256 << 20)
        // Reset a finished instance's memory with memset (only the pages it
        // dirtied, where the kernel can say which) instead of madvise and
        // page faults on the next request: most of a request's cost otherwise.
        .linear_memory_keep_resident(8 << 20)
        .table_keep_resident(1 << 20)
        .pagemap_scan(Enabled::Auto)
        .decommit_batch_size(16);
    let mut config = Config::new();
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // Profiling: `perf` names the component's functions from the map file
    // (/tmp/perf-<pid>.map) wasmtime writes.
    if std::env::var_os("NOISE_FILTER_PERFMAP").is_some() {
        config.profiler(wasmtime::ProfilingStrategy::PerfMap);
    }
    // Compiled code is cached on disk (wasmtime's cache, keyed by the
    // component's bytes and the engine's settings): a restart with the same
    // component skips compilation.
    match Cache::new(CacheConfig::new()) {
        Ok(cache) => {
            config.cache(Some(cache));
        }
        Err(e) => tracing::warn!("no compilation cache ({e}); compiling every start"),
    }
    let engine = Engine::new(&config).map_err(anyhow::Error::from)?;
    let bytes = std::fs::read(component).with_context(|| {
        format!(
            "cannot read the component {} (build it with `cargo xtask component`)",
            component.display()
        )
    })?;
    let component = Component::new(&engine, &bytes)
        .map_err(anyhow::Error::from)
        .context("the component does not compile")?;
    let mut linker = Linker::new(&engine);
    guest::add_to_linker(&mut linker).map_err(anyhow::Error::from)?;
    let pre = linker
        .instantiate_pre(&component)
        .and_then(ProxyPre::new)
        .map_err(anyhow::Error::from)
        .context("the component's imports cannot all be satisfied")?;
    Ok(pre)
}

/// A compiled component and a bound socket, not yet serving.
pub struct Ready {
    pre: ProxyPre<Guest>,
    listener: TcpListener,
    fixed_time_ms: Option<u64>,
    reuse: u32,
    limits: ConnectionLimits,
    admin: Option<TcpListener>,
    /// `http://<bound address>`.
    pub base: String,
}

impl std::fmt::Debug for Ready {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ready")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

/// Compiles the component, binds, and prints where it listens as the first
/// line of stdout (`listening on http://127.0.0.1:41234`).
pub async fn start(options: &ServeOptions) -> anyhow::Result<Ready> {
    let started = std::time::Instant::now();
    let pre = prepare(&options.component)?;
    let listener = TcpListener::bind(options.listen)
        .await
        .with_context(|| format!("cannot listen on {}", options.listen))?;
    let base = format!("http://{}", listener.local_addr()?);
    let admin = match options.admin_listen {
        Some(address) => Some(
            TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address} (--admin-listen)"))?,
        ),
        None => None,
    };
    println!("listening on {base}");
    if let Some(admin) = &admin {
        println!("admin (probes, metrics) on http://{}", admin.local_addr()?);
    }
    tracing::info!(
        component = %options.component.display(),
        ready_ms = started.elapsed().as_millis() as u64,
        "component ready"
    );
    Ok(Ready {
        pre,
        listener,
        fixed_time_ms: options.fixed_time_ms,
        reuse: options.reuse,
        limits: options.limits,
        admin,
        base,
    })
}

/// Serves until SIGTERM or SIGINT, then drains: stops accepting, lets the
/// requests in flight finish (at most `shutdown_timeout`) and returns.
pub async fn serve(ready: Ready, stores: Stores) -> anyhow::Result<()> {
    let Ready {
        pre,
        listener,
        fixed_time_ms,
        reuse,
        limits,
        admin,
        ..
    } = ready;
    stores.spawn_wal_checkpoints();
    let server = Server::new(pre, stores, fixed_time_ms, reuse);
    if let Some(admin) = admin {
        tokio::spawn(crate::metrics::serve_admin(admin, server.stores.clone()));
    }
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    let connections = Connections::new(limits.header_read_timeout);
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        .context("cannot listen for SIGTERM")?;
    let signal = loop {
        // A free slot first: at the cap, the next client waits in the
        // kernel's backlog rather than costing a file descriptor.
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.context("connection slots closed")?,
            _ = tokio::signal::ctrl_c() => break "SIGINT",
            _ = terminate.recv() => break "SIGTERM",
        };
        let (socket, _) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of file descriptors and the like: wait, go on.
                    tracing::warn!("accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = tokio::signal::ctrl_c() => break "SIGINT",
            _ = terminate.recv() => break "SIGTERM",
        };
        let _ = socket.set_nodelay(true);
        // The connection's progress, for its header-read deadline
        // (`connections.rs`: one sweeper instead of a timer per request).
        let progress = Arc::new(Progress::default());
        // One `Arc` of this connection's own cloned per request, rather
        // than the server's, which every request on both workers shares.
        let conn = Arc::new(Conn {
            server: server.clone(),
            progress: progress.clone(),
        });
        let service = hyper::service::service_fn(move |request| {
            let conn = conn.clone();
            async move {
                let _in_flight = InFlight::start(&conn.progress);
                Ok::<_, std::convert::Infallible>(conn.server.handle(request).await)
            }
        });
        let connection = http1::Builder::new()
            .keep_alive(true)
            // The header-read deadline is `connections`' (no hyper timer).
            .header_read_timeout(None)
            // hyper-util's TokioIo passes vectored writes through, so
            // hyper sends head and body with one writev instead of
            // first copying the ~90 KB body into its own buffer.
            // Its own 400/414/431 answers become the core's.
            .serve_connection(
                TokioIo::new(crate::refusal::ServiceRefusals::new(Counted::new(
                    socket,
                    progress.clone(),
                ))),
                service,
            );
        let connection = connections.watch(connection, progress);
        crate::metrics::metrics().connections(1);
        tokio::spawn(async move {
            match connection.await {
                Ok(Err(e)) if !e.is_incomplete_message() => {
                    tracing::debug!("connection closed: {e}");
                }
                Err(Expired) => tracing::debug!("connection closed: header read timeout"),
                Ok(_) => {}
            }
            crate::metrics::metrics().connections(-1);
            drop(slot);
        });
    };
    // No new connections; kept-alive idle ones are closed, requests in
    // flight finish.
    drop(listener);
    let open = connections.count();
    tracing::info!(
        signal,
        open_connections = open,
        "stopping: draining requests in flight"
    );
    let drained = tokio::time::timeout(limits.shutdown_timeout, connections.drain())
        .await
        .is_ok();
    tracing::info!(
        requests = server.requests.load(Ordering::Relaxed),
        instances = server.instances.load(Ordering::Relaxed),
        drained,
        "stopped"
    );
    Ok(())
}

impl Server {
    /// A server for `pre` over `stores`; `fixed_time_ms` and `reuse` as in
    /// [`ServeOptions`].
    pub fn new(
        pre: ProxyPre<Guest>,
        stores: Stores,
        fixed_time_ms: Option<u64>,
        reuse: u32,
    ) -> Arc<Server> {
        Arc::new(Server {
            pre,
            stores: Arc::new(stores),
            clock: fixed_time_ms.map(|ms| FixedClock(Duration::from_millis(ms))),
            reuse: reuse.max(1),
            idle: std::sync::Mutex::new(Vec::new()),
            requests: AtomicU64::new(0),
            instances: AtomicU64::new(0),
        })
    }

    /// The stores requests are served from.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    async fn handle(
        self: &Arc<Self>,
        request: hyper::Request<hyper::body::Incoming>,
    ) -> hyper::Response<HyperOutgoingBody> {
        let started = std::time::Instant::now();
        let access = access_line(&request, &self.requests);
        // HTTP/1.1 needs exactly one Host (RFC 9112 §3.2), and wasi:http
        // cannot make a request without an authority: refused here, with
        // the core's 400, rather than as a failure of the component (503).
        let response = if request
            .headers()
            .get_all(hyper::header::HOST)
            .iter()
            .count()
            != 1
        {
            host_error(&noise_filter_core::Rejection::MalformedRequest)
        } else {
            match self.call_guest(request).await {
                Ok(response) => response,
                Err(e) => {
                    tracing::error!(request_id = %access.request_id, "request failed in the host: {e:#}");
                    host_error(&noise_filter_core::Rejection::HandlerFailed)
                }
            }
        };
        let (status, took) = (response.status().as_u16(), started.elapsed());
        crate::metrics::metrics().request(&access.path, status, took);
        access.log(status, took);
        response
    }

    /// The state of one new instance (one request).
    pub fn new_store(&self) -> Store<Guest> {
        let mut wasi = WasiCtx::builder();
        wasi.inherit_stderr();
        if let Some(clock) = self.clock {
            wasi.wall_clock(clock);
        }
        Store::new(
            self.pre.engine(),
            Guest::new(wasi.build(), self.stores.clone()),
        )
    }

    /// An instance for one request: the most recently used idle one, or a
    /// new one from the pool.
    pub async fn instance(&self) -> anyhow::Result<Warm> {
        let idle = self.idle.lock().map(|mut idle| idle.pop()).ok().flatten();
        if let Some(warm) = idle {
            return Ok(warm);
        }
        self.instances.fetch_add(1, Ordering::Relaxed);
        crate::metrics::metrics().instance_created();
        let mut store = self.new_store();
        let proxy = self
            .pre
            .instantiate_async(&mut store)
            .await
            .map_err(anyhow::Error::from)?;
        Ok(Warm {
            store,
            proxy,
            served: 0,
        })
    }

    /// After a request: keeps the instance for another one if its call
    /// returned, it released every resource it was given or made, and it
    /// has served fewer than `reuse` requests; otherwise drops it (its
    /// memory is reset for the pool).
    pub fn release(&self, mut warm: Warm, returned: bool) {
        warm.served += 1;
        let clean = warm.store.data_mut().end_request();
        if returned
            && clean
            && warm.served < self.reuse
            && let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
        {
            idle.push(warm);
        }
    }

    /// One request through an instance of the component.
    pub async fn call_guest<B>(
        self: &Arc<Self>,
        request: hyper::Request<B>,
    ) -> anyhow::Result<hyper::Response<HyperOutgoingBody>>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let Warm {
            mut store,
            proxy,
            served,
        } = self.instance().await.context("the component failed")?;
        let (sender, mut receiver) = tokio::sync::oneshot::channel();
        let request = store
            .data_mut()
            .http()
            .new_incoming_request(Scheme::Http, request)
            .map_err(anyhow::Error::from)?;
        let out = store
            .data_mut()
            .http()
            .new_response_outparam(sender)
            .map_err(anyhow::Error::from)?;
        let server = self.clone();
        let mut guest = Box::pin(async move {
            let outcome = proxy
                .wasi_http_incoming_handler()
                .call_handle(&mut store, request, out)
                .await;
            server.release(
                Warm {
                    store,
                    proxy,
                    served,
                },
                outcome.is_ok(),
            );
            outcome
        });
        // Run the guest in this connection's task: it usually sets the
        // response and writes the whole body in one go, so no second task
        // and no cross-thread wake-up. If it is still running once the
        // response is set (a body larger than the stream's buffer), it goes
        // on in a task of its own while hyper sends what it wrote.
        let (finished, answered) = tokio::select! {
            biased;
            finished = &mut guest => (Some(finished), None),
            answered = &mut receiver => (None, Some(answered)),
        };
        if finished.is_none() {
            tokio::spawn(async move {
                if let Err(e) = guest.await {
                    tracing::error!("the component failed after answering: {e:#}");
                }
            });
        }
        let answered = match answered {
            Some(answered) => answered,
            None => receiver.await,
        };
        match answered {
            Ok(Ok(response)) => Ok(response),
            Ok(Err(code)) => anyhow::bail!("the component answered with an error: {code:?}"),
            Err(_) => {
                let outcome = match finished {
                    Some(Ok(())) | None => anyhow::anyhow!("the component set no response"),
                    Some(Err(e)) => anyhow::Error::from(e),
                };
                Err(outcome.context("the component failed"))
            }
        }
    }
}

/// The request-id header, as a name parsed once rather than per request.
static X_REQUEST_ID: hyper::header::HeaderName =
    hyper::header::HeaderName::from_static("x-request-id");

/// Longest `X-Request-Id` taken from a client; a longer or non-printable one
/// is replaced by the host's own.
const MAX_REQUEST_ID: usize = 128;

/// What the access line of `request` says, before its answer.
fn access_line<B>(request: &hyper::Request<B>, served: &AtomicU64) -> AccessLine {
    let headers = request.headers();
    let request_id = headers
        .get(&X_REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .filter(|v| {
            !v.is_empty() && v.len() <= MAX_REQUEST_ID && v.bytes().all(|b| b.is_ascii_graphic())
        })
        .map_or_else(
            || RequestId::Host(served.load(Ordering::Relaxed)),
            |v| RequestId::Client(v.to_owned()),
        );
    // The key's hash is only for the log line: not made when access
    // lines are filtered out (`RUST_LOG`).
    let logged = tracing::enabled!(target: "access", tracing::Level::INFO);
    let key = headers
        .get(hyper::header::AUTHORIZATION)
        .filter(|_| logged)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(|token| {
            noise_filter_core::KeyHash::of(token.trim())
                .short()
                .to_owned()
        });
    AccessLine {
        method: request.method().clone(),
        path: request.uri().path().to_owned(),
        key,
        request_id,
    }
}

/// An answer made by the host itself (the component could not run), as the
/// core writes it: the host decides no status, header or text of its own.
fn host_error(rejection: &noise_filter_core::Rejection) -> hyper::Response<HyperOutgoingBody> {
    let answer = rejection.response();
    let mut response = hyper::Response::new(
        Full::new(Bytes::from(answer.body.into_owned()))
            .map_err(|never| match never {})
            .boxed_unsync(),
    );
    *response.status_mut() = hyper::StatusCode::from_u16(answer.status)
        .unwrap_or(hyper::StatusCode::SERVICE_UNAVAILABLE);
    let headers = response.headers_mut();
    for (name, value) in answer.headers {
        if let Ok(value) = hyper::header::HeaderValue::from_str(&value) {
            headers.append(name, value);
        }
    }
    response
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Warm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Warm")
            .field("served", &self.served)
            .finish_non_exhaustive()
    }
}

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
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use wasmtime::component::{Component, Linker, Resource};
use wasmtime::{
    Cache, CacheConfig, Config, Enabled, Engine, InstanceAllocationStrategy,
    PoolingAllocationConfig, Store,
};
use wasmtime_wasi::{HostWallClock, WasiCtx};
use wasmtime_wasi_http::WasiHttpView;
use wasmtime_wasi_http::p2::bindings::http::types::{ErrorCode, Scheme};
use wasmtime_wasi_http::p2::bindings::{Proxy, ProxyPre};
use wasmtime_wasi_http::p2::body::HyperOutgoingBody;
use wasmtime_wasi_http::p2::types::{HostIncomingRequest, HostResponseOutparam};

use crate::connections::{ConnectionLimits, Connections, MAX_HEAD_BUFFER};
use crate::instance::{self, InstanceState};
use crate::logs::{AccessLine, MAX_LOGGED_METHOD, MAX_LOGGED_PATH, Printable, RequestId};
use crate::ops::Health;
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
    /// What a public connection may hold and for how long.
    pub limits: ConnectionLimits,
    /// Where to serve the probes and metrics (`None`: nowhere).
    pub ops_listen: Option<SocketAddr>,
    /// The admin tokens the component's admin API takes (its variable
    /// `admin_token`), checked by the core at start; `None`: the API is off.
    pub admin_token: Option<Arc<str>>,
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
    pre: ProxyPre<InstanceState>,
    stores: Arc<Stores>,
    clock: Option<FixedClock>,
    /// The component's `admin_token` variable.
    admin_token: Option<Arc<str>>,
    /// Requests one instance may serve before it is dropped (1: a fresh
    /// instance for every request).
    reuse: u32,
    /// Instances that finished a request cleanly and may take another,
    /// most recently used last (its pages are the warmest).
    idle: std::sync::Mutex<Vec<Instance>>,
    /// Requests handed to the component, and instances made for them: said
    /// when the server stops.
    requests: AtomicU64,
    instances: AtomicU64,
}

/// What a connection's service holds: one `Arc` of the connection's own,
/// cloned per request, rather than the server's, which every request on
/// every worker would share.
struct Conn {
    server: Arc<Server>,
}

/// An instance of the component, between requests or serving one.
pub struct Instance {
    store: Store<InstanceState>,
    proxy: Proxy,
    /// Requests it has served.
    served: u32,
}

/// A request handed to an instance, its handler not yet run.
pub struct Call {
    instance: Instance,
    request: Resource<HostIncomingRequest>,
    out: Resource<HostResponseOutparam>,
}

/// Where the component's answer to a [`Call`] arrives.
pub type Answer = oneshot::Receiver<Result<hyper::Response<HyperOutgoingBody>, ErrorCode>>;

/// Compiles the component and links it against WASI, wasi:http and the
/// key-value imports.
pub fn prepare(component: &std::path::Path) -> anyhow::Result<ProxyPre<InstanceState>> {
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
    instance::add_to_linker(&mut linker).map_err(anyhow::Error::from)?;
    let pre = linker
        .instantiate_pre(&component)
        .and_then(ProxyPre::new)
        .map_err(anyhow::Error::from)
        .context("the component's imports cannot all be satisfied")?;
    Ok(pre)
}

/// A compiled component and bound sockets, not yet serving.
pub struct Ready {
    pre: ProxyPre<InstanceState>,
    listener: TcpListener,
    fixed_time_ms: Option<u64>,
    admin_token: Option<Arc<str>>,
    reuse: u32,
    limits: ConnectionLimits,
    ops: Option<TcpListener>,
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
    let ops = match options.ops_listen {
        Some(address) => Some(
            TcpListener::bind(address)
                .await
                .with_context(|| format!("cannot listen on {address} (--ops-listen)"))?,
        ),
        None => None,
    };
    println!("listening on {base}");
    if let Some(ops) = &ops {
        println!(
            "operations (probes, metrics) on http://{}",
            ops.local_addr()?
        );
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
        admin_token: options.admin_token.clone(),
        reuse: options.reuse,
        limits: options.limits,
        ops,
        base,
    })
}

/// SIGTERM or SIGINT, whichever comes first; says which.
fn stop_signal() -> anyhow::Result<impl Future<Output = &'static str>> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).context("cannot listen for SIGTERM")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("cannot listen for SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = terminate.recv() => "SIGTERM",
            _ = interrupt.recv() => "SIGINT",
        }
    })
}

/// Serves until SIGTERM or SIGINT, then drains: readiness turns to 503,
/// no new connection is accepted, requests in flight finish (each within
/// the limits' grace) and it returns.
pub async fn serve(ready: Ready, stores: Stores) -> anyhow::Result<()> {
    let Ready {
        pre,
        listener,
        fixed_time_ms,
        admin_token,
        reuse,
        limits,
        ops,
        ..
    } = ready;
    stores.spawn_wal_checkpoints();
    let server = Server::new(pre, stores, fixed_time_ms, reuse, admin_token);
    let health = Arc::new(Health::new(server.stores.clone()));
    if let Some(ops) = ops {
        tokio::spawn(crate::ops::serve(ops, health.clone()));
    }
    let stop = stop_signal()?;
    let connections = Connections::new(limits, true);
    let signal = connections
        .accept(&listener, stop, |socket| {
            let conn = Arc::new(Conn {
                server: server.clone(),
            });
            let service = hyper::service::service_fn(move |request| {
                let conn = conn.clone();
                async move { Ok::<_, std::convert::Infallible>(conn.server.handle(request).await) }
            });
            http1::Builder::new()
                .timer(TokioTimer::new())
                .keep_alive(true)
                .header_read_timeout(limits.header_read_timeout)
                .max_buf_size(MAX_HEAD_BUFFER)
                // hyper-util's TokioIo passes vectored writes through, so
                // hyper sends head and body with one writev instead of
                // first copying the ~200 KB body into its own buffer.
                // Its own 400/414/431 answers become the core's.
                .serve_connection(
                    TokioIo::new(crate::refusal::ServiceRefusals::new(socket)),
                    service,
                )
        })
        .await;
    // Not ready from now on; no new connections; kept-alive idle ones are
    // closed, requests in flight finish.
    health.start_draining();
    drop(listener);
    tracing::info!(
        signal,
        open_connections = connections.open(),
        "stopping: draining requests in flight"
    );
    let drained = connections.drain(limits.grace).await;
    tracing::info!(
        requests = server.requests.load(Ordering::Relaxed),
        instances = server.instances.load(Ordering::Relaxed),
        drained,
        "stopped"
    );
    Ok(())
}

/// Why a request cannot be handed to the component, if it cannot: wasi:http
/// carries a request's authority as text, so a request needs exactly one
/// `Host` (RFC 9112 §3.2) of visible ASCII. Refused here with the core's
/// 400, as the core would refuse a malformed request, rather than as a
/// failure of the component (a 503 and an error line anyone could cause).
fn unfit_for_the_component<B>(request: &hyper::Request<B>) -> Option<noise_filter_core::Rejection> {
    let mut hosts = request.headers().get_all(hyper::header::HOST).iter();
    match (hosts.next(), hosts.next()) {
        (Some(host), None) if host.to_str().is_ok() => None,
        _ => Some(noise_filter_core::Rejection::MalformedRequest),
    }
}

impl Server {
    /// A server for `pre` over `stores`; `fixed_time_ms`, `reuse` and
    /// `admin_token` as in [`ServeOptions`].
    pub fn new(
        pre: ProxyPre<InstanceState>,
        stores: Stores,
        fixed_time_ms: Option<u64>,
        reuse: u32,
        admin_token: Option<Arc<str>>,
    ) -> Arc<Server> {
        Arc::new(Server {
            pre,
            stores: Arc::new(stores),
            clock: fixed_time_ms.map(|ms| FixedClock(Duration::from_millis(ms))),
            admin_token,
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
        let response = match unfit_for_the_component(&request) {
            Some(rejection) => host_error(&rejection),
            None => match self.call_component(request).await {
                Ok(response) => response,
                Err(e) => {
                    tracing::error!(request_id = %access.request_id, "request failed in the host: {e:#}");
                    host_error(&noise_filter_core::Rejection::HandlerFailed)
                }
            },
        };
        let (status, took) = (response.status().as_u16(), started.elapsed());
        crate::metrics::metrics().request(access.path.as_str(), status, took);
        access.log(status, took);
        response
    }

    /// The state of one new instance (one request).
    fn new_store(&self) -> Store<InstanceState> {
        let mut wasi = WasiCtx::builder();
        // What the component writes goes through the host's log, a line an
        // event (logs.rs), not around it.
        wasi.stderr(crate::logs::ComponentStderr);
        if let Some(clock) = self.clock {
            wasi.wall_clock(clock);
        }
        Store::new(
            self.pre.engine(),
            InstanceState::new(wasi.build(), self.stores.clone(), self.admin_token.clone()),
        )
    }

    /// An instance for one request: the most recently used idle one, or a
    /// new one from the pool.
    pub async fn instance(&self) -> anyhow::Result<Instance> {
        let idle = self.idle.lock().map(|mut idle| idle.pop()).ok().flatten();
        if let Some(instance) = idle {
            return Ok(instance);
        }
        self.instances.fetch_add(1, Ordering::Relaxed);
        crate::metrics::metrics().instance_created();
        let mut store = self.new_store();
        let proxy = self
            .pre
            .instantiate_async(&mut store)
            .await
            .map_err(anyhow::Error::from)?;
        Ok(Instance {
            store,
            proxy,
            served: 0,
        })
    }

    /// After a request: keeps the instance for another one if its call
    /// returned, it released every resource it was given or made, and it
    /// has served fewer than `reuse` requests; otherwise drops it (its
    /// memory is reset for the pool).
    pub fn release(&self, mut instance: Instance, returned: bool) {
        instance.served += 1;
        let clean = instance.store.data_mut().end_request();
        if returned
            && clean
            && instance.served < self.reuse
            && let Ok(mut idle) = self.idle.lock()
            && idle.len() < MAX_IDLE
        {
            idle.push(instance);
        }
    }

    /// One request through an instance of the component.
    pub async fn call_component<B>(
        self: &Arc<Self>,
        request: hyper::Request<B>,
    ) -> anyhow::Result<hyper::Response<HyperOutgoingBody>>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let instance = self.instance().await.context("the component failed")?;
        let (call, mut answer) = instance.begin(request)?;
        let server = self.clone();
        let mut guest = Box::pin(async move {
            let (instance, outcome) = call.handle().await;
            server.release(instance, outcome.is_ok());
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
            answered = &mut answer => (None, Some(answered)),
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
            None => answer.await,
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

impl Instance {
    /// Hands `request` to this instance: the call to run, and where its
    /// answer arrives.
    pub fn begin<B>(mut self, request: hyper::Request<B>) -> anyhow::Result<(Call, Answer)>
    where
        B: hyper::body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<wasmtime_wasi_http::Error>,
    {
        let (sender, answer) = oneshot::channel();
        let (request, out) = {
            let mut http = self.store.data_mut().http();
            let request = http
                .new_incoming_request(Scheme::Http, request)
                .map_err(anyhow::Error::from)?;
            let out = http
                .new_response_outparam(sender)
                .map_err(anyhow::Error::from)?;
            (request, out)
        };
        Ok((
            Call {
                instance: self,
                request,
                out,
            },
            answer,
        ))
    }
}

impl Call {
    /// Runs the component's handler; gives the instance back, with whether
    /// the handler returned (for [`Server::release`]).
    pub async fn handle(self) -> (Instance, wasmtime::Result<()>) {
        let Call {
            mut instance,
            request,
            out,
        } = self;
        let outcome = instance
            .proxy
            .wasi_http_incoming_handler()
            .call_handle(&mut instance.store, request, out)
            .await;
        (instance, outcome)
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
        .map(hyper::header::HeaderValue::as_bytes)
        .filter(|v| {
            !v.is_empty() && v.len() <= MAX_REQUEST_ID && v.iter().all(u8::is_ascii_graphic)
        })
        .map_or_else(
            || RequestId::Host(served.load(Ordering::Relaxed)),
            |v| RequestId::Client(Printable::new(v, MAX_REQUEST_ID)),
        );
    // The key's hash is only for the log line: not made when access
    // lines are filtered out (`RUST_LOG`). The core reads the header, as
    // it does to authenticate: any spelling of the scheme it accepts.
    let key = if tracing::enabled!(target: "access", tracing::Level::INFO) {
        let values: Vec<&[u8]> = headers
            .get_all(hyper::header::AUTHORIZATION)
            .iter()
            .map(hyper::header::HeaderValue::as_bytes)
            .collect();
        noise_filter_core::KeyHash::presented(&values).map(|hash| hash.short().to_owned())
    } else {
        None
    };
    AccessLine {
        method: Printable::new(request.method().as_str().as_bytes(), MAX_LOGGED_METHOD),
        // A key where a path has none (`/admin/v1/keys/<key>/revoke`)
        // is logged as `nf_***`.
        path: Printable::new(
            noise_filter_core::redact_keys(request.uri().path()).as_bytes(),
            MAX_LOGGED_PATH,
        ),
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

impl std::fmt::Debug for Instance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Instance")
            .field("served", &self.served)
            .finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call").finish_non_exhaustive()
    }
}

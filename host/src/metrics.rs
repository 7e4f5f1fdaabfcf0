//! What an operator's monitoring reads: Prometheus metrics, and the admin
//! listener (`--admin-listen`) that serves them with the liveness and
//! readiness probes, on an address of its own so the public port never
//! exposes them.
//!
//! | path | answer |
//! |---|---|
//! | `/livez` | `200 ok` while the process serves |
//! | `/readyz` | `200 ready` when every store answers within its deadline, else `503` with the reason |
//! | `/metrics` | the metrics below, Prometheus text format |
//!
//! Metrics (one process-wide set, as a Prometheus client's default registry):
//! `noise_filter_requests_total{route,status}`,
//! `noise_filter_request_duration_seconds{route}` (histogram),
//! `noise_filter_store_calls_total{operation,outcome}`,
//! `noise_filter_store_call_duration_seconds{operation}` (histogram),
//! `noise_filter_instances_created_total`, `noise_filter_open_connections`.
//! `route` is one of the two published paths or `other`, so a scan of random
//! paths cannot grow the label set.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;
use tokio::net::TcpListener;

use crate::store::Stores;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    route: &'static str,
    // A number, not a String: no allocation per request to look it up.
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RouteLabels {
    route: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StoreCallLabels {
    operation: &'static str,
    outcome: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct OperationLabels {
    operation: &'static str,
}

type Histograms<L> = Family<L, Histogram, fn() -> Histogram>;

/// The process's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    request_duration: Histograms<RouteLabels>,
    store_calls: Family<StoreCallLabels, Counter>,
    store_call_duration: Histograms<OperationLabels>,
    instances_created: Counter,
    open_connections: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// 100 µs to ~3.3 s, doubling: a request served from memory takes well
/// under a millisecond, one waiting on a store deadline up to seconds.
fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_1, 2.0, 16))
}

/// The process-wide metrics, registered on first use.
pub fn metrics() -> &'static Metrics {
    static METRICS: OnceLock<Metrics> = OnceLock::new();
    METRICS.get_or_init(|| {
        let mut registry = Registry::with_prefix("noise_filter");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register(
            "requests",
            "Requests answered, by route and status",
            requests.clone(),
        );
        let request_duration: Histograms<RouteLabels> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "request_duration_seconds",
            "Time from a request's head to its answer",
            request_duration.clone(),
        );
        let store_calls = Family::<StoreCallLabels, Counter>::default();
        registry.register(
            "store_calls",
            "Key-value store calls of requests, by operation and outcome (ok, error)",
            store_calls.clone(),
        );
        let store_call_duration: Histograms<OperationLabels> =
            Family::new_with_constructor(latency_histogram);
        registry.register(
            "store_call_duration_seconds",
            "Time of one key-value store call",
            store_call_duration.clone(),
        );
        let instances_created = Counter::default();
        registry.register(
            "instances_created",
            "Component instances made (each serves up to the reuse count)",
            instances_created.clone(),
        );
        let open_connections = Gauge::default();
        registry.register(
            "open_connections",
            "HTTP connections open now",
            open_connections.clone(),
        );
        Metrics {
            registry,
            requests,
            request_duration,
            store_calls,
            store_call_duration,
            instances_created,
            open_connections,
        }
    })
}

impl Metrics {
    /// One request answered.
    pub fn request(&self, path: &str, status: u16, took: Duration) {
        let route = match path {
            "/v1/filters" => "/v1/filters",
            "/api/v1/filters" => "/api/v1/filters",
            _ => "other",
        };
        self.count(route, status);
        self.request_duration
            .get_or_create(&RouteLabels { route })
            .observe(took.as_secs_f64());
    }

    /// A request the HTTP layer refused before routing (400, 414, 431):
    /// counted as a request of route `other`.
    pub fn refused_by_http_layer(&self, status: u16) {
        self.count("other", status);
    }

    fn count(&self, route: &'static str, status: u16) {
        self.requests
            .get_or_create(&RequestLabels { route, status })
            .inc();
    }

    /// One store call of a request.
    pub fn store_call(&self, operation: &'static str, took: Duration, ok: bool) {
        let outcome = if ok { "ok" } else { "error" };
        self.store_calls
            .get_or_create(&StoreCallLabels { operation, outcome })
            .inc();
        self.store_call_duration
            .get_or_create(&OperationLabels { operation })
            .observe(took.as_secs_f64());
    }

    /// A component instance made.
    pub fn instance_created(&self) {
        self.instances_created.inc();
    }

    /// A connection opened (`+1`) or closed (`-1`).
    pub fn connections(&self, change: i64) {
        self.open_connections.inc_by(change);
    }

    /// The text exposition.
    fn render(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

/// Serves `/livez`, `/readyz` and `/metrics` on `listener` until the
/// process ends.
pub async fn serve_admin(listener: TcpListener, stores: Arc<Stores>) {
    loop {
        let Ok((socket, _)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let stores = stores.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let stores = stores.clone();
                async move {
                    let (status, content_type, body) =
                        admin_answer(request.uri().path(), &stores).await;
                    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
                    *response.status_mut() = status;
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static(content_type),
                    );
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
            let _ = http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(Duration::from_secs(10))
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}

async fn admin_answer(path: &str, stores: &Stores) -> (hyper::StatusCode, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    match path {
        "/livez" => (hyper::StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" => match stores.ping().await {
            Ok(()) => (hyper::StatusCode::OK, TEXT, "ready\n".into()),
            Err(e) => (
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                format!("not ready: {e}\n"),
            ),
        },
        "/metrics" => (
            hyper::StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            metrics().render(),
        ),
        _ => (hyper::StatusCode::NOT_FOUND, TEXT, "not found\n".into()),
    }
}

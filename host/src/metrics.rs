//! What an operator's monitoring reads: Prometheus metrics (served by the
//! operations listener, `ops.rs`).
//!
//! Metrics (one process-wide set, as a Prometheus client's default registry):
//! `noise_filter_requests_total{route,status}`,
//! `noise_filter_request_duration_seconds{route}` (histogram),
//! `noise_filter_store_calls_total{operation,outcome}`,
//! `noise_filter_store_call_duration_seconds{operation}` (histogram),
//! `noise_filter_instances_created_total`, `noise_filter_open_connections`.
//! `route` is one of the two published paths or `other`, and `status` one
//! the core or the HTTP layer answers, so no client can grow the label set.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use prometheus_client::encoding::{EncodeLabelSet, EncodeMetric, MetricEncoder, NoLabelSet};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::{MetricType, TypedMetric};
use prometheus_client::registry::Registry;

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

type Histograms<L> = Family<L, LatencyHistogram, fn() -> LatencyHistogram>;

/// A store call's operation, as the metrics name it.
#[derive(Clone, Copy, Debug)]
pub enum StoreOperation {
    Get,
    Set,
    Delete,
    Increment,
    /// A compare-and-swap (the admin API's changes).
    Swap,
}

impl StoreOperation {
    const ALL: [StoreOperation; 5] = [
        StoreOperation::Get,
        StoreOperation::Set,
        StoreOperation::Delete,
        StoreOperation::Increment,
        StoreOperation::Swap,
    ];

    fn label(self) -> &'static str {
        match self {
            StoreOperation::Get => "get",
            StoreOperation::Set => "set",
            StoreOperation::Delete => "delete",
            StoreOperation::Increment => "increment",
            StoreOperation::Swap => "swap",
        }
    }
}

/// One operation's series, looked up once: a request makes several store
/// calls, and a label lookup per call was measurable under load.
#[derive(Clone)]
struct StoreSeries {
    ok: Counter,
    error: Counter,
    duration: LatencyHistogram,
}

/// The process's metrics.
pub struct Metrics {
    registry: Registry,
    requests: Family<RequestLabels, Counter>,
    /// `requests` of the happy path (200 and 304 by route), looked up once.
    answered: [[Counter; 2]; 3],
    /// By route: the two published paths, then `other`.
    request_duration: [LatencyHistogram; 3],
    /// By [`StoreOperation`].
    store: [StoreSeries; StoreOperation::ALL.len()],
    instances_created: Counter,
    open_connections: Gauge,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

/// The routes `route` labels name: a scan of random paths is `other`.
const ROUTES: [&str; 3] = ["/v1/filters", "/api/v1/filters", "other"];

/// The statuses of most requests, whose counters are looked up once.
const HAPPY_STATUSES: [u16; 2] = [200, 304];

fn route_index(path: &str) -> usize {
    ROUTES[..2].iter().position(|r| *r == path).unwrap_or(2)
}

/// Upper bounds: 100 µs to ~3.3 s, doubling. A request served from memory
/// takes well under a millisecond, one waiting on a store deadline up to
/// seconds.
const LATENCY_BOUNDS_US: [u64; 16] = {
    let mut bounds = [0; 16];
    let mut i = 0;
    while i < 16 {
        bounds[i] = 100 << i;
        i += 1;
    }
    bounds
};

/// A latency histogram counted with atomics.
///
/// prometheus-client's `Histogram` takes a mutex on every observation;
/// with every request observing its own latency and each of its store
/// calls', the workers queued on those mutexes under load (about a sixth of
/// a request's CPU time in `host/benches/load.sh`). Here an observation is
/// two relaxed atomic additions; the exposition is the same classic
/// histogram (cumulative `le` buckets, `_sum`, `_count`).
#[derive(Clone, Debug, Default)]
pub struct LatencyHistogram {
    inner: Arc<HistogramCounts>,
}

#[derive(Debug, Default)]
struct HistogramCounts {
    /// Per bucket of [`LATENCY_BOUNDS_US`], then +Inf; not cumulative.
    buckets: [AtomicU64; 17],
    sum_ns: AtomicU64,
}

impl LatencyHistogram {
    pub fn observe(&self, took: Duration) {
        let us = took.as_micros();
        let bucket = LATENCY_BOUNDS_US
            .iter()
            .position(|&bound| us <= u128::from(bound))
            .unwrap_or(LATENCY_BOUNDS_US.len());
        self.inner.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        let ns = u64::try_from(took.as_nanos()).unwrap_or(u64::MAX);
        self.inner.sum_ns.fetch_add(ns, Ordering::Relaxed);
    }
}

impl TypedMetric for LatencyHistogram {
    const TYPE: MetricType = MetricType::Histogram;
}

impl EncodeMetric for LatencyHistogram {
    fn encode(&self, mut encoder: MetricEncoder) -> Result<(), std::fmt::Error> {
        let counts = self
            .inner
            .buckets
            .iter()
            .map(|count| count.load(Ordering::Relaxed));
        // The encoder writes the infinite bound as +Inf.
        let bounds = LATENCY_BOUNDS_US
            .iter()
            .map(|&us| us as f64 / 1e6)
            .chain([f64::INFINITY]);
        let buckets: Vec<(f64, u64)> = bounds.zip(counts).collect();
        let count = buckets.iter().map(|(_, n)| n).sum();
        let sum = self.inner.sum_ns.load(Ordering::Relaxed) as f64 / 1e9;
        encoder.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)
    }

    fn metric_type(&self) -> MetricType {
        Self::TYPE
    }
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
            Family::new_with_constructor(LatencyHistogram::default);
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
            Family::new_with_constructor(LatencyHistogram::default);
        registry.register(
            "store_call_duration_seconds",
            "Time of one key-value store call",
            store_call_duration.clone(),
        );
        let request_duration = ROUTES.map(|route| {
            request_duration
                .get_or_create(&RouteLabels { route })
                .clone()
        });
        let answered = ROUTES.map(|route| {
            HAPPY_STATUSES.map(|status| {
                requests
                    .get_or_create(&RequestLabels { route, status })
                    .clone()
            })
        });
        let store = StoreOperation::ALL.map(|op| {
            let operation = op.label();
            let calls = |outcome| {
                store_calls
                    .get_or_create(&StoreCallLabels { operation, outcome })
                    .clone()
            };
            StoreSeries {
                ok: calls("ok"),
                error: calls("error"),
                duration: store_call_duration
                    .get_or_create(&OperationLabels { operation })
                    .clone(),
            }
        });
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
            answered,
            request_duration,
            store,
            instances_created,
            open_connections,
        }
    })
}

impl Metrics {
    /// One request answered.
    pub fn request(&self, path: &str, status: u16, took: Duration) {
        let route = route_index(path);
        match HAPPY_STATUSES.iter().position(|&s| s == status) {
            Some(i) => {
                self.answered[route][i].inc();
            }
            None => self.count(ROUTES[route], status),
        }
        self.request_duration[route].observe(took);
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
    pub fn store_call(&self, operation: StoreOperation, took: Duration, ok: bool) {
        let series = &self.store[operation as usize];
        if ok { &series.ok } else { &series.error }.inc();
        series.duration.observe(took);
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
    pub fn render(&self) -> String {
        let mut text = String::new();
        // Writing to a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut text, &self.registry);
        text
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    #[test]
    fn latency_histogram_exposes_cumulative_buckets_sum_and_count() {
        let histogram = LatencyHistogram::default();
        for us in [50, 100, 101, 250, 10_000_000] {
            histogram.observe(Duration::from_micros(us));
        }
        let mut registry = Registry::default();
        registry.register("latency_seconds", "test", histogram.clone());
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).unwrap();
        for line in [
            "# TYPE latency_seconds histogram",
            "latency_seconds_sum 10.000501",
            "latency_seconds_count 5",
            "latency_seconds_bucket{le=\"0.0001\"} 2",
            "latency_seconds_bucket{le=\"0.0002\"} 3",
            "latency_seconds_bucket{le=\"0.0004\"} 4",
            "latency_seconds_bucket{le=\"3.2768\"} 4",
            "latency_seconds_bucket{le=\"+Inf\"} 5",
        ] {
            assert!(text.contains(line), "{line} missing from:\n{text}");
        }
    }
}

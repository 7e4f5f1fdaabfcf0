//! The operations listener (`--ops-listen`): liveness, readiness and the
//! Prometheus metrics, on an address of its own so the public port never
//! exposes them. Its connections are held to
//! [`ConnectionLimits::OPERATIONS`] (a few probes and scrapers): a client
//! of this port can never take the file descriptors the public one needs.
//!
//! | path | answer |
//! |---|---|
//! | `/livez` | `200 ok` while the process serves |
//! | `/readyz` | `200 ready` when every store answers within its deadline; `503` with the reason when one does not, and from the moment a drain starts (SIGTERM), so a load balancer stops sending before the public port closes |
//! | `/metrics` | `metrics.rs`'s metrics, Prometheus text format |
//! | other | `404` |

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

use crate::connections::{ConnectionLimits, Connections};
use crate::store::Stores;

/// What readiness depends on: the stores, and whether the server drains.
#[derive(Debug)]
pub struct Health {
    stores: Arc<Stores>,
    draining: AtomicBool,
}

impl Health {
    /// Ready while `stores` answer and no drain has started.
    pub fn new(stores: Arc<Stores>) -> Health {
        Health {
            stores,
            draining: AtomicBool::new(false),
        }
    }

    /// The server stops taking requests: not ready from now on.
    pub fn start_draining(&self) {
        self.draining.store(true, Ordering::Release);
    }

    /// `Ok` when ready; else why not.
    pub async fn ready(&self) -> Result<(), String> {
        if self.draining.load(Ordering::Acquire) {
            return Err("draining: the server is stopping".into());
        }
        self.stores.ping().await.map_err(|e| e.to_string())
    }
}

/// Serves the operations routes on `listener` until the process ends.
pub async fn serve(listener: TcpListener, health: Arc<Health>) {
    let connections = Connections::new(ConnectionLimits::OPERATIONS, false);
    let limits = *connections.limits();
    connections
        .accept(&listener, std::future::pending::<()>(), |socket| {
            let health = health.clone();
            let service = hyper::service::service_fn(move |request: hyper::Request<_>| {
                let health = health.clone();
                async move {
                    let (status, content_type, body) = answer(request.uri().path(), &health).await;
                    let mut response = hyper::Response::new(Full::new(Bytes::from(body)));
                    *response.status_mut() = status;
                    response.headers_mut().insert(
                        hyper::header::CONTENT_TYPE,
                        hyper::header::HeaderValue::from_static(content_type),
                    );
                    Ok::<_, std::convert::Infallible>(response)
                }
            });
            http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(limits.header_read_timeout)
                .max_buf_size(crate::connections::MAX_HEAD_BUFFER)
                .serve_connection(TokioIo::new(socket), service)
        })
        .await;
}

async fn answer(path: &str, health: &Health) -> (hyper::StatusCode, &'static str, String) {
    const TEXT: &str = "text/plain; charset=utf-8";
    match path {
        "/livez" => (hyper::StatusCode::OK, TEXT, "ok\n".into()),
        "/readyz" => match health.ready().await {
            Ok(()) => (hyper::StatusCode::OK, TEXT, "ready\n".into()),
            Err(why) => (
                hyper::StatusCode::SERVICE_UNAVAILABLE,
                TEXT,
                format!("not ready: {why}\n"),
            ),
        },
        "/metrics" => (
            hyper::StatusCode::OK,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
            crate::metrics::metrics().render(),
        ),
        _ => (hyper::StatusCode::NOT_FOUND, TEXT, "not found\n".into()),
    }
}

//! `bench floor`: the load benchmark's floor. Bare hyper on the same
//! runtime settings as `serve`, answering every request with the bytes the
//! core renders for `GET /v1/filters` (status, headers, body), precomputed
//! once, encoded as the core encodes it for `--accept-encoding`. Whatever `serve` costs above this is wasmtime, the component and the
//! store.

use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use noise_filter_core::{ApiKey, MemoryStore, Request, UnixMillis};
use tokio::net::TcpListener;

/// Options of `bench floor`.
#[derive(Debug, clap::Args)]
pub(crate) struct FloorArgs {
    /// Address to listen on (port 0: any free port, printed first).
    #[arg(long, default_value = "127.0.0.1:8081")]
    listen: SocketAddr,
    /// Request target whose answer is precomputed.
    #[arg(long, default_value = "/v1/filters")]
    target: String,
    /// The request's `Accept-Encoding`, if any: the floor then serves the
    /// encoded answer the core gives for it (the same bytes the host sends
    /// a client that asks so).
    #[arg(long)]
    accept_encoding: Option<String>,
}

/// The core's answer to an authorized `GET target` (with `accept_encoding`
/// when given), as a ready response.
fn precompute(target: &str, accept_encoding: Option<&str>) -> hyper::Response<Full<Bytes>> {
    let now = UnixMillis(noise_filter_host::admin::now().0);
    let key = ApiKey::from_random([1; 24]);
    let mut kv = MemoryStore::new().with_key(&key, "bench");
    let auth = format!("Bearer {}", key.expose());
    let mut headers = vec![("authorization", auth.as_bytes())];
    if let Some(accept) = accept_encoding {
        headers.push(("accept-encoding", accept.as_bytes()));
    }
    let response = noise_filter_core::run(
        &Request {
            method: "GET",
            target,
            headers: &headers,
        },
        now,
        &mut kv,
    );
    let mut out = hyper::Response::new(Full::new(Bytes::from(response.body.into_owned())));
    *out.status_mut() =
        hyper::StatusCode::from_u16(response.status).unwrap_or(hyper::StatusCode::OK);
    for (name, value) in response.headers {
        if let Ok(value) = hyper::header::HeaderValue::from_str(&value) {
            out.headers_mut().append(name, value);
        }
    }
    out
}

/// Serves the precomputed answer until interrupted.
pub(crate) async fn run(args: FloorArgs) -> anyhow::Result<()> {
    let template = Arc::new(precompute(&args.target, args.accept_encoding.as_deref()));
    let listener = TcpListener::bind(args.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    loop {
        let (socket, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        let _ = socket.set_nodelay(true);
        let template = template.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |_request| {
                let mut response = hyper::Response::new(template.body().clone());
                *response.status_mut() = template.status();
                *response.headers_mut() = template.headers().clone();
                async move { Ok::<_, std::convert::Infallible>(response) }
            });
            let _ = http1::Builder::new()
                .keep_alive(true)
                // hyper-util's TokioIo passes vectored writes through, so
                // hyper sends head and body with one writev instead of
                // first copying the ~90 KB body into its own buffer.
                .serve_connection(TokioIo::new(socket), service)
                .await;
        });
    }
}

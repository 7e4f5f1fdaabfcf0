//! `bench call`: the per-request cost of the component alone.
//!
//! Sends the same authorized `GET` through the exact path `serve` uses
//! (an instance taken, the component's `handle`, the response body
//! collected, the instance released) in a loop, with no socket, and
//! in the same process the core's native `run` for the same request as
//! the baseline. The load benchmark (`host/benches/load.sh`) says how the
//! server does; this says where a request's time goes, and is what `perf
//! record` is pointed at.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Empty};
use noise_filter_core::{MemoryStore, RecordKey, Request};

use noise_filter_host::serve::Server;
use noise_filter_host::store::{StoreSpec, Stores};

/// Options of `bench call`.
#[derive(Debug, clap::Args)]
pub(crate) struct ProbeArgs {
    /// The component file.
    #[arg(long, value_name = "FILE")]
    pub(crate) component: Option<PathBuf>,
    /// Store of the `default` label (keys): `sqlite` (in `--state-dir`),
    /// `memory` or `redis://…`, as `serve --store`.
    #[arg(long, default_value = "sqlite", value_name = "STORE")]
    pub(crate) store: StoreSpec,
    /// Store of the `rate` label, as `serve --rate-store`.
    #[arg(long, default_value = "memory", value_name = "STORE")]
    pub(crate) rate_store: StoreSpec,
    /// Where the SQLite store file is made. Default: a fresh folder in the
    /// system's temporary directory (the probe writes keys of its own).
    #[arg(long, value_name = "DIR")]
    pub(crate) state_dir: Option<PathBuf>,
    /// Request target.
    #[arg(long, default_value = "/v1/filters")]
    target: String,
    /// The request's `Accept-Encoding`, if any (as `bench floor`'s): both
    /// sides then answer in the coding the core picks for it.
    #[arg(long)]
    accept_encoding: Option<String>,
    /// Requests per measured round.
    #[arg(long, default_value_t = 20_000)]
    requests: u32,
    /// Measured rounds (alternating component and native core).
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Requests one instance serves before it is dropped, as `serve`'s
    /// option (1: a fresh instance each).
    #[arg(long, value_name = "N", default_value_t = noise_filter_host::serve::DEFAULT_REUSE,
          value_parser = clap::value_parser!(u32).range(1..))]
    max_instance_reuse_count: u32,
}

/// Runs the probe and prints one line per round and the median ratio.
pub(crate) async fn run(args: ProbeArgs, component: PathBuf, stores: Stores) -> anyhow::Result<()> {
    let server = Server::new(
        noise_filter_host::serve::prepare(&component)?,
        stores,
        None,
        args.max_instance_reuse_count,
        None,
    );
    let mut ratios = Vec::new();
    for round in 1..=args.rounds {
        // Fresh keys for each round, 500 requests each: every answer is the
        // full 200, never a 429.
        let (auths, mut map) = fresh_keys(&server, args.requests.div_ceil(500)).await?;
        let mut phases = Phases::default();
        let started = Instant::now();
        let mut bytes = 0usize;
        for i in 0..args.requests {
            let auth = &auths[i as usize % auths.len()];
            let mut request = hyper::Request::get(format!("http://localhost{}", args.target))
                .header("authorization", auth);
            if let Some(accept) = &args.accept_encoding {
                request = request.header("accept-encoding", accept);
            }
            let request = request.body(Empty::<Bytes>::new())?;
            bytes += phases.request(&server, request).await?;
        }
        let component = started.elapsed();

        let started = Instant::now();
        let mut native_bytes = 0usize;
        for i in 0..args.requests {
            let auth = &auths[i as usize % auths.len()];
            // On the stack: the baseline's loop allocates nothing of its own.
            let accept = args.accept_encoding.as_deref().unwrap_or_default();
            let both = [
                ("authorization", auth.as_bytes()),
                ("accept-encoding", accept.as_bytes()),
            ];
            let headers = if args.accept_encoding.is_some() {
                &both[..]
            } else {
                &both[..1]
            };
            let response = noise_filter_core::run(
                &Request {
                    method: "GET",
                    target: &args.target,
                    headers,
                },
                noise_filter_host::admin::now(),
                &mut map,
            );
            native_bytes += response.body.len();
        }
        let native = started.elapsed();
        anyhow::ensure!(
            bytes == native_bytes,
            "component and core bodies differ in size"
        );
        let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(args.requests);
        let ratio = per(component) / per(native);
        println!("  {}", phases.report(args.requests));
        println!(
            "round {round}: component {:.1} µs/request, native core {:.1} µs/request ({ratio:.1}×), {} bytes each",
            per(component),
            per(native),
            bytes / args.requests as usize
        );
        ratios.push(ratio);
    }
    ratios.sort_by(f64::total_cmp);
    println!(
        "median: component / native core = {:.1}×",
        ratios[ratios.len() / 2]
    );
    Ok(())
}

/// Creates `count` keys in the server's store; returns their
/// `Authorization` values and a map holding the same key records for the
/// native baseline.
async fn fresh_keys(server: &Server, count: u32) -> anyhow::Result<(Vec<String>, MemoryStore)> {
    let mut auths = Vec::new();
    let mut map = MemoryStore::new();
    for _ in 0..count.max(1) {
        let store = noise_filter_host::admin::Admin::Local {
            store: &server.stores().default,
            name: String::new(),
        };
        let key = store.create_key("probe", "probe").await?;
        let hash = noise_filter_core::KeyHash::from_hex(&key.hash).context("a key's hash")?;
        let record_key = RecordKey::api_key(&hash);
        let record = server
            .stores()
            .default
            .get(record_key.label(), record_key.key())
            .await?
            .context("key record just written")?;
        map.set(&record_key, record);
        auths.push(format!("Bearer {}", key.key));
    }
    Ok((auths, map))
}

/// Time spent in each phase of a request, summed over a round.
#[derive(Debug, Default)]
struct Phases {
    /// An instance taken: an idle one, or a new one instantiated from the
    /// pre-instantiated component (store and WASI context made).
    instantiate: Duration,
    /// The request and the response out-param handed over.
    setup: Duration,
    /// The component's `handle`, key-value calls included.
    handle: Duration,
    /// The response taken and its body collected.
    collect: Duration,
    /// The instance released: kept for the next request (its snapshots
    /// ended), or dropped and its memory reset for the pool.
    teardown: Duration,
}

impl Phases {
    /// One request, phase by phase, through the same steps as
    /// `Server::call_component` (the guest here always finishes before the body
    /// is read); returns the body's length.
    async fn request(
        &mut self,
        server: &Server,
        request: hyper::Request<Empty<Bytes>>,
    ) -> anyhow::Result<usize> {
        let t0 = Instant::now();
        let instance = server.instance().await?;
        let t1 = Instant::now();
        let (call, answer) = instance.begin(request)?;
        let t2 = Instant::now();
        let (instance, outcome) = call.handle().await;
        let t3 = Instant::now();
        let response = answer.await?.map_err(|e| anyhow::anyhow!("{e:?}"))?;
        anyhow::ensure!(response.status() == 200, "status {}", response.status());
        let body = response.into_body().collect().await?.to_bytes();
        let t4 = Instant::now();
        server.release(instance, outcome.is_ok());
        outcome?;
        let t5 = Instant::now();
        self.instantiate += t1 - t0;
        self.setup += t2 - t1;
        self.handle += t3 - t2;
        self.collect += t4 - t3;
        self.teardown += t5 - t4;
        Ok(body.len())
    }

    fn report(&self, requests: u32) -> String {
        let per = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(requests);
        format!(
            "instantiate {:.1} µs, setup {:.1} µs, handle {:.1} µs, collect {:.1} µs, teardown {:.1} µs",
            per(self.instantiate),
            per(self.setup),
            per(self.handle),
            per(self.collect),
            per(self.teardown)
        )
    }
}

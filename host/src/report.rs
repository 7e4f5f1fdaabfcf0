//! `noise-filter report`: the noise report over an export, as the core
//! decides it (`noise_filter_core::report`; docs/REPORT.md). This shell
//! reads the file (or standard input), decompressing gzip, in chunks;
//! fetches the pattern list for `--url` (one GET, nothing else sent);
//! shows progress on stderr; and writes what the core renders. The npm
//! command (`npx noise-filter report`) is the same over the main wasm, and
//! the two are compared byte for byte (npm/test/node/report.test.mjs).

use std::io::{IsTerminal as _, Read, Write as _};
use std::time::{Duration, Instant};

use anyhow::{Context as _, anyhow};
use noise_filter_core::report::{self, ListSource, Stdout};

/// Bytes read at a time.
const CHUNK: usize = 256 << 10;
/// The largest pattern list read (a response with every built-in and 500
/// custom patterns is about 300 KB).
const MAX_LIST_BYTES: u64 = 64 << 20;
/// How long `--url` may take, connecting included.
const FETCH_DEADLINE: Duration = Duration::from_secs(30);
/// Progress is shown once reading has taken this long.
const PROGRESS_AFTER: Duration = Duration::from_secs(1);

/// Runs the command with the arguments after `report`.
pub async fn run(args: &[String]) -> anyhow::Result<()> {
    let env_key = std::env::var("NOISE_FILTER_KEY").ok();
    let plan = report::plan(args, env_key.as_deref()).map_err(|e| anyhow!("{e}"))?;
    if plan.help {
        print!("{}", report::USAGE);
        return Ok(());
    }
    let list = match &plan.list {
        ListSource::Builtin => None,
        ListSource::File(path) => Some(read_list(path)?),
        ListSource::Url { url, key } => Some(fetch(url, key).await?),
    };
    let mut report = plan.start(list.as_deref()).map_err(|e| anyhow!("{e}"))?;
    let input = open(&plan.input)?;
    // Reading and matching are plain CPU work; off the async workers.
    let summary = tokio::task::spawn_blocking(move || -> anyhow::Result<_> {
        read_all(input, &mut report)?;
        report.finish().map_err(|e| anyhow!("{e}"))
    })
    .await
    .context("the report's reader stopped")??;
    if let Some(path) = &plan.html {
        std::fs::write(path, summary.html()).with_context(|| format!("cannot write {path}"))?;
    }
    let out = match plan.stdout {
        Stdout::Summary => summary.text(),
        Stdout::Json => summary.json(),
        Stdout::EmitPatterns => summary.emit_patterns().map_err(|e| anyhow!("{e}"))?,
        Stdout::EmitSentry => summary.emit_sentry().map_err(|e| anyhow!("{e}"))?,
    };
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // A reader that stopped early (`| head`) is no failure.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("cannot write to standard output"),
    }
}

fn read_list(path: &str) -> anyhow::Result<Vec<u8>> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot read {path}"))?;
    let mut bytes = Vec::new();
    file.take(MAX_LIST_BYTES + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {path}"))?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_LIST_BYTES,
        "{path} is over {} MiB: not a pattern list",
        MAX_LIST_BYTES >> 20
    );
    Ok(bytes)
}

/// The export, decompressed when it starts with gzip's magic bytes.
fn open(path: &str) -> anyhow::Result<Box<dyn Read + Send>> {
    let raw: Box<dyn Read + Send> = if path == "-" {
        Box::new(std::io::stdin())
    } else {
        Box::new(std::fs::File::open(path).with_context(|| format!("cannot read {path}"))?)
    };
    let mut raw = std::io::BufReader::with_capacity(CHUNK, raw);
    let head =
        std::io::BufRead::fill_buf(&mut raw).with_context(|| format!("cannot read {path}"))?;
    if head.starts_with(&[0x1f, 0x8b]) {
        // Several members one after another (`cat a.gz b.gz`) are one file.
        Ok(Box::new(flate2::bufread::MultiGzDecoder::new(raw)))
    } else {
        Ok(Box::new(raw))
    }
}

fn read_all(mut input: Box<dyn Read + Send>, report: &mut report::Report) -> anyhow::Result<()> {
    let started = Instant::now();
    let mut shown = None::<Instant>;
    let terminal = std::io::stderr().is_terminal();
    let mut buffer = vec![0u8; CHUNK];
    loop {
        let n = match input.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e).context("cannot read the export"),
        };
        report.feed(&buffer[..n]).map_err(|e| anyhow!("{e}"))?;
        let now = Instant::now();
        // On a terminal the line is redrawn twice a second; in a log a line
        // every 10 s.
        let every = if terminal {
            Duration::from_millis(500)
        } else {
            Duration::from_secs(10)
        };
        if now - started >= PROGRESS_AFTER && shown.is_none_or(|s| now - s >= every) {
            shown = Some(now);
            progress(report, now - started, terminal, false);
        }
    }
    if shown.is_some() {
        progress(report, started.elapsed(), terminal, true);
    }
    Ok(())
}

fn progress(report: &report::Report, elapsed: Duration, terminal: bool, last: bool) {
    let line = format!(
        "read {:.1} MB, {} events in {:.0} s",
        report.bytes() as f64 / 1e6,
        report.events(),
        elapsed.as_secs_f64()
    );
    let mut err = std::io::stderr().lock();
    let _ = if terminal {
        write!(err, "\r{line}{}", if last { "\n" } else { "" })
    } else {
        writeln!(err, "{line}")
    };
}

/// One GET of the list; the body when the answer is 200.
async fn fetch(url: &str, key: &str) -> anyhow::Result<Vec<u8>> {
    tokio::time::timeout(FETCH_DEADLINE, get(url, key))
        .await
        .map_err(|_| anyhow!("GET {url}: no answer within {} s", FETCH_DEADLINE.as_secs()))?
}

async fn get(url: &str, key: &str) -> anyhow::Result<Vec<u8>> {
    use http_body_util::{BodyExt as _, Empty, Limited};
    let uri: hyper::Uri = url.parse().with_context(|| format!("--url {url}"))?;
    let host = uri
        .host()
        .ok_or_else(|| anyhow!("--url {url}: no host"))?
        .to_owned();
    let tls = uri.scheme_str() == Some("https");
    let port = uri.port_u16().unwrap_or(if tls { 443 } else { 80 });
    let tcp = tokio::net::TcpStream::connect((host.as_str(), port))
        .await
        .with_context(|| format!("cannot connect to {host}:{port}"))?;
    let request = hyper::Request::get(uri.path_and_query().map_or("/", |p| p.as_str()))
        .header(
            hyper::header::HOST,
            uri.authority().map_or(host.as_str(), |a| a.as_str()),
        )
        .header(hyper::header::AUTHORIZATION, format!("Bearer {key}"))
        .header(hyper::header::ACCEPT, "application/json")
        .header(
            hyper::header::USER_AGENT,
            concat!("noise-filter-report/", env!("CARGO_PKG_VERSION")),
        )
        .body(Empty::<bytes::Bytes>::new())?;
    let response = if tls {
        let stream = tls_connect(&host, tcp).await?;
        send(hyper_util::rt::TokioIo::new(stream), request).await?
    } else {
        send(hyper_util::rt::TokioIo::new(tcp), request).await?
    };
    let status = response.status().as_u16();
    let body = Limited::new(response.into_body(), MAX_LIST_BYTES as usize)
        .collect()
        .await
        .map_err(|e| anyhow!("GET {url}: {e}"))?
        .to_bytes()
        .to_vec();
    if status != 200 {
        return Err(anyhow!("{}", report::fetch_refusal(url, status, &body)));
    }
    Ok(body)
}

async fn send<T>(
    io: T,
    request: hyper::Request<http_body_util::Empty<bytes::Bytes>>,
) -> anyhow::Result<hyper::Response<hyper::body::Incoming>>
where
    T: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    tokio::spawn(async move {
        let _ = connection.await;
    });
    Ok(sender.send_request(request).await?)
}

async fn tls_connect(
    host: &str,
    tcp: tokio::net::TcpStream,
) -> anyhow::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    // One process-wide crypto provider (ring, as the Redis store's).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut roots = rustls::RootCertStore::empty();
    let found = rustls_native_certs::load_native_certs();
    for cert in found.certs {
        let _ = roots.add(cert);
    }
    anyhow::ensure!(
        !roots.is_empty(),
        "no trusted certificate authorities found on this system"
    );
    let config = rustls::ClientConfig::builder()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let name = rustls::pki_types::ServerName::try_from(host.to_owned())
        .map_err(|e| anyhow!("{host}: {e}"))?;
    tokio_rustls::TlsConnector::from(std::sync::Arc::new(config))
        .connect(name, tcp)
        .await
        .with_context(|| format!("TLS with {host}"))
}

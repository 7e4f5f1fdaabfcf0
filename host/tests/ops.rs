//! What an operator sees and what the HTTP layer refuses: the access log
//! (one line per request, never the key) and requests without exactly one
//! `Host`, answered with the core's 400 rather than a 503.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use noise_filter_core::{KeyHash, Rejection};
use support::{Host, TempDir};

/// Sends `raw` as is and reads until the server closes.
fn raw(addr: &str, raw: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(raw).unwrap();
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

#[test]
fn requests_without_exactly_one_host_get_the_core_400() {
    let state = TempDir::new("no-host");
    let host = Host::start(state.path(), &[]);
    let body = String::from_utf8(Rejection::MalformedRequest.body()).unwrap();
    let without = raw(&host.addr, b"GET /nope HTTP/1.0\r\n\r\n");
    let twice = raw(
        &host.addr,
        b"GET /v1/filters HTTP/1.1\r\nHost: a\r\nHost: b\r\nConnection: close\r\n\r\n",
    );
    for answer in [without, twice] {
        assert!(answer.starts_with("HTTP/1."), "{answer}");
        assert!(answer.contains(" 400 "), "{answer}");
        assert!(answer.ends_with(&body), "{answer}");
        assert!(
            answer.contains("content-type: application/json"),
            "{answer}"
        );
    }
    // One Host: the request reaches the core (its 404 for an unknown path).
    let one = raw(&host.addr, b"GET /nope HTTP/1.0\r\nHost: a\r\n\r\n");
    assert!(one.contains(" 404 "), "{one}");
}

/// Requests hyper refuses before routing (bad bytes, a request line or a
/// header section larger than it reads) get the core's JSON refusal with
/// the same status hyper chose, on a fresh connection and after a request
/// answered on a kept-alive one; the connection is then closed.
#[test]
fn the_http_layers_refusals_are_the_services() {
    let state = TempDir::new("http-layer");
    let host = Host::start(state.path(), &[]);
    let long_query = format!(
        "GET /v1/filters?{} HTTP/1.1\r\nHost: a\r\n\r\n",
        "q".repeat(70_000)
    );
    let big_header = format!(
        "GET /v1/filters HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
        "b".repeat(500_000)
    );
    let many_headers = format!(
        "GET /v1/filters HTTP/1.1\r\nHost: a\r\n{}\r\n",
        (0..200)
            .map(|i| format!("X-{i}: v\r\n"))
            .collect::<String>()
    );
    let cases: [(&[u8], Rejection); 6] = [
        (long_query.as_bytes(), Rejection::RequestLineTooLong),
        (big_header.as_bytes(), Rejection::HeadersTooLarge),
        (many_headers.as_bytes(), Rejection::HeadersTooLarge),
        (
            b"GET /v1/fil ters HTTP/1.1\r\nHost: a\r\n\r\n",
            Rejection::UnreadableRequest,
        ),
        (
            b"GET /v1/filters HTTP/1.1\r\nHo st: a\r\n\r\n",
            Rejection::UnreadableRequest,
        ),
        (
            b"GET /v1/filters HTTP/9.9\r\nHost: a\r\n\r\n",
            Rejection::UnreadableRequest,
        ),
    ];
    for (request, rejection) in cases {
        let answer = raw(&host.addr, request);
        let want = rejection.response();
        let body = String::from_utf8(want.body.to_vec()).unwrap();
        assert!(
            answer.starts_with(&format!("HTTP/1.1 {} ", want.status)),
            "{answer}"
        );
        for (name, value) in &want.headers {
            assert!(
                answer.contains(&format!("\r\n{name}: {value}\r\n")),
                "{answer}"
            );
        }
        assert!(answer.contains("\r\nconnection: close\r\n"), "{answer}");
        assert!(answer.ends_with(&format!("\r\n\r\n{body}")), "{answer}");
    }
    // After a request answered on the same connection.
    let answer = raw(
        &host.addr,
        b"GET /nope HTTP/1.1\r\nHost: a\r\n\r\nGET /v1/filters HTTP/1.1\r\nHo st: a\r\n\r\n",
    );
    let body = String::from_utf8(Rejection::UnreadableRequest.body()).unwrap();
    assert!(answer.starts_with("HTTP/1.1 404 "), "{answer}");
    assert!(
        answer.contains("{\"error\":\"Not found\"}HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(answer.ends_with(&body), "{answer}");
}

#[test]
fn one_json_access_line_per_request_without_the_key() {
    let state = TempDir::new("access-log");
    let s = state.path();
    let key = support::create_key(s, &[], "acme");
    let mut host = Host::start_with(
        s,
        &["--log-format", "json"],
        &["--fixed-time-ms", &support::NOW_MS.to_string()],
    );
    let auth = format!("Bearer {key}");
    let reply = host.send(
        "GET",
        "/api/v1/filters?minConfidence=0.9",
        &[("authorization", &auth), ("x-request-id", "trace-42")],
    );
    assert_eq!(reply.status, 200);
    assert_eq!(host.send("GET", "/nope", &[]).status, 404);
    let stderr = host.interrupt();
    assert!(!stderr.contains(&key), "the key is in the log");
    let access: Vec<serde_json::Value> = stderr
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|line| line["target"] == "access")
        .collect();
    assert_eq!(access.len(), 2, "{stderr}");
    let first = &access[0];
    assert_eq!(first["method"], "GET");
    assert_eq!(first["path"], "/api/v1/filters");
    assert_eq!(first["status"], 200);
    assert_eq!(first["request_id"], "trace-42");
    assert_eq!(first["key"], KeyHash::of(&key).short());
    assert!(first["latency_us"].as_u64().is_some());
    let second = &access[1];
    assert_eq!(
        (second["status"].clone(), second["key"].clone()),
        (404.into(), "-".into())
    );
    // No id given: the host's own, distinct from the first.
    assert!(
        second["request_id"]
            .as_str()
            .is_some_and(|id| !id.is_empty() && id != "trace-42")
    );
}

#[test]
fn sigterm_finishes_requests_in_flight_and_refuses_new_connections() {
    let Some(redis) = support::RedisServer::start() else {
        return;
    };
    let state = TempDir::new("sigterm");
    let store = ["--store", redis.url.as_str(), "--store-timeout-ms", "8000"];
    let key = support::create_key(state.path(), &store, "acme");
    let mut host = Host::start(state.path(), &store);
    assert_eq!(host.get("/v1/filters", &key).status, 200);

    // A request held in flight: the store does not answer until resumed.
    redis.pause();
    let in_flight = {
        let (addr, key) = (host.addr.clone(), key.clone());
        std::thread::spawn(move || {
            support::send(
                &addr,
                "GET",
                "/v1/filters",
                &[("authorization", &format!("Bearer {key}"))],
            )
        })
    };
    std::thread::sleep(Duration::from_millis(500));
    let status = std::process::Command::new("kill")
        .args(["-TERM", &host.child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        TcpStream::connect(&host.addr).is_err(),
        "a stopping server still accepts connections"
    );
    redis.resume();
    let reply = in_flight.join().unwrap();
    assert_eq!(reply.status, 200, "the request in flight was cut off");
    let started = std::time::Instant::now();
    let exit = host.child.wait().unwrap();
    assert!(exit.success(), "exited with {exit}");
    assert!(started.elapsed() < Duration::from_secs(5));
}

/// The operations address a host printed (`operations (probes, metrics) on http://…`), with `--admin-listen`, the flag's name before.
fn admin_address(host: &Host) -> String {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let said = host.greeting.lock().unwrap().clone();
        if let Some(addr) = said
            .lines()
            .find_map(|l| l.strip_prefix("operations (probes, metrics) on http://"))
        {
            return addr.trim().to_owned();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no operations address in {said:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn probes_and_metrics_on_the_admin_address() {
    let Some(redis) = support::RedisServer::start() else {
        return;
    };
    let state = TempDir::new("admin-listen");
    let store = ["--store", redis.url.as_str(), "--store-timeout-ms", "300"];
    let key = support::create_key(state.path(), &store, "acme");
    let host = Host::start_with(
        state.path(),
        &store,
        &[
            "--fixed-time-ms",
            &support::NOW_MS.to_string(),
            "--admin-listen",
            "127.0.0.1:0",
        ],
    );
    let admin = admin_address(&host);
    assert_eq!(support::send(&admin, "GET", "/livez", &[]).status, 200);
    assert_eq!(support::send(&admin, "GET", "/readyz", &[]).status, 200);
    for _ in 0..3 {
        assert_eq!(host.get("/v1/filters", &key).status, 200);
    }
    assert_eq!(host.send("GET", "/v1/filters", &[]).status, 401);
    assert_eq!(host.send("GET", "/some/scan", &[]).status, 404);
    let metrics = support::send(&admin, "GET", "/metrics", &[]);
    assert_eq!(metrics.status, 200);
    let text = String::from_utf8(metrics.body).unwrap();
    for line in [
        "noise_filter_requests_total{route=\"/v1/filters\",status=\"200\"} 3",
        "noise_filter_requests_total{route=\"/v1/filters\",status=\"401\"} 1",
        "noise_filter_requests_total{route=\"other\",status=\"404\"} 1",
        "noise_filter_request_duration_seconds_count{route=\"/v1/filters\"} 4",
        "noise_filter_store_calls_total{operation=\"increment\",outcome=\"ok\"}",
        "noise_filter_instances_created_total",
        "noise_filter_open_connections",
    ] {
        assert!(text.contains(line), "no {line:?} in\n{text}");
    }
    // The public port does not serve them.
    assert_eq!(host.send("GET", "/metrics", &[]).status, 404);

    // A store that does not answer: not ready, within the deadline; the
    // failed calls are counted.
    redis.pause();
    let started = std::time::Instant::now();
    let ready = support::send(&admin, "GET", "/readyz", &[]);
    assert_eq!(ready.status, 503);
    assert!(started.elapsed() < Duration::from_secs(3));
    assert_eq!(host.get("/v1/filters", &key).status, 503);
    let text = String::from_utf8(support::send(&admin, "GET", "/metrics", &[]).body).unwrap();
    assert!(
        text.contains("noise_filter_store_calls_total{operation=\"get\",outcome=\"error\"} 1"),
        "{text}"
    );
    redis.resume();
}

/// A log reader that stops reading (a log shipper stuck on its pipe) does
/// not stall requests: the host's lines wait in memory while the pipe is
/// full, and all of them arrive, in order, once it is read again.
#[test]
fn a_stalled_log_reader_does_not_stall_requests() {
    use std::io::BufRead;
    use std::process::Stdio;
    let state = TempDir::new("stalled-log");
    /// Killed if the test fails before it stops the host.
    struct Killed(std::process::Child);
    impl Drop for Killed {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let mut host = Killed(
        support::host_cmd(state.path(), &[])
            .args(["serve", "--listen", "127.0.0.1:0", "--component"])
            .arg(support::component())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let child = &mut host.0;
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    let addr = first.trim().strip_prefix("listening on http://").unwrap();
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    // Each access line holds its ~300-byte path: 1,000 of them are several
    // times what a pipe buffers (64 KiB), and nothing reads stderr yet.
    let padding = "x".repeat(300);
    for i in 0..1000 {
        let answer = raw(
            addr,
            format!("GET /nope-{i}-{padding} HTTP/1.0\r\nHost: a\r\n\r\n").as_bytes(),
        );
        assert!(answer.contains(" 404 "), "request {i}: {answer:?}");
    }
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        stderr.read_to_string(&mut text).unwrap();
        text
    });
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    assert!(child.wait().unwrap().success());
    let text = reader.join().unwrap();
    let paths: Vec<&str> = text
        .lines()
        .filter(|line| line.contains("access"))
        .filter_map(|line| line.split("path=").nth(1))
        .filter_map(|rest| rest.split(' ').next())
        .collect();
    let expected: Vec<String> = (0..1000).map(|i| format!("/nope-{i}-{padding}")).collect();
    assert_eq!(paths, expected, "every access line, in order");
}

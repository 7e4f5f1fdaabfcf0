//! Connection hygiene against the real server: clients that send slowly,
//! send nothing or stay idle are closed after the header-read timeout, and a
//! normal client is served while hundreds of such connections are open, even
//! with a file limit below their number.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{Host, TempDir};

/// Whether the server has closed `stream` (reads end or fail), waiting at
/// most `within`.
fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    stream.set_read_timeout(Some(within)).unwrap();
    let mut sink = [0u8; 4096];
    loop {
        match stream.read(&mut sink) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return false;
            }
            Err(_) => return true,
        }
    }
}

#[test]
fn slow_idle_and_kept_alive_connections_are_closed_after_the_header_timeout() {
    let state = TempDir::new("hygiene-timeouts");
    let key = support::create_key(state.path(), &[], "acme");
    let host = Host::start_with(state.path(), &[], &["--header-read-timeout-ms", "600"]);

    // Sends nothing at all.
    let mut silent = TcpStream::connect(&host.addr).unwrap();
    // Drips a request head, one byte every 100 ms: never finishes in time.
    let mut dripping = TcpStream::connect(&host.addr).unwrap();
    let drip = {
        let mut writer = dripping.try_clone().unwrap();
        std::thread::spawn(move || {
            for byte in
                b"GET /v1/filters HTTP/1.1\r\nHost: x\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            {
                if writer.write_all(&[*byte]).is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        })
    };
    // One whole request, then idle with the connection kept alive.
    let mut kept = TcpStream::connect(&host.addr).unwrap();
    write!(
        kept,
        "GET /v1/filters HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {key}\r\n\r\n"
    )
    .unwrap();
    let mut first = [0u8; 12];
    kept.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");

    let started = Instant::now();
    for (name, stream) in [
        ("silent", &mut silent),
        ("dripping", &mut dripping),
        ("kept alive", &mut kept),
    ] {
        assert!(
            closed_within(stream, Duration::from_secs(5)),
            "{name} connection still open after {:?}",
            started.elapsed()
        );
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    drip.join().unwrap();
    // And the server itself is fine.
    assert_eq!(host.get("/v1/filters", &key).status, 200);
}

#[test]
fn a_client_is_served_while_hundreds_of_connections_stall_under_a_low_file_limit() {
    let state = TempDir::new("hygiene-slowloris");
    let key = support::create_key(state.path(), &[], "acme");
    // 256 files for the whole process: 300 stalled connections would use
    // them all and `accept` would fail for everyone.
    let mut limited = Command::new("prlimit");
    limited
        .args(["--nofile=256:256", "--"])
        .arg(support::host_bin())
        .arg("--state-dir")
        .arg(state.path());
    let host = Host::start_command(
        state.path(),
        limited,
        &[
            "--header-read-timeout-ms",
            "1500",
            "--max-connections",
            "150",
        ],
    );
    let stalled: Vec<TcpStream> = (0..300)
        .map(|_| {
            let mut s = TcpStream::connect(&host.addr).unwrap();
            s.write_all(b"GET /v1/filters HTTP/1.1\r\nHost: x\r\n")
                .unwrap();
            s
        })
        .collect();
    let started = Instant::now();
    let reply = host.get("/v1/filters", &key);
    let waited = started.elapsed();
    println!("served after {waited:?} with 300 stalled connections");
    assert_eq!(reply.status, 200);
    // Queued behind at most two rounds of stalled connections, each freed
    // by the header timeout.
    assert!(waited < Duration::from_secs(10), "waited {waited:?}");
    // The stalled ones were closed, not served.
    let closed = stalled
        .into_iter()
        .filter(|s| closed_within(&mut s.try_clone().unwrap(), Duration::from_secs(6)))
        .count();
    assert_eq!(closed, 300);
    assert_eq!(host.get("/v1/filters", &key).status, 200);
}

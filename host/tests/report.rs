//! `noise-filter report`, the binary itself: what its shell adds to the
//! core's report. A gzip'd file and standard input read as the plain file;
//! `--url` sends one GET of the list and nothing else; a refused key and an
//! unknown format fail with the reason; the emitted patterns are a file the
//! same binary's `patterns import` takes.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Output, Stdio};
use std::sync::{Arc, Mutex};

use support::{TempDir, add_pattern, admin_ok, core_answer, create_key, host_bin, memory_copy};

/// An export in the matcher's shape: noise the catalog knows, one custom
/// pattern's event, and real errors.
const EXPORT: &str = concat!(
    r#"{"message":"ResizeObserver loop limit exceeded","timestamp":"2026-10-01T10:00:00Z","user":"u1","issue":"1"}"#,
    "\n",
    r#"{"type":"TypeError","message":"Cannot redefine property: ethereum","frames":["chrome-extension://aflkmfhebedbjioipglgcbcmnbpgliof/injected.js"],"timestamp":"2026-10-02T10:00:00Z","user":"u2","issue":"2"}"#,
    "\n",
    r#"{"message":"acme-widget exploded at 42","timestamp":"2026-10-03T10:00:00Z","user":"u3","issue":"3"}"#,
    "\n",
    r#"{"type":"Error","message":"Checkout failed for order 1234","timestamp":"2026-10-04T10:00:00Z","user":"u4","issue":"4"}"#,
    "\n",
    r#"{"type":"Error","message":"Checkout failed for order 987","timestamp":"2026-10-05T10:00:00Z","user":"u5","issue":"4"}"#,
    "\n",
);

fn report(args: &[&str], stdin: Option<&[u8]>, env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(host_bin());
    cmd.arg("report").args(args).env_remove("NOISE_FILTER_KEY");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    if let Some(bytes) = stdin {
        input.write_all(bytes).unwrap();
    }
    drop(input);
    child.wait_with_output().unwrap()
}

fn ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "report failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_str(&ok(out)).unwrap()
}

#[test]
fn a_gzipped_file_and_standard_input_read_as_the_file() {
    let dir = TempDir::new("report-inputs");
    let plain = dir.path().join("events.jsonl");
    std::fs::write(&plain, EXPORT).unwrap();
    let gz = dir.path().join("events.jsonl.gz");
    // Two gzip members, as `cat a.gz b.gz` makes: one file.
    let (first, second) = EXPORT.split_at(EXPORT.len() / 2);
    let mut bytes = Vec::new();
    for part in [first, second] {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        encoder.write_all(part.as_bytes()).unwrap();
        bytes.extend(encoder.finish().unwrap());
    }
    std::fs::write(&gz, &bytes).unwrap();

    let mut from_file = json(&report(&[plain.to_str().unwrap(), "--json"], None, &[]));
    let mut from_gz = json(&report(&[gz.to_str().unwrap(), "--json"], None, &[]));
    let mut from_stdin = json(&report(&["-", "--json"], Some(EXPORT.as_bytes()), &[]));
    assert_eq!(from_file["input"]["events"], 5);
    assert_eq!(from_file["noise"]["events"]["noise"], 2);
    for v in [&mut from_file, &mut from_gz, &mut from_stdin] {
        v["input"]["name"] = serde_json::Value::Null;
    }
    assert_eq!(from_gz, from_file);
    assert_eq!(from_stdin, from_file);

    // The summary, the page.
    let html = dir.path().join("report.html");
    let text = ok(&report(
        &[plain.to_str().unwrap(), "--html", html.to_str().unwrap()],
        None,
        &[],
    ));
    assert!(text.contains("Checkout failed for order <n>"), "{text}");
    assert!(text.lines().all(|l| l.chars().count() <= 80), "{text}");
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.starts_with("<!doctype html>") && page.contains("chart-time"));
}

/// A server that records every request it gets and answers each as the
/// core does for `store`.
fn recording_server(
    mut store: noise_filter_core::MemoryStore,
) -> (String, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            // Whatever follows the head (a body) would show here too.
            stream
                .set_read_timeout(Some(std::time::Duration::from_millis(200)))
                .unwrap();
            let mut rest = Vec::new();
            let _ = reader.read_to_end(&mut rest);
            head.push_str(&String::from_utf8_lossy(&rest));
            let target = head.split(' ').nth(1).unwrap_or("/").to_owned();
            let auth = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .starts_with("authorization:")
                        .then(|| l[14..].trim().to_owned())
                })
                .unwrap_or_default();
            log.lock().unwrap().push(head);
            let answer = core_answer(&mut store, "GET", &target, &[("authorization", &auth)]);
            let mut out = format!("HTTP/1.1 {} X\r\n", answer.status);
            for (name, value) in &answer.headers {
                out.push_str(&format!("{name}: {value}\r\n"));
            }
            out.push_str(&format!(
                "content-length: {}\r\nconnection: close\r\n\r\n",
                answer.body.len()
            ));
            let mut bytes = out.into_bytes();
            bytes.extend_from_slice(&answer.body);
            let _ = stream.write_all(&bytes);
        }
    });
    (format!("http://{addr}"), seen)
}

#[test]
fn with_url_only_the_pattern_list_is_fetched() {
    let state = TempDir::new("report-url");
    let key = create_key(state.path(), &[], "acme");
    add_pattern(state.path(), &[], "acme", "acme-widget exploded");
    let (base, seen) = recording_server(memory_copy(&state.db()));
    let dir = TempDir::new("report-url-export");
    let export = dir.path().join("events.jsonl");
    std::fs::write(&export, EXPORT).unwrap();

    // The key from the environment, as the usage advises.
    let out = report(
        &[export.to_str().unwrap(), "--url", &base, "--json"],
        None,
        &[("NOISE_FILTER_KEY", &key)],
    );
    let summary = json(&out);
    let requests = seen.lock().unwrap().clone();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let request = &requests[0];
    assert!(
        request.starts_with("GET /v1/filters?minConfidence=0.5 HTTP/1.1\r\n"),
        "{request}"
    );
    assert!(request.contains(&format!("Bearer {key}")));
    // Nothing of the export went out: no body, no message.
    assert!(!request.contains("content-length") && !request.contains("Checkout"));
    assert_eq!(summary["patterns"]["source"], "url");
    assert_eq!(summary["noise"]["events"]["noise"], 3);
    let custom = summary["matched"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["category"] == "custom")
        .unwrap();
    assert_eq!(custom["events"], 1);
    assert!(!ok(&out).contains(&key), "the key is never in the report");

    // A refused key: the status and the service's own words.
    let out = report(
        &[
            export.to_str().unwrap(),
            "--url",
            &base,
            "--key",
            "nf_wrong",
        ],
        None,
        &[],
    );
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("answered 401: Invalid API key"), "{err}");
}

#[test]
fn emitted_patterns_are_a_file_patterns_import_takes() {
    let dir = TempDir::new("report-emit");
    let export = dir.path().join("events.jsonl");
    std::fs::write(&export, EXPORT).unwrap();
    let summary = json(&report(&[export.to_str().unwrap(), "--json"], None, &[]));
    let top = &summary["unmatched"]["top"][0];
    assert_eq!(top["message"], "Error: Checkout failed for order <n>");
    // What varies at the end says nothing a substring needs.
    assert_eq!(
        top["suggestion"]["pattern"],
        "Error: Checkout failed for order"
    );
    assert_eq!(top["suggestion"]["type"], "string");
    let emitted = ok(&report(
        &[
            export.to_str().unwrap(),
            "--pattern",
            "acme-widget exploded",
            "--accept",
            "1",
            "--emit",
            "patterns",
        ],
        None,
        &[],
    ));
    let file = dir.path().join("patterns.json");
    std::fs::write(&file, &emitted).unwrap();
    let state = TempDir::new("report-emit-state");
    let out = admin_ok(
        state.path(),
        &[],
        &[
            "patterns",
            "import",
            "--account",
            "acme",
            file.to_str().unwrap(),
        ],
    );
    assert!(out.contains("imported 2 patterns"), "{out}");
    let list = admin_ok(
        state.path(),
        &[],
        &["patterns", "list", "--account", "acme"],
    );
    assert!(
        list.contains("acme-widget exploded") && list.contains("Checkout failed"),
        "{list}"
    );

    // Nothing accepted, nothing given: said, not an empty file.
    let out = report(&[export.to_str().unwrap(), "--emit", "patterns"], None, &[]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("nothing to emit"));
}

#[test]
fn refusals_fail_with_the_reason() {
    let out = report(&["-"], Some(b"hello, world\nsecond line\n"), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown format") && err.contains("expected Sentry events"),
        "{err}"
    );
    let out = report(&["-"], Some(b"{\"broken\n"), &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("no event could be read"));
    let out = report(&["missing.json"], None, &[]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot read missing.json"));
    let help = ok(&report(&["--help"], None, &[]));
    assert!(help.starts_with("Usage: noise-filter report"));
}

/// Events as Sentry's API returns them, in the shape of its own example
/// (`core/tests/report/sentry-api-event.json`), with these messages.
fn api_export(messages: &[&str]) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/report/sentry-api-event.json"
    );
    let template: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let events: Vec<serde_json::Value> = messages
        .iter()
        .enumerate()
        .map(|(i, message)| {
            let mut v = template.clone();
            v["eventID"] = serde_json::json!(format!("{i:032x}"));
            v["groupID"] = serde_json::json!(format!("{}", 100 + i % 3));
            v["user"]["id"] = serde_json::json!(format!("{i}"));
            let (kind, value) = message.split_once(": ").unwrap();
            v["entries"][0]["data"]["values"][0]["type"] = serde_json::json!(kind);
            v["entries"][0]["data"]["values"][0]["value"] = serde_json::json!(value);
            v
        })
        .collect();
    serde_json::to_string(&events).unwrap()
}

#[test]
fn the_readmes_commands_run() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md")).unwrap();
    let section = &readme[readme.find("## The noise report").unwrap()..];
    let start = section.find("```sh\n").unwrap() + "```sh\n".len();
    let script = &section[start..start + section[start..].find("```").unwrap()];
    assert!(
        script.contains("noise-filter report events.json"),
        "{script}"
    );
    let dir = TempDir::new("report-readme");
    let export = api_export(&[
        "Error: ResizeObserver loop limit exceeded",
        "Error: Checkout failed for order 1234",
        "Error: Checkout failed for order 77",
        "Error: Checkout failed for order 5",
        "Error: Payment declined for card 4242",
        "Error: Payment declined for card 1881",
    ]);
    std::fs::write(dir.path().join("events.json"), export).unwrap();
    let path = format!(
        "{}:{}",
        host_bin().parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("sh")
        .args(["-e", "-c", script])
        .current_dir(dir.path())
        .env("PATH", path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("Checkout failed for order <n>"), "{stdout}");
    assert!(
        stdout.contains("imported 2 patterns into account acme"),
        "{stdout}"
    );
    let page = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(page.contains("Suspected false positives"));
}

//! Compressed answers decoded by a real client: Node's `fetch` (undici)
//! against the real host on a real port, with its own `Accept-Encoding`
//! (Node 20 sends `gzip, deflate`) and with one that prefers brotli, for
//! the usual answer (brotli when asked for) and an account's own list
//! (gzip). What it reads must be the identity bytes a client without
//! `Accept-Encoding` gets. Without Node on PATH the test says it was
//! skipped.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::process::Command;

use support::Host;
use support::table::fixture;

/// What Node's fetch sent and read: `accept-encoding` is echoed by no one,
/// so the script reports the answer's `content-encoding` and the decoded
/// text's bytes as hex.
const SCRIPT: &str = r#"
const [url, auth, accept] = process.argv.slice(1);
const headers = { authorization: auth };
if (accept) headers['accept-encoding'] = accept;
const response = await fetch(url, { headers });
const text = Buffer.from(await response.arrayBuffer());
console.log(JSON.stringify({
  status: response.status,
  encoding: response.headers.get('content-encoding'),
  hex: text.toString('hex'),
}));
"#;

fn node_fetch(url: &str, auth: &str, accept: &str) -> serde_json::Value {
    let out = Command::new("node")
        .args(["--input-type=module", "-e", SCRIPT, url, auth, accept])
        .output()
        .expect("node runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn nodes_fetch_decodes_the_hosts_compressed_answers_to_the_identity_bytes() {
    if Command::new("node").arg("--version").output().is_err() {
        println!("SKIPPED: no node on PATH");
        return;
    }
    let f = fixture("decode");
    let host = Host::start(f.state.path(), &[]);
    for (target, key, accept, coding) in [
        // beta's list without its own pattern: the usual answer.
        ("/v1/filters?includeCustom=false", &f.beta, "", "gzip"),
        ("/v1/filters?includeCustom=false", &f.beta, "br, gzip", "br"),
        (
            "/api/v1/filters?includeCustom=false",
            &f.beta,
            "br, gzip",
            "br",
        ),
        // acme's own list: composed gzip, brotli preferred or not.
        ("/v1/filters", &f.acme, "", "gzip"),
        (
            "/api/v1/filters?minConfidence=0.9",
            &f.acme,
            "br, gzip",
            "gzip",
        ),
    ] {
        let auth = format!("Bearer {key}");
        let identity = host.send("GET", target, &[("authorization", &auth)]);
        assert_eq!(identity.status, 200);
        assert_eq!(identity.header("content-encoding"), None);
        let fetched = node_fetch(&format!("http://{}{target}", host.addr), &auth, accept);
        assert_eq!(fetched["status"], 200, "{target} {accept}");
        assert_eq!(fetched["encoding"], coding, "{target} {accept}");
        assert!(
            fetched["hex"].as_str().unwrap() == hex(&identity.body),
            "{target}: Node's decoded text is not the identity body"
        );
    }
}

//! The report over a million events: events a second and peak memory
//! (docs/BENCHMARKS.md, "Report: a million events"). Not criterion: one
//! pass over a file is the measurement, as the command makes it.
//!
//! ```text
//! cargo bench -p noise-filter-core --features report --bench report [-- EVENTS]
//! ```
//!
//! Writes (once, then reuses) `<target>/report-bench/sentry-<EVENTS>.jsonl`:
//! Sentry's per-event JSON (the shape of `tests/report/sentry-event.json`),
//! one event a line, about 1 KB each: a third noise the catalog knows, the
//! rest application errors with 100,000 distinct messages once normalised,
//! 50,000 users, over 30 days. Then reads it in 256 KB
//! chunks through the report, as the CLI does, and prints the time, events
//! a second and the process's peak resident memory (`VmHWM`). The npm
//! command's figure is taken on the same file (`npm/test/bench/report.mjs`).
#![allow(clippy::unwrap_used)] // a benchmark states its expectations by unwrapping

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use noise_filter_core::report;

/// Distinct application messages once normalised.
const MESSAGES: u64 = 100_000;
const USERS: u64 = 50_000;
const DAYS: u64 = 30;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*: deterministic, enough for spreading.
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const SYLLABLES: [&str; 48] = [
    "ka", "lo", "mi", "nu", "pe", "ra", "so", "ti", "vu", "wa", "xe", "yo", "za", "be", "co", "du",
    "fa", "ge", "hi", "jo", "ku", "la", "me", "ni", "po", "qu", "ri", "sa", "te", "vo", "wu", "xa",
    "ye", "zo", "ba", "ce", "di", "fo", "gu", "ha", "je", "ki", "lu", "ma", "ne", "pi", "ro", "su",
];

/// A name without digits (digits are folded): message `m`'s own words.
fn name(mut n: u64) -> String {
    let mut out = String::new();
    for _ in 0..3 {
        out.push_str(SYLLABLES[(n % 48) as usize]);
        n /= 48;
    }
    out
}

/// Noise the catalog knows: (message, frame, user agent).
const NOISE: [(&str, &str, &str); 6] = [
    (
        "Cannot redefine property: ethereum",
        "chrome-extension://aflkmfhebedbjioipglgcbcmnbpgliof/injected.js",
        "",
    ),
    (
        "ResizeObserver loop limit exceeded",
        "https://app.example/assets/index.js",
        "",
    ),
    ("Failed to fetch", "https://app.example/assets/api.js", ""),
    (
        "Loading chunk 817 failed.",
        "https://app.example/assets/runtime.js",
        "",
    ),
    (
        "Cannot read properties of undefined (reading 'checkout')",
        "https://app.example/assets/index.js",
        "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
    ),
    ("Script error.", "", ""),
];

const CHROME: &str = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";

fn write_event(out: &mut impl Write, i: u64, rng: &mut Rng) -> std::io::Result<()> {
    let at = 1_790_000_000 + rng.below(DAYS * 86_400);
    let user = rng.below(USERS);
    let (kind, value, frame, agent) = if i.is_multiple_of(3) {
        let (m, f, ua) = NOISE[rng.below(NOISE.len() as u64) as usize];
        (
            "TypeError".to_owned(),
            m.to_owned(),
            f.to_owned(),
            if ua.is_empty() { CHROME } else { ua },
        )
    } else {
        let m = rng.below(MESSAGES);
        (
            "Error".to_owned(),
            format!(
                "Checkout step {} failed in {} for order {}: state {}",
                name(m),
                name(m / 7 + 11),
                rng.below(1_000_000),
                name(m % 97)
            ),
            format!(
                "https://app.example/assets/{}-{:08x}.js",
                name(m % 500),
                rng.next() as u32
            ),
            CHROME,
        )
    };
    let frame = if frame.is_empty() {
        String::new()
    } else {
        format!(
            r#"{{"colno":14,"filename":"{frame}","function":"handle","in_app":true,"lineno":1}}"#
        )
    };
    writeln!(
        out,
        concat!(
            r#"{{"event_id":"{:032x}","timestamp":{},"platform":"javascript","level":"error","#,
            r#""breadcrumbs":[{{"category":"ui.click","message":"body > div.main > button","timestamp":{}}},"#,
            r#"{{"category":"xhr","data":{{"method":"GET","status_code":200,"url":"/api/cart"}},"timestamp":{}}}],"#,
            r#""contexts":{{"browser":{{"name":"Chrome","version":"131.0.0"}},"os":{{"name":"Windows","version":"10"}}}},"#,
            r#""exception":{{"values":[{{"type":"{}","value":"{}","mechanism":{{"type":"onerror","handled":false}},"#,
            r#""stacktrace":{{"frames":[{}]}}}}]}},"#,
            r#""request":{{"url":"https://app.example/checkout","headers":{{"User-Agent":"{}","Referer":"https://app.example/"}}}},"#,
            r#""sdk":{{"name":"sentry.javascript.browser","version":"8.40.0"}},"tags":{{"release":"web@4.2.0"}},"#,
            r#""user":{{"id":"{}","ip_address":"{{{{auto}}}}"}}}}"#
        ),
        i,
        at,
        at - 3,
        at - 1,
        kind,
        value,
        frame,
        agent,
        user
    )
}

/// The process's CPU time (user and system), in seconds: on a machine
/// shared with other work, what one core spent, whatever the wall clock.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command's closing parenthesis; utime and stime are
    // the 14th and 15th of the line, in clock ticks (100 a second here).
    let rest = &stat[stat.rfind(')')? + 2..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = fields.get(11)?.parse::<f64>().ok()? + fields.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
}

fn peak_rss_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let events: u64 = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"));
    let dir = target.join("report-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("sentry-{events}.jsonl"));
    if !path.exists() {
        let started = Instant::now();
        let partial = path.with_extension("partial");
        let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(&partial).unwrap());
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for i in 0..events {
            write_event(&mut out, i, &mut rng).unwrap();
        }
        out.flush().unwrap();
        drop(out);
        std::fs::rename(&partial, &path).unwrap();
        eprintln!(
            "wrote {} in {:.1} s",
            path.display(),
            started.elapsed().as_secs_f64()
        );
    }
    let size = std::fs::metadata(&path).unwrap().len();
    let before = peak_rss_mb();
    let plan = report::plan(&[path.display().to_string(), "--json".to_owned()], None).unwrap();
    let started = Instant::now();
    let cpu_before = cpu_seconds().unwrap_or(0.0);
    let mut r = plan.start(None).unwrap();
    let mut file = std::fs::File::open(&path).unwrap();
    let mut chunk = vec![0u8; 256 << 10];
    loop {
        let n = file.read(&mut chunk).unwrap();
        if n == 0 {
            break;
        }
        r.feed(&chunk[..n]).unwrap();
    }
    let summary = r.finish().unwrap();
    let json = summary.json();
    let secs = started.elapsed().as_secs_f64();
    let cpu = cpu_seconds().unwrap_or(f64::NAN) - cpu_before;
    let read = summary.input.events;
    println!(
        "report: {read} events ({:.0} MB) in {secs:.2} s wall, {cpu:.2} s CPU: {:.0} events a CPU second ({:.0} a wall second); noise {}; {} distinct messages kept, {} events untracked",
        size as f64 / 1e6,
        read as f64 / cpu,
        read as f64 / secs,
        summary.noise.events.noise,
        summary.unmatched.messages,
        summary.unmatched.untracked_events
    );
    println!(
        "peak resident: {:.0} MB (before reading: {:.0} MB); JSON {} KB, page {} KB",
        peak_rss_mb().unwrap_or(f64::NAN),
        before.unwrap_or(f64::NAN),
        json.len() / 1024,
        summary.html().len() / 1024
    );
    std::fs::write(dir.join(format!("sentry-{events}.html")), summary.html()).unwrap();
}

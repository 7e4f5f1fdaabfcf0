// The report is the feature `report` (the CLI's and the npm command's).
#![cfg(feature = "report")]
//! The noise report over exports built from Sentry's own event shapes
//! (`tests/report/`, filled with the evaluation set's texts) and from the
//! evaluation set itself: every shape gives the numbers the matcher gives
//! event by event; malformed records are counted with their line; what an
//! export lacks is said, not zeroed; suggestions match what they say;
//! memory stays bounded where the tables fill.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

#[path = "support/eval.rs"]
mod eval;

use std::collections::BTreeMap;

use noise_filter_core::report::{self, Summary};
use noise_filter_core::{Event, Matcher};
use serde_json::{Value, json};

fn args(list: &[&str]) -> Vec<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// The report of `bytes` fed in chunks of `chunk` bytes, with `extra`
/// arguments.
fn run_chunked(bytes: &[u8], chunk: usize, extra: &[&str]) -> Result<Summary, String> {
    let mut a = args(&["export"]);
    a.extend(args(extra));
    let plan = report::plan(&a, None).map_err(|e| e.0)?;
    let mut r = plan.start(None)?;
    for part in bytes.chunks(chunk.max(1)) {
        r.feed(part)?;
    }
    r.finish()
}

fn run(bytes: &[u8], extra: &[&str]) -> Summary {
    run_chunked(bytes, bytes.len(), extra).unwrap()
}

/// The report as JSON, without what names the input (its name, size, shape).
fn comparable(s: &Summary) -> Value {
    let mut v: Value = serde_json::from_str(&s.json()).unwrap();
    v["input"]["name"] = Value::Null;
    v["input"]["bytes"] = Value::Null;
    v["input"]["shapes"] = Value::Null;
    v["input"]["columns"] = Value::Null;
    // Only the API's events say the browser.
    v["input"]["coverage"]["browser"] = Value::Null;
    v["browsers"] = Value::Null;
    v
}

fn template(name: &str) -> Value {
    let path = format!("{}/tests/report/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// An evaluation event's day, user and issue: spread so every count has
/// something to count.
fn stamp(i: usize) -> (String, String, String) {
    let day = 1 + (i * 7) % 28;
    let hour = i % 24;
    (
        format!("2026-10-{day:02}T{hour:02}:15:00Z"),
        format!("u{}", i % 37),
        format!("{}", 100 + i % 53),
    )
}

/// The evaluation set as the API would return it (`GROUP_EVENT`'s shape).
fn api_events(events: &[eval::LabelledEvent]) -> Vec<Value> {
    let base = template("sentry-api-event.json");
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (at, user, issue) = stamp(i);
            let mut v = base.clone();
            v["eventID"] = json!(format!("{i:032x}"));
            v["dateCreated"] = json!(at);
            v["groupID"] = json!(issue);
            v["user"]["id"] = json!(user.trim_start_matches('u'));
            let exception = &mut v["entries"][0]["data"]["values"][0];
            exception.as_object_mut().unwrap().remove("type");
            exception["value"] = json!(e.message);
            let frame = exception["stacktrace"]["frames"][0].clone();
            exception["stacktrace"]["frames"] = e
                .frames
                .iter()
                .map(|url| {
                    let mut f = frame.clone();
                    f["absPath"] = json!(url);
                    f
                })
                .collect();
            exception["rawStacktrace"]["frames"] = json!([]);
            v["entries"][2]["data"]["headers"] = match &e.user_agent {
                Some(ua) => json!([["Accept", "*/*"], ["user-agent", ua]]),
                None => json!([]),
            };
            v
        })
        .collect()
}

/// The evaluation set as Sentry's per-event JSON (Relay's fixture's shape).
fn sentry_events(events: &[eval::LabelledEvent]) -> Vec<Value> {
    let base = template("sentry-event.json");
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (at, user, _) = stamp(i);
            let mut v = base.clone();
            v["event_id"] = json!(format!("{i:032x}"));
            v["timestamp"] = json!(at);
            v["user"] = json!({ "id": user.trim_start_matches('u') });
            let exception = &mut v["exception"]["values"][0];
            exception.as_object_mut().unwrap().remove("type");
            exception["value"] = json!(e.message);
            exception["stacktrace"]["frames"] = e
                .frames
                .iter()
                .map(|url| json!({ "filename": url, "function": "?", "in_app": false }))
                .collect();
            if let Some(ua) = &e.user_agent {
                v["request"]["headers"] = json!({ "User-Agent": ua });
            }
            v
        })
        .collect()
}

/// A CSV field as Python's csv module writes it (QUOTE_MINIMAL).
fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

/// A Python list's `str()`, as Sentry's exporter writes list fields.
fn python_list(items: &[String]) -> String {
    let quoted: Vec<String> = items
        .iter()
        .map(|s| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")))
        .collect();
    format!("[{}]", quoted.join(", "))
}

/// The evaluation set as a Discover export.
fn discover_csv(events: &[eval::LabelledEvent]) -> String {
    let mut out =
        String::from("title,timestamp,issue,user.display,stack.abs_path,user_agent,project\r\n");
    for (i, e) in events.iter().enumerate() {
        let (at, user, issue) = stamp(i);
        let at = at.replace('Z', "+00:00");
        let row = [
            csv_field(e.message.as_deref().unwrap_or("")),
            at,
            issue,
            format!("id:{}", user.trim_start_matches('u')),
            csv_field(&python_list(&e.frames)),
            csv_field(e.user_agent.as_deref().unwrap_or("")),
            "web".to_owned(),
        ];
        out.push_str(&row.join(","));
        out.push_str("\r\n");
    }
    out
}

/// The evaluation set as the matcher's events.
fn matcher_lines(events: &[eval::LabelledEvent]) -> String {
    events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (at, user, issue) = stamp(i);
            let mut v = json!({ "timestamp": at, "user": format!("id:{}", user.trim_start_matches('u')), "issue": issue });
            if let Some(m) = &e.message {
                v["message"] = json!(m);
            }
            if !e.frames.is_empty() {
                v["frames"] = json!(e.frames);
            }
            if let Some(ua) = &e.user_agent {
                v["userAgent"] = json!(ua);
            }
            format!("{v}\n")
        })
        .collect()
}

/// What the matcher says event by event: noise, and events per pattern.
fn expected(events: &[eval::LabelledEvent]) -> (u64, BTreeMap<String, u64>) {
    let matcher = Matcher::builtin_default();
    let mut noise = 0;
    let mut per_pattern = BTreeMap::new();
    for e in events {
        let verdict = matcher.classify(&e.event());
        noise += u64::from(verdict.noise);
        let mut ids: Vec<&str> = verdict.matches.iter().map(|m| m.id).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            *per_pattern.entry(id.to_owned()).or_default() += 1;
        }
    }
    (noise, per_pattern)
}

/// Where two JSON values first differ, and how.
fn first_difference(a: &Value, b: &Value, at: &str) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => x.keys().chain(y.keys()).find_map(|k| {
            first_difference(
                &x[k],
                y.get(k).unwrap_or(&Value::Null),
                &format!("{at}.{k}"),
            )
        }),
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (p, q))| first_difference(p, q, &format!("{at}[{i}]"))),
        _ if a == b => None,
        _ => Some(format!("{at}: {} against {}", cut(a), cut(b))),
    }
}

fn cut(v: &Value) -> String {
    let text = v.to_string();
    text.chars().take(300).collect()
}

fn per_pattern(s: &Summary) -> BTreeMap<String, u64> {
    s.matched.iter().map(|p| (p.id.clone(), p.events)).collect()
}

#[test]
fn every_shape_of_the_evaluation_set_gives_the_matchers_numbers() {
    let events = eval::events();
    let (noise, patterns) = expected(&events);
    assert!(noise > 200 && noise < events.len() as u64, "{noise}");

    let api = api_events(&events);
    let api_array = serde_json::to_string(&api).unwrap();
    let api_lines: String = api.iter().map(|v| format!("{v}\n")).collect();
    // Two pages of the API's answer, appended: one export.
    let (first, second) = api.split_at(api.len() / 2);
    let api_pages = format!(
        "{}\n{}\n",
        serde_json::to_string(first).unwrap(),
        serde_json::to_string(second).unwrap()
    );
    let ingest = sentry_events(&events);
    // Per-event JSON as Sentry writes a file of it: pretty, one after another.
    let ingest_pretty: String = ingest
        .iter()
        .map(|v| format!("{}\n", serde_json::to_string_pretty(v).unwrap()))
        .collect();
    let csv = discover_csv(&events);
    let lines = matcher_lines(&events);

    let reference = run(lines.as_bytes(), &[]);
    assert_eq!(reference.input.events, events.len() as u64);
    assert_eq!(reference.noise.events.noise, noise);
    assert_eq!(per_pattern(&reference), patterns);
    assert_eq!(reference.noise.users.unwrap().total, 37);
    assert_eq!(reference.noise.issues.unwrap().total, 53);
    for (name, export) in [
        ("API array", api_array.as_str()),
        ("API lines", api_lines.as_str()),
        ("API pages", api_pages.as_str()),
        ("per-event JSON", ingest_pretty.as_str()),
        ("Discover CSV", csv.as_str()),
    ] {
        let s = run(export.as_bytes(), &[]);
        assert_eq!(
            s.input.malformed, 0,
            "{name}: {:?}",
            s.input.malformed_first
        );
        let mut want = comparable(&reference);
        let mut got = comparable(&s);
        if name == "per-event JSON" {
            // Sentry's per-event JSON has no issue.
            assert!(s.noise.issues.is_none(), "{name}");
            for v in [&mut want, &mut got] {
                v["noise"]["issues"] = Value::Null;
                v["input"]["coverage"]["issue"] = Value::Null;
                v["missing"] = Value::Null;
                for list in ["categories", "matched"] {
                    for row in v[list].as_array_mut().unwrap() {
                        row["issues"] = Value::Null;
                    }
                }
            }
        }
        assert_eq!(first_difference(&got, &want, ""), None, "{name}");
    }
    // Any chunking reads the same records (byte by byte: the first events).
    let few = serde_json::to_string(&api[..20]).unwrap();
    for (export, chunk) in [(&few, 1), (&api_array, 7), (&api_array, 4096)] {
        let s = run_chunked(export.as_bytes(), chunk, &[]).unwrap();
        assert_eq!(
            s.json(),
            run(export.as_bytes(), &[]).json(),
            "chunks of {chunk}"
        );
    }
}

#[test]
fn the_reader_follows_the_contracts_rule_for_sentry_events() {
    // The events npm's toEvent and Python's to_event read to these texts.
    let path = format!(
        "{}/tests/parity/sentry-events.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let fixtures: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = fixtures["cases"].as_array().unwrap();
    assert!(cases.len() >= 10);
    for case in cases {
        let name = case["name"].as_str().unwrap();
        let json = serde_json::to_vec(&case["event"]).unwrap();
        let read = report::read_event(&json)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .unwrap_or_else(|| panic!("{name}: skipped"));
        let reads = &case["reads"];
        let want = Event {
            exception_type: reads["type"].as_str().map(str::to_owned),
            message: reads["message"].as_str().map(str::to_owned),
            frames: reads["frames"]
                .as_array()
                .map(|f| f.iter().map(|u| u.as_str().unwrap().to_owned()).collect())
                .unwrap_or_default(),
            user_agent: reads["userAgent"].as_str().map(str::to_owned),
        };
        assert_eq!(read, want, "{name}");
    }
    // The API's events of Sentry's own examples.
    let read = |v: &Value| {
        report::read_event(&serde_json::to_vec(v).unwrap())
            .unwrap()
            .unwrap()
    };
    let group_event = read(&template("sentry-api-event.json"));
    assert_eq!(
        group_event.message_text().unwrap(),
        "ForbiddenError: GET /organizations/hellboy-meowmeow/users/ 403"
    );
    assert_eq!(group_event.frames.len(), 2);
    assert!(group_event.user_agent.unwrap().contains("Chrome/83"));
    let simple = read(&template("sentry-api-simple-event.json"));
    assert_eq!(
        simple.message.as_deref(),
        Some("This is an example Python exception")
    );
    let relay = read(&template("sentry-event.json"));
    assert_eq!(
        relay.frames,
        [
            "<anonymous>",
            "eval at <anonymous> (unknown source), <anonymous>"
        ]
    );
}

#[test]
fn malformed_records_are_counted_with_their_line_and_the_rest_read() {
    let good = r#"{"message":"Script error.","timestamp":1790000000}"#;
    let lines = [
        good,
        r#"{"message":"broken"#,
        good,
        r#"{"mesage":"misspelt"}"#,
        "not json at all",
        r#"{"message":3}"#,
        good,
        r#"{"event_id":"x","type":"transaction"}"#,
    ]
    .join("\n");
    let s = run(lines.as_bytes(), &[]);
    assert_eq!(s.input.events, 3);
    assert_eq!(s.input.malformed, 4);
    let at: Vec<u64> = s.input.malformed_first.iter().map(|m| m.line).collect();
    assert_eq!(at, [2, 4, 5, 6]);
    assert!(
        s.input.malformed_first[1]
            .why
            .contains("unknown field `mesage`")
    );
    assert_eq!(s.input.skipped[0].count, 1);
    assert!(s.text().contains("line 2"));

    let csv = "title,timestamp,count\r\nScript error.,2026-10-01T00:00:00+00:00,2\r\n\
               one,too,many,fields\r\nok,yesterday,1\r\n\"ResizeObserver loop limit exceeded\",,3\r\nx,,lots\r\n";
    let s = run(csv.as_bytes(), &[]);
    // Rows stand for their count: 2 + 3.
    assert_eq!((s.input.records, s.input.events), (2, 5));
    let at: Vec<(u64, &str)> = s
        .input
        .malformed_first
        .iter()
        .map(|m| (m.line, m.why.as_str()))
        .collect();
    assert_eq!(at.len(), 3, "{at:?}");
    assert_eq!((at[0].0, at[1].0, at[2].0), (3, 4, 6));
    assert!(at[0].1.contains("4 fields where the header has 3"));
    assert!(at[1].1.contains("timestamp"));
    assert!(at[2].1.contains("whole number"));
    assert_eq!(s.noise.events.noise, 5);

    // A pretty-printed file with a broken object: the next object is read.
    let pretty = "{\n  \"message\": \"Script error.\"\n}\n{\n  \"message\": \"cut\n{\n  \"message\": \"Checkout failed\"\n}\n";
    let s = run(pretty.as_bytes(), &[]);
    assert_eq!((s.input.events, s.input.malformed), (2, 1));
    assert_eq!(s.input.malformed_first[0].line, 4);
}

#[test]
fn unknown_formats_are_refused_with_what_was_expected() {
    for input in [
        &b"just some text\nmore\n"[..],
        b"project,count\r\nweb,3\r\n",
        b"\x00\x01\x02",
    ] {
        let e = run_chunked(input, 3, &[]).unwrap_err();
        assert!(
            e.contains("unknown format") && e.contains("Discover CSV"),
            "{e}"
        );
    }
    let e = run_chunked(b"", 1, &[]).unwrap_err();
    assert!(e.contains("empty"), "{e}");
}

#[test]
fn what_an_export_lacks_is_said_not_zeroed() {
    let s = run(
        b"{\"message\":\"Script error.\"}\n{\"message\":\"Checkout failed\"}\n",
        &[],
    );
    assert!(s.noise.users.is_none() && s.noise.issues.is_none() && s.time.is_none());
    let missing = s.missing.join("\n");
    for what in ["issues:", "users:", "over time"] {
        assert!(missing.contains(what), "{missing}");
    }
    let v: Value = serde_json::from_str(&s.json()).unwrap();
    assert_eq!(v["noise"]["users"], Value::Null);
    assert_eq!(v["categories"][0]["users"], Value::Null);
    let text = s.text();
    assert!(
        text.contains("not in the export") && text.contains("Not computed"),
        "{text}"
    );
    assert!(!text.contains(" 0 users"));
    // Partly there: counted over those that have it, and said.
    let s = run(
        b"{\"message\":\"a b c d\",\"user\":\"u1\"}\n{\"message\":\"e f g h\"}\n",
        &[],
    );
    assert_eq!(s.noise.users.unwrap().total, 1);
    assert!(
        s.missing
            .iter()
            .any(|m| m.contains("1 of 2 events carry none")),
        "{:?}",
        s.missing
    );
}

#[test]
fn a_suggestion_adds_what_its_preview_adds() {
    let events = eval::events();
    let lines = matcher_lines(&events);
    let s = run(lines.as_bytes(), &[]);
    let suggested: Vec<_> = s
        .unmatched
        .top
        .iter()
        .filter_map(|m| m.suggestion.as_ref().map(|sg| (m, sg)))
        .take(8)
        .collect();
    assert!(suggested.len() >= 5);
    for (message, sg) in suggested {
        let given = if sg.kind == "regex" {
            format!("re:{}", sg.pattern)
        } else {
            sg.pattern.clone()
        };
        let preview = run(lines.as_bytes(), &["--pattern", &given]);
        let c = &preview.candidates[0];
        assert_eq!(c.adds, sg.adds, "{}: {given}", message.message);
        assert_eq!(c.events - c.adds, sg.already_noise, "{given}");
        assert!(sg.adds >= message.events, "{given}");
        assert!(!c.samples.is_empty());
        // It was checked as a custom pattern: the import will take it.
        assert!(report::candidate(&given, 0).is_ok());
    }
}

#[test]
fn a_full_message_table_drops_rare_messages_and_says_so() {
    // Words, not numbers: numbers are folded into one message.
    let word = |i: usize| -> String {
        let (a, b) = (i % 26, i / 26);
        format!(
            "{}{}",
            char::from(b'a' + a as u8),
            char::from(b'a' + b as u8)
        )
    };
    let mut export = String::new();
    for i in 0..400 {
        export.push_str(&format!(
            "{{\"message\":\"rare message {} here\"}}\n",
            word(i)
        ));
        if i % 4 == 0 {
            export.push_str("{\"message\":\"Checkout failed hard\"}\n");
        }
    }
    let s = run(export.as_bytes(), &["--max-messages", "20"]);
    let top = &s.unmatched.top[0];
    assert_eq!(top.message, "Checkout failed hard");
    assert_eq!(top.events, 100);
    assert!(s.unmatched.untracked_events > 0);
    assert!(s.unmatched.messages <= 20);
    assert!(s.text().contains("table of messages filled"));
}

#[test]
fn time_buckets_and_the_monthly_rate() {
    let mut export = String::new();
    for day in 1..=30 {
        export.push_str(&format!(
            "{{\"message\":\"Script error.\",\"timestamp\":\"2026-09-{day:02}T12:00:00Z\"}}\n{{\"message\":\"Checkout failed\",\"timestamp\":\"2026-09-{day:02}T13:00:00Z\"}}\n"
        ));
    }
    export.push_str("{\"message\":\"Checkout failed\",\"timestamp\":\"2026-10-01T12:00:00Z\"}\n");
    let s = run(export.as_bytes(), &[]);
    let t = s.time.as_ref().unwrap();
    assert_eq!(t.bucket, "day");
    assert_eq!(t.series.len(), 31);
    assert_eq!((t.series[0].events, t.series[0].noise), (2, 1));
    assert_eq!(t.months.len(), 2);
    assert_eq!(t.months[1].start, "2026-10-01");
    assert_eq!(t.days, 30.0);
    assert_eq!(t.per_month.noise, 30.0);
    assert_eq!(t.per_month.events, 61.0);
    assert!(
        s.text().contains("about 30 events a month of 61"),
        "{}",
        s.text()
    );
}

#[test]
fn noise_in_first_party_frames_is_suspected() {
    let export = concat!(
        r#"{"message":"ResizeObserver loop limit exceeded","frames":["https://app.example/assets/main.js","https://app.example/assets/vendor.js"]}"#,
        "\n",
        r#"{"message":"ResizeObserver loop limit exceeded","frames":["https://app.example/assets/main.js","chrome-extension://abc/x.js"]}"#,
        "\n",
        r#"{"message":"ResizeObserver loop limit exceeded","frames":["https://app.example.evil.test/x.js"]}"#,
        "\n",
        r#"{"message":"Checkout failed","frames":["https://app.example/assets/main.js"]}"#,
        "\n",
    );
    let s = run(export.as_bytes(), &["--first-party", "https://app.example"]);
    let fp = s.first_party.as_ref().unwrap();
    assert_eq!((fp.events, fp.judged), (1, 4));
    assert_eq!(fp.samples[0].line, 1);
    assert!(s.matched.iter().any(|p| p.first_party == 1));
    assert!(s.text().contains("Suspected false positives"));
}

#[test]
fn the_page_is_self_contained_and_escapes_the_export() {
    let export = concat!(
        r#"{"message":"<script>alert(1)</script> & <img src=x onerror=alert(2)>","timestamp":1790000000,"user":"<b>u</b>"}"#,
        "\n",
        r#"{"message":"Script error.","timestamp":1790086400}"#,
        "\n"
    );
    let s = run(export.as_bytes(), &[]);
    let page = s.html();
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!page.contains("<script>alert") && !page.contains("<img"));
    assert!(page.contains("Content-Security-Policy") && page.contains("default-src 'none'"));
    // Nothing that would fetch: no element with a source or a link, no
    // style that imports.
    for tag in page
        .split('<')
        .skip(1)
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
    {
        let tag = &tag[..tag.find('>').unwrap()];
        assert!(!tag.contains(" src=") && !tag.contains(" href="), "<{tag}>");
    }
    assert!(!page.contains("url(") && !page.contains("@import"));
    assert_eq!(page.matches("<script>").count(), 1);
    assert!(page.contains("id=\"chart-time\"") && page.contains("class=\"sortable\""));
}

#[test]
fn every_summary_line_fits_80_columns() {
    let events = eval::events();
    let csv = discover_csv(&events);
    let s = run(
        csv.as_bytes(),
        &[
            "--pattern",
            "re:^TypeError: Cannot read properties of (null|undefined) \\(reading '[^']*'\\)",
            "--first-party",
            "https://app.example",
            "--top",
            "40",
        ],
    );
    let text = s.text();
    for line in text.lines() {
        assert!(
            line.chars().count() <= 80,
            "{} chars: {line}",
            line.chars().count()
        );
    }
    assert!(text.contains("not read   columns project"), "{text}");
}

#[test]
fn emitted_files() {
    let events = eval::events();
    let lines = matcher_lines(&events);
    let s = run(
        lines.as_bytes(),
        &[
            "--emit",
            "patterns",
            "--accept",
            "1,2",
            "--pattern",
            "acme widget failed",
        ],
    );
    let file: Vec<noise_filter_core::NewPattern> =
        serde_json::from_str(&s.emit_patterns().unwrap()).unwrap();
    assert_eq!(file.len(), 3);
    assert_eq!(file[0].pattern, "acme widget failed");
    assert_eq!(
        file[1].pattern,
        s.unmatched.top[0].suggestion.as_ref().unwrap().pattern
    );
    for (i, p) in file.into_iter().enumerate() {
        p.validate(format!("custom-emitted-{i}")).unwrap();
    }
    let s = run(lines.as_bytes(), &["--emit", "sentry", "--accept", "9999"]);
    assert!(s.emit_sentry().unwrap_err().contains("--accept 9999"));
    let s = run(lines.as_bytes(), &["--emit", "sentry"]);
    let filters: Value = serde_json::from_str(&s.emit_sentry().unwrap()).unwrap();
    let globs: Vec<&str> = filters["errorMessages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["glob"].as_str().unwrap())
        .collect();
    assert!(
        globs.contains(&"*ResizeObserver loop limit exceeded*"),
        "{globs:?}"
    );
    let deny: Vec<&str> = filters["denyUrls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["regex"].as_str().unwrap())
        .collect();
    assert!(deny.contains(&"chrome-extension:\\/\\/"), "{deny:?}");
    // Crawler user agents: said, not turned into message filters.
    assert!(
        filters["leftOut"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l["why"].as_str().unwrap().contains("user agents"))
    );
}

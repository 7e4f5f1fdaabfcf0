//! The admin tool on a real SQLite store: clear errors, non-zero exits, and
//! nothing written by a refused change.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use support::{TempDir, add_pattern, admin_err, admin_ok, create_key};

fn stored_rows(db: &std::path::Path) -> Vec<(String, String, Vec<u8>)> {
    let conn = rusqlite::Connection::open(db).unwrap();
    let mut stmt = conn
        .prepare("SELECT store, key, value FROM spin_key_value ORDER BY store, key")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

#[test]
fn keys_are_shown_once_and_stored_as_hashes() {
    let state = TempDir::new("keys");
    let s = state.path();
    let key = create_key(s, &[], "acme");
    let hash = noise_filter_core::KeyHash::of(&key);
    // Spin's table, the record under the hash, no trace of the key itself.
    let rows = stored_rows(&state.db());
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].0.as_str(), rows[0].1.clone()),
        ("default", format!("key/{}", hash.as_str()))
    );
    assert!(!String::from_utf8_lossy(&rows[0].2).contains(&key));
    let list = admin_ok(s, &[], &["keys", "list"]);
    assert!(
        list.contains(hash.short()) && list.contains("acme") && !list.contains(&key),
        "{list}"
    );
    assert!(
        !list.contains(hash.as_str()),
        "only a prefix of the hash is listed"
    );
}

#[test]
fn listing_revoking_and_their_errors() {
    let state = TempDir::new("revoke");
    let s = state.path();
    let acme = create_key(s, &[], "acme");
    create_key(s, &[], "beta");
    let beta_only = admin_ok(s, &[], &["keys", "list", "--account", "beta"]);
    assert_eq!(
        beta_only.lines().count(),
        2,
        "header and one key: {beta_only}"
    );
    assert!(!beta_only.contains("acme"));

    let short = noise_filter_core::KeyHash::of(&acme).short().to_owned();
    let out = admin_ok(s, &[], &["keys", "revoke", &short[..8]]);
    assert!(out.contains("revoked") && out.contains("acme"), "{out}");
    let again = admin_ok(s, &[], &["keys", "revoke", &short]);
    assert!(again.contains("already revoked"), "{again}");
    let list = admin_ok(s, &[], &["keys", "list", "--account", "acme"]);
    assert!(
        list.lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .last()
            .unwrap()
            .ends_with('Z'),
        "{list}"
    );

    assert!(admin_err(s, &[], &["keys", "revoke", "abc"]).contains("at least 6 hex digits"));
    assert!(admin_err(s, &[], &["keys", "revoke", "zzzzzzzz"]).contains("at least 6 hex digits"));
    assert!(admin_err(s, &[], &["keys", "revoke", "000000000000"]).contains("no key"));
    assert!(
        admin_err(s, &[], &["keys", "create", "--account", "Bad Name"])
            .contains("invalid account name")
    );
    assert!(
        admin_err(s, &[], &["keys", "list", "--account", "Upper"]).contains("invalid account name")
    );
}

#[test]
fn an_ambiguous_prefix_revokes_nothing() {
    let state = TempDir::new("ambiguous");
    let s = state.path();
    // Two records whose hashes share a 6-digit prefix, written directly.
    create_key(s, &[], "acme");
    let db = rusqlite::Connection::open(state.db()).unwrap();
    let record = br#"{"account":"acme","label":"","created":"2025-01-01T00:00:00Z"}"#.to_vec();
    for hash in [
        "abcdef0000000000000000000000000000000000000000000000000000000001",
        "abcdef0000000000000000000000000000000000000000000000000000000002",
    ] {
        db.execute(
            "INSERT INTO spin_key_value (store, key, value) VALUES ('default', ?1, ?2)",
            rusqlite::params![format!("key/{hash}"), record],
        )
        .unwrap();
    }
    let before = stored_rows(&state.db());
    assert!(admin_err(s, &[], &["keys", "revoke", "abcdef"]).contains("give more digits"));
    assert_eq!(stored_rows(&state.db()), before);
    admin_ok(
        s,
        &[],
        &[
            "keys",
            "revoke",
            "abcdef0000000000000000000000000000000000000000000000000000000002",
        ],
    );
}

#[test]
fn patterns_add_list_remove_and_refusals_write_nothing() {
    let state = TempDir::new("patterns");
    let s = state.path();
    assert!(
        admin_ok(s, &[], &["patterns", "list", "--account", "acme"]).contains("no custom patterns")
    );
    let out = add_pattern(s, &[], "acme", "widget exploded");
    assert!(out.contains("custom-1"), "{out}");
    admin_ok(
        s,
        &[],
        &[
            "patterns",
            "add",
            "--account",
            "acme",
            "--pattern",
            "^Gadget \\d+ failed$",
            "--type",
            "regex",
            "--category",
            "KNOWN_LIBRARY",
            "--confidence",
            "0.7",
            "--source",
            "our tracker",
        ],
    );
    let list = admin_ok(s, &[], &["patterns", "list", "--account", "acme"]);
    assert!(
        list.contains("custom-1") && list.contains("custom-2") && list.contains("known-library"),
        "{list}"
    );
    assert!(
        list.contains("our tracker") && list.contains("regex"),
        "{list}"
    );

    admin_ok(
        s,
        &[],
        &[
            "patterns",
            "add",
            "--account",
            "acme",
            "--pattern",
            "chosen id",
            "--id",
            "custom-chosen",
        ],
    );
    let before = stored_rows(&state.db());
    for (args, message) in [
        (
            vec!["--pattern", "(?<=x)y", "--type", "regex"],
            "look-around",
        ),
        (vec!["--pattern", "ab"], "at least 3"),
        (
            vec!["--pattern", "valid text", "--confidence", "1.5"],
            "confidence",
        ),
        (
            vec!["--pattern", "valid text", "--category", "weird"],
            "unknown category",
        ),
        (
            vec!["--pattern", "valid text", "--type", "glob"],
            "string or regex",
        ),
        (
            vec!["--pattern", "valid text", "--id", "custom-chosen"],
            "already in use",
        ),
        // The assigned form is the service's: a chosen `custom-1` could
        // name another pattern than the one assigned that id.
        (
            vec!["--pattern", "valid text", "--id", "custom-1"],
            "form of an id the service assigns",
        ),
        (
            vec!["--pattern", "valid text", "--id", "Not An Id"],
            "invalid id",
        ),
    ] {
        let mut all = vec!["patterns", "add", "--account", "acme"];
        all.extend(args);
        let err = admin_err(s, &[], &all);
        assert!(err.contains(message), "{all:?}: {err}");
    }
    assert_eq!(
        stored_rows(&state.db()),
        before,
        "a refused pattern writes nothing"
    );

    assert!(
        admin_err(
            s,
            &[],
            &["patterns", "remove", "--account", "acme", "custom-9"]
        )
        .contains("no custom pattern")
    );
    assert_eq!(stored_rows(&state.db()), before);
    admin_ok(
        s,
        &[],
        &["patterns", "remove", "--account", "acme", "custom-1"],
    );
    let list = admin_ok(s, &[], &["patterns", "list", "--account", "acme"]);
    assert!(
        !list.contains("custom-1 ") && list.contains("custom-2"),
        "{list}"
    );
    // Ids are never reused.
    let out = add_pattern(s, &[], "acme", "another one");
    assert!(out.contains("custom-3"), "{out}");
}

#[test]
fn import_is_all_or_nothing() {
    let state = TempDir::new("import");
    let s = state.path();
    let good = s.join("good.json");
    std::fs::write(
        &good,
        r#"[{"pattern": "first imported"},
            {"pattern": "second [^ ]* imported", "type": "regex", "category": "bot-traffic", "confidence": 0.6},
            {"id": "custom-mine", "pattern": "third imported", "source": "docs"}]"#,
    )
    .unwrap();
    let out = admin_ok(
        s,
        &[],
        &[
            "patterns",
            "import",
            "--account",
            "acme",
            good.to_str().unwrap(),
        ],
    );
    assert!(
        out.contains("imported 3") && out.contains("custom-mine"),
        "{out}"
    );

    let before = stored_rows(&state.db());
    let bad = s.join("bad.json");
    std::fs::write(
        &bad,
        r#"[{"pattern": "fine one"}, {"pattern": "(unclosed", "type": "regex"}]"#,
    )
    .unwrap();
    let err = admin_err(
        s,
        &[],
        &[
            "patterns",
            "import",
            "--account",
            "acme",
            bad.to_str().unwrap(),
        ],
    );
    assert!(
        err.contains("pattern 2") && err.contains("nothing written"),
        "{err}"
    );
    assert_eq!(stored_rows(&state.db()), before);

    let unknown_field = s.join("field.json");
    std::fs::write(
        &unknown_field,
        r#"[{"pattern": "fine one", "colour": "red"}]"#,
    )
    .unwrap();
    assert!(
        admin_err(
            s,
            &[],
            &[
                "patterns",
                "import",
                "--account",
                "acme",
                unknown_field.to_str().unwrap()
            ]
        )
        .contains("colour")
    );
    let not_json = s.join("x.json");
    std::fs::write(&not_json, "patterns please").unwrap();
    assert!(
        admin_err(
            s,
            &[],
            &[
                "patterns",
                "import",
                "--account",
                "acme",
                not_json.to_str().unwrap()
            ]
        )
        .contains("JSON array")
    );
    assert!(
        admin_err(
            s,
            &[],
            &[
                "patterns",
                "import",
                "--account",
                "acme",
                "/nonexistent.json"
            ]
        )
        .contains("cannot read")
    );
    assert_eq!(stored_rows(&state.db()), before);
}

#[test]
fn concurrent_admins_lose_no_change() {
    let state = TempDir::new("concurrent");
    let s = state.path().to_owned();
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let s = s.clone();
            std::thread::spawn(move || {
                let text = format!("pattern from admin {i}");
                admin_ok(
                    &s,
                    &[],
                    &["patterns", "add", "--account", "acme", "--pattern", &text],
                );
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let list = admin_ok(&s, &[], &["patterns", "list", "--account", "acme"]);
    for i in 0..6 {
        assert!(list.contains(&format!("pattern from admin {i}")), "{list}");
    }
}

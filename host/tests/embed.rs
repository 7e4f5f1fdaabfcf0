//! The embeddable component (`embed/`, WIT world `noise-filter:core/embed`)
//! loaded by wasmtime, as any embedder would, and compared with the native
//! core: every request of the shared fixtures (`core/tests/parity/
//! requests.json`) gives the same status, headers and body, and the matcher
//! the same verdicts.
//!
//! The component is built by `cargo build -p noise-filter-embed --target
//! wasm32-wasip2 --profile component` into this test's target folder (a
//! no-op when up to date); `NOISE_FILTER_EMBED_COMPONENT` names another.
#![allow(clippy::unwrap_used, unreachable_pub, missing_debug_implementations)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

use noise_filter_core::{
    Counter, Event, Matcher, MemoryStore, NewPattern, Request, UnixMillis, admin, pattern_list, run,
};
use serde_json::Value;
use wasmtime::component::{Component, HasSelf, Linker, ResourceTable};
use wasmtime::{Config, Engine, Store};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

wasmtime::component::bindgen!({
    path: "../wit",
    world: "embed",
});

use exports::noise_filter::core::{endpoint, matching};
use noise_filter::core::store as wit_store;

/// The embedder's side: WASI for Rust's std, and a map as the store.
struct Embedder {
    wasi: WasiCtx,
    table: ResourceTable,
    /// (label, key) → bytes: both labels, the keys as the core names them.
    kv: BTreeMap<(String, String), Vec<u8>>,
    failing: bool,
}

impl WasiView for Embedder {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

fn label(place: &wit_store::RecordKey) -> String {
    match place.label {
        wit_store::StoreLabel::Default => "default".into(),
        wit_store::StoreLabel::Rate => "rate".into(),
    }
}

impl wit_store::Host for Embedder {
    fn get(&mut self, place: wit_store::RecordKey) -> Result<Option<Vec<u8>>, ()> {
        if self.failing {
            return Err(());
        }
        Ok(self.kv.get(&(label(&place), place.key)).cloned())
    }

    fn increment(&mut self, place: wit_store::RecordKey, delta: i64) -> Result<i64, ()> {
        if self.failing {
            return Err(());
        }
        let slot = (label(&place), place.key);
        let (new, bytes) =
            Counter::add(self.kv.get(&slot).map(Vec::as_slice), delta).map_err(|_| ())?;
        self.kv.insert(slot, bytes.to_vec());
        Ok(new)
    }

    fn delete(&mut self, place: wit_store::RecordKey) -> Result<(), ()> {
        if self.failing {
            return Err(());
        }
        self.kv.remove(&(label(&place), place.key));
        Ok(())
    }
}

impl noise_filter::core::types::Host for Embedder {}

fn component_path() -> PathBuf {
    if let Some(path) = std::env::var_os("NOISE_FILTER_EMBED_COMPONENT") {
        return path.into();
    }
    // <target>/<profile>/deps/embed-<hash>
    let target = std::env::current_exe()
        .unwrap()
        .ancestors()
        .nth(3)
        .unwrap()
        .to_owned();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .env("CARGO_TARGET_DIR", &target)
        .args([
            "build",
            "-p",
            "noise-filter-embed",
            "--target",
            "wasm32-wasip2",
            "--profile",
            "component",
        ])
        .status()
        .unwrap();
    assert!(status.success(), "the component did not build");
    target.join("wasm32-wasip2/component/noise_filter_embed.wasm")
}

fn instantiate() -> (Store<Embedder>, Embed) {
    let engine = Engine::new(&Config::new()).unwrap();
    let component = Component::from_file(&engine, component_path()).unwrap();
    let mut linker = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).unwrap();
    Embed::add_to_linker::<Embedder, HasSelf<Embedder>>(&mut linker, |e| e).unwrap();
    let mut store = Store::new(
        &engine,
        Embedder {
            wasi: WasiCtx::builder().build(),
            table: ResourceTable::new(),
            kv: BTreeMap::new(),
            failing: false,
        },
    );
    let embed = Embed::instantiate(&mut store, &component, &linker).unwrap();
    (store, embed)
}

fn fixtures() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../core/tests/parity/requests.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn text(v: &Value, name: &str) -> String {
    v[name].as_str().unwrap_or_default().to_owned()
}

fn hex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn new_patterns(v: &Value) -> Vec<NewPattern> {
    serde_json::from_value(v.clone()).unwrap()
}

fn wit_patterns(v: &Value) -> Vec<exports::noise_filter::core::admin::NewPattern> {
    use noise_filter::core::types::PatternKind;
    new_patterns(v)
        .into_iter()
        .map(|p| exports::noise_filter::core::admin::NewPattern {
            id: p.id,
            pattern: p.pattern,
            kind: match p.kind {
                noise_filter_core::Kind::String => PatternKind::String,
                noise_filter_core::Kind::Regex => PatternKind::Regex,
            },
            category: p.category,
            confidence: p.confidence,
            source: p.source,
        })
        .collect()
}

#[test]
fn every_shared_request_gets_the_native_bytes_through_the_component() {
    let fx = fixtures();
    let now = fx["now"].as_u64().unwrap();
    let (mut store, embed) = instantiate();
    let wadmin = embed.noise_filter_core_admin();
    let mut native = MemoryStore::new();
    let mut keys = BTreeMap::new();

    // Seeds both stores, each through its own side's admin functions.
    for seed in fx["keys"].as_array().unwrap() {
        let (random, account, lbl) = (
            hex(&text(seed, "random")),
            text(seed, "account"),
            text(seed, "label"),
        );
        let made = admin::create_key(&random, &account, &lbl, UnixMillis(now)).unwrap();
        let mut value = made.record.value.clone();
        let theirs = wadmin
            .call_create_key(&mut store, &random, &account, &lbl, now)
            .unwrap()
            .unwrap();
        assert_eq!(theirs.key, made.key.expose());
        assert_eq!(theirs.write.value, value);
        if seed["revoked"].as_bool().unwrap_or(false) {
            value = admin::revoke_key(Some(&value), UnixMillis(now))
                .unwrap()
                .value;
            let revoked = wadmin
                .call_revoke_key(&mut store, Some(&theirs.write.value), now)
                .unwrap()
                .unwrap();
            assert_eq!(revoked.value, value);
        }
        native.set(&made.record.record, value.clone());
        store
            .data_mut()
            .kv
            .insert(("default".into(), theirs.write.place.key.clone()), value);
        keys.insert(text(seed, "name"), made.key.expose().to_owned());
    }
    for account in fx["customPatterns"].as_array().unwrap() {
        let name = text(account, "account");
        native
            .add_patterns(&name, new_patterns(&account["patterns"]), UnixMillis(now))
            .unwrap();
        let place = wadmin
            .call_patterns_record(&mut store, &name)
            .unwrap()
            .unwrap();
        let added = wadmin
            .call_add_patterns(&mut store, None, &wit_patterns(&account["patterns"]), now)
            .unwrap()
            .unwrap();
        store
            .data_mut()
            .kv
            .insert(("default".into(), place.key), added.value);
    }

    let mut etag = String::new();
    let mut compared = 0;
    for case in fx["requests"].as_array().unwrap() {
        let name = text(case, "name");
        let method = case["method"].as_str().unwrap_or("GET").to_owned();
        let target = text(case, "target");
        let headers: Vec<(String, Vec<u8>)> = case["headers"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|h| {
                let mut value = h[1].as_str().unwrap().replace("{etag}", &etag);
                for (k, key) in &keys {
                    value = value.replace(&format!("{{key:{k}}}"), key);
                }
                (h[0].as_str().unwrap().to_owned(), value.into_bytes())
            })
            .collect();
        let at = now + case["at"].as_u64().unwrap_or(0);
        let fails = case["storeFails"].as_bool().unwrap_or(false);
        native.failing = fails;
        store.data_mut().failing = fails;
        let lines: Vec<(&str, &[u8])> = headers
            .iter()
            .map(|(n, v)| (n.as_str(), v.as_slice()))
            .collect();
        let request = Request {
            method: &method,
            target: &target,
            headers: &lines,
        };
        let wit_request = endpoint::Request {
            method: method.clone(),
            target: target.clone(),
            headers: headers.clone(),
        };
        for _ in 0..case["repeat"].as_u64().unwrap_or(1) {
            let want = run(&request, UnixMillis(at), &mut native);
            let got = embed
                .noise_filter_core_endpoint()
                .call_handle(&mut store, &wit_request, at)
                .unwrap();
            assert_eq!(got.status, want.status, "{name}");
            let want_headers: Vec<(String, String)> = want
                .headers
                .iter()
                .map(|(n, v)| ((*n).to_owned(), v.clone()))
                .collect();
            assert_eq!(got.headers, want_headers, "{name}");
            assert_eq!(got.body, want.body.as_ref(), "{name}");
            if let Some(tag) = want.header("etag") {
                etag = tag.to_owned();
            }
            compared += 1;
        }
        native.failing = false;
        store.data_mut().failing = false;
    }
    assert!(compared > 1000, "{compared}");
}

#[test]
fn the_components_matcher_agrees_with_the_native_matcher() {
    let fx = fixtures();
    let (mut store, embed) = instantiate();
    let wm = embed.noise_filter_core_matching().matcher();
    let events: Vec<Event> = serde_json::from_value(fx["events"].clone()).unwrap();
    let extra = pattern_list::read_patterns(&Some(&fx["matcherPatterns"])).unwrap();

    let native_builtin = Matcher::builtin(0.5);
    let native_custom =
        Matcher::new(native_builtin.patterns().iter().cloned().chain(extra)).unwrap();
    let builtin = wm.call_builtin(&mut store, Some(0.5)).unwrap();
    let patterns = wm.call_patterns(&mut store, builtin).unwrap();
    // No threshold: the core's default set, the one the endpoint lists.
    let default = wm.call_builtin(&mut store, None).unwrap();
    let default_ids: Vec<String> = wm
        .call_patterns(&mut store, default)
        .unwrap()
        .into_iter()
        .map(|p| p.id)
        .collect();
    let native_default: Vec<String> = Matcher::builtin_default()
        .patterns()
        .iter()
        .map(|p| p.id.clone())
        .collect();
    assert_eq!(default_ids, native_default);
    let custom_patterns: Vec<matching::Pattern> = native_custom
        .patterns()
        .iter()
        .map(|p| matching::Pattern {
            id: p.id.clone(),
            pattern: p.pattern.clone(),
            kind: match p.kind {
                noise_filter_core::Kind::String => noise_filter::core::types::PatternKind::String,
                noise_filter_core::Kind::Regex => noise_filter::core::types::PatternKind::Regex,
            },
            category: p.category.clone(),
            confidence: p.confidence,
        })
        .collect();
    assert_eq!(patterns.len(), native_builtin.patterns().len());
    let custom = wm
        .call_from_patterns(&mut store, &custom_patterns)
        .unwrap()
        .unwrap();

    // The first-party rule of the fixtures, given through `with-first-party`.
    let strings = |list: &serde_json::Value| -> Vec<String> {
        serde_json::from_value(list.clone()).unwrap_or_default()
    };
    let (origins, paths) = (
        strings(&fx["firstParty"]["origins"]),
        strings(&fx["firstParty"]["paths"]),
    );
    let native_first_party = Matcher::builtin(0.5).with_first_party(
        noise_filter_core::FirstParty::new(origins.clone(), paths.clone()).unwrap(),
    );
    let first_party = wm
        .call_with_first_party(&mut store, builtin, &origins, &paths)
        .unwrap()
        .unwrap();
    let refused = wm
        .call_with_first_party(&mut store, builtin, &[], &[])
        .unwrap()
        .unwrap_err();
    assert!(
        refused.starts_with("firstParty: no origins and no paths"),
        "{refused}"
    );

    for (native, theirs) in [
        (&native_builtin, builtin),
        (&native_custom, custom),
        (&native_first_party, first_party),
    ] {
        for event in &events {
            let want = native.classify(event);
            let wit_event = matching::Event {
                exception_type: event.exception_type.clone(),
                message: event.message.clone(),
                frames: event.frames.clone(),
                user_agent: event.user_agent.clone(),
            };
            let got = wm.call_classify(&mut store, theirs, &wit_event).unwrap();
            assert_eq!(got.noise, want.noise, "{event:?}");
            let got: Vec<(String, String, f64, String)> = got
                .matches
                .into_iter()
                .map(|m| {
                    let field = match m.field {
                        matching::Field::Message => "Message".to_owned(),
                        matching::Field::Frame(i) => format!("Frame({i})"),
                        matching::Field::UserAgent => "UserAgent".to_owned(),
                    };
                    (m.id, m.category, m.confidence, field)
                })
                .collect();
            let want: Vec<(String, String, f64, String)> = want
                .matches
                .iter()
                .map(|m| {
                    let field = match m.field {
                        noise_filter_core::Field::Message => "Message".to_owned(),
                        noise_filter_core::Field::Frame(i) => format!("Frame({i})"),
                        noise_filter_core::Field::UserAgent => "UserAgent".to_owned(),
                    };
                    (m.id.to_owned(), m.category.to_owned(), m.confidence, field)
                })
                .collect();
            assert_eq!(got, want, "{event:?}");
            assert_eq!(
                wm.call_is_noise(&mut store, theirs, &wit_event).unwrap(),
                native.is_noise(event)
            );
        }
    }
    let refused = wm
        .call_from_patterns(
            &mut store,
            &[matching::Pattern {
                id: "bad".into(),
                pattern: "(?<=a)b".into(),
                kind: noise_filter::core::types::PatternKind::Regex,
                category: String::new(),
                confidence: 1.0,
            }],
        )
        .unwrap();
    assert!(refused.unwrap_err().starts_with("pattern bad: "));
}

/// The component imports only what its world says (the store and the
/// shared types) and what Rust's std links for start-up (WASI's CLI basics,
/// I/O streams, a hash seed): no `wasi:http`, nothing of Spin, so any
/// wasmtime embedding can satisfy it with `add_wasip2` and the store.
#[test]
fn the_component_imports_only_its_store_and_wasi_basics() {
    const ALLOWED: [&str; 4] = [
        "noise-filter:core/",
        "wasi:io/",
        "wasi:cli/",
        "wasi:random/insecure-seed",
    ];
    let engine = Engine::default();
    let component = Component::from_file(&engine, component_path()).unwrap();
    let imports: Vec<String> = component
        .component_type()
        .imports(&engine)
        .map(|(name, _)| name.to_owned())
        .collect();
    assert!(
        imports
            .iter()
            .any(|i| i.starts_with("noise-filter:core/store")),
        "{imports:?}"
    );
    let unexpected: Vec<&String> = imports
        .iter()
        .filter(|i| !ALLOWED.iter().any(|a| i.starts_with(a)))
        .collect();
    assert!(unexpected.is_empty(), "unexpected imports: {unexpected:?}");
}

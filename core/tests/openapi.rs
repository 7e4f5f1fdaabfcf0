// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
//! `docs/openapi.json` agrees with the core.
//!
//! The document is compiled in (`include_str!`), so this also runs under wasm.
//! Every check drives real requests through [`noise_filter_core::run`] and
//! compares what the core answers with what the document promises: statuses,
//! header names and values, bodies against the documented schemas, parameter
//! defaults and bounds, and the exact error messages given as examples.
//!
//! The schemas are checked with the small JSON Schema validator at the end of
//! this file. It knows only the keywords the document uses and fails on any
//! other, so a keyword added to the document cannot go unchecked.

mod support;

use std::collections::{BTreeMap, BTreeSet};

use noise_filter_core::admin_api::{self, AdminTokens};
use noise_filter_core::{
    AccountId, ApiKey, CUSTOM_CATEGORY_A, Category, DEFAULT_INCLUDE_CUSTOM, DEFAULT_MIN_CONFIDENCE,
    KEY_PREFIX, KEY_RANDOM_BYTES, KeyHash, Kind, MAX_CATEGORIES, MAX_QUERY_LEN,
    RATE_LIMIT as LIMIT, RateWindow, RecordKey, Rejection, Response, UnixMillis, Variant,
    catalog_release,
};
use serde_json::Value;
use support::{World, acme, error_of, json};

const DOCUMENT: &str = include_str!("../../docs/openapi.json");

fn doc() -> Value {
    serde_json::from_str(DOCUMENT).expect("docs/openapi.json is JSON")
}

/// Follows `$ref` (local JSON pointers only) until a non-reference.
fn resolve<'a>(doc: &'a Value, mut value: &'a Value) -> &'a Value {
    for _ in 0..16 {
        let Some(reference) = value.get("$ref").and_then(Value::as_str) else {
            return value;
        };
        value = lookup(doc, reference).unwrap_or_else(|| panic!("$ref {reference} resolves"));
    }
    panic!("$ref chain too long");
}

fn lookup<'a>(doc: &'a Value, reference: &str) -> Option<&'a Value> {
    doc.pointer(reference.strip_prefix('#')?)
}

fn operation<'a>(doc: &'a Value, variant: Variant, method: &str) -> &'a Value {
    &doc["paths"][variant.path()][method]
}

/// The documented response of `variant`'s `method` for `status`, resolved.
fn documented<'a>(
    doc: &'a Value,
    variant: Variant,
    method: &str,
    status: u16,
) -> Option<&'a Value> {
    operation(doc, variant, method)["responses"]
        .get(status.to_string())
        .map(|r| resolve(doc, r))
}

fn variant_name(variant: Variant) -> &'static str {
    match variant {
        Variant::A => "A",
        Variant::B => "B",
    }
}

/// The category values `variant` accepts and lists, in the core's order.
fn categories(variant: Variant) -> Vec<String> {
    let mut names: Vec<String> = Category::ALL.map(|c| c.name(variant).to_owned()).to_vec();
    if variant == Variant::A {
        names.push(CUSTOM_CATEGORY_A.to_owned());
    }
    names
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("{value} is an array"))
        .iter()
        .map(|v| v.as_str().expect("a string").to_owned())
        .collect()
}

// ---------------------------------------------------------------------------
// The document's structure.

#[test]
fn document_is_openapi_3_1_and_every_ref_resolves() {
    let doc = doc();
    let version = doc["openapi"].as_str().expect("openapi is a string");
    assert!(version.starts_with("3.1."), "OpenAPI 3.1.x, got {version}");
    assert!(doc["info"]["title"].is_string() && doc["info"]["version"].is_string());

    fn refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                for (k, v) in map {
                    if k == "$ref" {
                        out.push(v.as_str().expect("$ref is a string"));
                    } else {
                        refs(v, out);
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| refs(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    refs(&doc, &mut all);
    assert!(all.len() > 50, "the document reuses its components");
    for reference in &all {
        assert!(
            reference.starts_with("#/components/"),
            "{reference}: only references into components"
        );
        assert!(lookup(&doc, reference).is_some(), "{reference} resolves");
    }
    // Every component is used, except the two answers OpenAPI cannot attach
    // to an operation (an unknown path, an undeclared method), which
    // info.description names.
    let description = doc["info"]["description"].as_str().unwrap();
    for (kind, members) in doc["components"].as_object().unwrap() {
        if kind == "securitySchemes" {
            continue;
        }
        for name in members.as_object().unwrap().keys() {
            let reference = format!("#/components/{kind}/{name}");
            assert!(
                all.contains(&reference.as_str()) || description.contains(&reference),
                "{reference} is used or named in info.description"
            );
        }
    }
    let ids: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .values()
        .flat_map(|p| {
            p.as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| ["get", "head", "options", "post", "delete"].contains(&k.as_str()))
                .map(|(_, o)| o["operationId"].as_str().unwrap())
        })
        .collect();
    let unique: BTreeSet<&str> = ids.iter().copied().collect();
    assert_eq!(unique.len(), ids.len(), "operationIds are unique: {ids:?}");
}

#[test]
fn paths_are_exactly_the_variants_each_with_get_head_and_options() {
    let doc = doc();
    // Outside the admin API (its own test below).
    let documented: Vec<&str> = doc["paths"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .filter(|path| !admin_api::is_admin(path))
        .collect();
    let served: BTreeSet<&str> = Variant::ALL.map(|v| v.path()).into_iter().collect();
    assert_eq!(
        documented.iter().copied().collect::<BTreeSet<_>>(),
        served,
        "the documented paths are the paths the core serves"
    );
    for variant in Variant::ALL {
        let item = &doc["paths"][variant.path()];
        let operations: BTreeSet<&str> = item
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|k| !matches!(*k, "summary" | "description" | "parameters" | "servers"))
            .collect();
        assert_eq!(
            operations,
            BTreeSet::from(["get", "head", "options"]),
            "{}",
            variant.path()
        );
        let v = variant_name(variant);
        for (method, id) in [
            ("get", format!("listFilters{v}")),
            ("head", format!("headFilters{v}")),
            ("options", format!("preflightFilters{v}")),
        ] {
            assert_eq!(item[method]["operationId"], id.as_str());
        }
        // The 405 the core answers for other methods is described on the path.
        let description = item["description"].as_str().unwrap();
        assert!(description.contains("405") && description.contains("GET, HEAD, OPTIONS"));
    }
}

#[test]
fn category_enums_are_the_cores_categories_in_order() {
    let doc = doc();
    let components = &doc["components"];
    for variant in Variant::ALL {
        let v = variant_name(variant);
        let expected = categories(variant);
        assert_eq!(
            strings(&components["parameters"][format!("categories{v}")]["schema"]["items"]["enum"]),
            expected,
            "categories{v} parameter"
        );
        assert_eq!(
            strings(
                &components["schemas"][format!("Pattern{v}")]["properties"]["category"]["enum"]
            ),
            expected,
            "Pattern{v}.category"
        );
        // Every value is one the core accepts, and a request for it lists
        // only patterns of that category.
        let (mut world, key) = acme();
        for category in &expected {
            let response = world.get(
                &format!("{}?categories={category}&minConfidence=0", variant.path()),
                &key,
            );
            assert_eq!(response.status, 200, "{category}");
            let body = json(&response);
            let listed = body["patterns"].as_array().unwrap();
            assert!(!listed.is_empty(), "{category} lists something");
            assert!(listed.iter().all(|p| p["category"] == category.as_str()));
        }
    }
    assert_eq!(
        strings(&components["schemas"]["PatternA"]["properties"]["type"]["enum"]),
        [Kind::String.name(), Kind::Regex.name()]
    );
}

#[test]
fn parameters_agree_with_the_core() {
    let doc = doc();
    for variant in Variant::ALL {
        let v = variant_name(variant);
        for method in ["get", "head"] {
            let params: Vec<(String, String)> = operation(&doc, variant, method)["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| resolve(&doc, p))
                .map(|p| {
                    (
                        p["name"].as_str().unwrap().to_owned(),
                        p["in"].as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            let expected = [
                ("categories", "query"),
                ("minConfidence", "query"),
                ("includeCustom", "query"),
                ("If-None-Match", "header"),
                ("Accept-Encoding", "header"),
            ]
            .map(|(n, i)| (n.to_owned(), i.to_owned()));
            assert_eq!(params, expected, "{v} {method}");
        }
        assert!(
            operation(&doc, variant, "options")
                .get("parameters")
                .is_none()
        );

        let components = &doc["components"]["parameters"];
        let categories_param = &components[format!("categories{v}")];
        assert_eq!(categories_param["style"], "form");
        assert_eq!(categories_param["explode"], false);
        assert_eq!(categories_param["required"], false);
        let schema = &categories_param["schema"];
        assert_eq!(schema["type"], "array");
        assert_eq!(schema["minItems"], 1);
        assert_eq!(schema["maxItems"].as_u64(), Some(MAX_CATEGORIES as u64));

        let min = &components["minConfidence"]["schema"];
        assert_eq!(min["type"], "number");
        assert_eq!(min["default"].as_f64(), Some(DEFAULT_MIN_CONFIDENCE));
        assert_eq!(min["minimum"].as_f64(), Some(0.0));
        assert_eq!(min["maximum"].as_f64(), Some(1.0));
        let custom = &components["includeCustom"]["schema"];
        assert_eq!(custom["type"], "boolean");
        assert_eq!(custom["default"].as_bool(), Some(DEFAULT_INCLUDE_CUSTOM));

        // The defaults behave as documented: no parameter is the same answer
        // as every parameter at its default (all categories, custom included).
        let (mut world, key) = acme();
        let path = variant.path();
        let bare = world.get(path, &key);
        let all = categories(variant).join(",");
        let explicit = world.get(
            &format!(
                "{path}?categories={all}&minConfidence={}&includeCustom={}",
                min["default"], custom["default"]
            ),
            &key,
        );
        assert_eq!(bare.status, 200);
        assert_eq!(
            bare.body, explicit.body,
            "{v}: defaults are the documented ones"
        );
        assert_eq!(bare.header("etag"), explicit.header("etag"));

        // Bounds: minimum and maximum are accepted (inclusive), just outside not.
        let status =
            |world: &mut World, query: &str| world.get(&format!("{path}?{query}"), &key).status;
        for (query, expected) in [
            ("minConfidence=0", 200),
            ("minConfidence=1", 200),
            ("minConfidence=-0.01", 400),
            ("minConfidence=1.01", 400),
            ("includeCustom=true", 200),
            ("includeCustom=false", 200),
            ("includeCustom=1", 400),
            ("categories=", 400),
        ] {
            assert_eq!(status(&mut world, query), expected, "{v}: {query}");
        }
        // maxItems, and style=form with explode=false: one comma-separated value.
        let first = &categories(variant)[0];
        let items = |n: usize| vec![first.as_str(); n].join(",");
        assert_eq!(
            status(&mut world, &format!("categories={}", items(MAX_CATEGORIES))),
            200
        );
        assert_eq!(
            status(
                &mut world,
                &format!("categories={}", items(MAX_CATEGORIES + 1))
            ),
            400
        );
        let second = &categories(variant)[1];
        assert_eq!(
            status(&mut world, &format!("categories={first},{second}")),
            200
        );
        assert_eq!(
            status(
                &mut world,
                &format!("categories={first}&categories={second}")
            ),
            400,
            "exploded form is not what the core reads"
        );
        // The threshold is the documented minimum on the listed confidences.
        let listed = json(&world.get(&format!("{path}?minConfidence=0.9"), &key));
        assert!(
            listed["patterns"]
                .as_array()
                .unwrap()
                .iter()
                .all(|p| p["confidence"].as_f64().unwrap() >= 0.9)
        );
    }
}

#[test]
fn security_scheme_is_the_cores_key_format() {
    let doc = doc();
    let scheme = &doc["components"]["securitySchemes"]["bearerAuth"];
    assert_eq!(scheme["type"], "http");
    assert_eq!(scheme["scheme"], "bearer");
    let hex_digits = (2 * KEY_RANDOM_BYTES).to_string();
    let key = ApiKey::from_random([0xab; KEY_RANDOM_BYTES]);
    assert!(key.expose().starts_with(KEY_PREFIX));
    assert_eq!(key.expose().len(), KEY_PREFIX.len() + 2 * KEY_RANDOM_BYTES);
    for field in ["description", "bearerFormat"] {
        let text = scheme[field].as_str().unwrap();
        assert!(
            text.contains(&format!(
                "{KEY_PREFIX}` followed by {hex_digits} lowercase hex"
            )) || text.contains(&format!("{KEY_PREFIX} + {hex_digits} lowercase hex")),
            "{field} describes the key format: {text}"
        );
    }
    let description = scheme["description"].as_str().unwrap();
    for rejection in [
        Rejection::MalformedAuthorization,
        Rejection::ApiKeyRequired,
        Rejection::InvalidApiKey,
    ] {
        assert!(description.contains(&rejection.message()), "{rejection}");
    }
    for variant in Variant::ALL {
        for method in ["get", "head"] {
            assert_eq!(
                operation(&doc, variant, method)["security"],
                serde_json::json!([{"bearerAuth": []}])
            );
        }
        // Preflights need no key, and the core answers them without one.
        assert_eq!(
            operation(&doc, variant, "options")["security"],
            serde_json::json!([])
        );
        let mut world = World::new();
        assert_eq!(world.request("OPTIONS", variant.path(), &[]).status, 204);
    }
}

#[test]
fn description_states_what_the_core_does() {
    let doc = doc();
    let text = doc["info"]["description"].as_str().unwrap();
    let (mut world, key) = acme();
    let ok = world.get("/v1/filters", &key);
    let policy = ok.header("ratelimit-policy").unwrap();
    for needle in [
        format!("{LIMIT} requests per minute per API key"),
        "sliding-window counter".to_owned(),
        format!("RateLimit-Policy: {policy}"),
        "\"per-key\";r=<remaining>;t=<seconds>".to_owned(),
        format!("over {MAX_QUERY_LEN} bytes"),
        format!("more than {MAX_CATEGORIES} items"),
        format!("{{\"error\":\"{}\"}}", Rejection::NotFound.message()),
        format!(
            "{{\"error\":\"{}\"}}",
            Rejection::MethodNotAllowed.message()
        ),
        "new RegExp(pattern, \"i\")".to_owned(),
        "no look-around, no back-references".to_owned(),
        "every `regex` pattern is left out".to_owned(),
        "in the order they were added".to_owned(),
    ] {
        assert!(text.contains(&needle), "info.description says {needle:?}");
    }
    // The order of checks, in order.
    let section = &text[text.find("## Order of checks").unwrap()..];
    let section = &section[..section[3..].find("\n## ").unwrap()];
    let mut at = 0;
    for step in [
        "**Path.**",
        "**Method.**",
        "**Authentication.**",
        "**Rate limit.**",
        "**Parameters.**",
    ] {
        let found = section[at..]
            .find(step)
            .unwrap_or_else(|| panic!("{step} after the previous step"));
        at += found + step.len();
    }
    // The category order named there is the core's.
    let order = Category::ALL.map(|c| c.name(Variant::A)).join("`, `");
    assert!(
        text.contains(&format!("category table (`{order}`;")),
        "order {order}"
    );
}

// ---------------------------------------------------------------------------
// Statuses and headers: every answer of the core is documented.

/// Documented headers the core does not send yet, as `(status, header)`. The
/// document states the contract (docs/CONTRACT.md: every response carries
/// `Access-Control-Allow-Origin: *`); this list records where the core falls
/// short, and the test fails once it no longer does, so the entry goes.
const KNOWN_DEVIATIONS: &[(u16, &str)] = &[];

/// One request and the core's answer.
struct Exchange {
    label: String,
    method: &'static str,
    /// The variant whose path was asked for, `None` for an unknown path.
    variant: Option<Variant>,
    response: Response,
}

/// Every kind of answer the core gives for `method` on `variant`'s path.
fn answers(variant: Variant, method: &'static str) -> Vec<Exchange> {
    let path = variant.path();
    let mut out = Vec::new();
    let mut push = |label: &str, response: Response| {
        out.push(Exchange {
            label: format!("{method} {path}: {label}"),
            method,
            variant: Some(variant),
            response,
        });
    };
    let with_key = |world: &mut World, target: &str, key: &str, extra: &[(&str, &str)]| {
        let auth = format!("Bearer {key}");
        let mut headers = vec![("Authorization", auth.as_str())];
        headers.extend_from_slice(extra);
        world.request(method, target, &headers)
    };

    let (mut world, key) = acme();
    push("ok", with_key(&mut world, path, &key, &[]));
    push(
        "ok, no custom",
        with_key(
            &mut world,
            &format!("{path}?includeCustom=false"),
            &key,
            &[],
        ),
    );
    let etag = world.get(path, &key).header("etag").unwrap().to_owned();
    push(
        "not modified",
        with_key(&mut world, path, &key, &[("If-None-Match", &etag)]),
    );
    push(
        "bad parameter",
        with_key(&mut world, &format!("{path}?minConfidence=2"), &key, &[]),
    );
    let long = format!("{path}?q={}", "a".repeat(MAX_QUERY_LEN));
    push("query too long", with_key(&mut world, &long, &key, &[]));
    push("no key", world.request(method, path, &[]));
    push(
        "blank key",
        world.request(method, path, &[("Authorization", "Bearer  ")]),
    );
    push(
        "unknown key",
        with_key(
            &mut world,
            path,
            &format!("{KEY_PREFIX}{}", "0".repeat(48)),
            &[],
        ),
    );
    push("not a key", with_key(&mut world, path, "secret", &[]));

    let (mut world, key) = acme();
    let window = RateWindow::at(world.now).index;
    world.store.set(
        &RecordKey::rate_counter(&KeyHash::of(&key), window),
        (LIMIT as i64).to_le_bytes().to_vec(),
    );
    push("rate limited", with_key(&mut world, path, &key, &[]));

    let (mut world, key) = acme();
    world.store.set(
        &RecordKey::api_key(&KeyHash::of(&key)),
        b"not a key record".to_vec(),
    );
    push(
        "unreadable key record",
        with_key(&mut world, path, &key, &[]),
    );

    let (mut world, key) = acme();
    world.store.set(
        &RecordKey::custom_patterns(&AccountId::new("acme").unwrap()),
        b"not a pattern record".to_vec(),
    );
    push(
        "unreadable custom patterns",
        with_key(&mut world, path, &key, &[]),
    );

    let (mut world, key) = acme();
    world.store.failing = true;
    push("store unavailable", with_key(&mut world, path, &key, &[]));
    out
}

fn all_exchanges() -> Vec<Exchange> {
    let mut out = Vec::new();
    for variant in Variant::ALL {
        out.extend(answers(variant, "GET"));
        out.extend(answers(variant, "HEAD"));
        let (mut world, key) = acme();
        for (label, headers) in [
            ("no key", vec![]),
            (
                "browser preflight",
                vec![
                    ("Origin", "https://example.com"),
                    ("Access-Control-Request-Method", "GET"),
                    ("Access-Control-Request-Headers", "authorization"),
                ],
            ),
        ] {
            out.push(Exchange {
                label: format!("OPTIONS {}: {label}", variant.path()),
                method: "OPTIONS",
                variant: Some(variant),
                response: world.request("OPTIONS", variant.path(), &headers),
            });
        }
        for method in ["POST", "PUT", "DELETE", "PATCH", "get"] {
            out.push(Exchange {
                label: format!("{method} {}", variant.path()),
                method: "OTHER",
                variant: Some(variant),
                response: world.get_with_method(method, variant.path(), &key),
            });
        }
    }
    let (mut world, key) = acme();
    for method in ["GET", "HEAD", "OPTIONS", "POST"] {
        for target in [
            "/nope",
            "/v1/filters/",
            "/V1/filters",
            "/v2/filters?categories=x",
        ] {
            out.push(Exchange {
                label: format!("{method} {target}"),
                method: if method == "HEAD" { "HEAD" } else { "OTHER" },
                variant: None,
                response: world.get_with_method(method, target, &key),
            });
        }
    }
    out
}

trait WithMethod {
    fn get_with_method(&mut self, method: &str, target: &str, key: &str) -> Response;
}

impl WithMethod for World {
    fn get_with_method(&mut self, method: &str, target: &str, key: &str) -> Response {
        let auth = format!("Bearer {key}");
        self.request(method, target, &[("Authorization", &auth)])
    }
}

/// The documented response for an exchange: the operation's response for
/// the status, or for 404 and 405 (which OpenAPI cannot attach to an
/// operation: an unknown path, an undeclared method) the component that
/// info.description names.
fn documented_for<'a>(doc: &'a Value, exchange: &Exchange) -> Result<&'a Value, String> {
    let status = exchange.response.status;
    let component = match status {
        404 => Some("NotFound"),
        405 => Some("MethodNotAllowed"),
        _ => None,
    };
    if let Some(name) = component {
        let reference = format!("#/components/responses/{name}");
        assert!(
            doc["info"]["description"]
                .as_str()
                .unwrap()
                .contains(&reference)
        );
        return Ok(&doc["components"]["responses"][name]);
    }
    let variant = exchange
        .variant
        .ok_or_else(|| format!("{}: {status} for an unknown path", exchange.label))?;
    let method = exchange.method.to_ascii_lowercase();
    documented(doc, variant, &method, status).ok_or_else(|| {
        format!(
            "{}: status {status} is not documented for {method}",
            exchange.label
        )
    })
}

/// Checks one answer against its documented response; returns the
/// problems, and records the known deviations it saw.
fn check_answer(
    doc: &Value,
    exchange: &Exchange,
    seen_deviations: &mut BTreeSet<(u16, &'static str)>,
) -> Vec<String> {
    let mut problems = Vec::new();
    let response = &exchange.response;
    let label = &exchange.label;
    let described = match documented_for(doc, exchange) {
        Ok(d) => d,
        Err(problem) => return vec![problem],
    };
    let headers: BTreeMap<String, &Value> = described
        .get("headers")
        .and_then(Value::as_object)
        .map(|h| {
            h.iter()
                .map(|(name, header)| (name.to_ascii_lowercase(), resolve(doc, header)))
                .collect()
        })
        .unwrap_or_default();

    // Every header the core sets is documented, with a value its schema takes.
    for (name, value) in &response.headers {
        if *name == "content-type" {
            continue; // documented as the media type of `content`, below
        }
        let Some(header) = headers.get(*name) else {
            problems.push(format!("{label}: header {name} is not documented"));
            continue;
        };
        let schema = &header["schema"];
        let as_json = if schema["type"] == "integer" {
            match value.parse::<i64>() {
                Ok(n) => Value::from(n),
                Err(_) => {
                    problems.push(format!("{label}: {name}: {value:?} is not an integer"));
                    continue;
                }
            }
        } else {
            Value::from(value.as_str())
        };
        let mut errors = Vec::new();
        validate(doc, schema, &as_json, name, &mut errors);
        problems.extend(errors.into_iter().map(|e| format!("{label}: {e}")));
    }
    // Every header documented as required is sent.
    for (name, header) in &headers {
        if header["required"] == true && response.header(name).is_none() {
            match KNOWN_DEVIATIONS
                .iter()
                .find(|(s, n)| *s == response.status && n == name)
            {
                Some(&deviation) => {
                    seen_deviations.insert(deviation);
                }
                None => problems.push(format!("{label}: required header {name} is missing")),
            }
        }
    }
    // Rate headers come as a pair.
    if response.header("ratelimit").is_some() != response.header("ratelimit-policy").is_some() {
        problems.push(format!(
            "{label}: RateLimit without RateLimit-Policy or the reverse"
        ));
    }

    // The body and its media type.
    let content = described.get("content").and_then(Value::as_object);
    let content_type = response.header("content-type");
    let is_head = exchange.method == "HEAD";
    if is_head || response.body.is_empty() {
        if !response.body.is_empty() {
            problems.push(format!("{label}: HEAD answered with a body"));
        }
        // A HEAD answer is the GET's without the body: its media type is
        // the one documented for the same status of the GET.
        let media = match (content, exchange.variant) {
            (Some(c), _) => c.keys().next().cloned(),
            (None, Some(variant)) if is_head => documented(doc, variant, "get", response.status)
                .and_then(|r| r.get("content"))
                .and_then(Value::as_object)
                .and_then(|c| c.keys().next().cloned()),
            (None, _) => None,
        };
        if content_type != media.as_deref() {
            problems.push(format!(
                "{label}: Content-Type {content_type:?}, documented {media:?}"
            ));
        }
        if !is_head && content.is_some() {
            problems.push(format!("{label}: no body, but the document describes one"));
        }
    } else {
        let Some(content_type) = content_type else {
            problems.push(format!("{label}: a body without Content-Type"));
            return problems;
        };
        let Some(media) = content.and_then(|c| c.get(content_type)) else {
            problems.push(format!(
                "{label}: body of type {content_type} is not documented"
            ));
            return problems;
        };
        let mut errors = Vec::new();
        validate(doc, &media["schema"], &json(response), "body", &mut errors);
        problems.extend(errors.into_iter().map(|e| format!("{label}: {e}")));
    }
    problems
}

#[test]
fn every_status_and_header_the_core_sends_is_documented() {
    let doc = doc();
    let exchanges = all_exchanges();
    let mut problems = Vec::new();
    let mut seen_deviations = BTreeSet::new();
    let mut produced: BTreeMap<(&str, String), BTreeSet<String>> = BTreeMap::new();
    for exchange in &exchanges {
        problems.extend(check_answer(&doc, exchange, &mut seen_deviations));
        if let (Some(variant), m @ ("GET" | "HEAD" | "OPTIONS")) =
            (exchange.variant, exchange.method)
        {
            produced
                .entry((variant.path(), m.to_ascii_lowercase()))
                .or_default()
                .insert(exchange.response.status.to_string());
        }
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );

    // Both ways: every documented status of an operation is one the core
    // answers there, and the exchanges above reached each of them.
    for variant in Variant::ALL {
        for method in ["get", "head", "options"] {
            let documented: BTreeSet<String> = operation(&doc, variant, method)["responses"]
                .as_object()
                .unwrap()
                .keys()
                .cloned()
                .collect();
            assert_eq!(
                produced.get(&(variant.path(), method.to_owned())),
                Some(&documented),
                "{} {method}: statuses the core answers vs documented",
                variant.path()
            );
        }
    }
    for status in [404, 405] {
        assert!(exchanges.iter().any(|e| e.response.status == status));
    }

    let expected: BTreeSet<(u16, &str)> = KNOWN_DEVIATIONS.iter().copied().collect();
    assert_eq!(
        seen_deviations, expected,
        "a known deviation is gone from the core: remove it from KNOWN_DEVIATIONS"
    );
}

#[test]
fn rate_headers_are_on_exactly_the_counted_answers() {
    // The document marks RateLimit as required on 200, 304 and 429 and as
    // optional ("present when the request was counted") on 400, 414 and 500.
    let doc = doc();
    for exchange in all_exchanges() {
        let counted = matches!(
            exchange.label.rsplit(": ").next().unwrap(),
            "ok" | "ok, no custom"
                | "not modified"
                | "bad parameter"
                | "query too long"
                | "rate limited"
                | "unreadable custom patterns"
        );
        assert_eq!(
            exchange.response.header("ratelimit").is_some(),
            counted,
            "{}",
            exchange.label
        );
        if counted && exchange.variant.is_some() {
            let documented = documented_for(&doc, &exchange).unwrap();
            assert!(
                documented["headers"].get("RateLimit").is_some(),
                "{}",
                exchange.label
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Error messages.

/// The request that makes the core give the documented example `name` for
/// `status` on `variant`.
fn example_answer(variant: Variant, status: u16, name: &str) -> Response {
    let path = variant.path();
    let (mut world, key) = acme();
    let other = match variant {
        Variant::A => Variant::B,
        Variant::B => Variant::A,
    };
    let target = match (status, name) {
        (400, "repeatedParameter") => format!("{path}?minConfidence=0.5&minConfidence=0.6"),
        (400, "minConfidence") => format!("{path}?minConfidence=1.5"),
        (400, "includeCustom") => format!("{path}?includeCustom=yes"),
        (400, "unknownCategory") => {
            format!("{path}?categories={}", Category::BotTraffic.name(other))
        }
        (400, "tooManyCategories") => format!(
            "{path}?categories={}",
            vec![Category::Other.name(variant); MAX_CATEGORIES + 1].join(",")
        ),
        (401, "missingHeader") => return world.request("GET", path, &[]),
        (401, "apiKeyRequired") => {
            return world.request("GET", path, &[("Authorization", "Bearer")]);
        }
        (401, "invalidApiKey") => {
            return world.get(path, ApiKey::from_random([0xee; KEY_RANDOM_BYTES]).expose());
        }
        (404, "notFound") => return world.get("/v1/filterz", &key),
        (405, "methodNotAllowed") => return world.request("DELETE", path, &[]),
        (414, "queryTooLong") => format!("{path}?x={}", "y".repeat(MAX_QUERY_LEN - 1)),
        (429, "rateLimited") => {
            let window = RateWindow::at(world.now).index;
            world.store.set(
                &RecordKey::rate_counter(&KeyHash::of(&key), window),
                (LIMIT as i64).to_le_bytes().to_vec(),
            );
            path.to_owned()
        }
        (500, "corruptRecord") => {
            world.store.set(
                &RecordKey::custom_patterns(&AccountId::new("acme").unwrap()),
                b"{not json".to_vec(),
            );
            path.to_owned()
        }
        (503, "storeUnavailable") => {
            world.store.failing = true;
            path.to_owned()
        }
        _ => panic!("example {name} of {status} has no request in this test: add one"),
    };
    world.get(&target, &key)
}

#[test]
fn documented_error_examples_are_what_the_core_says() {
    let doc = doc();
    let mut checked = 0;
    let mut check =
        |variant: Variant, status: u16, response: &Value, problems: &mut Vec<String>| {
            let media = &response["content"]["application/json"];
            assert_eq!(
                resolve(&doc, &media["schema"]),
                &doc["components"]["schemas"]["Error"],
                "{status}: the Error schema"
            );
            let examples = media["examples"]
                .as_object()
                .expect("error responses have examples");
            assert!(!examples.is_empty());
            for (name, example) in examples {
                let documented = example["value"]["error"].as_str().unwrap();
                let answer = example_answer(variant, status, name);
                if answer.status != status {
                    problems.push(format!(
                        "{status} {name}: the core answered {}",
                        answer.status
                    ));
                }
                let said = error_of(&answer);
                if said != documented {
                    problems.push(format!(
                        "{} {status} {name}: documented {documented:?}, the core says {said:?}",
                        variant.path()
                    ));
                }
                checked += 1;
            }
        };
    let mut problems = Vec::new();
    for variant in Variant::ALL {
        for (status, response) in operation(&doc, variant, "get")["responses"]
            .as_object()
            .unwrap()
        {
            let response = resolve(&doc, response);
            let status: u16 = status.parse().unwrap();
            if status >= 400 {
                check(variant, status, response, &mut problems);
            }
        }
        for (status, name) in [(404, "NotFound"), (405, "MethodNotAllowed")] {
            check(
                variant,
                status,
                &doc["components"]["responses"][name],
                &mut problems,
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(checked >= 2 * (5 + 3 + 5), "checked {checked} examples");

    // The three 401 messages are exactly the core's three.
    let unauthorized =
        &doc["components"]["responses"]["Unauthorized"]["content"]["application/json"]["examples"];
    let documented: BTreeSet<&str> = unauthorized
        .as_object()
        .unwrap()
        .values()
        .map(|e| e["value"]["error"].as_str().unwrap())
        .collect();
    let core: Vec<String> = [
        Rejection::MalformedAuthorization,
        Rejection::ApiKeyRequired,
        Rejection::InvalidApiKey,
    ]
    .iter()
    .map(Rejection::message)
    .collect();
    assert_eq!(documented, core.iter().map(String::as_str).collect());
}

// ---------------------------------------------------------------------------
// Success bodies.

#[test]
fn success_bodies_have_exactly_the_documented_fields() {
    let doc = doc();
    let schemas = &doc["components"]["schemas"];
    for variant in Variant::ALL {
        let v = variant_name(variant);
        let pattern_schema = &schemas[format!("Pattern{v}")];
        let properties: BTreeSet<&str> = pattern_schema["properties"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let required = strings(&pattern_schema["required"]);
        assert_eq!(
            required.iter().map(String::as_str).collect::<BTreeSet<_>>(),
            properties,
            "Pattern{v}: every field is always there"
        );
        assert_eq!(pattern_schema["additionalProperties"], false);

        let (mut world, key) = acme();
        for query in [
            "minConfidence=0",
            "",
            "includeCustom=false",
            "categories=OTHER",
        ] {
            let response = world.get(&format!("{}?{query}", variant.path()), &key);
            if response.status == 400 {
                continue; // OTHER is Variant B's spelling only
            }
            assert_eq!(response.status, 200);
            let body = json(&response);
            let mut errors = Vec::new();
            validate(
                &doc,
                &schemas[format!("Response{v}")],
                &body,
                "body",
                &mut errors,
            );
            assert!(errors.is_empty(), "{v} ?{query}:\n{}", errors.join("\n"));
            let envelope: BTreeSet<&str> = body
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            let documented: BTreeSet<&str> = schemas[format!("Response{v}")]["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(envelope, documented);

            let patterns = body["patterns"].as_array().unwrap();
            assert!(!patterns.is_empty());
            for pattern in patterns {
                let keys: BTreeSet<&str> = pattern
                    .as_object()
                    .unwrap()
                    .keys()
                    .map(String::as_str)
                    .collect();
                assert_eq!(keys, properties, "{pattern}");
            }
        }
        // Fields come in the documented order (the order of `required`).
        let raw = world.get(&format!("{}?minConfidence=0", variant.path()), &key);
        let ordered: OrderedBody = serde_json::from_slice(&raw.body).unwrap();
        for keys in ordered.patterns {
            assert_eq!(keys.0, required, "field order");
        }
    }
}

#[test]
fn documented_order_matching_kinds_and_version_are_the_cores() {
    let (mut world, key) = acme();
    let a = json(&world.get("/v1/filters?minConfidence=0", &key));
    let b = json(&world.get("/api/v1/filters?minConfidence=0", &key));
    let a = a["patterns"].as_array().unwrap();
    let b = b["patterns"].as_array().unwrap();

    // Order: built-ins by category (the category table), confidence
    // descending, id; then custom patterns in the order added.
    let rank = |p: &Value| {
        let category = p["category"].as_str().unwrap();
        Category::ALL
            .iter()
            .position(|c| c.name(Variant::A) == category)
            .unwrap_or(Category::ALL.len())
    };
    let (built_in, custom): (Vec<&Value>, Vec<&Value>) = a
        .iter()
        .partition(|p| !p["id"].as_str().unwrap().starts_with("custom-"));
    assert!(
        a.iter()
            .position(|p| p["id"].as_str().unwrap().starts_with("custom-"))
            == Some(built_in.len())
    );
    for pair in built_in.windows(2) {
        let key = |p: &Value| {
            (
                rank(p),
                -p["confidence"].as_f64().unwrap(),
                p["id"].as_str().unwrap().to_owned(),
            )
        };
        let (x, y) = (key(pair[0]), key(pair[1]));
        assert!(
            x.partial_cmp(&y) == Some(std::cmp::Ordering::Less),
            "{x:?} before {y:?}"
        );
    }
    let custom_patterns: Vec<&str> = custom
        .iter()
        .map(|p| p["pattern"].as_str().unwrap())
        .collect();
    assert_eq!(
        custom_patterns,
        ["acme-widget exploded", "^acme-\\d+ failed$", "AcmeCrawler/"]
    );
    assert_eq!(custom[0]["category"], CUSTOM_CATEGORY_A);
    assert_eq!(custom[2]["category"], "bot-traffic");

    // Variant B: the substring patterns of Variant A, same ids, same order.
    let strings_of_a: Vec<&str> = a
        .iter()
        .filter(|p| p["type"] == Kind::String.name())
        .map(|p| p["id"].as_str().unwrap())
        .collect();
    let ids_of_b: Vec<&str> = b.iter().map(|p| p["id"].as_str().unwrap()).collect();
    assert!(a.iter().any(|p| p["type"] == Kind::Regex.name()));
    assert_eq!(ids_of_b, strings_of_a);
    let uncategorized = b
        .iter()
        .find(|p| p["pattern"] == "acme-widget exploded")
        .unwrap();
    assert_eq!(uncategorized["category"], Category::Other.name(Variant::B));

    // Variant A `version`: the catalog's release, or the account's latest
    // change when custom patterns are included and it is later.
    let version = |world: &mut World, key: &str, query: &str| {
        json(&world.get(&format!("/v1/filters?{query}"), key))["version"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // The test clock's day (support::NOW) is before the catalog's release.
    assert!("2025-11-22" < catalog_release());
    assert_eq!(version(&mut world, &key, ""), catalog_release());
    let mut later = World::new();
    later.now = UnixMillis(1_893_456_000_000); // 2030-01-01
    let key = later.key("late");
    assert_eq!(
        version(&mut later, &key, ""),
        catalog_release(),
        "no custom patterns yet"
    );
    later.custom(
        "late",
        serde_json::json!([{"pattern": "late-widget failed"}]),
    );
    assert_eq!(version(&mut later, &key, ""), "2030-01-01");
    assert_eq!(
        version(&mut later, &key, "includeCustom=false"),
        catalog_release()
    );
}

#[test]
fn documented_success_examples_fit_their_schema_and_name_real_patterns() {
    let doc = doc();
    let (mut world, key) = acme();
    for variant in Variant::ALL {
        let v = variant_name(variant);
        let media =
            &doc["components"]["responses"][format!("Ok{v}")]["content"]["application/json"];
        let examples = media["examples"].as_object().unwrap();
        assert!(!examples.is_empty());
        let served = json(&world.get(&format!("{}?minConfidence=0", variant.path()), &key));
        let served: BTreeMap<&str, &Value> = served["patterns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| (p["id"].as_str().unwrap(), p))
            .collect();
        for (name, example) in examples {
            let value = &example["value"];
            let mut errors = Vec::new();
            validate(&doc, &media["schema"], value, name, &mut errors);
            assert!(
                errors.is_empty(),
                "{v} example {name}:\n{}",
                errors.join("\n")
            );
            for pattern in value["patterns"].as_array().unwrap() {
                let id = pattern["id"].as_str().unwrap();
                if id.starts_with("custom-") {
                    continue;
                }
                let real = served
                    .get(id)
                    .unwrap_or_else(|| panic!("{v} example {name}: {id} is not in the catalog"));
                for field in ["pattern", "category", "type"] {
                    assert_eq!(
                        pattern.get(field),
                        real.get(field),
                        "{v} example {id}.{field}"
                    );
                }
            }
            if let Some(version) = value.get("version") {
                let mut errors = Vec::new();
                validate(
                    &doc,
                    &serde_json::json!({"type": "string", "format": "date"}),
                    version,
                    "version",
                    &mut errors,
                );
                assert!(errors.is_empty());
            }
        }
    }
}

/// A success body read with each pattern's field names in order.
#[derive(serde::Deserialize)]
struct OrderedBody {
    patterns: Vec<OrderedKeys>,
}

struct OrderedKeys(Vec<String>);

impl<'de> serde::Deserialize<'de> for OrderedKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Keys;
        impl<'de> serde::de::Visitor<'de> for Keys {
            type Value = OrderedKeys;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<OrderedKeys, M::Error> {
                let mut keys = Vec::new();
                while let Some((key, _)) = map.next_entry::<String, serde::de::IgnoredAny>()? {
                    keys.push(key);
                }
                Ok(OrderedKeys(keys))
            }
        }
        deserializer.deserialize_map(Keys)
    }
}

// ---------------------------------------------------------------------------
// A JSON Schema validator for the keywords the document uses, and no others.

fn validate(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    let schema = resolve(doc, schema);
    let Some(keywords) = schema.as_object() else {
        errors.push(format!("{at}: schema {schema} is not an object"));
        return;
    };
    for (keyword, argument) in keywords {
        match keyword.as_str() {
            "description" | "title" | "examples" | "default" => {}
            "type" => {
                let types: Vec<&str> = match argument {
                    Value::String(t) => vec![t.as_str()],
                    other => other
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t.as_str().unwrap())
                        .collect(),
                };
                if !types.iter().any(|t| has_type(value, t)) {
                    errors.push(format!("{at}: {value} is not of type {argument}"));
                }
            }
            "const" => {
                if !same(value, argument) {
                    errors.push(format!("{at}: {value} is not {argument}"));
                }
            }
            "enum" => {
                if !argument.as_array().unwrap().iter().any(|e| same(value, e)) {
                    errors.push(format!("{at}: {value} is not one of {argument}"));
                }
            }
            "properties" => {
                if let Some(object) = value.as_object() {
                    for (name, subschema) in argument.as_object().unwrap() {
                        if let Some(v) = object.get(name) {
                            validate(doc, subschema, v, &format!("{at}.{name}"), errors);
                        }
                    }
                }
            }
            "required" => {
                if let Some(object) = value.as_object() {
                    for name in argument.as_array().unwrap() {
                        if !object.contains_key(name.as_str().unwrap()) {
                            errors.push(format!("{at}: required {name} is missing"));
                        }
                    }
                }
            }
            "additionalProperties" => {
                if let Some(object) = value.as_object() {
                    let known = schema.get("properties").and_then(Value::as_object);
                    for (name, v) in object {
                        if known.is_some_and(|k| k.contains_key(name)) {
                            continue;
                        }
                        match argument {
                            Value::Bool(false) => {
                                errors.push(format!("{at}: field {name} is not documented"))
                            }
                            Value::Bool(true) => {}
                            subschema => {
                                validate(doc, subschema, v, &format!("{at}.{name}"), errors)
                            }
                        }
                    }
                }
            }
            "items" => {
                if let Some(items) = value.as_array() {
                    for (i, item) in items.iter().enumerate() {
                        validate(doc, argument, item, &format!("{at}[{i}]"), errors);
                    }
                }
            }
            "oneOf" => {
                let fits = argument
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|sub| {
                        let mut sub_errors = Vec::new();
                        validate(doc, sub, value, at, &mut sub_errors);
                        sub_errors.is_empty()
                    })
                    .count();
                if fits != 1 {
                    errors.push(format!("{at}: {value} fits {fits} of oneOf, not one"));
                }
            }
            "minItems" | "maxItems" => {
                if let Some(items) = value.as_array() {
                    let bound = argument.as_u64().unwrap() as usize;
                    let ok = if keyword == "minItems" {
                        items.len() >= bound
                    } else {
                        items.len() <= bound
                    };
                    if !ok {
                        errors.push(format!("{at}: {} items, {keyword} {bound}", items.len()));
                    }
                }
            }
            "minimum" | "maximum" => {
                if let Some(n) = value.as_f64() {
                    let bound = argument.as_f64().unwrap();
                    let ok = if keyword == "minimum" {
                        n >= bound
                    } else {
                        n <= bound
                    };
                    if !ok {
                        errors.push(format!("{at}: {n}, {keyword} {bound}"));
                    }
                }
            }
            "minLength" => {
                if let Some(s) = value.as_str()
                    && (s.chars().count() as u64) < argument.as_u64().unwrap()
                {
                    errors.push(format!("{at}: {s:?} is shorter than {argument}"));
                }
            }
            "pattern" => {
                if let Some(s) = value.as_str() {
                    let regex =
                        regex::Regex::new(argument.as_str().unwrap()).expect("pattern compiles");
                    if !regex.is_match(s) {
                        errors.push(format!("{at}: {s:?} does not match {argument}"));
                    }
                }
            }
            "format" => match (argument.as_str().unwrap(), value.as_str()) {
                ("date", Some(s)) => {
                    let b = s.as_bytes();
                    let ok = b.len() == 10
                        && b.iter().enumerate().all(|(i, c)| {
                            if i == 4 || i == 7 {
                                *c == b'-'
                            } else {
                                c.is_ascii_digit()
                            }
                        })
                        && (1..=12).contains(&s[5..7].parse::<u8>().unwrap_or(0))
                        && (1..=31).contains(&s[8..10].parse::<u8>().unwrap_or(0));
                    if !ok {
                        errors.push(format!("{at}: {s:?} is not a date"));
                    }
                }
                ("date", None) => {}
                (other, _) => {
                    errors.push(format!("{at}: this validator does not know format {other}"))
                }
            },
            other => errors.push(format!(
                "{at}: this validator does not know keyword {other:?}"
            )),
        }
    }
}

fn has_type(value: &Value, ty: &str) -> bool {
    match ty {
        "string" => value.is_string(),
        "number" => value.is_number(),
        "integer" => {
            value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        "boolean" => value.is_boolean(),
        "object" => value.is_object(),
        "array" => value.is_array(),
        "null" => value.is_null(),
        _ => false,
    }
}

/// JSON equality, numbers compared by value (`1` equals `1.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(x), Some(y)) if a.is_number() && b.is_number() => x == y,
        _ => a == b,
    }
}

#[test]
fn the_validator_refuses_what_it_should() {
    // The checks above are only as good as this validator.
    let doc = doc();
    let pattern_a = serde_json::json!({"$ref": "#/components/schemas/PatternA"});
    let good = serde_json::json!({"id": "x-1", "pattern": "boom", "type": "regex",
        "category": "custom", "confidence": 1.0, "source": ""});
    let mut errors = Vec::new();
    validate(&doc, &pattern_a, &good, "good", &mut errors);
    assert!(errors.is_empty(), "{errors:?}");
    for (field, bad) in [
        ("id", serde_json::json!("Has Space")),
        ("type", serde_json::json!("glob")),
        ("category", serde_json::json!("BOT_TRAFFIC")),
        ("confidence", serde_json::json!(1.5)),
        ("confidence", serde_json::json!("0.5")),
        ("source", serde_json::json!(null)),
        ("extra", serde_json::json!(1)),
    ] {
        let mut value = good.clone();
        value[field] = bad;
        let mut errors = Vec::new();
        validate(&doc, &pattern_a, &value, field, &mut errors);
        assert!(!errors.is_empty(), "{value} is refused");
    }
    let mut missing = good.clone();
    missing.as_object_mut().unwrap().remove("source");
    let mut errors = Vec::new();
    validate(&doc, &pattern_a, &missing, "missing", &mut errors);
    assert!(!errors.is_empty());
    let mut errors = Vec::new();
    validate(
        &doc,
        &serde_json::json!({"format": "date"}),
        &Value::from("2026-13-01"),
        "d",
        &mut errors,
    );
    validate(
        &doc,
        &serde_json::json!({"oneOf": []}),
        &Value::Null,
        "k",
        &mut errors,
    );
    assert_eq!(errors.len(), 2);
}

// ---------------------------------------------------------------------------
// The admin API (tag `Admin`): its paths are the core's routes, and every
// answer the core gives is documented for its operation and status.

const ADMIN_TOKEN: &str = "an-admin-token-for-the-document-0123456789";

/// `/admin/v1/…` for a route template of the core.
fn admin_path(route: &str) -> String {
    format!("/admin/v1/{route}")
}

#[test]
fn admin_paths_are_the_cores_routes_with_their_methods() {
    let doc = doc();
    let documented: BTreeMap<&str, BTreeSet<String>> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .filter(|(path, _)| admin_api::is_admin(path))
        .map(|(path, item)| {
            let methods = item
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| !matches!(k.as_str(), "summary" | "description" | "parameters"))
                .map(|k| k.to_ascii_uppercase())
                .collect();
            (path.as_str(), methods)
        })
        .collect();
    let served: BTreeMap<String, BTreeSet<String>> = admin_api::ROUTES
        .iter()
        .map(|(route, methods)| {
            (
                admin_path(route),
                methods.split(", ").map(str::to_owned).collect(),
            )
        })
        .collect();
    let documented: BTreeMap<String, BTreeSet<String>> = documented
        .into_iter()
        .map(|(p, m)| (p.to_owned(), m))
        .collect();
    assert_eq!(documented, served);
    for (path, item) in doc["paths"].as_object().unwrap() {
        if !admin_api::is_admin(path) {
            continue;
        }
        for (method, operation) in item.as_object().unwrap() {
            assert_eq!(
                operation["tags"],
                serde_json::json!(["Admin"]),
                "{method} {path}"
            );
            assert_eq!(
                operation["security"],
                serde_json::json!([{"adminToken": []}]),
                "{method} {path}"
            );
        }
    }
    // The token's bounds and texts, as the core has them.
    let scheme = doc["components"]["securitySchemes"]["adminToken"]["description"]
        .as_str()
        .unwrap();
    for needle in [
        "Missing or invalid Authorization header",
        "Invalid admin token",
        "constant time",
    ] {
        assert!(scheme.contains(needle), "adminToken says {needle:?}");
    }
    let bearer = doc["components"]["securitySchemes"]["adminToken"]["bearerFormat"]
        .as_str()
        .unwrap();
    assert_eq!(
        bearer,
        format!(
            "{} to {} visible ASCII characters",
            admin_api::MIN_TOKEN_CHARS,
            admin_api::MAX_TOKEN_CHARS
        )
    );
}

/// The documented operation of an admin call: its path template, method.
fn admin_operation<'a>(doc: &'a Value, route: &str, method: &str) -> &'a Value {
    &doc["paths"][admin_path(route)][method.to_ascii_lowercase()]
}

/// One admin call through the core, checked against the document: the
/// status is documented for the operation, every header the core sends is
/// documented (names and fixed values), and the body fits the schema.
fn check_admin(
    doc: &Value,
    store: &mut noise_filter_core::MemoryStore,
    route: &str,
    method: &'static str,
    target: &str,
    token: Option<&str>,
    body: &str,
) -> Value {
    let tokens = AdminTokens::configure(ADMIN_TOKEN).unwrap();
    let auth = token.map(|t| format!("Bearer {t}"));
    let headers: Vec<(&str, &[u8])> = auth
        .iter()
        .map(|a| ("authorization", a.as_bytes()))
        .collect();
    let request = noise_filter_core::Request {
        method,
        target,
        headers: &headers,
    };
    let answer = admin_api::run(
        &request,
        body.as_bytes(),
        support::NOW,
        tokens.as_ref(),
        [6; 24],
        store,
    );
    let response = answer.response;
    let label = format!("{method} {target} -> {}", response.status);
    // A method the route does not take is answered as each of its
    // operations documents the 405.
    let mut operation = admin_operation(doc, route, method);
    if operation.is_null() {
        assert_eq!(
            response.status, 405,
            "{label}: a method the route does not take"
        );
        operation = doc["paths"][admin_path(route)]
            .as_object()
            .unwrap()
            .values()
            .next()
            .unwrap();
    }
    let documented = operation["responses"]
        .get(response.status.to_string())
        .map(|r| resolve(doc, r))
        .unwrap_or_else(|| panic!("{label}: status not documented"));
    let headers = documented["headers"].as_object().unwrap();
    let names: BTreeSet<String> = headers.keys().map(|k| k.to_ascii_lowercase()).collect();
    for (name, value) in &response.headers {
        if *name == "content-type" {
            assert_eq!(value, "application/json", "{label}");
            continue;
        }
        assert!(
            names.contains(*name),
            "{label}: header {name} not documented"
        );
        let (_, header) = headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .unwrap();
        let mut errors = Vec::new();
        let schema = &resolve(doc, header)["schema"];
        validate(
            doc,
            schema,
            &Value::String(value.clone()),
            name,
            &mut errors,
        );
        assert!(errors.is_empty(), "{label}: {errors:?}");
    }
    for (name, header) in headers {
        if resolve(doc, header)["required"] == true {
            assert!(
                response.header(&name.to_ascii_lowercase()).is_some(),
                "{label}: documented header {name} missing"
            );
        }
    }
    let value: Value = serde_json::from_slice(&response.body).unwrap();
    let schema = &documented["content"]["application/json"]["schema"];
    let mut errors = Vec::new();
    validate(doc, schema, &value, "body", &mut errors);
    assert!(errors.is_empty(), "{label}: {errors:?}: {value}");
    if response.status >= 400 {
        // The text is one of the documented examples' where the example is
        // a fixed text (the token's, the route's, the store's).
        let examples = documented["content"]["application/json"]["examples"]
            .as_object()
            .unwrap();
        if matches!(response.status, 401 | 405 | 413) {
            assert!(
                examples.values().any(|e| e["value"] == value),
                "{label}: {value} is not a documented example"
            );
        }
    }
    value
}

#[test]
fn every_admin_answer_the_core_gives_is_documented() {
    let doc = doc();
    let mut store = noise_filter_core::MemoryStore::new();
    let t = Some(ADMIN_TOKEN);
    let keys = "keys";
    let created = check_admin(
        &doc,
        &mut store,
        keys,
        "POST",
        "/admin/v1/keys",
        t,
        r#"{"account":"acme","label":"ci"}"#,
    );
    let hash = created["hash"].as_str().unwrap()[..8].to_owned();
    check_admin(&doc, &mut store, keys, "GET", "/admin/v1/keys", t, "");
    check_admin(
        &doc,
        &mut store,
        keys,
        "GET",
        "/admin/v1/keys?account=acme",
        t,
        "",
    );
    check_admin(&doc, &mut store, keys, "GET", "/admin/v1/keys", None, "");
    check_admin(
        &doc,
        &mut store,
        keys,
        "GET",
        "/admin/v1/keys",
        Some(&"w".repeat(40)),
        "",
    );
    check_admin(&doc, &mut store, keys, "PUT", "/admin/v1/keys", t, "");
    check_admin(&doc, &mut store, keys, "POST", "/admin/v1/keys", t, "{");
    check_admin(
        &doc,
        &mut store,
        keys,
        "POST",
        "/admin/v1/keys",
        t,
        &" ".repeat(admin_api::MAX_BODY_BYTES + 1),
    );
    let revoke = "keys/{prefix}/revoke";
    check_admin(
        &doc,
        &mut store,
        revoke,
        "POST",
        &format!("/admin/v1/keys/{hash}/revoke"),
        t,
        "",
    );
    check_admin(
        &doc,
        &mut store,
        revoke,
        "POST",
        "/admin/v1/keys/000000/revoke",
        t,
        "",
    );
    let patterns = "accounts/{account}/patterns";
    let at = "/admin/v1/accounts/acme/patterns";
    check_admin(
        &doc,
        &mut store,
        patterns,
        "POST",
        at,
        t,
        r#"{"pattern":"acme noise","until":"2030-01-01"}"#,
    );
    check_admin(
        &doc,
        &mut store,
        patterns,
        "POST",
        at,
        t,
        r#"[{"pattern":"tw"},{"pattern":"three noise","category":"bot-traffic"}]"#,
    );
    check_admin(&doc, &mut store, patterns, "GET", at, t, "");
    let listed = check_admin(&doc, &mut store, patterns, "GET", at, t, "");
    assert_eq!(
        listed["patterns"].as_array().unwrap().len(),
        1,
        "'tw' was refused, and its import with it"
    );
    let pattern = "accounts/{account}/patterns/{id}";
    check_admin(
        &doc,
        &mut store,
        pattern,
        "DELETE",
        &format!("{at}/custom-1"),
        t,
        "",
    );
    check_admin(
        &doc,
        &mut store,
        pattern,
        "DELETE",
        &format!("{at}/custom-1"),
        t,
        "",
    );
    let exclusions = "accounts/{account}/exclusions";
    let ex = "/admin/v1/accounts/acme/exclusions";
    check_admin(
        &doc,
        &mut store,
        exclusions,
        "POST",
        ex,
        t,
        r#"[{"id":"googlebot"},{"category":"OTHER","until":"2030-01-01"}]"#,
    );
    check_admin(
        &doc,
        &mut store,
        exclusions,
        "POST",
        ex,
        t,
        r#"{"id":"googlbot"}"#,
    );
    check_admin(&doc, &mut store, exclusions, "GET", ex, t, "");
    let exclusion = "accounts/{account}/exclusions/{kind}/{value}";
    check_admin(
        &doc,
        &mut store,
        exclusion,
        "DELETE",
        &format!("{ex}/id/googlebot"),
        t,
        "",
    );
    check_admin(
        &doc,
        &mut store,
        exclusion,
        "DELETE",
        &format!("{ex}/id/googlebot"),
        t,
        "",
    );
    let export = check_admin(
        &doc,
        &mut store,
        "accounts/{account}/export",
        "GET",
        "/admin/v1/accounts/acme/export",
        t,
        "",
    );
    let import = "accounts/{account}/import";
    let document = export.to_string();
    let mut other = noise_filter_core::MemoryStore::new();
    check_admin(
        &doc,
        &mut other,
        import,
        "POST",
        "/admin/v1/accounts/acme/import",
        t,
        &document,
    );
    let mut taken = noise_filter_core::MemoryStore::new();
    check_admin(
        &doc,
        &mut taken,
        patterns,
        "POST",
        at,
        t,
        r#"{"pattern":"something else"}"#,
    );
    check_admin(
        &doc,
        &mut taken,
        import,
        "POST",
        "/admin/v1/accounts/acme/import",
        t,
        &document,
    );
    // A store that fails.
    store.failing = true;
    check_admin(&doc, &mut store, keys, "GET", "/admin/v1/keys", t, "");
}

//! The host links exactly the key-value and configuration interfaces the
//! component imports: none missing (the component is prepared as `serve`
//! prepares it), none implemented for nothing (the host's WIT, `host/wit/`,
//! holds only these).
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use std::collections::BTreeSet;

use wasmtime::component::Component;

#[test]
fn links_exactly_what_the_component_imports() {
    let path = support::component();
    noise_filter_host::serve::prepare(&path).expect("every import of the component is linked");

    let engine = wasmtime::Engine::default();
    let component = Component::from_file(&engine, &path).unwrap();
    let key_value: BTreeSet<String> = component
        .component_type()
        .imports(&engine)
        .map(|(name, _)| name.to_owned())
        .filter(|name| {
            ["wasi:keyvalue/", "wasi:config/", "fermyon:"]
                .iter()
                .any(|prefix| name.starts_with(prefix))
        })
        .collect();
    assert_eq!(
        key_value,
        BTreeSet::from([
            "wasi:config/store@0.2.0-draft-2024-09-27".to_owned(),
            "wasi:keyvalue/atomics@0.2.0-draft2".to_owned(),
            "wasi:keyvalue/store@0.2.0-draft2".to_owned(),
        ]),
        "the host's WIT (host/wit/world.wit) must list exactly these"
    );
}

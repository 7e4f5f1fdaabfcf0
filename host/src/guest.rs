//! What one component instance sees of the host: WASI, wasi:http, and the
//! key-value imports (`fermyon:spin/key-value@2.0.0`,
//! `wasi:keyvalue/{store,atomics,batch}@0.2.0-draft2`) generated with
//! `bindgen!` from the WIT that ships with spin-sdk 5.2 (`host/wit/`).

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use crate::kv::{Backend, KvError, KvResult, Stores};
use crate::sqlite::Snapshot;

wasmtime::component::bindgen!({
    path: "wit",
    world: "key-value",
    imports: { default: async | trappable },
    with: {
        "fermyon:spin/key-value.store": OpenLabel,
        "wasi:keyvalue/store.bucket": OpenLabel,
        "wasi:keyvalue/atomics.cas": Cas,
    },
});

use fermyon::spin::key_value as spin_kv;
use wasi::keyvalue::{atomics, batch, store as wasi_kv};

/// A store label the guest opened. (`pub`: bindgen re-exports it.)
#[allow(unreachable_pub)]
#[derive(Debug, Clone, Copy)]
pub struct OpenLabel {
    name: &'static str,
}

const DEFAULT: OpenLabel = OpenLabel { name: "default" };
const RATE: OpenLabel = OpenLabel { name: "rate" };

impl OpenLabel {
    /// Index of the label in per-label arrays.
    fn slot(self) -> usize {
        usize::from(self.name != "default")
    }
}

trait BackendOf {
    fn backend(&self, label: OpenLabel) -> &Backend;
}

impl BackendOf for Stores {
    fn backend(&self, label: OpenLabel) -> &Backend {
        match label.name {
            "default" => &self.default,
            _ => &self.rate,
        }
    }
}

/// A compare-and-swap in progress: the value the guest saw.
#[allow(unreachable_pub)]
#[derive(Debug)]
pub struct Cas {
    label: OpenLabel,
    key: String,
    seen: Option<Vec<u8>>,
}

/// The host side of one instance: WASI, wasi:http and key-value state, for
/// one request at a time.
pub(crate) struct Guest {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    stores: Arc<Stores>,
    /// Per label (`default`, `rate`): this request's read snapshot, when
    /// the label is on SQLite and has been read and not written since.
    snapshots: [Option<Snapshot>; 2],
}

impl Drop for Guest {
    fn drop(&mut self) {
        for label in [DEFAULT, RATE] {
            self.end_snapshot(label);
        }
    }
}

impl std::fmt::Debug for Guest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guest").finish_non_exhaustive()
    }
}

impl Guest {
    /// State for a new instance.
    pub(crate) fn new(wasi: WasiCtx, stores: Arc<Stores>) -> Guest {
        Guest {
            wasi,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            stores,
            snapshots: [None, None],
        }
    }

    /// After a request: ends its read snapshots; says whether the instance
    /// holds no resource any more (everything of the request released).
    pub(crate) fn end_request(&mut self) -> bool {
        // A snapshot kept open would serve the next request from an old
        // state of the store (a revoked key still accepted) and hold back
        // the WAL checkpoint.
        for label in [DEFAULT, RATE] {
            self.end_snapshot(label);
        }
        self.table.is_empty()
    }

    fn open_label(&self, name: &str) -> Option<OpenLabel> {
        self.stores.label(name)?;
        // Only the two labels of spin.toml exist; keep a static name.
        Some(if name == "default" { DEFAULT } else { RATE })
    }

    fn backend(&self, label: OpenLabel) -> &Backend {
        self.stores.backend(label)
    }

    /// Reads `key` of `label`. On SQLite, through the request's snapshot
    /// of the label (opened by the first read): a request's reads see one
    /// state of the store and take the file's read lock once. Other stores
    /// read directly.
    async fn read(&mut self, label: OpenLabel, key: &str) -> KvResult<Option<Vec<u8>>> {
        let backend = self.stores.backend(label);
        let Backend::Sqlite(sqlite) = backend else {
            return backend.get(label.name, key).await;
        };
        let snapshot = match &mut self.snapshots[label.slot()] {
            Some(snapshot) => snapshot,
            empty @ None => empty.insert(sqlite.snapshot()?),
        };
        snapshot.get(label.name, key)
    }

    /// Before a write to `label` (or a compare-and-swap's read): ends the
    /// label's snapshot, so that what follows sees the store as it is now,
    /// this request's own writes included.
    fn end_snapshot(&mut self, label: OpenLabel) {
        if let Some(snapshot) = self.snapshots[label.slot()].take()
            && let Backend::Sqlite(sqlite) = self.stores.backend(label)
        {
            sqlite.end_snapshot(snapshot);
        }
    }

    /// The backend of `label`, for a write: the label's snapshot is ended
    /// first.
    fn writer(&mut self, label: OpenLabel) -> &Backend {
        self.end_snapshot(label);
        self.backend(label)
    }

    fn label_of<T: AsLabel + 'static>(&self, handle: &Resource<T>) -> wasmtime::Result<OpenLabel> {
        Ok(self.table.get(handle)?.label())
    }
}

trait AsLabel {
    fn label(&self) -> OpenLabel;
}

impl AsLabel for OpenLabel {
    fn label(&self) -> OpenLabel {
        *self
    }
}

impl WasiView for Guest {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for Guest {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: Default::default(),
        }
    }
}

/// Adds WASI, wasi:http and the key-value imports to `linker`.
pub(crate) fn add_to_linker(linker: &mut Linker<Guest>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    KeyValue::add_to_linker::<Guest, HasSelf<Guest>>(linker, |guest| guest)?;
    Ok(())
}

fn log(error: &KvError) -> String {
    eprintln!("key-value store error: {error}");
    error.0.clone()
}

// ---- fermyon:spin/key-value@2.0.0 ----

impl spin_kv::Host for Guest {}

impl spin_kv::HostStore for Guest {
    async fn open(
        &mut self,
        label: String,
    ) -> wasmtime::Result<Result<Resource<OpenLabel>, spin_kv::Error>> {
        match self.open_label(&label) {
            Some(open) => Ok(Ok(self.table.push(open)?)),
            None => Ok(Err(spin_kv::Error::NoSuchStore)),
        }
    }

    async fn get(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, spin_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .read(label, &key)
            .await
            .map_err(|e| spin_kv::Error::Other(log(&e))))
    }

    async fn set(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), spin_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .writer(label)
            .set(label.name, &key, &value)
            .await
            .map_err(|e| spin_kv::Error::Other(log(&e))))
    }

    async fn delete(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<(), spin_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .writer(label)
            .delete(label.name, &key)
            .await
            .map_err(|e| spin_kv::Error::Other(log(&e))))
    }

    async fn exists(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<bool, spin_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .read(label, &key)
            .await
            .map(|value| value.is_some())
            .map_err(|e| spin_kv::Error::Other(log(&e))))
    }

    async fn get_keys(
        &mut self,
        this: Resource<OpenLabel>,
    ) -> wasmtime::Result<Result<Vec<String>, spin_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .backend(label)
            .keys(label.name, "")
            .await
            .map_err(|e| spin_kv::Error::Other(log(&e))))
    }

    async fn drop(&mut self, this: Resource<OpenLabel>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

// ---- wasi:keyvalue/store@0.2.0-draft2 ----

impl wasi_kv::Host for Guest {
    async fn open(
        &mut self,
        identifier: String,
    ) -> wasmtime::Result<Result<Resource<OpenLabel>, wasi_kv::Error>> {
        match self.open_label(&identifier) {
            Some(open) => Ok(Ok(self.table.push(open)?)),
            None => Ok(Err(wasi_kv::Error::NoSuchStore)),
        }
    }
}

fn wasi_error(e: &KvError) -> wasi_kv::Error {
    wasi_kv::Error::Other(log(e))
}

impl wasi_kv::HostBucket for Guest {
    async fn get(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self.read(label, &key).await.map_err(|e| wasi_error(&e)))
    }

    async fn set(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .writer(label)
            .set(label.name, &key, &value)
            .await
            .map_err(|e| wasi_error(&e)))
    }

    async fn delete(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<(), wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .writer(label)
            .delete(label.name, &key)
            .await
            .map_err(|e| wasi_error(&e)))
    }

    async fn exists(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<bool, wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .read(label, &key)
            .await
            .map(|value| value.is_some())
            .map_err(|e| wasi_error(&e)))
    }

    async fn list_keys(
        &mut self,
        this: Resource<OpenLabel>,
        _cursor: Option<String>,
    ) -> wasmtime::Result<Result<wasi_kv::KeyResponse, wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .backend(label)
            .keys(label.name, "")
            .await
            .map(|keys| wasi_kv::KeyResponse { keys, cursor: None })
            .map_err(|e| wasi_error(&e)))
    }

    async fn drop(&mut self, this: Resource<OpenLabel>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

// ---- wasi:keyvalue/atomics@0.2.0-draft2 ----

impl atomics::Host for Guest {
    async fn increment(
        &mut self,
        bucket: Resource<OpenLabel>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        Ok(self
            .writer(label)
            .increment(label.name, &key, delta)
            .await
            .map_err(|e| wasi_error(&e)))
    }

    async fn swap(
        &mut self,
        cas: Resource<Cas>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), atomics::CasError>> {
        let cas = self.table.delete(cas)?;
        let backend = self.backend(cas.label);
        match backend
            .compare_and_swap(cas.label.name, &cas.key, cas.seen.as_deref(), &value)
            .await
        {
            Ok(true) => Ok(Ok(())),
            Ok(false) => {
                // Hand back a fresh handle holding the latest value.
                let seen = match backend.get(cas.label.name, &cas.key).await {
                    Ok(seen) => seen,
                    Err(e) => return Ok(Err(atomics::CasError::StoreError(wasi_error(&e)))),
                };
                let retry = self.table.push(Cas {
                    label: cas.label,
                    key: cas.key,
                    seen,
                })?;
                Ok(Err(atomics::CasError::CasFailed(retry)))
            }
            Err(e) => Ok(Err(atomics::CasError::StoreError(wasi_error(&e)))),
        }
    }
}

impl atomics::HostCas for Guest {
    async fn new(
        &mut self,
        bucket: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<Resource<Cas>, wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        let seen = match self.writer(label).get(label.name, &key).await {
            Ok(seen) => seen,
            Err(e) => return Ok(Err(wasi_error(&e))),
        };
        Ok(Ok(self.table.push(Cas { label, key, seen })?))
    }

    async fn current(
        &mut self,
        this: Resource<Cas>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_kv::Error>> {
        Ok(Ok(self.table.get(&this)?.seen.clone()))
    }

    async fn drop(&mut self, this: Resource<Cas>) -> wasmtime::Result<()> {
        self.table.delete(this)?;
        Ok(())
    }
}

// ---- wasi:keyvalue/batch@0.2.0-draft2 ----

impl batch::Host for Guest {
    async fn get_many(
        &mut self,
        bucket: Resource<OpenLabel>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<Vec<(String, Option<Vec<u8>>)>, wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            match self.read(label, &key).await {
                Ok(value) => out.push((key, value)),
                Err(e) => return Ok(Err(wasi_error(&e))),
            }
        }
        Ok(Ok(out))
    }

    async fn set_many(
        &mut self,
        bucket: Resource<OpenLabel>,
        key_values: Vec<(String, Vec<u8>)>,
    ) -> wasmtime::Result<Result<(), wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        for (key, value) in key_values {
            if let Err(e) = self.writer(label).set(label.name, &key, &value).await {
                return Ok(Err(wasi_error(&e)));
            }
        }
        Ok(Ok(()))
    }

    async fn delete_many(
        &mut self,
        bucket: Resource<OpenLabel>,
        keys: Vec<String>,
    ) -> wasmtime::Result<Result<(), wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        for key in keys {
            if let Err(e) = self.writer(label).delete(label.name, &key).await {
                return Ok(Err(wasi_error(&e)));
            }
        }
        Ok(Ok(()))
    }
}

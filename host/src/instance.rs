//! What one component instance sees of the host: WASI, wasi:http, the
//! key-value imports the component has (`wasi:keyvalue/store`, and
//! `wasi:keyvalue/atomics`' `increment` and compare-and-swap,
//! `@0.2.0-draft2`) and `wasi:config/store`, generated with `bindgen!` from
//! the WIT that ships with spin-sdk 5.2 (`host/wit/`). This only translates
//! WIT calls to the request's store session (`store/`), and answers the
//! component's one configuration variable, `admin_token`, with the host's
//! setting.

use std::sync::Arc;

use wasmtime::component::{HasSelf, Linker, Resource, ResourceTable};
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

use noise_filter_core::StoreLabel;

use crate::metrics::StoreOperation;
use crate::store::{KvError, Session, Stores};

wasmtime::component::bindgen!({
    path: "wit",
    world: "key-value",
    imports: { default: async | trappable },
    with: {
        "wasi:keyvalue/store.bucket": OpenLabel,
        "wasi:keyvalue/atomics.cas": PendingSwap,
    },
});

use wasi::config::store as config;
use wasi::keyvalue::{atomics, store as wasi_kv};

/// The component's variable that holds the admin tokens (spin.toml's
/// `admin_token`).
pub const ADMIN_TOKEN_VARIABLE: &str = "admin_token";

/// A store label the guest opened. (`pub`: bindgen re-exports it.)
#[allow(unreachable_pub)]
#[derive(Debug, Clone, Copy)]
pub struct OpenLabel(StoreLabel);

/// A compare-and-swap the guest began (`cas.new`): the record, and the
/// value `cas.current` read, which `swap` writes over only if it is still
/// there. (`pub`: bindgen re-exports it.)
#[allow(unreachable_pub)]
#[derive(Debug, Clone)]
pub struct PendingSwap {
    label: StoreLabel,
    key: String,
    /// What `current` read (`None`: not read yet; then `swap` compares with
    /// the value as it is at the swap, as Spin's SQLite store does).
    current: Option<Option<Vec<u8>>>,
}

/// The host side of one instance: WASI, wasi:http and the request's view of
/// the stores, for one request at a time.
pub struct InstanceState {
    wasi: WasiCtx,
    http: WasiHttpCtx,
    table: ResourceTable,
    stores: Session,
    /// The admin tokens as configured (`NOISE_FILTER_ADMIN_TOKEN`), handed
    /// to the component as its variable; `None`: the admin API is off.
    admin_token: Option<Arc<str>>,
}

impl std::fmt::Debug for InstanceState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InstanceState").finish_non_exhaustive()
    }
}

impl InstanceState {
    /// State for a new instance; `admin_token`: the component's
    /// `admin_token` variable (`None`: not set).
    pub fn new(wasi: WasiCtx, stores: Arc<Stores>, admin_token: Option<Arc<str>>) -> InstanceState {
        InstanceState {
            wasi,
            http: WasiHttpCtx::new(),
            table: ResourceTable::new(),
            stores: Session::new(stores),
            admin_token,
        }
    }

    /// After a request: ends its store session; says whether the instance
    /// holds no resource any more (everything of the request released).
    pub fn end_request(&mut self) -> bool {
        self.stores.end();
        self.table.is_empty()
    }

    fn label_of(&self, handle: &Resource<OpenLabel>) -> wasmtime::Result<StoreLabel> {
        Ok(self.table.get(handle)?.0)
    }
}

impl WasiView for InstanceState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

impl WasiHttpView for InstanceState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http,
            table: &mut self.table,
            hooks: Default::default(),
        }
    }
}

/// Adds WASI, wasi:http and the key-value imports to `linker`.
pub fn add_to_linker(linker: &mut Linker<InstanceState>) -> wasmtime::Result<()> {
    wasmtime_wasi::p2::add_to_linker_async(linker)?;
    wasmtime_wasi_http::p2::add_only_http_to_linker_async(linker)?;
    KeyValue::add_to_linker::<InstanceState, HasSelf<InstanceState>>(linker, |state| state)?;
    Ok(())
}

fn log(error: &KvError) -> String {
    tracing::warn!("key-value store error: {error}");
    error.0.clone()
}

// ---- wasi:keyvalue/store@0.2.0-draft2 ----

impl wasi_kv::Host for InstanceState {
    async fn open(
        &mut self,
        identifier: String,
    ) -> wasmtime::Result<Result<Resource<OpenLabel>, wasi_kv::Error>> {
        // Only the labels of spin.toml can be opened.
        match StoreLabel::from_name(&identifier) {
            Some(label) => Ok(Ok(self.table.push(OpenLabel(label))?)),
            None => Ok(Err(wasi_kv::Error::NoSuchStore)),
        }
    }
}

fn wasi_error(e: &KvError) -> wasi_kv::Error {
    wasi_kv::Error::Other(log(e))
}

/// One store call of the component, counted and timed in the metrics:
/// started before the call, finished with its result. (Not a wrapper taking
/// the call's future: that moved the whole future into its own, on every
/// call.)
struct Observed {
    operation: StoreOperation,
    started: std::time::Instant,
}

impl Observed {
    fn start(operation: StoreOperation) -> Observed {
        Observed {
            operation,
            started: std::time::Instant::now(),
        }
    }

    fn finish<T>(self, result: crate::store::KvResult<T>) -> Result<T, wasi_kv::Error> {
        crate::metrics::metrics().store_call(
            self.operation,
            self.started.elapsed(),
            result.is_ok(),
        );
        result.map_err(|e| wasi_error(&e))
    }
}

impl wasi_kv::HostBucket for InstanceState {
    async fn get(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        let call = Observed::start(StoreOperation::Get);
        Ok(call.finish(self.stores.get(label, &key).await))
    }

    async fn set(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        let call = Observed::start(StoreOperation::Set);
        Ok(call.finish(self.stores.set(label, &key, &value).await))
    }

    async fn delete(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<(), wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        let call = Observed::start(StoreOperation::Delete);
        Ok(call.finish(self.stores.delete(label, &key).await))
    }

    async fn exists(
        &mut self,
        this: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<bool, wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        let call = Observed::start(StoreOperation::Get);
        Ok(call
            .finish(self.stores.get(label, &key).await)
            .map(|value| value.is_some()))
    }

    async fn list_keys(
        &mut self,
        this: Resource<OpenLabel>,
        _cursor: Option<String>,
    ) -> wasmtime::Result<Result<wasi_kv::KeyResponse, wasi_kv::Error>> {
        let label = self.label_of(&this)?;
        Ok(self
            .stores
            .keys(label, "")
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

impl atomics::Host for InstanceState {
    async fn increment(
        &mut self,
        bucket: Resource<OpenLabel>,
        key: String,
        delta: i64,
    ) -> wasmtime::Result<Result<i64, wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        let call = Observed::start(StoreOperation::Increment);
        Ok(call.finish(self.stores.increment(label, &key, delta).await))
    }

    async fn swap(
        &mut self,
        cas: Resource<PendingSwap>,
        value: Vec<u8>,
    ) -> wasmtime::Result<Result<(), atomics::CasError>> {
        let mut pending = self.table.delete(cas)?;
        let expected = match pending.current.take() {
            Some(current) => current,
            None => {
                let call = Observed::start(StoreOperation::Get);
                match call.finish(self.stores.current(pending.label, &pending.key).await) {
                    Ok(current) => current,
                    Err(error) => return Ok(Err(atomics::CasError::StoreError(error))),
                }
            }
        };
        let call = Observed::start(StoreOperation::Swap);
        let swapped = self
            .stores
            .compare_and_swap(pending.label, &pending.key, expected.as_deref(), &value)
            .await;
        match call.finish(swapped) {
            Ok(true) => Ok(Ok(())),
            // Too old: a handle with the value there now, to try again.
            Ok(false) => {
                let call = Observed::start(StoreOperation::Get);
                match call.finish(self.stores.current(pending.label, &pending.key).await) {
                    Ok(current) => {
                        pending.current = Some(current);
                        let again = self.table.push(pending)?;
                        Ok(Err(atomics::CasError::CasFailed(again)))
                    }
                    Err(error) => Ok(Err(atomics::CasError::StoreError(error))),
                }
            }
            Err(error) => Ok(Err(atomics::CasError::StoreError(error))),
        }
    }
}

impl atomics::HostCas for InstanceState {
    async fn new(
        &mut self,
        bucket: Resource<OpenLabel>,
        key: String,
    ) -> wasmtime::Result<Result<Resource<PendingSwap>, wasi_kv::Error>> {
        let label = self.label_of(&bucket)?;
        let pending = PendingSwap {
            label,
            key,
            current: None,
        };
        Ok(Ok(self.table.push(pending)?))
    }

    async fn current(
        &mut self,
        cas: Resource<PendingSwap>,
    ) -> wasmtime::Result<Result<Option<Vec<u8>>, wasi_kv::Error>> {
        let (label, key) = {
            let pending = self.table.get(&cas)?;
            (pending.label, pending.key.clone())
        };
        // The value as stored now, not as this request's read snapshot
        // saw it: the swap compares with what is there.
        let call = Observed::start(StoreOperation::Get);
        let current = match call.finish(self.stores.current(label, &key).await) {
            Ok(current) => current,
            Err(error) => return Ok(Err(error)),
        };
        self.table.get_mut(&cas)?.current = Some(current.clone());
        Ok(Ok(current))
    }

    async fn drop(&mut self, cas: Resource<PendingSwap>) -> wasmtime::Result<()> {
        self.table.delete(cas)?;
        Ok(())
    }
}

// ---- wasi:config/store@0.2.0-draft-2024-09-27 ----

impl config::Host for InstanceState {
    async fn get(
        &mut self,
        key: String,
    ) -> wasmtime::Result<Result<Option<String>, config::Error>> {
        Ok(Ok(match key.as_str() {
            ADMIN_TOKEN_VARIABLE => self.admin_token.as_deref().map(str::to_owned),
            _ => None,
        }))
    }

    async fn get_all(&mut self) -> wasmtime::Result<Result<Vec<(String, String)>, config::Error>> {
        Ok(Ok(self
            .admin_token
            .iter()
            .map(|token| (ADMIN_TOKEN_VARIABLE.to_owned(), token.to_string()))
            .collect()))
    }
}

//! The `#[http_component]` entry point: copy the request in, answer, copy the
//! response out.

use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};
use spin_sdk::http_component;

use noise_filter_core::KEY_RANDOM_BYTES;
use noise_filter_core::admin_api::{self, MAX_BODY_BYTES};
use spin_sdk::wit::wasi::config::store as config;
use wasi::io::streams::StreamError;
use wasi::random::random;

use crate::glue::{self, Answer, Stores};
use crate::kv::WasiBuckets;

/// The Spin variable that holds the admin tokens (`spin.toml`: a secret,
/// empty by default: the admin API is off).
const ADMIN_TOKEN_VARIABLE: &str = "admin_token";

#[http_component]
fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
    let method = request.method().to_string();
    let target = request.path_with_query().unwrap_or_else(|| "/".to_owned());
    let headers = request.headers().entries();
    let answer = if admin_api::is_admin(&target) {
        admin(request, &method, &target, &headers)
    } else {
        drop(request);
        glue::answer(
            &method,
            &target,
            &headers,
            glue::now(),
            &mut Stores::new(WasiBuckets),
        )
    };
    let fields = match Fields::from_list(&answer.headers) {
        Ok(fields) => fields,
        Err(error) => {
            // Core headers are static names and ASCII values: cannot happen.
            log!("response headers refused: {error:?}");
            Fields::new()
        }
    };
    let response = OutgoingResponse::new(fields);
    if response.set_status_code(answer.status).is_err() {
        log!("status {} refused", answer.status);
    }
    let Ok(body) = response.body() else {
        log!("response body not available");
        return;
    };
    response_out.set(response);
    if let Err(error) = write_all(&body, &answer.body) {
        log!("response body not sent: {error}");
        return;
    }
    if let Err(error) = OutgoingBody::finish(body, None) {
        log!("response body not finished: {error:?}");
    }
}

/// A call of the admin API: the variable, the body and random bytes are
/// read only here, so the endpoint's requests pay for none of them.
fn admin(
    request: IncomingRequest,
    method: &str,
    target: &str,
    headers: &[(String, Vec<u8>)],
) -> Answer {
    let configured = match config::get(ADMIN_TOKEN_VARIABLE) {
        Ok(value) => value,
        Err(error) => {
            log!("admin: the variable {ADMIN_TOKEN_VARIABLE} cannot be read: {error:?}");
            None
        }
    };
    // Off (no token set): the core answers without a body, so none is read.
    let off = configured.as_deref().is_none_or(|v| v.trim().is_empty());
    let body = if off {
        Vec::new()
    } else {
        read_body(request).unwrap_or_else(|error| {
            log!("admin: request body not read: {error}");
            Vec::new()
        })
    };
    let mut bytes = [0u8; KEY_RANDOM_BYTES];
    let random = random::get_random_bytes(KEY_RANDOM_BYTES as u64);
    bytes.copy_from_slice(&random[..KEY_RANDOM_BYTES]);
    let (answer, lines) = glue::admin(
        method,
        target,
        headers,
        &body,
        glue::now(),
        configured.as_deref(),
        bytes,
        &mut Stores::new(WasiBuckets),
    );
    for line in lines {
        log!("{line}");
    }
    answer
}

/// The request's body, at most [`MAX_BODY_BYTES`] + 1 bytes of it (the core
/// refuses a longer one without it being held whole).
fn read_body(request: IncomingRequest) -> Result<Vec<u8>, String> {
    let body = request
        .consume()
        .map_err(|()| "already consumed".to_owned())?;
    let stream = body.stream().map_err(|()| "no stream".to_owned())?;
    let mut bytes = Vec::new();
    while bytes.len() <= MAX_BODY_BYTES {
        let want = (MAX_BODY_BYTES + 1 - bytes.len()).min(64 * 1024) as u64;
        match stream.blocking_read(want) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => break,
            Err(StreamError::LastOperationFailed(error)) => return Err(error.to_debug_string()),
        }
    }
    Ok(bytes)
}

/// Writes the whole body into the stream, waiting only when the runtime's
/// buffer is full. The SDK's `set_with_body` also flushes and then waits
/// until the runtime has taken the bytes, which parks every request once;
/// here a body that fits in the buffer (the runtime's chunk is 1 MiB under
/// wasmtime-wasi-http) is written and finished in one go. The runtime sends
/// what it has when the body is finished, so nothing is lost without a flush.
fn write_all(body: &OutgoingBody, mut bytes: &[u8]) -> Result<(), String> {
    let stream = body
        .write()
        .map_err(|()| "body stream already taken".to_owned())?;
    while !bytes.is_empty() {
        let permit = stream.check_write().map_err(|e| e.to_string())?;
        if permit == 0 {
            stream.subscribe().block();
            continue;
        }
        let count = usize::try_from(permit)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        stream.write(&bytes[..count]).map_err(|e| e.to_string())?;
        bytes = &bytes[count..];
    }
    Ok(())
}

//! The `#[http_component]` entry point: copy the request in, answer, copy the
//! response out.

use spin_sdk::http::{Fields, IncomingRequest, OutgoingBody, OutgoingResponse, ResponseOutparam};
use spin_sdk::http_component;

use crate::glue::{self, Stores};
use crate::kv::WasiBuckets;

#[http_component]
fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
    let method = request.method().to_string();
    let target = request.path_with_query().unwrap_or_else(|| "/".to_owned());
    let headers = request.headers().entries();
    drop(request);
    let answer = glue::answer(
        &method,
        &target,
        &headers,
        glue::now(),
        &mut Stores::new(WasiBuckets),
    );
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

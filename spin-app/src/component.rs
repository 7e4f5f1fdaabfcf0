//! The `#[http_component]` entry point: copy the request in, answer, copy the
//! response out.

use spin_sdk::http::{Fields, IncomingRequest, OutgoingResponse, ResponseOutparam};
use spin_sdk::http_component;

use crate::glue::{self, Stores};
use crate::kv::WasiBuckets;

#[http_component]
async fn handle(request: IncomingRequest, response_out: ResponseOutparam) {
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
            eprintln!("response headers refused: {error:?}");
            Fields::new()
        }
    };
    let response = OutgoingResponse::new(fields);
    if response.set_status_code(answer.status).is_err() {
        eprintln!("status {} refused", answer.status);
    }
    if let Err(error) = response_out.set_with_body(response, answer.body).await {
        eprintln!("response body not sent: {error}");
    }
}

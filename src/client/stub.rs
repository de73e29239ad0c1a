//! A stub community server for unit tests of what our side does with the server's answers:
//! it answers every request as the test says (status, `Retry-After`, JSON body) and
//! records the path and body of each.

use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::http::{HeaderValue, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use serde_json::Value;

/// One answer: status, `Retry-After` seconds, body.
pub(crate) type Answer = (u16, Option<u64>, Value);

/// A running stub: its URL and the requests it received (path, JSON body or null).
pub(crate) struct Stub {
    pub url: String,
    seen: Arc<Mutex<Vec<(String, Value)>>>,
}

impl Stub {
    /// Serves on a free loopback port; `answer` gets each request's path and how many
    /// requests came before it.
    pub(crate) async fn start(
        answer: impl Fn(&str, usize) -> Answer + Send + Sync + 'static,
    ) -> Stub {
        let seen: Arc<Mutex<Vec<(String, Value)>>> = Arc::default();
        let (recorded, answer) = (seen.clone(), Arc::new(answer));
        let app = axum::Router::new().fallback(move |uri: Uri, body: Bytes| {
            let (recorded, answer) = (recorded.clone(), answer.clone());
            async move {
                let body = serde_json::from_slice(&body).unwrap_or(Value::Null);
                let before = {
                    let mut recorded = recorded.lock().unwrap();
                    recorded.push((uri.path().to_string(), body));
                    recorded.len() - 1
                };
                let (status, retry_after, body) = answer(uri.path(), before);
                let mut response: Response =
                    (StatusCode::from_u16(status).unwrap(), axum::Json(body)).into_response();
                if let Some(seconds) = retry_after {
                    response
                        .headers_mut()
                        .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                }
                response
            }
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Stub { url, seen }
    }

    /// The requests so far: path and JSON body.
    pub(crate) fn seen(&self) -> Vec<(String, Value)> {
        self.seen.lock().unwrap().clone()
    }
}

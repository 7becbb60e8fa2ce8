//! One call of etcd's gRPC gateway: a JSON `POST` to a member's client URL, bounded, with the token of
//! etcd's own authentication when there is one; its answer read as the shape asked for, or as etcd's
//! error body ([`CallError`]).

use std::time::Duration;

use reqwest::Method;
use reqwest::header::{AUTHORIZATION, CONTENT_TYPE};
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::gateway::{CallError, GatewayError};
use crate::cluster::endpoint_client::{EndpointClient, describe};

/// The longest part of a body that is not etcd's quoted in an error (characters).
const QUOTED: usize = 120;

/// `POST body` to `url` within `timeout`, with `Authorization: <token>` when given, over `http` (its
/// TLS files read again).
///
/// # Errors
/// etcd's error body ([`CallError::Etcd`], whatever the HTTP status); no answer, or a body that is
/// neither the shape `T` nor etcd's error ([`CallError::NoAnswer`], naming the status and the
/// cause; a TLS file that cannot be read). Neither names `url`: the caller does, once.
pub async fn post<T: DeserializeOwned>(
    http: &EndpointClient,
    url: &str,
    body: &Value,
    token: Option<&str>,
    timeout: Duration,
) -> Result<T, CallError> {
    let mut request = http
        .request(Method::POST, url)
        .map_err(CallError::NoAnswer)?
        .timeout(timeout)
        .header(CONTENT_TYPE, "application/json")
        .body(body.to_string());
    if let Some(token) = token {
        request = request.header(AUTHORIZATION, token);
    }
    let response = request
        .send()
        .await
        .map_err(|e| CallError::NoAnswer(describe(&e.without_url())))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| CallError::NoAnswer(describe(&e.without_url())))?;
    if status.is_success() {
        return serde_json::from_slice(&bytes)
            .map_err(|e| CallError::NoAnswer(format!("not etcd's JSON: {e}")));
    }
    match serde_json::from_slice::<GatewayError>(&bytes) {
        Ok(e) if e.code != 0 || !e.words().is_empty() => Err(CallError::Etcd(status.as_u16(), e)),
        _ => {
            let text = String::from_utf8_lossy(&bytes);
            let text: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
            let text: String = text.chars().take(QUOTED).collect();
            let hint = if status.as_u16() == 404 {
                " (is etcd's gRPC gateway on? --enable-grpc-gateway)"
            } else {
                ""
            };
            Err(CallError::NoAnswer(format!(
                "HTTP {}: {text}{hint}",
                status.as_u16()
            )))
        }
    }
}

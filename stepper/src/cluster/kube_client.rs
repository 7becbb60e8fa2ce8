//! The kube-rs client the stepper talks to the API server with ([`client`]): kube-rs's own stack with
//! a read buffer between the TCP socket and rustls ([`super::read_buffer`]).
//!
//! kube-client 5 builds its default client (`Client::try_from(Config)`, `make_generic_builder` in
//! `client/builder.rs`) from parts it makes public (`ConfigExt`'s layers and TLS connector, the
//! retry policy), around a connector it does not let one replace; the stack below is that one, in
//! the same order, with [`BufferedConnector`] under the TLS connector: the base URI, kube's retry of
//! 429/503/504 (`Config::default_retry`), the credentials (`ConfigExt::auth_layer`), the extra and
//! impersonation headers, a `debug` span per request, then hyper-util's client over the connect,
//! read and write timeouts of the `Config`, its HTTP/1 read buffer of a fixed
//! [`HTTP1_READ_BUFFER_BYTES`]. Gzip is kube's `gzip` feature, not enabled here.
//!
//! A configuration with a proxy (`proxy_url`: kube's `socks5`/`http-proxy` features, not enabled
//! here, or an error) keeps kube-rs's own client ([`Stack::KubeDefault`]): what it answers is kube's.

use std::time::Duration;

use http::{HeaderMap, Request, Response};
use hyper::body::Incoming;
use hyper_timeout::TimeoutConnector;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use kube::client::retry::RetryPolicy;
use kube::client::{Body, ClientBuilder, ConfigExt as _};
use kube::{Client, Config};
use tower::retry::RetryLayer;
use tower::{BoxError, ServiceBuilder};
use tower_http::classify::ServerErrorsFailureClass;
use tower_http::trace::TraceLayer;
use tracing::Span;

use super::read_buffer::BufferedConnector;

/// hyper's read buffer on each connection, in bytes: a fixed size rather than its adaptive one
/// (32 KiB: two TLS records' plaintext, 2^14 bytes each, RFC 8446 §5.1; rustls hands hyper about
/// one record per read, so a large LIST is read in as many reads as with the adaptive buffer).
///
/// hyper's adaptive buffer (hyper 1, `proto/h1/io.rs`, `ReadStrategy`) grows to 64 KiB and more
/// while it reads large answers, and a `BytesMut` remembers that size (bytes 1,
/// `original_capacity`, kept up to 64 KiB): each time hyper refills it while the body chunks it
/// split off before are still held (every batch of a watch, [`super::read_pacing`]), it allocates
/// a new 64 KiB buffer, which musl's allocator (mallocng, the static image's) maps with `mmap` on
/// its own and unmaps once those chunks are dropped: an `mmap`, a `munmap` and the page faults of
/// 17 fresh pages per batch (BENCHMARKS.md, "CPU per pod watch event": 353 of each over ~1,500
/// events, ~19 % of the CPU; with this size, 25 maps of 20 KiB). The new buffers are now 32 KiB
/// and a little more, which mallocng serves from groups it keeps.
///
/// The price: hyper refuses a response head longer than this (the exact size is also its limit on
/// a head). The API server's heads are a few hundred bytes, plus at most 4 Ki runes of `Warning`s
/// (k8s.io/apiserver, `endpoints/filters/warning.go`, `truncateAtTotalRunes`): under 17 KiB even
/// were every rune 4 bytes of UTF-8.
pub const HTTP1_READ_BUFFER_BYTES: usize = 32 * 1024;

/// Which client [`client`] builds for a configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stack {
    /// kube-rs's stack with the connections read through a buffer ([`super::read_buffer`]).
    Buffered,
    /// kube-rs's own `Client::try_from(Config)`: a proxy, which kube connects through itself.
    KubeDefault,
}

/// The stack for `config`: [`Stack::KubeDefault`] when it names a proxy, else [`Stack::Buffered`].
pub fn stack_for(config: &Config) -> Stack {
    if config.proxy_url.is_some() {
        Stack::KubeDefault
    } else {
        Stack::Buffered
    }
}

/// The client for `config` ([`stack_for`]).
///
/// # Errors
/// As kube-rs's `Client::try_from(Config)`: unreadable credentials or TLS material, an invalid
/// header, a proxy kube-rs was built without.
pub fn client(config: Config) -> Result<Client, kube::Error> {
    match stack_for(&config) {
        Stack::KubeDefault => Client::try_from(config),
        Stack::Buffered => buffered(config),
    }
}

/// kube-client 5's `make_generic_builder` with [`BufferedConnector`] under its TLS connector and
/// hyper's read buffer of [`HTTP1_READ_BUFFER_BYTES`].
fn buffered(config: Config) -> Result<Client, kube::Error> {
    let mut tcp = HttpConnector::new();
    tcp.enforce_http(false);
    let tls = config.rustls_https_connector_with_connector(BufferedConnector::new(tcp))?;
    let mut connector = TimeoutConnector::new(tls);
    connector.set_connect_timeout(config.connect_timeout);
    connector.set_read_timeout(config.read_timeout);
    connector.set_write_timeout(config.write_timeout);
    connector.set_reset_reader_on_write(config.reset_reader_on_write);
    let http: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Builder::new(TokioExecutor::new())
            .http1_read_buf_exact_size(HTTP1_READ_BUFFER_BYTES)
            .build(connector);
    let service = ServiceBuilder::new()
        .layer(config.base_uri_layer())
        .option_layer(
            config
                .default_retry
                .then(|| RetryLayer::new(RetryPolicy::server_retry())),
        )
        .option_layer(config.auth_layer()?)
        .layer(config.extra_headers_layer()?)
        .layer(
            TraceLayer::new_for_http()
                .make_span_with(request_span)
                .on_request(|_: &Request<Body>, _: &Span| tracing::debug!("requesting"))
                .on_response(record_status)
                .on_body_chunk(())
                .on_eos(|_: Option<&HeaderMap>, _: Duration, _: &Span| {
                    tracing::debug!("stream closed")
                })
                .on_failure(record_failure),
        )
        .map_err(BoxError::from)
        .service(http);
    Ok(ClientBuilder::new(service, config.default_namespace).build())
}

/// kube-rs's span of a request (OpenTelemetry's HTTP attribute names).
fn request_span(req: &Request<Body>) -> Span {
    tracing::debug_span!(
        "HTTP",
        http.method = %req.method(),
        http.url = %req.uri(),
        http.status_code = tracing::field::Empty,
        otel.name = req.extensions().get::<&'static str>().unwrap_or(&"HTTP"),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
    )
}

fn record_status(res: &Response<Incoming>, _: Duration, span: &Span) {
    let status = res.status();
    span.record("http.status_code", status.as_u16());
    if status.is_client_error() || status.is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
}

fn record_failure(failure: ServerErrorsFailureClass, _: Duration, span: &Span) {
    span.record("otel.status_code", "ERROR");
    match failure {
        ServerErrorsFailureClass::StatusCode(status) => {
            span.record("http.status_code", status.as_u16());
            tracing::error!("failed with status {}", status);
        }
        ServerErrorsFailureClass::Error(err) => tracing::error!("failed with error {}", err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proxy_keeps_kubes_own_client() {
        let mut config = Config::new("https://127.0.0.1:6443".parse().unwrap());
        assert_eq!(stack_for(&config), Stack::Buffered);
        config.proxy_url = Some("socks5://127.0.0.1:1080".parse().unwrap());
        assert_eq!(stack_for(&config), Stack::KubeDefault);
    }
}

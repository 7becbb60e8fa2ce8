//! Secured endpoints for tests of the stepper's outbound clients: an axum app over a real TLS server
//! on 127.0.0.1 (rustls with ring) whose certificate a [`TestCa`] issued, optionally requiring client
//! certificates of another CA ([`HttpsServer`]); and an app that answers only requests carrying the
//! expected `Authorization` header, recording every header it saw ([`Guard`]). Every server binds a
//! free port and stops when dropped.
#![allow(dead_code)] // each test crate uses a subset

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};

use axum::Router;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::{get, post};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig};
use tokio_rustls::server::TlsStream;

use super::test_ca::TestCa;

/// A TCP listener that completes a TLS handshake on each connection before axum sees it; a failed
/// handshake (a client that does not trust the certificate, or brings no client certificate the
/// server trusts) is dropped and the next one accepted.
pub struct TlsListener {
    tcp: TcpListener,
    tls: TlsAcceptor,
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        loop {
            let Ok((socket, addr)) = self.tcp.accept().await else {
                continue;
            };
            if let Ok(stream) = self.tls.accept(socket).await {
                return (stream, addr);
            }
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        self.tcp.local_addr()
    }
}

/// An HTTPS server on 127.0.0.1 serving an axum app.
pub struct HttpsServer {
    /// Its port.
    pub port: u16,
    task: JoinHandle<()>,
}

impl HttpsServer {
    /// Serves `app` with a certificate `ca` issued for `names`; with `client_ca`, only to clients
    /// presenting a certificate that CA issued (the handshake fails otherwise).
    pub async fn start(
        ca: &TestCa,
        names: &[&str],
        client_ca: Option<&TestCa>,
        app: Router,
    ) -> HttpsServer {
        let (cert_pem, key_pem) = ca.server_cert_for(names);
        let certs = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("certificate PEM");
        let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes()).expect("key PEM");
        let provider = Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("TLS versions");
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(client_ca) => {
                let mut roots = RootCertStore::empty();
                for cert in CertificateDer::pem_slice_iter(client_ca.cert_pem.as_bytes()) {
                    roots.add(cert.expect("CA PEM")).expect("client CA");
                }
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider)
                        .build()
                        .expect("client verifier");
                builder.with_client_cert_verifier(verifier)
            }
        };
        let config = builder
            .with_single_cert(certs, key)
            .expect("server certificate");
        let tcp = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = tcp.local_addr().expect("addr").port();
        let listener = TlsListener {
            tcp,
            tls: TlsAcceptor::from(Arc::new(config)),
        };
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        HttpsServer { port, task }
    }

    /// `https://<host>:<port><path>`.
    pub fn url(&self, host: &str, path: &str) -> String {
        format!("https://{host}:{}{path}", self.port)
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// What an HTTP check reads when the guard lets a request through.
pub const GREEN: &str = r#"{"cluster_name":"logs","status":"green"}"#;
/// What a webhook answers when the guard lets a request through.
pub const APPROVE: &str = r#"{"decision":"Approve","reason":"authenticated"}"#;

/// An app that answers `GET /health` ([`GREEN`]) and `POST /approve` ([`APPROVE`]) only when the
/// request's `Authorization` header is the expected one (any, or none, when none is expected), else
/// 401; it records the header of every request it got (`""` for none).
#[derive(Clone, Default)]
pub struct Guard {
    expected: Arc<Mutex<Option<String>>>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Guard {
    /// A guard expecting `authorization` (e.g. `Bearer first`), or nothing in particular.
    pub fn expecting(authorization: Option<&str>) -> Guard {
        let guard = Guard::default();
        guard.expect(authorization);
        guard
    }

    /// From now on, expect `authorization` (a rotated secret).
    pub fn expect(&self, authorization: Option<&str>) {
        *self.expected.lock().unwrap_or_else(PoisonError::into_inner) =
            authorization.map(str::to_string);
    }

    /// The `Authorization` headers seen so far, in order.
    pub fn seen(&self) -> Vec<String> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn admit(&self, headers: &HeaderMap) -> bool {
        let got = headers
            .get("authorization")
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(got.clone());
        let expected = self.expected.lock().unwrap_or_else(PoisonError::into_inner);
        expected.as_ref().is_none_or(|want| *want == got)
    }

    /// The app.
    pub fn app(&self) -> Router {
        let (health, approve) = (self.clone(), self.clone());
        Router::new()
            .route(
                "/health",
                get(move |headers: HeaderMap| async move { answer(&health, &headers, GREEN) }),
            )
            .route(
                "/approve",
                post(move |headers: HeaderMap| async move { answer(&approve, &headers, APPROVE) }),
            )
    }
}

fn answer(guard: &Guard, headers: &HeaderMap, body: &'static str) -> (StatusCode, &'static str) {
    if guard.admit(headers) {
        (StatusCode::OK, body)
    } else {
        (StatusCode::UNAUTHORIZED, r#"{"error":"unauthorized"}"#)
    }
}

//! An endpoint's own TLS ([`Tls`]: a CA besides the web PKI roots, a client certificate, the name the
//! server's certificate must carry) as a rustls `ClientConfig` for reqwest (`use_preconfigured_tls`),
//! whose files are read again before every call ([`TlsFiles::refresh`]): a Secret rotated by
//! cert-manager or an operator (ECK renews its HTTP certificates and their CA) is picked up by the next
//! call's new connections without a restart; a kept-alive connection stays as it was verified.
//!
//! The server's certificate is always verified — by rustls' WebPKI verifier over the built-in web PKI
//! roots (`webpki-roots`, as reqwest's own) and the CA file — against the URL's host, or `serverName`
//! when given. The client certificate is presented only when the server asks for one. rustls with
//! ring, as reqwest and kube.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{ClientConfig, ResolvesClientCert, WebPkiServerVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::sign::CertifiedKey;
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};

use crate::config::endpoint_auth::Tls;

/// An endpoint's TLS files and what was last built from them: the verifier and the client
/// certificate resolver of its `ClientConfig` ([`TlsFiles::client_config`]).
#[derive(Debug)]
pub struct TlsFiles {
    what: String,
    tls: Tls,
    server_name: Option<ServerName<'static>>,
    provider: Arc<CryptoProvider>,
    state: RwLock<Loaded>,
}

/// The files' bytes as last read, and what they made.
#[derive(Debug)]
struct Loaded {
    bytes: Bytes,
    verifier: Arc<WebPkiServerVerifier>,
    identity: Option<Arc<CertifiedKey>>,
}

/// The bytes of the CA file, the certificate file and the key file (empty when not configured).
#[derive(Debug, Default, PartialEq, Eq)]
struct Bytes {
    ca: Vec<u8>,
    cert: Vec<u8>,
    key: Vec<u8>,
}

impl TlsFiles {
    /// Reads `tls`'s files for the endpoint `what` names (`webhook db`, `HTTP check es-health`).
    ///
    /// # Errors
    /// A file that cannot be read or holds no PEM of its kind, a key that does not match the
    /// certificate, a `serverName` rustls refuses; each naming the field, `what` and the path.
    pub fn load(what: &str, tls: &Tls) -> Result<Arc<TlsFiles>, String> {
        let server_name = match &tls.server_name {
            None => None,
            Some(name) => Some(ServerName::try_from(name.clone()).map_err(|e| {
                format!(
                    "tls.serverName of {what} {name:?}: {e}; expected a DNS name or an IP address"
                )
            })?),
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let loaded = build(what, tls, &provider, read(what, tls)?)?;
        Ok(Arc::new(TlsFiles {
            what: what.to_string(),
            tls: tls.clone(),
            server_name,
            provider,
            state: RwLock::new(loaded),
        }))
    }

    /// The rustls configuration reqwest uses for this endpoint: TLS 1.2 and 1.3 as rustls' safe
    /// defaults, this endpoint's verifier and (with a client certificate) its resolver, ALPN for
    /// HTTP/2 and HTTP/1.1 as reqwest offers with its own configuration.
    ///
    /// # Errors
    /// rustls refuses the protocol versions (never with ring's provider).
    pub fn client_config(self: &Arc<Self>) -> Result<ClientConfig, String> {
        let builder = ClientConfig::builder_with_provider(self.provider.clone())
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS of {}: {e}", self.what))?
            // A verifier of our own only to read its roots again and to verify `serverName`: it
            // delegates every check to rustls' WebPKI verifier.
            .dangerous()
            .with_custom_certificate_verifier(self.clone());
        let mut config = if self.tls.client.is_some() {
            builder.with_client_cert_resolver(self.clone())
        } else {
            builder.with_no_client_auth()
        };
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(config)
    }

    /// Reads the files again and, when one changed, rebuilds the trusted roots and the client
    /// certificate from them (for the connections made from now on).
    ///
    /// # Errors
    /// As [`TlsFiles::load`]: the call is then not made (never a call without the configured trust or
    /// identity).
    pub fn refresh(&self) -> Result<(), String> {
        let bytes = read(&self.what, &self.tls)?;
        if self.loaded().bytes == bytes {
            return Ok(());
        }
        let loaded = build(&self.what, &self.tls, &self.provider, bytes)?;
        *self.state.write().unwrap_or_else(PoisonError::into_inner) = loaded;
        Ok(())
    }

    fn loaded(&self) -> std::sync::RwLockReadGuard<'_, Loaded> {
        self.state.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn verifier(&self) -> Arc<WebPkiServerVerifier> {
        self.loaded().verifier.clone()
    }
}

/// The bytes of `tls`'s files.
fn read(what: &str, tls: &Tls) -> Result<Bytes, String> {
    let file = |field: &str, path: &Path| {
        std::fs::read(path)
            .map_err(|e| format!("reading {field} of {what} {}: {e}", path.display()))
    };
    let mut bytes = Bytes::default();
    if let Some(path) = &tls.ca_file {
        bytes.ca = file("tls.caFile", path)?;
    }
    if let Some(client) = &tls.client {
        bytes.cert = file("tls.certFile", &client.cert_file)?;
        bytes.key = file("tls.keyFile", &client.key_file)?;
    }
    Ok(bytes)
}

/// The verifier and the client certificate `bytes` make.
fn build(
    what: &str,
    tls: &Tls,
    provider: &Arc<CryptoProvider>,
    bytes: Bytes,
) -> Result<Loaded, String> {
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    if let Some(path) = &tls.ca_file {
        let at = || format!("tls.caFile of {what} {}", path.display());
        for cert in certificates(&bytes.ca).map_err(|e| format!("{}: {e}", at()))? {
            roots
                .add(cert)
                .map_err(|e| format!("{}: not a CA certificate: {e}", at()))?;
        }
    }
    let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| format!("TLS of {what}: {e}"))?;
    let identity = match &tls.client {
        None => None,
        Some(client) => {
            let cert_at = format!("tls.certFile of {what} {}", client.cert_file.display());
            let key_at = format!("tls.keyFile of {what} {}", client.key_file.display());
            let chain = certificates(&bytes.cert).map_err(|e| format!("{cert_at}: {e}"))?;
            let key = PrivateKeyDer::from_pem_slice(&bytes.key).map_err(|e| {
                format!("{key_at}: {e}; expected a PEM private key (PKCS#8, PKCS#1 or SEC1)")
            })?;
            let certified = CertifiedKey::from_der(chain, key, provider).map_err(|e| {
                format!(
                    "{cert_at} and {key_at}: {e}; expected the key of the certificate (a Secret \
                     caught mid-rotation is read again at the next call)"
                )
            })?;
            Some(Arc::new(certified))
        }
    };
    Ok(Loaded {
        bytes,
        verifier,
        identity,
    })
}

/// The certificates of a PEM bundle, at least one.
fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    Ok(certs)
}

/// rustls' WebPKI verification over the roots last read, against `serverName` when given.
impl ServerCertVerifier for TlsFiles {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let name = self.server_name.as_ref().unwrap_or(server_name);
        self.verifier()
            .verify_server_cert(end_entity, intermediates, name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier().verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier().verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.verifier().supported_verify_schemes()
    }
}

/// The client certificate last read, whatever the server hints (as rustls' own single-certificate
/// resolver).
impl ResolvesClientCert for TlsFiles {
    fn resolve(
        &self,
        _root_hint_subjects: &[&[u8]],
        _sigschemes: &[SignatureScheme],
    ) -> Option<Arc<CertifiedKey>> {
        self.loaded().identity.clone()
    }

    fn has_certs(&self) -> bool {
        self.tls.client.is_some()
    }
}

//! TLS material for tests: a self-signed CA issuing server certificates for 127.0.0.1 / localhost
//! and client certificates (rcgen, ring), and the files a test hands to a server or a client.
#![allow(dead_code)] // each test crate uses a subset

use std::path::{Path, PathBuf};

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};

/// A self-signed CA that issues server certificates for 127.0.0.1 / localhost.
pub struct TestCa {
    /// The CA certificate (PEM): what a client's CA file holds.
    pub cert_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl TestCa {
    /// A new CA named `name`.
    pub fn new(name: &str) -> TestCa {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let key = KeyPair::generate().expect("CA key");
        let cert = params.self_signed(&key).expect("self-signed CA");
        TestCa {
            cert_pem: cert.pem(),
            issuer: Issuer::new(params, key),
        }
    }

    /// A server certificate for `127.0.0.1` and `localhost`: (certificate PEM, private key PEM).
    pub fn server_cert(&self) -> (String, String) {
        self.server_cert_for(&["127.0.0.1", "localhost"])
    }

    /// A server certificate for `names` (DNS names or IP addresses): (certificate PEM, private key PEM).
    pub fn server_cert_for(&self, names: &[&str]) -> (String, String) {
        let mut params =
            CertificateParams::new(names.iter().map(|n| (*n).to_string()).collect::<Vec<_>>())
                .expect("server params");
        params
            .distinguished_name
            .push(DnType::CommonName, "prometheus test server");
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().expect("server key");
        let cert = params.signed_by(&key, &self.issuer).expect("server cert");
        (cert.pem(), key.serialize_pem())
    }
}

impl TestCa {
    /// A client certificate for the user `name` (its common name; extended key usage client auth):
    /// (certificate PEM, private key PEM).
    pub fn client_cert(&self, name: &str) -> (String, String) {
        let mut params = CertificateParams::new(Vec::<String>::new()).expect("client params");
        params.distinguished_name.push(DnType::CommonName, name);
        params.use_authority_key_identifier_extension = true;
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![rcgen::ExtendedKeyUsagePurpose::ClientAuth];
        let key = KeyPair::generate().expect("client key");
        let cert = params.signed_by(&key, &self.issuer).expect("client cert");
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes `contents` to `dir/name` and returns the path.
pub fn write_file(dir: &Path, name: &str, contents: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
    path
}

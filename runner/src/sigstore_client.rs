//! The sigstore crate's cosign client, reaching registries as [`crate::registry`] does (plain HTTP only for
//! a loopback registry or `--insecure`), with registry credentials from the environment and, for keyless
//! signatures, the Sigstore trust root (Fulcio's certificates, Rekor's keys) from a `trusted_root.json`.

use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use sigstore::cosign::{Client, ClientBuilder};
use sigstore::registry::oci_reference::OciReference;
use sigstore::registry::{Auth, ClientConfig, ClientProtocol};
use sigstore::trust::ManualTrustRoot;

use crate::registry;

/// The registry user name for `sign` and `verify` (with [`PASSWORD_ENV`]); unset: anonymous.
pub const USERNAME_ENV: &str = "RUNNER_REGISTRY_USERNAME";
/// The registry password or token for `sign` and `verify` (with [`USERNAME_ENV`]).
pub const PASSWORD_ENV: &str = "RUNNER_REGISTRY_PASSWORD";

/// Registry credentials from [`USERNAME_ENV`] and [`PASSWORD_ENV`] (both or neither).
///
/// # Errors
/// When only one of the two is set.
pub fn sigstore_auth() -> Result<Auth> {
    auth_from(
        std::env::var(USERNAME_ENV).ok(),
        std::env::var(PASSWORD_ENV).ok(),
    )
}

/// The same credentials for the runner's own oci-client (the sigstore crate has its own version of it).
///
/// # Errors
/// As [`sigstore_auth`].
pub fn oci_auth() -> Result<oci_client::secrets::RegistryAuth> {
    Ok(match sigstore_auth()? {
        Auth::Basic(u, p) => oci_client::secrets::RegistryAuth::Basic(u, p),
        Auth::Anonymous => oci_client::secrets::RegistryAuth::Anonymous,
    })
}

fn auth_from(user: Option<String>, password: Option<String>) -> Result<Auth> {
    match (user, password) {
        (Some(u), Some(p)) => Ok(Auth::Basic(u, p)),
        (None, None) => Ok(Auth::Anonymous),
        (Some(_), None) => Err(anyhow!(
            "{USERNAME_ENV} is set but {PASSWORD_ENV} is not: set both (a registry token as the password) or neither (anonymous)"
        )),
        (None, Some(_)) => Err(anyhow!(
            "{PASSWORD_ENV} is set but {USERNAME_ENV} is not: set both or neither (anonymous)"
        )),
    }
}

/// A cosign client for the registry of `uri`, and `uri` as the crate's reference.
///
/// # Errors
/// When `uri` is not an OCI reference or the client cannot be built.
pub fn cosign_client(
    uri: &str,
    insecure: bool,
    trust: Option<&ManualTrustRoot<'static>>,
) -> Result<(OciReference, Client)> {
    // reqwest is built without a default crypto provider in the runner: install ring, as registry.rs does.
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let reference = crate::signing::oci_reference(uri)?;
    let host = reference.registry().to_string();
    let protocol = if insecure || registry::is_loopback(&host) {
        ClientProtocol::HttpsExcept(vec![host])
    } else {
        ClientProtocol::Https
    };
    let mut builder = ClientBuilder::default().with_oci_client_config(ClientConfig {
        protocol,
        ..ClientConfig::default()
    });
    if let Some(trust) = trust {
        builder = builder
            .with_trust_repository(trust)
            .map_err(|e| anyhow!("--trusted-root: {e}"))?;
    }
    let client = builder
        .build()
        .map_err(|e| anyhow!("cannot build the cosign client: {e}"))?;
    Ok((reference, client))
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TrustedRoot {
    #[serde(default)]
    certificate_authorities: Vec<CertificateAuthority>,
    #[serde(default)]
    tlogs: Vec<Log>,
    #[serde(default)]
    ctlogs: Vec<Log>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CertificateAuthority {
    cert_chain: CertChain,
}

#[derive(Deserialize)]
struct CertChain {
    certificates: Vec<RawBytes>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawBytes {
    raw_bytes: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Log {
    public_key: RawBytes,
    log_id: LogId,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct LogId {
    key_id: String,
}

/// Reads Sigstore's `trusted_root.json` (the format of sigstore/root-signing's `targets/trusted_root.json`
/// and of `cosign trusted-root create`): Fulcio's CA certificates, Rekor's and the CT logs' public keys.
///
/// # Errors
/// When it is not that JSON, a value is not base64, or it holds no Fulcio certificate or no Rekor key;
/// the message names the field.
pub fn trusted_root_from_json(json: &[u8]) -> Result<ManualTrustRoot<'static>> {
    let root: TrustedRoot = serde_path_to_error::deserialize(
        &mut serde_json::Deserializer::from_slice(json),
    )
    .map_err(|e| {
        anyhow!(
            "--trusted-root: not a Sigstore trusted_root.json: {} at {}",
            e.inner(),
            e.path()
        )
    })?;
    let decode = |what: &str, value: &str| {
        BASE64
            .decode(value)
            .with_context(|| format!("--trusted-root: {what} is not base64"))
    };
    let mut fulcio_certs = Vec::new();
    for (i, ca) in root.certificate_authorities.iter().enumerate() {
        for (j, cert) in ca.cert_chain.certificates.iter().enumerate() {
            let der = decode(
                &format!("certificateAuthorities[{i}].certChain.certificates[{j}].rawBytes"),
                &cert.raw_bytes,
            )?;
            fulcio_certs.push(der.into());
        }
    }
    // The crate takes the logs' keys without their ids (it tries each).
    let keys = |logs: &[Log], field: &str| -> Result<Vec<Vec<u8>>> {
        logs.iter()
            .enumerate()
            .map(|(i, log)| {
                decode(&format!("{field}[{i}].logId.keyId"), &log.log_id.key_id)?;
                decode(
                    &format!("{field}[{i}].publicKey.rawBytes"),
                    &log.public_key.raw_bytes,
                )
            })
            .collect()
    };
    let trust = ManualTrustRoot {
        fulcio_certs,
        rekor_keys: keys(&root.tlogs, "tlogs")?,
        ctfe_keys: keys(&root.ctlogs, "ctlogs")?,
    };
    if trust.fulcio_certs.is_empty() {
        return Err(anyhow!(
            "--trusted-root: no Fulcio certificate (certificateAuthorities is empty)"
        ));
    }
    if trust.rekor_keys.is_empty() {
        return Err(anyhow!(
            "--trusted-root: no Rekor public key (tlogs is empty)"
        ));
    }
    Ok(trust)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_both_or_neither() {
        assert!(matches!(auth_from(None, None).unwrap(), Auth::Anonymous));
        assert!(matches!(
            auth_from(Some("u".into()), Some("p".into())).unwrap(),
            Auth::Basic(u, p) if u == "u" && p == "p"
        ));
        let e = auth_from(Some("u".into()), None).unwrap_err().to_string();
        assert!(e.contains(PASSWORD_ENV) && e.contains("is not"), "{e}");
        let e = auth_from(None, Some("p".into())).unwrap_err().to_string();
        assert!(e.contains(USERNAME_ENV), "{e}");
    }

    #[test]
    fn a_trusted_root_gives_fulcio_certificates_and_rekor_keys() {
        let json = br#"{"mediaType": "application/vnd.dev.sigstore.trustedroot+json;version=0.1",
            "tlogs": [{"baseUrl": "https://rekor.sigstore.dev", "hashAlgorithm": "SHA2_256",
                       "publicKey": {"rawBytes": "AQID", "keyDetails": "PKIX_ECDSA_P256_SHA_256"},
                       "logId": {"keyId": "3q2+7w=="}}],
            "certificateAuthorities": [{"certChain": {"certificates": [{"rawBytes": "BAUG"}, {"rawBytes": "Bwg="}]}}],
            "ctlogs": []}"#;
        let trust = trusted_root_from_json(json).unwrap();
        assert_eq!(trust.fulcio_certs.len(), 2);
        assert_eq!(trust.fulcio_certs[0].as_ref(), &[4, 5, 6]);
        assert_eq!(trust.rekor_keys, [vec![1, 2, 3]]);
    }

    #[test]
    fn a_bad_trusted_root_names_the_field() {
        let e = trusted_root_from_json(b"{\"tlogs\": [{\"publicKey\": {}}]}")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tlogs[0].publicKey"), "{e}");
        let e = trusted_root_from_json(
            br#"{"certificateAuthorities": [{"certChain": {"certificates": [{"rawBytes": "!!"}]}}]}"#,
        )
        .unwrap_err();
        let e = format!("{e:#}");
        assert!(
            e.contains(
                "certificateAuthorities[0].certChain.certificates[0].rawBytes is not base64"
            ),
            "{e}"
        );
        let e = trusted_root_from_json(br#"{"certificateAuthorities": [{"certChain": {"certificates": [{"rawBytes": "AQ=="}]}}]}"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no Rekor public key"), "{e}");
        let e = trusted_root_from_json(b"42").unwrap_err().to_string();
        assert!(e.contains("not a Sigstore trusted_root.json"), "{e}");
    }
}

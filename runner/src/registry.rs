//! `registry://` policies: pulled from and pushed to an OCI registry the way Kubewarden's policy-fetcher
//! (`kwctl pull`, `kwctl push`, the policy-server) does, with the `oci-client` crate.
//!
//! A Kubewarden policy artifact is an OCI image manifest with a config of media type
//! [`WASM_CONFIG_MEDIA_TYPE`] (the JSON `{}`) and exactly one layer of media type
//! [`WASM_LAYER_MEDIA_TYPE`]: the `policy.wasm` bytes, unchanged.
//!
//! Plain HTTP is used only for a registry on the loopback interface (`localhost`, `127.0.0.0/8`,
//! `[::1]`, any port: a test registry) or when the caller says `insecure`; everything else is HTTPS with
//! the system's trust roots. Access is anonymous.

use std::net::IpAddr;
use std::sync::Once;

use anyhow::{Context, Result, anyhow};
use oci_client::client::{ClientConfig, ClientProtocol, Config, ImageLayer};
use oci_client::manifest::{OciImageManifest, WASM_CONFIG_MEDIA_TYPE, WASM_LAYER_MEDIA_TYPE};
use oci_client::secrets::RegistryAuth;
use oci_client::{Client, Reference};

/// The URI scheme of a policy in an OCI registry, as in a ClusterAdmissionPolicy's `spec.module`.
pub const SCHEME: &str = "registry://";

/// Parses `registry://HOST[:PORT]/REPOSITORY[:TAG][@DIGEST]` (the `registry://` prefix is optional).
///
/// As `kwctl`, a reference without a registry host resolves to Docker Hub and one without a tag to
/// `latest`.
///
/// # Errors
/// When the reference is empty or not a valid OCI reference; the message names it.
pub fn parse_reference(uri: &str) -> Result<Reference> {
    let bare = uri.strip_prefix(SCHEME).unwrap_or(uri);
    if bare.is_empty() {
        return Err(anyhow!(
            "policy {uri}: no image reference after {SCHEME}; expected {SCHEME}HOST[:PORT]/REPOSITORY[:TAG]"
        ));
    }
    bare.parse::<Reference>().map_err(|e| {
        anyhow!("policy {uri}: not an OCI reference ({e}); expected {SCHEME}HOST[:PORT]/REPOSITORY[:TAG]")
    })
}

/// Whether `registry` (`HOST` or `HOST:PORT`, as in a reference) is on the loopback interface:
/// `localhost`, an address in `127.0.0.0/8`, or `[::1]`.
pub fn is_loopback(registry: &str) -> bool {
    let host = if let Some(rest) = registry.strip_prefix('[') {
        // [v6]:port or [v6]
        rest.split_once(']').map_or(rest, |(h, _)| h)
    } else {
        registry.rsplit_once(':').map_or(registry, |(h, _)| h)
    };
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The protocol for `registry`: plain HTTP for a loopback registry or when `insecure`, else HTTPS.
pub fn protocol_for(registry: &str, insecure: bool) -> ClientProtocol {
    if insecure || is_loopback(registry) {
        ClientProtocol::HttpsExcept(vec![registry.to_string()])
    } else {
        ClientProtocol::Https
    }
}

/// A policy pulled from a registry.
#[derive(Debug, Clone)]
pub struct Pulled {
    /// The wasm module (the layer's bytes).
    pub module: Vec<u8>,
    /// The digest of the manifest the registry served (`sha256:…`): what `kwctl pull` records.
    pub manifest_digest: String,
    /// The digest of the wasm layer (`sha256:…`), verified against the bytes by `oci-client`.
    pub layer_digest: String,
}

/// A policy pushed to a registry.
#[derive(Debug, Clone)]
pub struct Pushed {
    /// The manifest digest the registry reports for the pushed tag (`sha256:…`).
    pub manifest_digest: String,
    /// The digest of the wasm layer (`sha256:…`).
    pub layer_digest: String,
    /// The manifest URL the registry answered.
    pub manifest_url: String,
}

/// The OCI client for `reference`'s registry (see [`protocol_for`]).
///
/// # Errors
/// When the client cannot be built.
pub fn client(reference: &Reference, insecure: bool) -> Result<Client> {
    // reqwest is built without a default crypto provider: use ring, as the stepper's kube does.
    // (Installing fails only when one is already installed, which is as good.)
    static PROVIDER: Once = Once::new();
    PROVIDER.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
    let config = ClientConfig {
        protocol: protocol_for(reference.resolve_registry(), insecure),
        // A policy is one wasm module: refuse an image index rather than pick a platform.
        platform_resolver: None,
        ..ClientConfig::default()
    };
    // `Client::new` would fall back to a default (HTTPS-only) client on error: surface the error instead.
    Client::try_from(config).map_err(|e| anyhow!("cannot build the OCI client: {e}"))
}

/// A single-threaded async runtime for one registry operation.
///
/// # Errors
/// When tokio cannot start it.
pub fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime for the registry client")
}

/// Pulls the policy at `uri` (`registry://…`), accepting only a Kubewarden wasm policy artifact.
///
/// # Errors
/// When the reference is invalid, the registry cannot be reached or answers an error, the artifact is not
/// one layer of [`WASM_LAYER_MEDIA_TYPE`], or a digest does not match; every message names `uri`.
pub fn pull(uri: &str, insecure: bool) -> Result<Pulled> {
    let reference = parse_reference(uri)?;
    let client = client(&reference, insecure)?;
    let image = runtime()?
        .block_on(client.pull(
            &reference,
            &RegistryAuth::Anonymous,
            vec![WASM_LAYER_MEDIA_TYPE],
        ))
        .map_err(|e| {
            anyhow::Error::new(e).context(format!(
                "cannot pull policy {uri} over {}; expected a Kubewarden policy (one layer of media type {WASM_LAYER_MEDIA_TYPE})",
                scheme(&reference, insecure)
            ))
        })?;
    let manifest_digest = image
        .digest
        .ok_or_else(|| anyhow!("policy {uri}: the registry did not give the manifest digest"))?;
    let [layer] = <[_; 1]>::try_from(image.layers).map_err(|layers| {
        anyhow!(
            "policy {uri}: {} layers; expected a Kubewarden policy: exactly one layer of media type {WASM_LAYER_MEDIA_TYPE}",
            layers.len()
        )
    })?;
    if let Some(manifest) = &image.manifest
        && manifest.config.media_type != WASM_CONFIG_MEDIA_TYPE
    {
        return Err(anyhow!(
            "policy {uri}: config media type {}; expected {WASM_CONFIG_MEDIA_TYPE}",
            manifest.config.media_type
        ));
    }
    Ok(Pulled {
        layer_digest: layer.sha256_digest(),
        module: layer.data.to_vec(),
        manifest_digest,
    })
}

/// Pushes `module` to `uri` as `kwctl push` does: config `{}` of [`WASM_CONFIG_MEDIA_TYPE`], one layer of
/// [`WASM_LAYER_MEDIA_TYPE`], no manifest annotations. Returns the digests the registry now holds.
///
/// # Errors
/// When the reference is invalid, `module` is not WebAssembly, or the registry refuses the push; every
/// message names `uri`.
pub fn push(module: &[u8], uri: &str, insecure: bool) -> Result<Pushed> {
    let reference = parse_reference(uri)?;
    if !module.starts_with(b"\0asm") {
        return Err(anyhow!(
            "refusing to push to {uri}: the file is not a WebAssembly module (it does not start with \\0asm)"
        ));
    }
    if reference.digest().is_some() {
        return Err(anyhow!(
            "cannot push to {uri}: a push names a tag, not a digest"
        ));
    }
    let client = client(&reference, insecure)?;
    let layers = vec![ImageLayer::new(
        module.to_vec(),
        WASM_LAYER_MEDIA_TYPE.to_string(),
        None,
    )];
    let config = Config {
        data: b"{}".to_vec().into(),
        media_type: WASM_CONFIG_MEDIA_TYPE.to_string(),
        annotations: None,
    };
    let manifest = OciImageManifest::build(&layers, &config, None);
    let layer_digest = manifest.layers[0].digest.clone();
    let auth = RegistryAuth::Anonymous;
    let context = || {
        format!(
            "cannot push policy to {uri} over {}",
            scheme(&reference, insecure)
        )
    };
    let rt = runtime()?;
    let response = rt
        .block_on(client.push(&reference, &layers, config, &auth, Some(manifest)))
        .map_err(|e| anyhow::Error::new(e).context(context()))?;
    let manifest_digest = rt
        .block_on(client.fetch_manifest_digest(&reference, &auth))
        .map_err(|e| {
            anyhow::Error::new(e).context(format!("pushed {uri}, but cannot read its digest back"))
        })?;
    Ok(Pushed {
        manifest_digest,
        layer_digest,
        manifest_url: response.manifest_url,
    })
}

fn scheme(reference: &Reference, insecure: bool) -> &'static str {
    match protocol_for(reference.resolve_registry(), insecure) {
        ClientProtocol::Https => "HTTPS",
        _ => "plain HTTP",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_registry_uris_with_port_tag_and_digest() {
        let r =
            parse_reference("registry://127.0.0.1:5000/policies/sts-safe-rollout:v0.1.0").unwrap();
        assert_eq!(r.registry(), "127.0.0.1:5000");
        assert_eq!(r.repository(), "policies/sts-safe-rollout");
        assert_eq!(r.tag(), Some("v0.1.0"));
        assert_eq!(r.digest(), None);

        let digest = format!("sha256:{}", "a".repeat(64));
        let r = parse_reference(&format!("registry://ghcr.io/org/p@{digest}")).unwrap();
        assert_eq!(r.registry(), "ghcr.io");
        assert_eq!(r.repository(), "org/p");
        assert_eq!(r.digest(), Some(digest.as_str()));

        // Without the scheme, as `kwctl pull` also takes it.
        let r = parse_reference("localhost:5000/p:1").unwrap();
        assert_eq!(r.registry(), "localhost:5000");
        assert_eq!(r.tag(), Some("1"));
    }

    #[test]
    fn a_reference_without_tag_or_registry_resolves_as_kwctl_does() {
        let r = parse_reference("registry://ghcr.io/org/p").unwrap();
        assert_eq!(r.tag(), Some("latest"));
        let r = parse_reference("registry://p:1").unwrap();
        assert_eq!(r.registry(), "docker.io");
        assert_eq!(r.repository(), "library/p");
    }

    #[test]
    fn bad_references_are_errors_that_name_them() {
        for uri in [
            "registry://",
            "registry://UPPER/Case:tag",
            "registry://host/p:bad tag",
            "registry://host/p@sha256:short",
        ] {
            let e = parse_reference(uri).unwrap_err().to_string();
            assert!(e.contains(uri), "{e}");
            assert!(e.contains("expected registry://HOST"), "{e}");
        }
    }

    #[test]
    fn loopback_registries_are_recognised() {
        for r in [
            "localhost",
            "localhost:5000",
            "LOCALHOST:5000",
            "127.0.0.1",
            "127.0.0.1:5000",
            "127.1.2.3:80",
            "[::1]:5000",
            "[::1]",
        ] {
            assert!(is_loopback(r), "{r}");
        }
        for r in [
            "ghcr.io",
            "ghcr.io:443",
            "10.0.0.1:5000",
            "192.168.1.1",
            "localhost.example.com:5000",
            "127.0.0.1.nip.io:5000",
            "[::2]:5000",
            "index.docker.io",
        ] {
            assert!(!is_loopback(r), "{r}");
        }
    }

    #[test]
    fn plain_http_only_for_loopback_or_insecure() {
        assert_eq!(
            protocol_for("127.0.0.1:5000", false),
            ClientProtocol::HttpsExcept(vec!["127.0.0.1:5000".into()])
        );
        assert_eq!(
            protocol_for("localhost:5000", false),
            ClientProtocol::HttpsExcept(vec!["localhost:5000".into()])
        );
        assert_eq!(protocol_for("ghcr.io", false), ClientProtocol::Https);
        assert_eq!(protocol_for("10.0.0.1:5000", false), ClientProtocol::Https);
        assert_eq!(
            protocol_for("registry.lan:5000", true),
            ClientProtocol::HttpsExcept(vec!["registry.lan:5000".into()])
        );
    }

    #[test]
    fn push_refuses_what_is_not_wasm_and_digest_references_before_any_network() {
        let e = push(b"not wasm", "registry://127.0.0.1:1/p:1", false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a WebAssembly module"), "{e}");
        let uri = format!("registry://127.0.0.1:1/p@sha256:{}", "b".repeat(64));
        let e = push(b"\0asm\x01\0\0\0", &uri, false)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a digest"), "{e}");
    }

    #[test]
    fn an_unreachable_registry_is_an_error_naming_the_reference() {
        // Port 1 on loopback: nothing listens there, the connection is refused at once.
        let uri = "registry://127.0.0.1:1/policies/p:v1";
        let e = format!("{:#}", pull(uri, false).unwrap_err());
        assert!(e.contains(uri), "{e}");
        assert!(e.contains("plain HTTP"), "{e}");
        assert!(e.contains(WASM_LAYER_MEDIA_TYPE), "{e}");
    }
}

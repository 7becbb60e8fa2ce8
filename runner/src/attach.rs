//! `runner attach-sbom`: an SBOM published beside an artifact the way `cosign attach sbom` does: an OCI
//! image manifest at the tag `sha256-<digest>.sbom` of the artifact's repository, whose one layer is the
//! SBOM document (CycloneDX JSON, `application/vnd.cyclonedx+json`, or SPDX JSON, `text/spdx+json`).
//! `cosign download sbom` and `cosign tree` find it there.

use anyhow::{Result, anyhow};
use oci_client::Reference;
use oci_client::client::{Config, ImageLayer};
use oci_client::manifest::{IMAGE_CONFIG_MEDIA_TYPE, OciImageManifest};
use oci_client::secrets::RegistryAuth;

use crate::registry;
use crate::sigstore_client::oci_auth;

/// The media type of a CycloneDX JSON document.
pub const CYCLONEDX_JSON: &str = "application/vnd.cyclonedx+json";
/// The media type of an SPDX JSON document.
pub const SPDX_JSON: &str = "text/spdx+json";

/// The media type of an SBOM document, from its content.
///
/// # Errors
/// When it is neither CycloneDX JSON (`"bomFormat": "CycloneDX"`) nor SPDX JSON (`"spdxVersion"`).
pub fn sbom_media_type(document: &[u8]) -> Result<&'static str> {
    let json: serde_json::Value = serde_json::from_slice(document).map_err(|e| {
        anyhow!("--sbom: not JSON ({e}); expected a CycloneDX or SPDX JSON document")
    })?;
    if json.get("bomFormat").and_then(|v| v.as_str()) == Some("CycloneDX") {
        Ok(CYCLONEDX_JSON)
    } else if json.get("spdxVersion").is_some() {
        Ok(SPDX_JSON)
    } else {
        Err(anyhow!(
            "--sbom: neither CycloneDX (\"bomFormat\": \"CycloneDX\") nor SPDX (\"spdxVersion\") JSON"
        ))
    }
}

/// The tag of `digest`'s SBOM, as cosign names it: `sha256-<hex>.sbom`.
pub fn sbom_tag(digest: &str) -> String {
    format!("{}.sbom", digest.replace(':', "-"))
}

/// What [`attach_sbom`] pushed.
#[derive(Debug, Clone)]
pub struct Attached {
    /// The artifact's digest the SBOM is attached to.
    pub digest: String,
    /// `HOST/REPOSITORY:sha256-<hex>.sbom`.
    pub reference: String,
    /// The SBOM's media type.
    pub media_type: &'static str,
}

/// Attaches `document` as the SBOM of the artifact at `uri` (by its current manifest digest).
///
/// # Errors
/// When the document is not a CycloneDX or SPDX JSON, the artifact is not in the registry, or the push is
/// refused; the message names `uri`.
pub fn attach_sbom(uri: &str, document: &[u8], insecure: bool) -> Result<Attached> {
    let media_type = sbom_media_type(document)?;
    let reference = registry::parse_reference(uri)?;
    let client = registry::client(&reference, insecure)?;
    let auth: RegistryAuth = oci_auth()?;
    let rt = registry::runtime()?;
    let digest = rt
        .block_on(client.fetch_manifest_digest(&reference, &auth))
        .map_err(|e| {
            anyhow!("cannot attach an SBOM to {uri}: cannot read its manifest digest ({e})")
        })?;
    let target = Reference::with_tag(
        reference.registry().to_string(),
        reference.repository().to_string(),
        sbom_tag(&digest),
    );
    let layers = vec![ImageLayer::new(
        document.to_vec(),
        media_type.to_string(),
        None,
    )];
    let config = Config {
        data: b"{}".to_vec().into(),
        media_type: IMAGE_CONFIG_MEDIA_TYPE.to_string(),
        annotations: None,
    };
    let manifest = OciImageManifest::build(&layers, &config, None);
    rt.block_on(client.push(&target, &layers, config, &auth, Some(manifest)))
        .map_err(|e| anyhow!("cannot push the SBOM of {uri} to {}: {e}", target.whole()))?;
    Ok(Attached {
        digest,
        reference: target.whole(),
        media_type,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_media_type_comes_from_the_document() {
        assert_eq!(
            sbom_media_type(br#"{"bomFormat": "CycloneDX", "specVersion": "1.5"}"#).unwrap(),
            CYCLONEDX_JSON
        );
        assert_eq!(
            sbom_media_type(br#"{"spdxVersion": "SPDX-2.3"}"#).unwrap(),
            SPDX_JSON
        );
        let e = sbom_media_type(b"{}").unwrap_err().to_string();
        assert!(e.contains("neither CycloneDX"), "{e}");
        let e = sbom_media_type(b"<bom/>").unwrap_err().to_string();
        assert!(e.contains("--sbom: not JSON"), "{e}");
    }

    #[test]
    fn the_tag_is_cosigns() {
        assert_eq!(
            sbom_tag(&format!("sha256:{}", "a".repeat(64))),
            format!("sha256-{}.sbom", "a".repeat(64))
        );
    }

    #[test]
    fn attaching_to_an_unreachable_registry_names_the_reference() {
        let uri = "registry://127.0.0.1:1/p:v1";
        let e = attach_sbom(uri, br#"{"bomFormat": "CycloneDX"}"#, false)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("cannot attach an SBOM to registry://127.0.0.1:1/p:v1"),
            "{e}"
        );
    }
}

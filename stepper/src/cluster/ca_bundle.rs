//! Extra trust roots for the stepper's outbound HTTPS clients (`--prometheus-ca-file`,
//! `--webhook-ca-file`): a PEM bundle added to reqwest's built-in web PKI roots.

use std::path::Path;

/// `builder` trusting every certificate of the PEM bundle at `path` besides its built-in roots.
///
/// # Errors
/// As [`read_bundle`].
pub fn trust_bundle(
    mut builder: reqwest::ClientBuilder,
    path: &Path,
) -> Result<reqwest::ClientBuilder, String> {
    for cert in read_bundle(path)? {
        builder = builder.add_root_certificate(cert);
    }
    Ok(builder)
}

/// The certificates of the PEM bundle at `path`, at least one.
///
/// # Errors
/// The file cannot be read, is not PEM certificates, or holds none: the cause in one line (the caller
/// names the flag and the path).
pub fn read_bundle(path: &Path) -> Result<Vec<reqwest::Certificate>, String> {
    let pem = std::fs::read(path).map_err(|e| e.to_string())?;
    let certs = reqwest::Certificate::from_pem_bundle(&pem)
        .map_err(|e| format!("not PEM certificates: {e}"))?;
    if certs.is_empty() {
        return Err("no PEM certificate in it".into());
    }
    Ok(certs)
}

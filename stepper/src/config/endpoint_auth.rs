//! How the stepper reaches a secured endpoint of its own configuration (an HTTP check, an approval
//! webhook, any endpoint a configuration file names): TLS — a CA trusted besides the built-in web PKI
//! roots, a client certificate, the name the server's certificate must carry — and credentials — HTTP
//! basic auth or a bearer token. Every secret is a file (a Secret mounted in the stepper's pod), never
//! a value in the configuration: the file is read at every call, so a rotated Secret is picked up.
//!
//! The two fields an entry carries, as written (camelCase, unknown fields refused):
//!
//! ```yaml
//! tls:                                              # optional; only for an https:// URL
//!   caFile: /var/run/secrets/es-http-ca/ca.crt      # PEM CA certificates, trusted besides the web PKI roots
//!   certFile: /var/run/secrets/es-client/tls.crt    # a client certificate chain (PEM), with keyFile
//!   keyFile: /var/run/secrets/es-client/tls.key     # its private key (PEM: PKCS#8, PKCS#1 or SEC1)
//!   serverName: logs-es-http.search.svc             # optional: the name verified in the server's certificate
//! auth:                                             # optional; exactly one of basic and bearerTokenFile
//!   basic:
//!     username: elastic                             # or usernameFile (a kubernetes.io/basic-auth Secret)
//!     passwordFile: /var/run/secrets/es-user/elastic
//!   # bearerTokenFile: /var/run/secrets/approver/token   # sent as Authorization: Bearer <token>
//! ```
//!
//! [`endpoint_auth`] checks them into an [`EndpointAuth`]; the fields are Prometheus' `tls_config`
//! and `basic_auth` / `authorization` of a scrape config, in Kubernetes' spelling. Pure: no file is
//! read here (`cluster::endpoint_client` does, at start and at every call).

use std::net::IpAddr;
use std::path::PathBuf;

use serde::Deserialize;

/// An entry's `tls` field as written. See the module's example.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TlsFields {
    /// PEM file of CA certificates trusted besides the built-in web PKI roots.
    #[serde(default)]
    pub ca_file: Option<PathBuf>,
    /// PEM file of the client certificate (its chain, leaf first); with `key_file`.
    #[serde(default)]
    pub cert_file: Option<PathBuf>,
    /// PEM file of the client certificate's private key; with `cert_file`.
    #[serde(default)]
    pub key_file: Option<PathBuf>,
    /// The DNS name or IP address the server's certificate must carry, when not the URL's host.
    #[serde(default)]
    pub server_name: Option<String>,
}

/// An entry's `auth` field as written: one of `basic` and `bearerTokenFile`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AuthFields {
    /// HTTP basic auth.
    #[serde(default)]
    pub basic: Option<BasicFields>,
    /// A file holding a token sent as `Authorization: Bearer <token>`.
    #[serde(default)]
    pub bearer_token_file: Option<PathBuf>,
}

/// `auth.basic` as written: one of `username` and `usernameFile`, and `passwordFile`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BasicFields {
    /// The user name itself (not a secret: `elastic`).
    #[serde(default)]
    pub username: Option<String>,
    /// A file holding the user name (the `username` key of a `kubernetes.io/basic-auth` Secret).
    #[serde(default)]
    pub username_file: Option<PathBuf>,
    /// A file holding the password.
    #[serde(default)]
    pub password_file: Option<PathBuf>,
}

/// How to reach one endpoint, checked: its TLS settings and its credentials, each optional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointAuth {
    /// TLS beyond the built-in roots; `None`: the built-in web PKI roots, no client certificate.
    pub tls: Option<Tls>,
    /// Credentials sent with every request; `None`: no `Authorization` header.
    pub credentials: Option<Credentials>,
}

impl EndpointAuth {
    /// Whether the endpoint carries credentials or a client certificate: what a redirect to another
    /// address must not take along.
    pub fn carries_credentials(&self) -> bool {
        self.credentials.is_some() || self.tls.as_ref().is_some_and(|tls| tls.client.is_some())
    }
}

/// The TLS settings of an endpoint. Server certificates are always verified.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tls {
    /// PEM CA certificates trusted besides the built-in web PKI roots.
    pub ca_file: Option<PathBuf>,
    /// The client certificate and key presented when the server asks for one.
    pub client: Option<ClientCert>,
    /// The name verified in the server's certificate instead of the URL's host (a DNS name or an IP
    /// address, already checked for that form).
    pub server_name: Option<String>,
}

/// A client certificate: both files PEM.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientCert {
    /// The certificate chain, leaf first.
    pub cert_file: PathBuf,
    /// The leaf's private key (PKCS#8, PKCS#1 or SEC1).
    pub key_file: PathBuf,
}

/// The credentials sent with every request, read from their files at every call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Credentials {
    /// `Authorization: Basic …` (RFC 7617).
    Basic {
        /// The user name.
        username: Username,
        /// The file holding the password (trailing newline trimmed).
        password_file: PathBuf,
    },
    /// `Authorization: Bearer <token>` (RFC 6750), the token from this file (trailing newline trimmed).
    Bearer {
        /// The file holding the token.
        token_file: PathBuf,
    },
}

/// Where a basic-auth user name comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Username {
    /// Written in the configuration (`username`).
    Value(String),
    /// Read from this file at every call (`usernameFile`).
    File(PathBuf),
}

/// Why `tls` or `auth` is refused: the field (relative to the entry, e.g. `tls.keyFile`) and what is
/// wrong with the expected form. The caller puts where the entry is in front (`checks[0].`).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {problem}")]
pub struct AccessError {
    /// The field, e.g. `auth.basic.passwordFile`.
    pub field: &'static str,
    /// What is wrong and the expected form.
    pub problem: String,
}

fn refuse(field: &'static str, problem: impl Into<String>) -> AccessError {
    AccessError {
        field,
        problem: problem.into(),
    }
}

/// A path field that must be non-empty when given.
fn path(
    field: &'static str,
    value: Option<PathBuf>,
    holding: &str,
) -> Result<Option<PathBuf>, AccessError> {
    match value {
        Some(p) if p.as_os_str().is_empty() => Err(refuse(
            field,
            format!("empty; expected the path of a file holding {holding}"),
        )),
        other => Ok(other),
    }
}

/// A path field that must be given.
fn required(
    field: &'static str,
    value: Option<PathBuf>,
    holding: &str,
) -> Result<PathBuf, AccessError> {
    path(field, value, holding)?.ok_or_else(|| {
        refuse(
            field,
            format!("missing; expected the path of a file holding {holding}"),
        )
    })
}

/// Whether `name` is a DNS name (labels of letters, digits, `-` and `_`, each 1–63 long and not
/// starting or ending with `-`; at most 253 in all) or an IP address: what rustls accepts as a
/// server name.
fn is_server_name(name: &str) -> bool {
    if name.parse::<IpAddr>().is_ok() {
        return true;
    }
    let name = name.strip_suffix('.').unwrap_or(name);
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            (1..=63).contains(&label.len())
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        })
}

/// Checks an entry's `tls` field.
///
/// # Errors
/// An empty path; `certFile` without `keyFile` or the reverse; a `serverName` that is neither a DNS
/// name nor an IP address.
pub fn tls(fields: TlsFields) -> Result<Tls, AccessError> {
    let ca_file = path("tls.caFile", fields.ca_file, "PEM CA certificates")?;
    let cert = path("tls.certFile", fields.cert_file, "a PEM client certificate")?;
    let key = path("tls.keyFile", fields.key_file, "a PEM private key")?;
    let together = "certFile and keyFile go together: expected both (a PEM client certificate and \
                    its private key) or neither";
    let client = match (cert, key) {
        (Some(cert_file), Some(key_file)) => Some(ClientCert {
            cert_file,
            key_file,
        }),
        (None, None) => None,
        (Some(_), None) => return Err(refuse("tls.keyFile", format!("missing; {together}"))),
        (None, Some(_)) => return Err(refuse("tls.certFile", format!("missing; {together}"))),
    };
    if let Some(name) = &fields.server_name
        && !is_server_name(name)
    {
        return Err(refuse(
            "tls.serverName",
            format!(
                "{name:?} is not a DNS name or an IP address; expected the name the server's \
                 certificate carries, e.g. logs-es-http.search.svc"
            ),
        ));
    }
    Ok(Tls {
        ca_file,
        client,
        server_name: fields.server_name,
    })
}

/// Checks an entry's `auth` field.
///
/// # Errors
/// Both or neither of `basic` and `bearerTokenFile`; in `basic`, both or neither of `username` and
/// `usernameFile`, a user name that is empty or holds `:` (RFC 7617), no `passwordFile`; an empty
/// path.
pub fn credentials(fields: AuthFields) -> Result<Credentials, AccessError> {
    let one = "expected one of basic: {username or usernameFile, passwordFile} and bearerTokenFile";
    match (fields.basic, fields.bearer_token_file) {
        (Some(_), Some(_)) => Err(refuse(
            "auth",
            format!("both basic and bearerTokenFile; {one}"),
        )),
        (None, None) => Err(refuse("auth", format!("empty; {one}"))),
        (None, Some(token)) => Ok(Credentials::Bearer {
            token_file: required("auth.bearerTokenFile", Some(token), "the token")?,
        }),
        (Some(basic), None) => {
            let username = match (basic.username, basic.username_file) {
                (Some(_), Some(_)) => {
                    return Err(refuse(
                        "auth.basic",
                        "both username and usernameFile; expected one of them",
                    ));
                }
                (None, None) => {
                    return Err(refuse(
                        "auth.basic.username",
                        "missing; expected username (the name itself) or usernameFile (a file holding it)",
                    ));
                }
                (Some(name), None) if name.is_empty() || name.contains(':') => {
                    return Err(refuse(
                        "auth.basic.username",
                        format!("{name:?}: expected a non-empty user name without ':' (RFC 7617)"),
                    ));
                }
                (Some(name), None) => Username::Value(name),
                (None, Some(file)) => Username::File(required(
                    "auth.basic.usernameFile",
                    Some(file),
                    "the user name",
                )?),
            };
            let password_file = required(
                "auth.basic.passwordFile",
                basic.password_file,
                "the password",
            )?;
            Ok(Credentials::Basic {
                username,
                password_file,
            })
        }
    }
}

/// Checks an entry's `tls` and `auth` fields for an endpoint at `url` ([`tls`], [`credentials`]).
///
/// # Errors
/// [`tls`]'s and [`credentials`]'s; `tls` for a URL that is not `https://` (settings that would never
/// be used are a mistake, not a no-op).
pub fn endpoint_auth(
    url: &str,
    tls_fields: Option<TlsFields>,
    auth_fields: Option<AuthFields>,
) -> Result<EndpointAuth, AccessError> {
    if tls_fields.is_some() && !url.starts_with("https://") {
        return Err(refuse(
            "tls",
            format!("given for {url:?}; expected an https:// URL, or no tls"),
        ));
    }
    Ok(EndpointAuth {
        tls: tls_fields.map(tls).transpose()?,
        credentials: auth_fields.map(credentials).transpose()?,
    })
}

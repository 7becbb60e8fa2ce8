//! Kubewarden's signature verification config (`verification-config.yml`, `apiVersion: v1`), as the
//! policy-server's `--verification-path` and `kwctl verify --verification-config-path` read it, turned
//! into checks of cosign signature layers.
//!
//! ```yaml
//! apiVersion: v1
//! allOf:                      # every requirement here must be met by some signature
//!   - kind: pubKey
//!     key: |
//!       -----BEGIN PUBLIC KEY-----
//!       …
//! anyOf:                      # at least minimumMatches (default 1) of these
//!   minimumMatches: 1
//!   signatures:
//!     - kind: githubAction    # keyless, from GitHub Actions: the certificate's workflow repository
//!       owner: sts-safe-rollout
//!       repo: sts-safe-rollout
//!     - kind: genericIssuer   # keyless: the certificate's issuer and subject
//!       issuer: https://token.actions.githubusercontent.com
//!       subject:
//!         urlPrefix: https://github.com/sts-safe-rollout
//! ```
//! Each requirement may also carry `annotations` the signature's payload must hold.

use std::collections::BTreeMap;

use anyhow::{Result, anyhow};
use serde::Deserialize;
use sigstore::cosign::SignatureLayer;
use sigstore::cosign::signature_layers::CertificateSubject;
use sigstore::cosign::verification_constraint::{PublicKeyVerifier, VerificationConstraint};

/// The OIDC issuer of GitHub Actions' tokens, in the certificates Fulcio gives a workflow.
pub const GITHUB_ACTIONS_ISSUER: &str = "https://token.actions.githubusercontent.com";

/// A verification config: what a signature must satisfy.
#[derive(Debug, Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct VerificationConfig {
    #[serde(rename = "apiVersion")]
    pub api_version: String,
    #[serde(default)]
    pub all_of: Vec<Requirement>,
    #[serde(default)]
    pub any_of: Option<AnyOf>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AnyOf {
    #[serde(default = "one")]
    pub minimum_matches: usize,
    pub signatures: Vec<Requirement>,
}

fn one() -> usize {
    1
}

/// One signature requirement, by `kind`.
#[derive(Debug, Deserialize, Clone)]
#[serde(try_from = "RawRequirement")]
pub enum Requirement {
    /// Signed with this public key (PEM).
    PubKey {
        owner: Option<String>,
        key: String,
        annotations: BTreeMap<String, String>,
    },
    /// Signed keyless from a GitHub Actions workflow of `owner` (and `repo`).
    GithubAction {
        owner: String,
        repo: Option<String>,
        annotations: BTreeMap<String, String>,
    },
    /// Signed keyless with a certificate of this `issuer` and `subject`.
    GenericIssuer {
        issuer: String,
        subject: Subject,
        annotations: BTreeMap<String, String>,
    },
}

/// A requirement as written: every field of every kind, checked against its `kind` by `try_from` (a
/// tagged enum would lose the path of a nested field's error).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawRequirement {
    kind: String,
    owner: Option<String>,
    repo: Option<String>,
    key: Option<String>,
    issuer: Option<String>,
    subject: Option<Subject>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

impl TryFrom<RawRequirement> for Requirement {
    type Error = String;

    fn try_from(r: RawRequirement) -> std::result::Result<Self, String> {
        let allowed: &[&str] = match r.kind.as_str() {
            "pubKey" => &["key", "owner"],
            "githubAction" => &["owner", "repo"],
            "genericIssuer" => &["issuer", "subject"],
            other => {
                return Err(format!(
                    "kind: unknown kind {other:?}; expected pubKey, githubAction or genericIssuer"
                ));
            }
        };
        let present = [
            ("owner", r.owner.is_some()),
            ("repo", r.repo.is_some()),
            ("key", r.key.is_some()),
            ("issuer", r.issuer.is_some()),
            ("subject", r.subject.is_some()),
        ];
        if let Some((field, _)) = present.iter().find(|(f, set)| *set && !allowed.contains(f)) {
            return Err(format!(
                "{field} is not a field of kind {}; it takes {} (and annotations)",
                r.kind,
                allowed.join(", ")
            ));
        }
        let missing = |field: &str| format!("kind {} needs {field}", r.kind);
        Ok(match r.kind.as_str() {
            "pubKey" => Self::PubKey {
                key: r.key.ok_or_else(|| missing("key (a PEM public key)"))?,
                owner: r.owner,
                annotations: r.annotations,
            },
            "githubAction" => Self::GithubAction {
                owner: r
                    .owner
                    .ok_or_else(|| missing("owner (a GitHub user or organization)"))?,
                repo: r.repo,
                annotations: r.annotations,
            },
            _ => Self::GenericIssuer {
                issuer: r
                    .issuer
                    .ok_or_else(|| missing("issuer (the OIDC issuer URL)"))?,
                subject: r
                    .subject
                    .ok_or_else(|| missing("subject (equal: … or urlPrefix: …)"))?,
                annotations: r.annotations,
            },
        })
    }
}

/// The certificate subject a `genericIssuer` requirement accepts.
#[derive(Debug, Deserialize, Clone)]
#[serde(try_from = "RawSubject")]
pub enum Subject {
    /// Exactly this subject (an email or a URI).
    Equal(String),
    /// A URI under this prefix (a `/` is added unless it ends with one, as Kubewarden does).
    UrlPrefix(String),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSubject {
    equal: Option<String>,
    url_prefix: Option<String>,
}

impl TryFrom<RawSubject> for Subject {
    type Error = &'static str;

    fn try_from(s: RawSubject) -> std::result::Result<Self, Self::Error> {
        match (s.equal, s.url_prefix) {
            (Some(e), None) => Ok(Self::Equal(e)),
            (None, Some(p)) => Ok(Self::UrlPrefix(p)),
            _ => Err("expected exactly one of equal: SUBJECT or urlPrefix: URL"),
        }
    }
}

impl VerificationConfig {
    /// Parses a config (YAML or JSON) and checks it: `apiVersion: v1`, at least one requirement, every
    /// public key a PEM key, `minimumMatches` between 1 and the number of `anyOf` signatures.
    ///
    /// # Errors
    /// A message naming the field and the expected form.
    pub fn parse(text: &str) -> Result<Self> {
        // YAML to a JSON value first: serde_json's errors carry no position of their own, so the path
        // serde_path_to_error tracks is the only one in the message.
        let value = crate::yaml::value(text)
            .map_err(|e| anyhow!("the verification config is not YAML: {e}"))?;
        if !value.is_object() {
            return Err(anyhow!(
                "the verification config is not a mapping; expected apiVersion: v1 with allOf and/or anyOf"
            ));
        }
        let config: Self = serde_path_to_error::deserialize(value).map_err(|e| {
            let path = e.path().to_string();
            let place = if path == "." { "the verification config".to_string() } else { path };
            anyhow!(
                "{place}: {} (expected apiVersion: v1, allOf: [requirements], anyOf: {{minimumMatches, signatures: [requirements]}}; a requirement's kind is pubKey, githubAction or genericIssuer)",
                e.inner()
            )
        })?;
        if config.api_version != "v1" {
            return Err(anyhow!(
                "apiVersion: {:?}; expected v1 (the only version Kubewarden's verification config has)",
                config.api_version
            ));
        }
        let any = config
            .any_of
            .as_ref()
            .map_or(&[][..], |a| &a.signatures[..]);
        if config.all_of.is_empty() && any.is_empty() {
            return Err(anyhow!(
                "the verification config has no requirement: expected allOf or anyOf.signatures to list at least one"
            ));
        }
        if let Some(a) = &config.any_of
            && (a.minimum_matches == 0 || a.minimum_matches > a.signatures.len())
        {
            return Err(anyhow!(
                "anyOf.minimumMatches: {}; expected 1 to {} (the number of anyOf.signatures)",
                a.minimum_matches,
                a.signatures.len()
            ));
        }
        for (field, r) in config.requirements() {
            r.check(&field)?;
        }
        Ok(config)
    }

    /// Every requirement with its place in the config (`allOf[0]`, `anyOf.signatures[1]`).
    pub fn requirements(&self) -> Vec<(String, &Requirement)> {
        let all = self
            .all_of
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("allOf[{i}]"), r));
        let any = self.any_of.iter().flat_map(|a| {
            a.signatures
                .iter()
                .enumerate()
                .map(|(i, r)| (format!("anyOf.signatures[{i}]"), r))
        });
        all.chain(any).collect()
    }

    /// Whether a requirement needs a Fulcio certificate (keyless), hence the Sigstore trust root.
    pub fn needs_trust_root(&self) -> bool {
        self.requirements()
            .iter()
            .any(|(_, r)| !matches!(r, Requirement::PubKey { .. }))
    }
}

impl Requirement {
    fn check(&self, field: &str) -> Result<()> {
        match self {
            Self::PubKey { key, .. } => PublicKeyVerifier::try_from(key.as_bytes())
                .map(|_| ())
                .map_err(|e| anyhow!("{field}.key: not a PEM public key ({e}); expected -----BEGIN PUBLIC KEY-----, as in cosign.pub")),
            Self::GithubAction { owner, .. } if owner.is_empty() || owner.contains('/') => Err(anyhow!(
                "{field}.owner: {owner:?}; expected a GitHub user or organization name (no /)"
            )),
            Self::GenericIssuer { issuer, .. } if issuer.is_empty() => {
                Err(anyhow!("{field}.issuer is empty; expected the OIDC issuer URL"))
            }
            _ => Ok(()),
        }
    }

    /// A short description for messages: `pubKey (owner alice)`, `githubAction sts-safe-rollout/…`.
    pub fn describe(&self) -> String {
        match self {
            Self::PubKey { owner, .. } => match owner {
                Some(o) => format!("pubKey (owner {o})"),
                None => "pubKey".to_string(),
            },
            Self::GithubAction { owner, repo, .. } => {
                format!("githubAction {owner}/{}", repo.as_deref().unwrap_or("*"))
            }
            Self::GenericIssuer {
                issuer, subject, ..
            } => match subject {
                Subject::Equal(s) => format!("genericIssuer {issuer} subject {s}"),
                Subject::UrlPrefix(p) => format!("genericIssuer {issuer} subject under {p}"),
            },
        }
    }

    fn annotations(&self) -> &BTreeMap<String, String> {
        match self {
            Self::PubKey { annotations, .. }
            | Self::GithubAction { annotations, .. }
            | Self::GenericIssuer { annotations, .. } => annotations,
        }
    }

    /// Whether `layer` (a signature the crate has already checked against the artifact's digest and,
    /// when it carries a certificate, against Fulcio and Rekor) meets this requirement.
    pub fn satisfied_by(&self, layer: &SignatureLayer) -> bool {
        let identity = match self {
            Self::PubKey { key, .. } => PublicKeyVerifier::try_from(key.as_bytes())
                .and_then(|v| v.verify(layer))
                .unwrap_or(false),
            Self::GithubAction { owner, repo, .. } => layer.certificate_signature.as_ref().is_some_and(|c| {
                let prefix = match repo {
                    Some(r) => format!("https://github.com/{owner}/{r}/"),
                    None => format!("https://github.com/{owner}/"),
                };
                let repository_matches = c.github_workflow_repository.as_deref().is_some_and(|w| match repo {
                    Some(r) => w == format!("{owner}/{r}"),
                    None => w.starts_with(&format!("{owner}/")),
                });
                c.issuer.as_deref() == Some(GITHUB_ACTIONS_ISSUER)
                    && matches!(&c.subject, CertificateSubject::Uri(u) if u.starts_with(&prefix))
                    && repository_matches
            }),
            Self::GenericIssuer { issuer, subject, .. } => {
                layer.certificate_signature.as_ref().is_some_and(|c| {
                    let actual = match &c.subject {
                        CertificateSubject::Email(s) | CertificateSubject::Uri(s) => s,
                    };
                    let subject_matches = match subject {
                        Subject::Equal(s) => actual == s,
                        Subject::UrlPrefix(p) if p.ends_with('/') => actual.starts_with(p.as_str()),
                        Subject::UrlPrefix(p) => actual.starts_with(&format!("{p}/")),
                    };
                    c.issuer.as_deref() == Some(issuer.as_str()) && subject_matches
                })
            }
        };
        identity
            && (self.annotations().is_empty()
                || layer
                    .simple_signing
                    .satisfies_annotations(self.annotations()))
    }
}

#[cfg(test)]
#[path = "unit_tests/verification_config.rs"]
mod tests;

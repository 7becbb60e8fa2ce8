//! The API server's error answers classified as it means them: a lost race, a gone object, a rejected
//! object, an admission webhook's denial, a missing RBAC rule, or anything else.
//!
//! Pure: one [`Status`] body (HTTP code, `reason`, `details`, `details.causes`, `message`) in, one
//! [`ApiAnswer`] out. Real bodies from a v1.28 kube-apiserver are in `fixtures/api/errors/`;
//! docs/design.md, "The stepper: reads, errors, recovery, high availability", says what each means for a
//! pass.

use std::fmt;

use kube::core::Status;

/// What an error answer of the API server means for the write (or read) that got it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ApiAnswer {
    /// Another writer was first: a JSON Patch `test` op did not hold (HTTP 422, `reason: Invalid`,
    /// no `details.causes`) or the `resourceVersion` precondition failed (HTTP 409 `Conflict`).
    /// Nothing was written; the object is re-read next pass (the stepper's `Conflict`, exit 0).
    LostRace {
        /// The API server's message.
        message: String,
    },
    /// The object does not exist (HTTP 404 `NotFound`): nothing to write; the next pass will not list
    /// it.
    Gone {
        /// The API server's message.
        message: String,
    },
    /// The object as patched fails the API server's validation (HTTP 422 `Invalid` with
    /// `details.causes`): the same write fails every time (the stepper's `ApiError`, exit 1). A
    /// ValidatingAdmissionPolicy's denial looks so too (k8s.io/apiserver, `validating`
    /// `dispatcher`: `… is forbidden: ValidatingAdmissionPolicy 'P' with binding 'B' denied request:
    /// …`, reason `Invalid` unless the policy sets one, one cause without a field).
    Rejected {
        /// The API server's message (names the object and every invalid field).
        message: String,
        /// Each invalid field as `(field, message)`, e.g. `("spec.replicas", "Invalid value: -1: must
        /// be greater than or equal to 0")`.
        causes: Vec<(String, String)>,
    },
    /// An admission webhook denied the request (HTTP 400 unless the webhook set its own code; the
    /// message starts `admission webhook "NAME" denied the request:`): `ApiError`, exit 1.
    WebhookDenied {
        /// The webhook's name, e.g. `sts-safe-rollout.e2e.safe-rollout.dev`.
        webhook: String,
        /// The API server's message (the webhook's reason follows the prefix).
        message: String,
    },
    /// The stepper's identity may not do this (HTTP 403 `Forbidden`): `ApiError`, exit 1.
    Forbidden {
        /// The rule the stepper's Role or ClusterRole lacks, when the message names it (the
        /// Kubernetes RBAC authorizer's wording); `None` for other refusals (e.g. a terminating
        /// namespace).
        missing_rule: Option<MissingRule>,
        /// The API server's message.
        message: String,
    },
    /// Anything else (5xx, 429, 401, a 400 not from a webhook): `ApiError`, exit 1.
    Other {
        /// The HTTP status code (0 when the body had none).
        code: u16,
        /// The `reason`, empty when the body had none.
        reason: String,
        /// The API server's message.
        message: String,
    },
}

/// An RBAC rule the request needed, as the RBAC authorizer's 403 message names it:
/// `User "U" cannot VERB resource "R" in API group "G" in the namespace "N"` (or `at the cluster
/// scope`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MissingRule {
    /// The user the request ran as, e.g. `system:serviceaccount:sts-safe-rollout:sts-stepper`.
    pub user: String,
    /// The verb, e.g. `delete`.
    pub verb: String,
    /// The resource (with `/subresource` when there is one), e.g. `pods`.
    pub resource: String,
    /// The API group, empty for the core group.
    pub group: String,
    /// The namespace, `None` at the cluster scope.
    pub namespace: Option<String>,
}

impl ApiAnswer {
    /// True for the answers that mean "re-read next pass" rather than an error: [`ApiAnswer::LostRace`]
    /// and [`ApiAnswer::Gone`].
    pub fn is_retried_next_pass(&self) -> bool {
        matches!(self, ApiAnswer::LostRace { .. } | ApiAnswer::Gone { .. })
    }

    /// True for the answers that refuse the request as such — [`ApiAnswer::Rejected`],
    /// [`ApiAnswer::WebhookDenied`], [`ApiAnswer::Forbidden`] — so the same request fails every
    /// time until a person changes something (the object, a policy, an RBAC rule).
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            ApiAnswer::Rejected { .. }
                | ApiAnswer::WebhookDenied { .. }
                | ApiAnswer::Forbidden { .. }
        )
    }

    /// The API server's message, as it sent it.
    pub fn message(&self) -> &str {
        match self {
            ApiAnswer::LostRace { message }
            | ApiAnswer::Gone { message }
            | ApiAnswer::Rejected { message, .. }
            | ApiAnswer::WebhookDenied { message, .. }
            | ApiAnswer::Forbidden { message, .. }
            | ApiAnswer::Other { message, .. } => message,
        }
    }
}

/// The server's message; for a 403 that names a rule, followed by that rule
/// (`(missing RBAC rule: verb "delete", resource "pods", API group "", namespace "e2e")`).
impl fmt::Display for ApiAnswer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())?;
        if let ApiAnswer::Forbidden {
            missing_rule: Some(rule),
            ..
        } = self
        {
            write!(f, " (missing RBAC rule: {rule})")?;
        }
        Ok(())
    }
}

impl fmt::Display for MissingRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "verb {:?}, resource {:?}, API group {:?}, ",
            self.verb, self.resource, self.group
        )?;
        match &self.namespace {
            Some(ns) => write!(f, "namespace {ns:?}"),
            None => f.write_str("cluster scope"),
        }
    }
}

/// The prefix of an admission webhook's denial (k8s.io/apiserver, admission/plugin/webhook/errors:
/// `admission webhook %q denied the request: %s`).
const WEBHOOK_DENIED: &str = "admission webhook \"";

/// Classifies an error answer. Rules, in order:
/// 1. a message starting `admission webhook "NAME" denied the request` on a 4xx is
///    [`ApiAnswer::WebhookDenied`] (a webhook may set its own code; 400 when it does not);
/// 2. 409 (or `reason: Conflict`) is [`ApiAnswer::LostRace`];
/// 3. 422 (or `reason: Invalid`) with `details.causes` is [`ApiAnswer::Rejected`], without causes
///    [`ApiAnswer::LostRace`]. The API server answers every JSON Patch that fails to apply with the
///    same causeless 422 (k8s.io/apiserver, endpoints/handlers/patch.go: `NewGenericServerResponse(422,
///    …)`), so a `test` op that does not hold looks like any other op that cannot apply; the
///    stepper's patches only `add`/`replace` paths present in the object they read, so for them only
///    a `test` op can fail;
/// 4. 404 (or `reason: NotFound`) is [`ApiAnswer::Gone`];
/// 5. 403 (or `reason: Forbidden`) is [`ApiAnswer::Forbidden`], naming the rule when the message is
///    the RBAC authorizer's;
/// 6. anything else is [`ApiAnswer::Other`].
///
/// The code is the body's `code` (kube-rs keeps the body as the API server sent it; every body in
/// the fixtures carries one), the reason its `reason`.
pub fn classify(status: &Status) -> ApiAnswer {
    let code = status.code;
    let message = status.message.clone();
    let reason = status.reason.as_str();
    if (400..500).contains(&code)
        && let Some(webhook) = webhook_name(&message)
    {
        return ApiAnswer::WebhookDenied { webhook, message };
    }
    let causes: Vec<(String, String)> = status
        .details
        .iter()
        .flat_map(|d| &d.causes)
        .map(|c| (c.field.clone(), c.message.clone()))
        .collect();
    match (code, reason) {
        (409, _) | (_, "Conflict") => ApiAnswer::LostRace { message },
        (422, _) | (_, "Invalid") if causes.is_empty() => ApiAnswer::LostRace { message },
        (422, _) | (_, "Invalid") => ApiAnswer::Rejected { message, causes },
        (404, _) | (_, "NotFound") => ApiAnswer::Gone { message },
        (403, _) | (_, "Forbidden") => ApiAnswer::Forbidden {
            missing_rule: missing_rule(&message),
            message,
        },
        _ => ApiAnswer::Other {
            code,
            reason: reason.to_owned(),
            message,
        },
    }
}

/// The webhook's name in `admission webhook "NAME" denied the request: …`.
fn webhook_name(message: &str) -> Option<String> {
    let rest = message.strip_prefix(WEBHOOK_DENIED)?;
    let (name, rest) = rest.split_once('"')?;
    rest.starts_with(" denied the request")
        .then(|| name.to_owned())
}

/// The rule in the RBAC authorizer's message (k8s.io/apiserver, endpoints/handlers/responsewriters:
/// `User "U" cannot VERB resource "R" in API group "G" in the namespace "N"`, or `… at the cluster
/// scope`; a subresource is written `R/S`).
fn missing_rule(message: &str) -> Option<MissingRule> {
    let (_, rest) = message.split_once("User \"")?;
    let (user, rest) = rest.split_once("\" cannot ")?;
    let (verb, rest) = rest.split_once(" resource \"")?;
    let (resource, rest) = rest.split_once("\" in API group \"")?;
    let (group, rest) = rest.split_once('"')?;
    let namespace = match rest.strip_prefix(" in the namespace \"") {
        Some(ns) => Some(ns.split_once('"')?.0.to_owned()),
        None => None,
    };
    Some(MissingRule {
        user: user.to_owned(),
        verb: verb.to_owned(),
        resource: resource.to_owned(),
        group: group.to_owned(),
        namespace,
    })
}

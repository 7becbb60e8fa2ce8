//! The border for the approval webhook (docs/approvals.md, "Webhook"): `<prefix>/pre-update-webhook`,
//! `<prefix>/webhook-error-limit` and the shared `<prefix>/approval-timeout-seconds`, read into one
//! [`WebhookConfig`].
//!
//! `pre-update-webhook: <name>` names a URL configured on the stepper (`--webhook NAME=URL`), never a
//! URL: whoever may edit a StatefulSet must not make the stepper POST to an address of their choosing.
//! Whether the name is configured is the gates' to say (`InvalidAnnotation`, they know the flags); here
//! the form is read.

use k8s_openapi::api::apps::v1::StatefulSet;

use super::approval::{approval_timeout_seconds, handshake_on};
use super::http_check::is_dns_label;
use super::{Keys, annotation};

/// The default of `<prefix>/webhook-error-limit`: consecutive calls without a decision that record the
/// rollout as Degraded.
pub const DEFAULT_WEBHOOK_ERROR_LIMIT: u32 = 4;

/// A set's approval webhook, read from its annotations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WebhookConfig {
    /// `pre-update-webhook`'s value: which `--webhook NAME=URL` to call.
    pub name: String,
    /// `webhook-error-limit` (≥ 1; default [`DEFAULT_WEBHOOK_ERROR_LIMIT`]).
    pub error_limit: u32,
    /// `approval-timeout-seconds` (≥ 1; default 600): from the first call of a request to its
    /// `deadline`, past which the rollout is recorded Degraded (`ApprovalTimeout`).
    pub timeout_seconds: i64,
}

/// Reads the set's webhook: `Ok(None)` without `pre-update-webhook` (then `webhook-error-limit` must be
/// absent too: a webhook half configured is never silently dropped).
///
/// # Errors
/// A one-line message naming the annotation and the expected form; also a set with both the webhook and
/// the handshake (`pre-update-approval: "true"`).
pub fn webhook_config(set: &StatefulSet, keys: &Keys) -> Result<Option<WebhookConfig>, String> {
    let get = |key: &str| annotation(set, key).map(str::trim);
    let limit = get(&keys.webhook_error_limit);
    let Some(name) = get(&keys.pre_update_webhook) else {
        if limit.is_some() {
            return Err(format!(
                "{}: set without {}; expected {} naming a webhook configured on the stepper \
                 (--webhook NAME=URL)",
                keys.webhook_error_limit, keys.pre_update_webhook, keys.pre_update_webhook
            ));
        }
        return Ok(None);
    };
    if !is_dns_label(name) {
        return Err(format!(
            "{}: {name:?} is not a webhook name; expected the NAME of a --webhook NAME=URL of the \
             stepper (a DNS label such as \"db-approver\"), never a URL",
            keys.pre_update_webhook
        ));
    }
    if handshake_on(set, keys) {
        return Err(format!(
            "{}: set with {}: \"true\"; expected one way of asking the application, the pods' \
             annotations or the webhook (two answerers could disagree, and a step would wait on both)",
            keys.pre_update_webhook, keys.pre_update_approval
        ));
    }
    let error_limit = match limit {
        None => DEFAULT_WEBHOOK_ERROR_LIMIT,
        Some(v) => match v.parse::<u32>() {
            Ok(n) if n >= 1 && v.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                return Err(format!(
                    "{}: {v:?} is not a limit; expected a whole number ≥ 1 (\"4\")",
                    keys.webhook_error_limit
                ));
            }
        },
    };
    Ok(Some(WebhookConfig {
        name: name.to_string(),
        error_limit,
        timeout_seconds: approval_timeout_seconds(set, keys)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(annotations: &[(&str, &str)]) -> StatefulSet {
        let mut s = StatefulSet::default();
        s.metadata.annotations = Some(
            annotations
                .iter()
                .map(|(k, v)| (format!("safe-rollout.dev/{k}"), (*v).to_string()))
                .collect(),
        );
        s
    }

    #[test]
    fn a_name_with_defaults() {
        let keys = Keys::default();
        let c = webhook_config(&set(&[("pre-update-webhook", "db-approver")]), &keys);
        assert_eq!(
            c,
            Ok(Some(WebhookConfig {
                name: "db-approver".into(),
                error_limit: 4,
                timeout_seconds: 600
            }))
        );
        let c = webhook_config(
            &set(&[
                ("pre-update-webhook", "db"),
                ("webhook-error-limit", "2"),
                ("approval-timeout-seconds", "60"),
            ]),
            &keys,
        )
        .unwrap()
        .unwrap();
        assert_eq!((c.error_limit, c.timeout_seconds), (2, 60));
        assert_eq!(webhook_config(&set(&[]), &keys), Ok(None));
    }

    #[test]
    fn bad_values_say_why() {
        let keys = Keys::default();
        for (annotations, why) in [
            (
                &[("pre-update-webhook", "http://evil.example/x")][..],
                "never a URL",
            ),
            (&[("pre-update-webhook", "Db")][..], "not a webhook name"),
            (
                &[
                    ("pre-update-webhook", "db"),
                    ("pre-update-approval", "true"),
                ][..],
                "one way of asking the application",
            ),
            (
                &[("pre-update-webhook", "db"), ("webhook-error-limit", "0")][..],
                "webhook-error-limit: \"0\" is not a limit",
            ),
            (
                &[("webhook-error-limit", "3")][..],
                "set without safe-rollout.dev/pre-update-webhook",
            ),
            (
                &[
                    ("pre-update-webhook", "db"),
                    ("approval-timeout-seconds", "10m"),
                ][..],
                "approval-timeout-seconds: \"10m\" is not a timeout",
            ),
        ] {
            let e = webhook_config(&set(annotations), &keys).expect_err(why);
            assert!(e.contains(why), "{annotations:?}: {e}");
        }
    }
}

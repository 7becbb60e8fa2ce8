//! The border for the approval webhook (docs/approvals.md, "Webhook"): `<prefix>/pre-update-webhook`,
//! `<prefix>/webhook-error-limit` and the shared `<prefix>/approval-timeout-seconds`, read into one
//! [`WebhookConfig`].
//!
//! `pre-update-webhook: <name>` names a URL configured on the stepper (`--webhook NAME=URL`), never a
//! URL: whoever may edit a StatefulSet must not make the stepper POST to an address of their choosing.
//! Whether the name is configured is the gates' to say (`InvalidAnnotation`, they know the flags); here
//! the form is read.

use k8s_openapi::api::apps::v1::StatefulSet;
use sts_safe_rollout_rules::annotations as names;

use super::approval::{approval_timeout_seconds, handshake_on};
use super::endpoints::{Flag, is_dns_label};
use super::error::ConfigError;
use super::keys::Keys;
use crate::model::set::annotation;

/// The default of `<prefix>/webhook-error-limit`: consecutive calls without a decision that record the
/// rollout as Degraded.
pub const DEFAULT_WEBHOOK_ERROR_LIMIT: u32 = 4;

/// The flag configuring the endpoints a set's `pre-update-webhook` names (`--webhook NAME=URL`, an
/// entry of `--webhook-config` or of `--answerer-config`).
pub const FLAG: Flag = Flag {
    flag: "--webhook",
    named: true,
    noun: "webhook",
    none: "no --webhook NAME=URL flag, no --webhook-config or --answerer-config entry",
};

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
pub fn webhook_config(
    set: &StatefulSet,
    keys: &Keys,
) -> Result<Option<WebhookConfig>, ConfigError> {
    let get = |key: &str| annotation(set, key).map(str::trim);
    let limit = get(keys.of(names::WEBHOOK_ERROR_LIMIT));
    let Some(name) = get(keys.of(names::PRE_UPDATE_WEBHOOK)) else {
        if limit.is_some() {
            return Err(ConfigError::WebhookErrorLimitAlone {
                key: keys.of(names::WEBHOOK_ERROR_LIMIT).to_string(),
                webhook: keys.of(names::PRE_UPDATE_WEBHOOK).to_string(),
            });
        }
        return Ok(None);
    };
    if !is_dns_label(name) {
        return Err(ConfigError::WebhookName {
            key: keys.of(names::PRE_UPDATE_WEBHOOK).to_string(),
            value: name.to_string(),
        });
    }
    if handshake_on(set, keys) {
        return Err(ConfigError::TwoAnswerers {
            key: keys.of(names::PRE_UPDATE_WEBHOOK).to_string(),
            handshake: keys.of(names::PRE_UPDATE_APPROVAL).to_string(),
        });
    }
    let error_limit = match limit {
        None => DEFAULT_WEBHOOK_ERROR_LIMIT,
        Some(v) => match v.parse::<u32>() {
            Ok(n) if n >= 1 && v.bytes().all(|b| b.is_ascii_digit()) => n,
            _ => {
                return Err(ConfigError::WebhookErrorLimit {
                    key: keys.of(names::WEBHOOK_ERROR_LIMIT).to_string(),
                    value: v.to_string(),
                });
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
        for (annotations, reason, why) in [
            (
                &[("pre-update-webhook", "http://evil.example/x")][..],
                "WebhookName",
                "never a URL",
            ),
            (
                &[("pre-update-webhook", "Db")][..],
                "WebhookName",
                "not a webhook name",
            ),
            (
                &[
                    ("pre-update-webhook", "db"),
                    ("pre-update-approval", "true"),
                ][..],
                "TwoAnswerers",
                "one way of asking the application",
            ),
            (
                &[("pre-update-webhook", "db"), ("webhook-error-limit", "0")][..],
                "WebhookErrorLimit",
                "webhook-error-limit: \"0\" is not a limit",
            ),
            (
                &[("webhook-error-limit", "3")][..],
                "WebhookErrorLimitAlone",
                "set without safe-rollout.dev/pre-update-webhook",
            ),
            (
                &[
                    ("pre-update-webhook", "db"),
                    ("approval-timeout-seconds", "10m"),
                ][..],
                "ApprovalTimeout",
                "approval-timeout-seconds: \"10m\" is not a timeout",
            ),
        ] {
            let e = webhook_config(&set(annotations), &keys).expect_err(why);
            assert_eq!(e.reason(), reason, "{annotations:?}: {e}");
            assert!(e.to_string().contains(why), "{annotations:?}: {e}");
        }
    }
}

//! Who answers for the application before a step (docs/approvals.md): the pods, through the approval
//! handshake on their annotations (`<prefix>/pre-update-approval`), or the approval webhook
//! (`<prefix>/pre-update-webhook`) — one [`Answerer`] per set, never both.
//!
//! The choice is made here, at the border: a set with both annotations is `InvalidAnnotation`
//! ([`super::ConfigError::TwoAnswerers`], from [`super::webhook::webhook_config`]), so the gates match on one
//! answerer and never meet two.

use super::approval::ApprovalConfig;
use super::webhook::WebhookConfig;

/// The one way a set's next step is asked of the application.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answerer {
    /// The approval handshake on the pods a step replaces (`pre-update-approval: "true"`).
    Pods(ApprovalConfig),
    /// The approval webhook named by `pre-update-webhook`.
    Webhook(WebhookConfig),
}

impl Answerer {
    /// The answerer of a set from its two readings (each `None` when absent or unreadable): the
    /// handshake when it is on — a webhook beside it is refused as `TwoAnswerers` when read, so both
    /// never come here —, else the webhook.
    pub fn choose(
        pods: Option<ApprovalConfig>,
        webhook: Option<WebhookConfig>,
    ) -> Option<Answerer> {
        pods.map(Answerer::Pods).or(webhook.map(Answerer::Webhook))
    }

    /// The webhook, when it is the answerer.
    pub fn webhook(&self) -> Option<&WebhookConfig> {
        match self {
            Answerer::Webhook(w) => Some(w),
            Answerer::Pods(_) => None,
        }
    }

    /// `approval-timeout-seconds` (≥ 1; default 600): how long one step's approval may take.
    pub fn timeout_seconds(&self) -> i64 {
        match self {
            Answerer::Pods(c) => c.timeout_seconds,
            Answerer::Webhook(w) => w.timeout_seconds,
        }
    }
}

//! A failed request to the cluster: [`ClusterError`], one variant per cause, each with a stable
//! [`ClusterError::reason`] — the label of `sts_safe_rollout_errors_total{reason}` (through
//! [`crate::pass::SetReport::error_reason`]) and the `error_reason` field of an errored set's log line
//! (docs/metrics.md).

/// The message of [`ClusterError::NotLeader`].
const NOT_LEADER: &str = "not the leader (the Lease is held by another replica): nothing written";

/// A failed request to the cluster. Every variant names what was attempted (`action`: `list pods in
/// all namespaces`, `patch statefulset demo/web`) and the cause in one line (its `Display`:
/// `<action>: <message>`).
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
pub enum ClusterError {
    /// The API server refused the request as such ([`super::api_error::ApiAnswer`]: `Rejected`, HTTP
    /// 422 with `details.causes` — a ValidatingAdmissionPolicy's denial is one; `WebhookDenied`, an
    /// admission webhook's denial; `Forbidden`, 403): the same request fails every time until a
    /// person changes something. On a write, the stepper tells the set's owner with a Warning Event
    /// (`StepRejected`, `StatusWriteRejected`). Reason `Refused`.
    #[error("{action}: {message}")]
    Refused {
        /// What was attempted.
        action: String,
        /// The HTTP status code.
        code: u16,
        /// The API server's message (the webhook or policy that denied it, the invalid field; for a
        /// 403 the missing RBAC rule).
        message: String,
    },
    /// The API server answered with another error status (5xx, 429, 401, a 400 not from a webhook):
    /// usually transient. Reason `ApiStatus`.
    #[error("{action}: {message}")]
    Api {
        /// What was attempted.
        action: String,
        /// The HTTP status code.
        code: u16,
        /// The API server's status message.
        message: String,
    },
    /// The API server could not be reached, or its answer could not be read (connection refused, a
    /// timeout, TLS, an undecodable body). Reason `Transport`.
    #[error("{action}: {message}")]
    Transport {
        /// What was attempted.
        action: String,
        /// The transport or decoding error.
        message: String,
    },
    /// The API server accepted a write but stored something else than asked (an admission webhook
    /// changed it): the write did not do what the decision meant. Reason `WriteOverridden`; on a
    /// step it is also a refused step (`StepRejected`).
    #[error("{action}: {message}")]
    Unexpected {
        /// What was attempted.
        action: String,
        /// What was stored instead.
        message: String,
    },
    /// This replica no longer leads (leader election: another replica holds the Lease), so the write
    /// was not sent ([`crate::leader::cluster::LeaderCluster`]). Not a failure of the API server: a
    /// pass that meets it reports the set `NotLeader` ([`crate::pass::Outcome::NotLeader`]) and writes
    /// nothing more. Reason `NotLeader`.
    #[error("{action}: {}", NOT_LEADER)]
    NotLeader {
        /// The write that was not sent.
        action: String,
    },
}

impl ClusterError {
    /// Every [`ClusterError::reason`], in variant order.
    pub const REASONS: [&'static str; 5] = [
        "Refused",
        "ApiStatus",
        "Transport",
        "WriteOverridden",
        "NotLeader",
    ];

    /// The stable name of the cause (PascalCase, one per variant, never reworded: metrics and alerts
    /// select on it): `Refused`, `ApiStatus`, `Transport`, `WriteOverridden`, `NotLeader`.
    pub fn reason(&self) -> &'static str {
        match self {
            ClusterError::Refused { .. } => "Refused",
            ClusterError::Api { .. } => "ApiStatus",
            ClusterError::Transport { .. } => "Transport",
            ClusterError::Unexpected { .. } => "WriteOverridden",
            ClusterError::NotLeader { .. } => "NotLeader",
        }
    }

    /// What was attempted (`patch statefulset demo/web`).
    pub fn action(&self) -> &str {
        match self {
            ClusterError::Refused { action, .. }
            | ClusterError::Api { action, .. }
            | ClusterError::Transport { action, .. }
            | ClusterError::Unexpected { action, .. }
            | ClusterError::NotLeader { action } => action,
        }
    }

    /// The HTTP status code, when the API server answered with one.
    pub fn code(&self) -> Option<u16> {
        match self {
            ClusterError::Api { code, .. } | ClusterError::Refused { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// The cause without the action: the API server's message, or the transport error.
    pub fn message(&self) -> &str {
        match self {
            ClusterError::Refused { message, .. }
            | ClusterError::Api { message, .. }
            | ClusterError::Transport { message, .. }
            | ClusterError::Unexpected { message, .. } => message,
            ClusterError::NotLeader { .. } => NOT_LEADER,
        }
    }

    /// True when the API server refused the request as such ([`ClusterError::Refused`]).
    pub fn is_refused(&self) -> bool {
        matches!(self, ClusterError::Refused { .. })
    }

    /// True when the write was not sent because this replica no longer leads
    /// ([`ClusterError::NotLeader`]).
    pub fn is_not_leader(&self) -> bool {
        matches!(self, ClusterError::NotLeader { .. })
    }

    /// This error with `need` after its message when it is a 403 (the stepper's Role or ClusterRole
    /// lacks a rule; the message already names it): what needs the rule and where it is granted
    /// (`…; on-failure: rollback reads the ControllerRevision …: the stepper's ClusterRole needs get
    /// on apps controllerrevisions (deploy/stepper/base/rbac.yaml)`). Any other error as it is.
    #[must_use]
    pub fn if_forbidden(self, need: &str) -> Self {
        match self {
            ClusterError::Refused {
                action,
                code: 403,
                message,
            } => ClusterError::Refused {
                action,
                code: 403,
                message: format!("{message}; {need}"),
            },
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_variant_has_its_own_reason_listed_in_reasons() {
        let (action, message) = (String::from("a"), String::from("m"));
        let all = [
            ClusterError::Refused {
                action: action.clone(),
                code: 403,
                message: message.clone(),
            },
            ClusterError::Api {
                action: action.clone(),
                code: 500,
                message: message.clone(),
            },
            ClusterError::Transport {
                action: action.clone(),
                message: message.clone(),
            },
            ClusterError::Unexpected {
                action: action.clone(),
                message,
            },
            ClusterError::NotLeader { action },
        ];
        let reasons: Vec<&str> = all.iter().map(ClusterError::reason).collect();
        assert_eq!(reasons, ClusterError::REASONS);
    }

    #[test]
    fn only_a_403_is_told_what_needs_the_rule() {
        let refused = |code| ClusterError::Refused {
            action: "get x".into(),
            code,
            message: "forbidden".into(),
        };
        assert_eq!(
            refused(403)
                .if_forbidden("the rollback needs it")
                .to_string(),
            "get x: forbidden; the rollback needs it"
        );
        assert_eq!(refused(422).if_forbidden("no"), refused(422));
        let api = ClusterError::Api {
            action: "get x".into(),
            code: 403,
            message: "m".into(),
        };
        assert_eq!(api.clone().if_forbidden("no"), api, "not a refusal");
    }
}

//! Annotation names shared by the policy and the stepper.
//!
//! Every annotation is `<prefix>/<name>`; the prefix defaults to [`DEFAULT_PREFIX`] and is set by the
//! policy setting `annotationPrefix` and the stepper flag `--annotation-prefix` (same meaning, so a MOCO
//! user can keep `moco.cybozu.com/force-rolling-update`).

use crate::Error;

/// The default annotation prefix (`safe-rollout.dev`).
pub const DEFAULT_PREFIX: &str = "safe-rollout.dev";

/// `"true"`: native, ungated rolling update. The policy strips the partition; the stepper skips the set.
pub const FORCE_ROLLING_UPDATE: &str = "force-rolling-update";
/// `"true"`, sticky: stamped once the set was fully Ready, so later template changes are staged.
pub const INITIALIZED: &str = "initialized";
/// `"true"`: written by the policy (and the native twin) in each mutation that stages or restores the
/// partition, so a set whose partition this project holds can be told from one whose partition a person
/// or another tool set. The GitOps health checks and `status` judge a set without it by the built-in
/// rule (Argo CD `health_statefulset.go`, kstatus), as Healthy once its pods at or above the partition are
/// updated.
pub const GUARDED: &str = "guarded";
/// RFC 3339 time of the last step. A request that lowers the partition must change it, or the policy
/// restores the old partition (that is how a step is told apart from a GitOps re-apply of `partition: 0`).
pub const LAST_PARTITION_UPDATE: &str = "last-partition-update";
/// `"true"`: the stepper holds the rollout (gate `Paused`).
pub const PAUSED: &str = "paused";
/// Step size: an integer count of pods, or a percentage of `spec.replicas` rounded up (`"25%"`); default 1.
pub const STEP: &str = "step";
/// Seconds to wait after a step before the next one (gate `Settling`); default 0.
pub const INITIAL_DELAY_SECONDS: &str = "initial-delay-seconds";

/// The canary plan: a comma-separated list of pause points, each a count of pods at or above the
/// partition (`"1"`) or a percentage of `spec.replicas` rounded up (`"50%"`), optionally with a bake time in
/// seconds (`"50%:600"`): the stepper pauses the set after the step that brings the rollout to a point,
/// and with a bake time resumes it by itself that long after the pause if every gate passes.
pub const PAUSE_AT: &str = "pause-at";
/// Written by the stepper: the pause points passed for one `updateRevision`, as JSON
/// (`{"updateRevision":…,"pods":1,"pausedAt":…}`); a new revision or a restaged rollout starts over.
pub const PAUSE_POINTS_PASSED: &str = "pause-points-passed";

/// Why the stepper paused the rollout (set with [`PAUSED`]; shown by the `Paused`
/// gate). A person removes both to resume.
pub const PAUSED_REASON: &str = "paused-reason";
/// A group name: the guarded StatefulSets of one namespace with the same value roll out one at a time
/// (stepper gate `GroupBusy`).
pub const ROLLOUT_GROUP: &str = "rollout-group";
/// A condition type (e.g. `Healthy`) of the set's controller owner that must be `True` before each step
/// (stepper gate `OwnerNotHealthy`).
pub const OWNER_CONDITION: &str = "owner-condition";
/// A PromQL query that must return a non-empty result before each step (stepper gate
/// `PrometheusCheck`). More queries: `prometheus-query-<N>`, N from 1 to 999.
pub const PROMETHEUS_QUERY: &str = "prometheus-query";
/// Seconds between two Prometheus checks (default 30).
pub const CHECK_PERIOD_SECONDS: &str = "check-period-seconds";
/// Consecutive passed Prometheus checks needed before a step (default 1).
pub const SUCCESS_THRESHOLD: &str = "success-threshold";
/// Failed Prometheus checks since the last step that pause the rollout; absent: never pause.
pub const FAILURE_LIMIT: &str = "failure-limit";
/// Consecutive checks that could not be made (no answer: a timeout, a refused connection, a 5xx, an
/// unreadable answer) that record the rollout as Degraded (`degraded-reason: CheckErrors: …`), without
/// pausing it; default 4. Such an error holds the step but never counts toward [`FAILURE_LIMIT`].
pub const CHECK_ERROR_LIMIT: &str = "check-error-limit";
/// What the stepper does when a rollout fails — a check reaches its [`FAILURE_LIMIT`], or a step is not
/// done within [`PROGRESS_DEADLINE_SECONDS`]: `pause` (the default) holds the set ([`PAUSED`]);
/// `rollback` writes back `.spec.template` from the ControllerRevision of `status.currentRevision` (as
/// `kubectl rollout undo` does), records [`FAILED_REVISION`], and the policy stages the revert like any
/// template change for the stepper to step back (issue 36).
pub const ON_FAILURE: &str = "on-failure";
/// Seconds within which each step must be done before the rollout counts as failed ([`ON_FAILURE`]
/// says what then; a Deployment's `progressDeadlineSeconds`); a whole number ≥ 1; absent: no deadline.
pub const PROGRESS_DEADLINE_SECONDS: &str = "progress-deadline-seconds";
/// Written by the stepper: the Prometheus check's counts as JSON, pinned to a partition and revision.
pub const PROMETHEUS_CHECK: &str = "prometheus-check";
/// The name of an HTTP check configured on the stepper (`--http-check NAME=URL`) that must answer
/// before each step (stepper gate `HttpCheck`); never a URL: the stepper calls only the URLs its flags
/// name.
pub const HTTP_CHECK: &str = "http-check";
/// The JSONPath of the value the HTTP check reads from the endpoint's JSON answer, e.g. `$.status`.
pub const HTTP_CHECK_JSONPATH: &str = "http-check-jsonpath";
/// What the HTTP check's value must be: `green`, `in(green,yellow)`, or a comparison `>=3`.
pub const HTTP_CHECK_EXPECT: &str = "http-check-expect";
/// Written by the stepper: the HTTP check's counts as JSON, pinned to a partition and revision.
pub const HTTP_CHECK_STATE: &str = "http-check-state";
/// Written by the stepper with `--max-steps-per-minute`: the set's step times in the last 60 seconds
/// (RFC 3339, comma-separated).
pub const RECENT_STEPS: &str = "recent-steps";
/// Written by the stepper: the gate reason last announced in a `Blocked` Event.
pub const BLOCKED_REASON: &str = "blocked-reason";
/// Written by the stepper: the `updateRevision` whose `RolloutComplete` Event was sent.
pub const COMPLETED_REVISION: &str = "completed-revision";
/// Written by the stepper when a rollout needs a person, removed when it no longer does:
/// `<Kind>: <detail>`, e.g. `StepRejected: admission webhook "x" denied the request: …`. Read by the
/// GitOps health checks (Degraded) and `status`; a changed value is announced by one Warning Event.
pub const DEGRADED_REASON: &str = "degraded-reason";
/// Written by the stepper with a rollback ([`ON_FAILURE`] `rollback`): `<updateRevision>: <reason>`, the
/// revision that failed and why (split at the first `": "`: a ControllerRevision's name never holds a
/// `:`). A re-apply of that revision's template is held until the template changes or `resume --retry`.
pub const FAILED_REVISION: &str = "failed-revision";

/// Seconds a pod must have been not Ready, on a revision its ordinal should no longer run, before the
/// stepper deletes it with `--recover-stuck-pods` (default 300 with the flag on; stuck-rollout recovery,
/// kubernetes#67250).
pub const RECOVER_AFTER_SECONDS: &str = "recover-after-seconds";

/// `"true"`: before each step, ask the application on every pod the step would replace (the approval
/// handshake, docs/approvals.md): the stepper writes [`UPDATE_REQUESTED`] on those pods and steps only
/// once each carries [`UPDATE_APPROVED`] for the same revision (stepper gate `ApprovalPending`).
pub const PRE_UPDATE_APPROVAL: &str = "pre-update-approval";
/// Seconds the stepper waits for the approvals of one step, from the earliest [`UPDATE_REQUESTED_AT`]
/// of its pods (default 600); past it the rollout is Degraded (`degraded-reason: ApprovalTimeout: …`)
/// and never stepped until the approvals come.
pub const APPROVAL_TIMEOUT_SECONDS: &str = "approval-timeout-seconds";
/// A label selector over the set's pods (`role=primary`): a step never replaces a pod it selects. With
/// the handshake the pod is asked to move the role first ([`UPDATE_REQUEST_PHASE`] `Switchover`);
/// without it the set blocks `PrimaryNotMoved` until a person moves the role.
pub const PRIMARY_SELECTOR: &str = "primary-selector";
/// On a pod, written by the stepper: the `status.updateRevision` the next step would bring to this pod,
/// asking the application to approve it.
pub const UPDATE_REQUESTED: &str = "update-requested";
/// On a pod, written by the stepper with [`UPDATE_REQUESTED`]: when it asked (RFC 3339).
pub const UPDATE_REQUESTED_AT: &str = "update-requested-at";
/// On a pod, written by the stepper with [`UPDATE_REQUESTED`]: `Update`, or `Switchover` for a pod the
/// [`PRIMARY_SELECTOR`] selects (move the role away, then approve).
pub const UPDATE_REQUEST_PHASE: &str = "update-request-phase";
/// On a pod, written by the application: the revision it approves replacing this pod with (equal to
/// [`UPDATE_REQUESTED`]; an approval of another revision does not count).
pub const UPDATE_APPROVED: &str = "update-approved";
/// On a pod, written by the application: why the pod must not be replaced now. Blocks the step
/// (`ApprovalPending`, a Warning Event `ApprovalDenied`) while present.
pub const UPDATE_DENIED: &str = "update-denied";
/// The NAME of an approval webhook configured on the stepper (`--webhook NAME=URL`), never a URL: before
/// each step the stepper POSTs an `UpdateApprovalRequest` to it and steps once it answers `Approve`
/// (stepper gate `ApprovalPending`; docs/approvals.md). Not together with [`PRE_UPDATE_APPROVAL`].
pub const PRE_UPDATE_WEBHOOK: &str = "pre-update-webhook";
/// Consecutive webhook calls without a decision (a timeout, a refused connection, a status other than
/// 2xx, a 2xx without a valid body) that record the rollout as Degraded (`degraded-reason:
/// WebhookErrors: …`; default 4).
pub const WEBHOOK_ERROR_LIMIT: &str = "webhook-error-limit";
/// Written by the stepper: the webhook's state for the pending request (JSON: its id, when first asked,
/// the last decision, consecutive errors), pinned to the request (revision, partition, phase).
pub const WEBHOOK_STATE: &str = "webhook-state";
/// Written by the stepper while gate `ApprovalPending` (or `PrimaryNotMoved` with an answerer) holds the
/// next step: what it waits for in one stable line — the pods and the revision, when they were asked and
/// the deadline (RFC 3339, to the second), or the denial; with the webhook, its name and last answer.
/// No live counter, so the set is written when the question or its answer changes, not every pass; the
/// GitOps health message shows it. Removed by the step and once nothing waits.
pub const APPROVAL_PENDING: &str = "approval-pending";

/// Written by the stepper while it lacks an RBAC rule a set's annotations will need, before it is needed:
/// the rule and the kustomize Component that grants it (`delete pods: on-failure: rollback on an
/// OrderedReady set returns a pod stuck on the failed revision; add the deploy/stepper/recovery
/// Component`), checked with a SelfSubjectAccessReview; announced by a Warning `MissingRbac` Event;
/// removed once the rule is there or no longer needed.
pub const MISSING_RBAC: &str = "missing-rbac";

pub use crate::declared::{
    ALL, DECLARED, Declared, On, WRITTEN_BY_STEPPER, Writer, released, reset_by_resume,
    reset_by_step, step_state,
};

/// The value an annotation must have to count as set (`"true"`, exactly, as Kubernetes' own boolean
/// annotations: `"True"`, `"yes"` or `"1"` do not count).
pub const TRUE: &str = "true";

/// Builds the full annotation key `<prefix>/<name>`.
///
/// ```
/// use sts_safe_rollout_rules::annotations::{key, DEFAULT_PREFIX, PAUSED};
/// assert_eq!(key(DEFAULT_PREFIX, PAUSED), "safe-rollout.dev/paused");
/// ```
pub fn key(prefix: &str, name: &str) -> String {
    format!("{prefix}/{name}")
}

/// Checks that `prefix` can stand before `/` in an annotation key: a DNS subdomain (RFC 1123) of at most
/// 253 characters, lowercase alphanumerics, `-` and `.`, each label starting and ending alphanumeric and at
/// most 63 characters (Kubernetes `IsDNS1123Subdomain`, as used for annotation key prefixes).
///
/// # Errors
/// [`Error::EmptyPrefix`], [`Error::LongPrefix`], [`Error::NotASubdomain`]: a sentence saying what is
/// wrong with the value, without the field name (callers add it).
pub fn validate_prefix(prefix: &str) -> Result<(), Error> {
    if prefix.is_empty() {
        return Err(Error::EmptyPrefix);
    }
    if prefix.len() > 253 {
        return Err(Error::LongPrefix(prefix.len()));
    }
    for label in prefix.split('.') {
        let valid = !label.is_empty()
            && label.len() <= 63
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-');
        if !valid {
            return Err(Error::NotASubdomain(prefix.to_string()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("safe-rollout.dev")]
    #[case("moco.cybozu.com")]
    #[case("a")]
    #[case("0-a.b9")]
    fn accepts_dns_subdomains(#[case] prefix: &str) {
        assert_eq!(validate_prefix(prefix), Ok(()));
    }

    #[rstest]
    #[case("")]
    #[case("Safe-Rollout.dev")]
    #[case("safe_rollout.dev")]
    #[case("-a.dev")]
    #[case("a-.dev")]
    #[case("a..dev")]
    #[case(".dev")]
    #[case("dev.")]
    #[case("a/b")]
    #[case("exa mple.com")]
    fn rejects_non_subdomains(#[case] prefix: &str) {
        assert!(validate_prefix(prefix).is_err(), "{prefix:?} accepted");
    }

    #[test]
    fn the_stepper_writes_only_annotations_of_the_api_each_once() {
        for name in WRITTEN_BY_STEPPER {
            assert!(ALL.contains(&name), "{name} is not in ALL");
            let count = WRITTEN_BY_STEPPER.iter().filter(|n| **n == name).count();
            assert_eq!(count, 1, "{name} listed {count} times");
        }
        assert!(
            !WRITTEN_BY_STEPPER.contains(&PAUSED),
            "a person sets paused too"
        );
    }

    #[test]
    fn length_limits_are_enforced() {
        let label63 = "a".repeat(63);
        assert_eq!(validate_prefix(&label63), Ok(()));
        assert!(validate_prefix(&"a".repeat(64)).is_err());
        let long = [label63.as_str(); 4].join("."); // 255 chars
        let err = validate_prefix(&long).unwrap_err();
        assert_eq!(err, Error::LongPrefix(255));
        assert!(err.to_string().contains("253"), "{err}");
        let ok253 = format!("{}.{}.{}.{}", label63, label63, label63, "a".repeat(61));
        assert_eq!(ok253.len(), 253);
        assert_eq!(validate_prefix(&ok253), Ok(()));
    }
}

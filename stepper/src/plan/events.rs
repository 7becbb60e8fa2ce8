//! The Kubernetes Events the stepper publishes on a StatefulSet, and their wording.

use crate::model::degraded::DegradedKind;
use crate::model::reasons::Blocked;

/// `reason` of the Warning Event for a step the API server refused ([`EventNote::rejected`]): the
/// kind of its `degraded-reason` record.
pub const STEP_REJECTED: &str = DegradedKind::StepRejected.as_str();
/// `reason` of the Warning Event for a status-annotation write the API server refused.
pub const STATUS_WRITE_REJECTED: &str = DegradedKind::StatusWriteRejected.as_str();

/// Every Event `reason` the stepper publishes (docs/events.md lists the same, checked by
/// `tests/docs/`).
pub const REASONS: [&str; 16] = [
    "Stepped",
    "Blocked",
    "RolloutPaused",
    "RolloutResumed",
    "RolloutComplete",
    "ForcedStep",
    "RecoveredStuckPod",
    "RolloutDegraded",
    STEP_REJECTED,
    STATUS_WRITE_REJECTED,
    "ApprovalRequested",
    "Approved",
    "ApprovalDenied",
    "RolledBack",
    "ReturnedPod",
    "MissingRbac",
];

/// The Event's `type` (Kubernetes `core/v1` Event: `Normal` or `Warning`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventType {
    /// Progress, or an expected wait.
    Normal,
    /// Something a person may need to look at.
    Warning,
}

/// One Kubernetes Event to publish on a StatefulSet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventNote {
    /// The Event's `type`.
    pub type_: EventType,
    /// PascalCase reason, one of [`REASONS`].
    pub reason: String,
    /// PascalCase action: `Step`, `Gate`, `Complete`.
    pub action: String,
    /// Human text (`partition 3→2`, `PodNotReady web-1: ContainersNotReady`); at most 1 kB.
    pub note: String,
}

impl EventNote {
    /// An Event with `note` cut to 1,000 bytes (at a character boundary): the API server refuses a
    /// longer `note` (events.k8s.io/v1: at most 1 kB).
    pub(super) fn new(type_: EventType, reason: &str, action: &str, note: String) -> Self {
        let mut note = note;
        truncate(&mut note, 1000);
        EventNote {
            type_,
            reason: reason.into(),
            action: action.into(),
            note,
        }
    }

    /// The `Stepped` Event for a step `from → to`.
    pub fn stepped(from: i32, to: i32, update_revision: &str) -> Self {
        EventNote {
            type_: EventType::Normal,
            reason: "Stepped".into(),
            action: "Step".into(),
            note: format!("partition {from}→{to} (updateRevision {update_revision})"),
        }
    }

    /// The `Blocked` Event for a failing gate: `Normal` for the expected waits
    /// ([`crate::model::reasons::Reason::is_expected_wait`]) and when `step_pods_only` (only the pods the last step is
    /// replacing are not ready yet), `Warning` otherwise.
    pub fn blocked(b: &Blocked, step_pods_only: bool) -> Self {
        EventNote::new(
            if b.reason.is_expected_wait() || step_pods_only {
                EventType::Normal
            } else {
                EventType::Warning
            },
            "Blocked",
            "Gate",
            b.to_string(),
        )
    }

    /// The `RolloutPaused` Event (`Warning`): the stepper paused the rollout (`<prefix>/paused`), e.g. a
    /// Prometheus check reached its `failure-limit`; `reason` is the `<prefix>/paused-reason`.
    pub fn paused(reason: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "RolloutPaused",
            "Pause",
            reason.to_string(),
        )
    }

    /// The `RolloutDegraded` Event (`Warning`): the stepper recorded `<prefix>/degraded-reason: value`
    /// ([`crate::plan::degraded`]); published once per new value.
    pub fn degraded(value: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "RolloutDegraded",
            "Degrade",
            value.to_string(),
        )
    }

    /// The `MissingRbac` Event (`Warning`): the stepper lacks an RBAC rule the set's annotations will
    /// need (`what`: the rule, why, and the Component that grants it, [`crate::plan::rbac`]).
    pub fn missing_rbac(what: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "MissingRbac",
            "CheckRbac",
            what.to_string(),
        )
    }

    /// The `RolledBack` Event (`Warning`): the stepper wrote back the template of revision `to` after
    /// revision `failed` failed (`why`: the failure, `FailureLimit: …` or `ProgressDeadline: …`); the
    /// policy stages the revert and the stepper steps it back.
    pub fn rolled_back(failed: &str, to: &str, why: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "RolledBack",
            "RollBack",
            format!("revision {failed} failed ({why}): template of revision {to} written back"),
        )
    }

    /// The `ReturnedPod` Event (`Warning`) of a pod returned at once while the set steps back: the
    /// stepper deleted `pod`, not Ready on `failed`, the revision it rolled back (an image that never
    /// starts: with `OrderedReady` the StatefulSet controller never replaces it by itself,
    /// kubernetes#67250); the controller creates it again from `to`.
    pub fn returned_not_ready(pod: &str, failed: &str, to: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "ReturnedPod",
            "Return",
            format!(
                "deleted pod {pod}, not Ready on revision {failed}, which was rolled back: the \
                 StatefulSet controller creates it again from revision {to}"
            ),
        )
    }

    /// The `ReturnedPod` Event (`Warning`): the stepper deleted `pod`, which a re-apply left below the
    /// partition on revision `failed` (recorded as failed); the StatefulSet controller creates it again
    /// from `to` (`status.currentRevision`). `left`: the pods on `failed` below the partition before it.
    pub fn returned(pod: &str, failed: &str, to: &str, left: usize) -> Self {
        EventNote::new(
            EventType::Warning,
            "ReturnedPod",
            "Return",
            format!(
                "deleted pod {pod} on revision {failed}, which was rolled back: the StatefulSet \
                 controller creates it again from revision {to} ({} more to return)",
                left.saturating_sub(1)
            ),
        )
    }

    /// The `RolloutPaused` Event (`Normal`) of the canary plan: the rollout reached a pause point (`reason`
    /// is the `<prefix>/paused-reason` written, naming the point).
    pub fn pause_point(reason: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "RolloutPaused",
            "Pause",
            reason.to_string(),
        )
    }

    /// The `RolloutResumed` Event (`Normal`) of the canary plan: the bake time of the pause `was` (its
    /// `paused-reason`) is over and every gate passed, so the stepper resumed with this step.
    pub fn baked(bake_seconds: u32, was: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "RolloutResumed",
            "Resume",
            format!(
                "resumed by the stepper: {bake_seconds} s of bake time over and every gate passed (was \
             paused: {was})"
            ),
        )
    }

    /// The `RolloutResumed` Event (`Normal`) of the canary plan starting over: the pause `was` (its
    /// `paused-reason`) was made for an earlier rollout; `update_revision` is the rollout's now.
    pub fn plan_started_over(update_revision: &str, was: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "RolloutResumed",
            "Resume",
            format!(
                "resumed by the stepper: a new rollout (updateRevision {update_revision}) starts the \
             pause plan over (was paused: {was})"
            ),
        )
    }

    /// The `RolloutResumed` Event (`Normal`) of the canary plan's pause `was` (its `paused-reason`) on a
    /// set with nothing left to roll out.
    pub fn plan_done(was: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "RolloutResumed",
            "Resume",
            format!(
                "resumed by the stepper: every pod runs updateRevision, nothing is left to hold (was \
             paused: {was})"
            ),
        )
    }

    /// The `ForcedStep` Event (`Warning`): a person stepped `from → to` past `blocked` with `step
    /// --force --reason`; `who` and `reason` say who and why.
    pub fn forced(from: i32, to: i32, blocked: &Blocked, who: &str, reason: &str) -> Self {
        EventNote::new(
            EventType::Warning,
            "ForcedStep",
            "Step",
            format!("partition {from}→{to} forced past {blocked} by {who}: {reason}"),
        )
    }

    /// The `RolloutPaused` Event (`Normal`) of a person's `pause --reason`: `who` paused it and why.
    pub fn paused_by(who: &str, reason: &str) -> Self {
        EventNote::new(
            EventType::Normal,
            "RolloutPaused",
            "Pause",
            format!("paused by {who}: {reason}"),
        )
    }

    /// The `RolloutResumed` Event (`Normal`) of a person's `resume`: `who` resumed it; `was` is the
    /// `paused-reason` removed, if any. The Prometheus and HTTP checks' counts were cleared too.
    pub fn resumed(who: &str, was: Option<&str>) -> Self {
        let mut note = format!("resumed by {who}; Prometheus and HTTP check counts cleared");
        if let Some(was) = was {
            note.push_str(&format!(" (was paused: {was})"));
        }
        truncate(&mut note, 1000);
        EventNote {
            type_: EventType::Normal,
            reason: "RolloutResumed".into(),
            action: "Resume".into(),
            note,
        }
    }

    /// The `RecoveredStuckPod` Event (`Warning`): stuck-pod recovery ([`crate::gates::recovery`]) deleted `pod`,
    /// which ran `revision` instead of `expected_revision` and had not been Ready for `stuck_seconds`.
    pub fn recovered(
        pod: &str,
        revision: &str,
        expected_revision: &str,
        stuck_seconds: i64,
    ) -> Self {
        EventNote {
            type_: EventType::Warning,
            reason: "RecoveredStuckPod".into(),
            action: "Recover".into(),
            note: format!(
                "deleted pod {pod}: not Ready for {stuck_seconds}s on revision {revision}, its ordinal \
                 runs {expected_revision}; the StatefulSet controller recreates it"
            ),
        }
    }

    /// The Warning Event for a write the API server refused: `reason` is [`STEP_REJECTED`] or
    /// [`STATUS_WRITE_REJECTED`], `message` the server's (the webhook or policy that denied it, the
    /// invalid field). `unrecorded`: why the refusal could not be recorded in
    /// `<prefix>/degraded-reason` (then this Event repeats every pass until it can be).
    pub fn rejected(reason: &'static str, message: &str, unrecorded: Option<&str>) -> Self {
        let what = if reason == STEP_REJECTED {
            "the step"
        } else {
            "the status annotations"
        };
        let mut note = format!("the API server rejected {what}: {message}");
        truncate(&mut note, 700);
        if let Some(why) = unrecorded {
            let mut why = why.to_string();
            truncate(&mut why, 240);
            note.push_str(&format!(
                " (not recorded on the set, repeated every pass: {why})"
            ));
        }
        EventNote {
            type_: EventType::Warning,
            reason: reason.into(),
            action: if reason == STEP_REJECTED {
                "Step".into()
            } else {
                "Annotate".into()
            },
            note,
        }
    }

    /// The `RolloutComplete` Event.
    pub fn complete(update_revision: &str, replicas: i32) -> Self {
        EventNote {
            type_: EventType::Normal,
            reason: "RolloutComplete".into(),
            action: "Complete".into(),
            note: format!("all {replicas} pods run updateRevision {update_revision} and are Ready"),
        }
    }
}

fn truncate(s: &mut String, max: usize) {
    if s.len() > max {
        let mut end = max;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        s.truncate(end);
    }
}

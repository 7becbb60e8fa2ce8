//! One declaration per annotation ([`DECLARED`]): on which object it lives, who writes it, and what
//! resets it. Every list of annotation keys the project needs is derived from it, never kept by hand:
//! every name ([`ALL`], docs/annotations.md), the keys only the stepper writes on a set
//! ([`WRITTEN_BY_STEPPER`]: the GitOps sync recipes ignore exactly these), those `release` removes
//! ([`released`]), a step resets ([`reset_by_step`]) or `resume` removes ([`reset_by_resume`]), and a
//! gate's state that its writes pin with a `test` op ([`step_state`]). A new annotation is one row.

use crate::annotations::*;

/// The object an annotation is on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// The StatefulSet.
    Set,
    /// One of its pods.
    Pod,
}

/// Who writes an annotation (docs/annotations.md, "set by").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// You: a setting (the stepper may write it too, as `paused` on a failure, but never removes yours).
    Person,
    /// The admission policy (and the native twin).
    Policy,
    /// The stepper: its record of a rollout.
    Stepper,
    /// The application (an answerer of the approval handshake), or a person on its behalf.
    Application,
}

/// One annotation's declaration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Declared {
    /// Its name under the prefix.
    pub name: &'static str,
    /// Where it lives.
    pub on: On,
    /// Who writes it.
    pub writer: Writer,
    /// A step removes it: the rollout moved on (a gate's state, what held the last step).
    pub reset_by_step: bool,
    /// `resume` removes it (a pause and its reason, the checks' counts that paused the rollout).
    pub reset_by_resume: bool,
    /// A gate's state, kept from pass to pass for one step: its writes are pinned by a `test` op on
    /// the value read, so two steppers never both count one period's check.
    pub pinned: bool,
}

const fn row(name: &'static str, on: On, writer: Writer) -> Declared {
    Declared {
        name,
        on,
        writer,
        reset_by_step: false,
        reset_by_resume: false,
        pinned: false,
    }
}

/// A setting of yours on the set.
const fn yours(name: &'static str) -> Declared {
    row(name, On::Set, Writer::Person)
}

/// The policy's mark or stamp on the set.
const fn policy(name: &'static str) -> Declared {
    row(name, On::Set, Writer::Policy)
}

/// The stepper's record on the set.
const fn recorded(name: &'static str) -> Declared {
    row(name, On::Set, Writer::Stepper)
}

/// A gate's state on the set (the stepper's, pinned, reset by each step).
const fn state(name: &'static str) -> Declared {
    Declared {
        reset_by_step: true,
        pinned: true,
        ..recorded(name)
    }
}

const fn step(d: Declared) -> Declared {
    Declared {
        reset_by_step: true,
        ..d
    }
}

const fn resume(d: Declared) -> Declared {
    Declared {
        reset_by_resume: true,
        ..d
    }
}

/// Every annotation, declared once. The order is the order of the derived lists (`release` removes
/// its keys in this order).
pub const DECLARED: [Declared; 43] = [
    yours(STEP),
    yours(INITIAL_DELAY_SECONDS),
    resume(yours(PAUSED)),
    yours(PAUSE_AT),
    yours(ROLLOUT_GROUP),
    yours(OWNER_CONDITION),
    yours(PROMETHEUS_QUERY),
    yours(CHECK_PERIOD_SECONDS),
    yours(SUCCESS_THRESHOLD),
    yours(FAILURE_LIMIT),
    yours(CHECK_ERROR_LIMIT),
    yours(ON_FAILURE),
    yours(PROGRESS_DEADLINE_SECONDS),
    yours(HTTP_CHECK),
    yours(HTTP_CHECK_JSONPATH),
    yours(HTTP_CHECK_EXPECT),
    yours(RECOVER_AFTER_SECONDS),
    yours(FORCE_ROLLING_UPDATE),
    yours(PRE_UPDATE_APPROVAL),
    yours(APPROVAL_TIMEOUT_SECONDS),
    yours(PRIMARY_SELECTOR),
    yours(PRE_UPDATE_WEBHOOK),
    yours(WEBHOOK_ERROR_LIMIT),
    policy(GUARDED),
    policy(INITIALIZED),
    recorded(LAST_PARTITION_UPDATE),
    step(recorded(BLOCKED_REASON)),
    recorded(COMPLETED_REVISION),
    recorded(DEGRADED_REASON),
    step(recorded(APPROVAL_PENDING)),
    resume(recorded(PAUSED_REASON)),
    recorded(PAUSE_POINTS_PASSED),
    recorded(RECENT_STEPS),
    resume(state(PROMETHEUS_CHECK)),
    resume(state(HTTP_CHECK_STATE)),
    state(WEBHOOK_STATE),
    recorded(FAILED_REVISION),
    recorded(MISSING_RBAC),
    row(UPDATE_REQUESTED, On::Pod, Writer::Stepper),
    row(UPDATE_REQUESTED_AT, On::Pod, Writer::Stepper),
    row(UPDATE_REQUEST_PHASE, On::Pod, Writer::Stepper),
    row(UPDATE_APPROVED, On::Pod, Writer::Application),
    row(UPDATE_DENIED, On::Pod, Writer::Application),
];

/// Every annotation name the policy and the stepper read or write (the user-facing API;
/// docs/annotations.md lists the same names, checked by `make docs-check`). `prometheus-query-<N>` is
/// the numbered form of [`PROMETHEUS_QUERY`].
pub const ALL: [&str; DECLARED.len()] = {
    let mut out = [""; DECLARED.len()];
    let mut i = 0;
    while i < DECLARED.len() {
        out[i] = DECLARED[i].name;
        i += 1;
    }
    out
};

/// How many declarations are the stepper's own on a set.
const STEPPER_ON_SET: usize = {
    let (mut n, mut i) = (0, 0);
    while i < DECLARED.len() {
        if is_steppers_on_set(&DECLARED[i]) {
            n += 1;
        }
        i += 1;
    }
    n
};

const fn is_steppers_on_set(d: &Declared) -> bool {
    matches!((d.on, d.writer), (On::Set, Writer::Stepper))
}

/// The annotations on a StatefulSet that only the stepper writes: its record of a rollout (when it last
/// stepped, what holds the next step, what failed and why, its checks' counts), never a person's setting
/// (`paused`, which a person sets too, is not here; nor the policy's `guarded` and `initialized`, nor the
/// pod annotations of the approval handshake). The GitOps sync recipes (`deploy/gitops/argocd-sync/`,
/// `deploy/gitops/flux-sync/`, `docs/examples/gitops/`) leave exactly these keys out of the diff, so a
/// manifest that carries one (copied from the cluster) never overwrites the stepper's record;
/// `deploy/gitops.bats` holds the recipes' key lists to the `recorded` and `state` rows of
/// [`DECLARED`], and those to the rows of docs/annotations.md set by `stepper`.
pub const WRITTEN_BY_STEPPER: [&str; STEPPER_ON_SET] = {
    let mut out = [""; STEPPER_ON_SET];
    let (mut n, mut i) = (0, 0);
    while i < DECLARED.len() {
        if is_steppers_on_set(&DECLARED[i]) {
            out[n] = DECLARED[i].name;
            n += 1;
        }
        i += 1;
    }
    out
};

/// The annotations `release` removes from a set: everything the policy and the stepper wrote on it
/// (their state), in [`DECLARED`] order; a person's settings stay (a GitOps tool may own them).
pub fn released() -> impl Iterator<Item = &'static str> {
    DECLARED
        .iter()
        .filter(|d| d.on == On::Set && matches!(d.writer, Writer::Policy | Writer::Stepper))
        .map(|d| d.name)
}

/// The annotations a step removes from the set (the rollout moved on).
pub fn reset_by_step() -> impl Iterator<Item = &'static str> {
    DECLARED.iter().filter(|d| d.reset_by_step).map(|d| d.name)
}

/// The annotations `resume` removes from the set (the pause and what paused it).
pub fn reset_by_resume() -> impl Iterator<Item = &'static str> {
    DECLARED
        .iter()
        .filter(|d| d.reset_by_resume)
        .map(|d| d.name)
}

/// The gates' state annotations: kept from pass to pass for one step, their writes pinned.
pub fn step_state() -> impl Iterator<Item = &'static str> {
    DECLARED.iter().filter(|d| d.pinned).map(|d| d.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_annotation_is_declared_once() {
        for name in ALL {
            assert_eq!(ALL.iter().filter(|n| **n == name).count(), 1, "{name}");
        }
    }

    #[test]
    fn a_state_is_the_steppers_reset_by_each_step_and_released() {
        for d in DECLARED.iter().filter(|d| d.pinned) {
            assert!(
                d.reset_by_step && WRITTEN_BY_STEPPER.contains(&d.name),
                "{}",
                d.name
            );
            assert!(released().any(|n| n == d.name), "{}", d.name);
        }
        // Whatever the stepper writes on a set, release removes.
        for name in WRITTEN_BY_STEPPER {
            assert!(released().any(|n| n == name), "{name}");
        }
        // A person's setting is never removed by a step, nor released.
        for d in DECLARED.iter().filter(|d| d.writer == Writer::Person) {
            assert!(
                !d.reset_by_step && !released().any(|n| n == d.name),
                "{}",
                d.name
            );
        }
        assert!(!WRITTEN_BY_STEPPER.contains(&PAUSED));
    }
}

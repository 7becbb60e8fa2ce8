//! Which StatefulSets still have an update staged behind their partition: what `wait` without a name
//! waits to see none of, and what `release` refuses without `--force` — one rule for both, so the
//! uninstall's "finish what is staged" step (docs/install.md, "Uninstall") ends exactly when `release`
//! no longer needs to force anything.
//!
//! A set is staged when the gates would judge it ([`crate::gates::before_gates`] decides nothing): a
//! RollingUpdate set, not `force-rolling-update`, with an update the controller reports (`updateRevision`
//! ≠ `currentRevision`, or fewer updated replicas than `spec.replicas`) behind a partition above 0. Such a
//! set rolls on only when someone lowers its partition: the stepper, step by gated step, or a person. Pure:
//! the objects and `now` in.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::SetConfig;
use crate::gates;
use crate::model::set;
use crate::rollout::record::record;

/// True when `set` (its annotations read into `config`) has an update staged behind a partition above 0,
/// which only a lowered partition rolls on: the sets `wait` without a name waits for, and those
/// `release` refuses without `--force`.
pub fn is_staged(set: &StatefulSet, config: &SetConfig) -> bool {
    gates::before_gates(set, config).is_none()
}

/// One set still staged, and what holds it as the in-cluster stepper recorded it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StillStaged {
    /// `namespace/name`.
    pub set: String,
    /// `spec.updateStrategy.rollingUpdate.partition` (> 0): pods with an ordinal at or above it run the
    /// update revision.
    pub partition: i32,
    /// `status.updatedReplicas`: pods on `updateRevision` (a count of pods).
    pub updated: i32,
    /// `spec.replicas` (a count of pods).
    pub replicas: i32,
    /// `status.updateRevision`, `""` before the controller reported one.
    pub update_revision: String,
    /// What the stepper recorded on the set, in one line ([`crate::rollout::record::Record::summary`]):
    /// the gate that blocks its next step (`Blocked PodNotReady (written 3m ago)`), a pause, a degraded
    /// record, `Stepping: last step 2m ago`, or `Staged: no step yet`.
    pub recorded: String,
}

impl StillStaged {
    /// `demo/web: staged behind partition 4 (1 of 5 pods on web-7d7598bf9d); the stepper recorded:
    /// Blocked PodNotReady (written 3m ago)`.
    pub fn line(&self) -> String {
        let revision = if self.update_revision.is_empty() {
            "the update revision".to_string()
        } else {
            self.update_revision.clone()
        };
        format!(
            "{}: staged behind partition {} ({} of {} pods on {revision}); the stepper recorded: {}",
            self.set, self.partition, self.updated, self.replicas, self.recorded
        )
    }

    /// What changes only when the rollout moves or its recorded gate changes (not the ages in
    /// [`StillStaged::recorded`]): `demo/web partition 4 Blocked PodNotReady`, for logging a change once.
    pub fn progress_key(&self) -> String {
        let holds = self.recorded.split(" (written ").next().unwrap_or_default();
        let holds = if holds.starts_with("Stepping: ") {
            "Stepping"
        } else {
            holds
        };
        format!("{} partition {} {holds}", self.set, self.partition)
    }
}

/// The sets of `sets` still staged ([`is_staged`]), in namespace/name order, each with what the stepper
/// (field manager `manager`) recorded on it, at `now`. `configs` are the sets' annotations, parsed, in the
/// same order as `sets`.
pub fn still_staged(
    sets: &[StatefulSet],
    configs: &[SetConfig],
    manager: &str,
    now: Timestamp,
) -> Vec<StillStaged> {
    let mut staged: Vec<(&StatefulSet, &SetConfig)> = sets
        .iter()
        .zip(configs)
        .filter(|(s, c)| is_staged(s, c))
        .collect();
    staged.sort_by(|(a, _), (b, _)| {
        (&a.metadata.namespace, set::name(a)).cmp(&(&b.metadata.namespace, set::name(b)))
    });
    staged
        .into_iter()
        .map(|(s, c)| StillStaged {
            set: format!(
                "{}/{}",
                s.metadata.namespace.as_deref().unwrap_or_default(),
                set::name(s)
            ),
            partition: set::partition(s).unwrap_or(0),
            updated: s
                .status
                .as_ref()
                .and_then(|st| st.updated_replicas)
                .unwrap_or(0),
            replicas: set::replicas(s),
            update_revision: set::update_revision(s).to_string(),
            recorded: record(s, c, manager).summary(now),
        })
        .collect()
}

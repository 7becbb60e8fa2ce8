//! The figures reported per StatefulSet: replicas, updated/ready counts, partition, revisions.

use std::sync::Arc;

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::{StatefulSet, StatefulSetStatus};

use crate::config::SetConfig;
use crate::model::fields::{Field, set as of_set};
use crate::model::set;

/// What the figures read of a set: its replicas, partition and the controller's counts and revisions.
pub const READS: &[Field] = &[
    of_set("spec.replicas"),
    of_set("spec.updateStrategy"),
    of_set("status"),
];

/// The figures reported per StatefulSet (log line, `status` table, metrics). Counts are pods.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Figures {
    /// `spec.replicas` (default 1).
    pub replicas: i32,
    /// `status.currentReplicas`: pods on `currentRevision`.
    pub current_replicas: i32,
    /// `status.updatedReplicas`: pods on `updateRevision`.
    pub updated_replicas: i32,
    /// `status.readyReplicas`.
    pub ready_replicas: i32,
    /// `spec.updateStrategy.rollingUpdate.partition`, `None` when absent (0 to the controller).
    pub partition: Option<i32>,
    /// `<prefix>/last-partition-update`, when present and readable.
    pub last_partition_update: Option<Timestamp>,
    /// `status.currentRevision` and `status.updateRevision`, read from the set where they are.
    pub revisions: Revisions,
    /// While the next step waits for the application's approval: (seconds waited since the earliest
    /// request, `approval-timeout-seconds`); set by the plan from the gates, not read from the set.
    pub approval_wait: Option<(i64, i64)>,
}

impl Figures {
    /// Reads the figures of `set` (`config`: its annotations, read once).
    pub fn of(set: &Arc<StatefulSet>, config: &SetConfig) -> Self {
        let status = set.status.as_ref();
        Figures {
            replicas: set::replicas(set),
            current_replicas: status.and_then(|s| s.current_replicas).unwrap_or(0),
            updated_replicas: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            ready_replicas: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            partition: set::partition(set),
            last_partition_update: config.stamps.last_partition_update,
            revisions: Revisions(Some(set.clone())),
            approval_wait: None,
        }
    }
}

/// A set's `status.currentRevision` and `status.updateRevision`, read from the shared set rather than
/// copied: the figures of every set are built in every pass, most never shown (two `String`s per set
/// and pass, BENCHMARKS.md, "`watch` at 50,000 pods": the allocations per pass). Equal when both
/// revisions are.
#[derive(Clone, Debug, Default)]
pub struct Revisions(Option<Arc<StatefulSet>>);

impl Revisions {
    /// The revisions of a set whose status names `current` and `update` (reports built by hand).
    pub fn named(current: Option<&str>, update: Option<&str>) -> Self {
        Revisions(Some(Arc::new(StatefulSet {
            status: Some(StatefulSetStatus {
                current_revision: current.map(str::to_string),
                update_revision: update.map(str::to_string),
                ..StatefulSetStatus::default()
            }),
            ..StatefulSet::default()
        })))
    }

    fn status(&self) -> Option<&StatefulSetStatus> {
        self.0.as_ref().and_then(|s| s.status.as_ref())
    }

    /// `status.currentRevision`: the revision of the pods below the partition.
    pub fn current(&self) -> Option<&str> {
        self.status().and_then(|s| s.current_revision.as_deref())
    }

    /// `status.updateRevision`: the revision of the current template.
    pub fn update(&self) -> Option<&str> {
        self.status().and_then(|s| s.update_revision.as_deref())
    }
}

impl PartialEq for Revisions {
    fn eq(&self, other: &Self) -> bool {
        (self.current(), self.update()) == (other.current(), other.update())
    }
}

impl Eq for Revisions {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_are_read_from_the_set_and_compared_by_value() {
        let named = Revisions::named(Some("web-1"), Some("web-2"));
        assert_eq!(
            (named.current(), named.update()),
            (Some("web-1"), Some("web-2"))
        );
        assert_eq!(named, Revisions::named(Some("web-1"), Some("web-2")));
        assert_ne!(named, Revisions::named(Some("web-1"), None));
        let none = Revisions::default();
        assert_eq!((none.current(), none.update()), (None, None));
        assert_eq!(none, Revisions::named(None, None));
    }
}

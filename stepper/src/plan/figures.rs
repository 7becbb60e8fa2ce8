//! The figures reported per StatefulSet: replicas, updated/ready counts, partition, revisions.

use jiff::Timestamp;
use k8s_openapi::api::apps::v1::StatefulSet;

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
    /// `status.currentRevision`.
    pub current_revision: Option<String>,
    /// `status.updateRevision`.
    pub update_revision: Option<String>,
    /// While the next step waits for the application's approval: (seconds waited since the earliest
    /// request, `approval-timeout-seconds`); set by the plan from the gates, not read from the set.
    pub approval_wait: Option<(i64, i64)>,
}

impl Figures {
    /// Reads the figures of `set` (`config`: its annotations, read once).
    pub fn of(set: &StatefulSet, config: &SetConfig) -> Self {
        let status = set.status.as_ref();
        Figures {
            replicas: set::replicas(set),
            current_replicas: status.and_then(|s| s.current_replicas).unwrap_or(0),
            updated_replicas: status.and_then(|s| s.updated_replicas).unwrap_or(0),
            ready_replicas: status.and_then(|s| s.ready_replicas).unwrap_or(0),
            partition: set::partition(set),
            last_partition_update: config.stamps.last_partition_update,
            current_revision: status.and_then(|s| s.current_revision.clone()),
            update_revision: status.and_then(|s| s.update_revision.clone()),
            approval_wait: None,
        }
    }
}

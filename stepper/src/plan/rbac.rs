//! The RBAC a set's annotations will need, said before it is needed (docs/rollback.md, "An image that
//! never starts"): `<prefix>/on-failure: rollback` on an `OrderedReady` set relies on the stepper
//! deleting a pod stuck on the failed revision (the StatefulSet controller never replaces a pod that is
//! not Running and Ready, kubernetes#67250), which needs `delete` on pods — a rule the default RBAC
//! does not grant (`deploy/stepper/recovery`). The pass asks the API server whether the stepper may
//! (a SelfSubjectAccessReview per namespace, `Cluster::may_delete_pods`); while it may not, the set
//! carries `<prefix>/missing-rbac` naming the rule and the Component, announced once by a Warning
//! `MissingRbac` Event. Pure: the set, its annotations and the answer in.

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::{OnFailure, SetConfig};
use crate::model::fields::{Field, set as of_set};
use crate::model::set;
use crate::plan::events::EventNote;

/// What the RBAC check reads beside the annotations: the set's pod management policy and strategy.
pub const READS: &[Field] = &[
    of_set("spec.podManagementPolicy"),
    of_set("spec.updateStrategy"),
];

/// The `missing-rbac` value for pod `delete`.
pub const POD_DELETE: &str = "delete pods: on-failure: rollback on an OrderedReady set returns a pod \
     stuck on the failed revision by deleting it; add the deploy/stepper/recovery Component";

/// True when `set` will need the stepper to delete pods: guarded, `on-failure: rollback`, and
/// `OrderedReady` (with `Parallel` the controller replaces a stuck pod at or above the partition itself).
pub fn needs_pod_delete(set: &StatefulSet, config: &SetConfig) -> bool {
    config.guarded(set) && config.on_failure == OnFailure::Rollback && set::is_ordered_ready(set)
}

/// The `missing-rbac` change for `set` given whether the stepper may delete pods in its namespace
/// (`allowed`; `None`: not asked, or no answer): `Some(Some(v))` sets it (with its Warning Event),
/// `Some(None)` removes it, `None` leaves it. Not asked or no answer leaves a record as it is, except
/// that a set needing no such rule loses it.
pub fn change(
    set: &StatefulSet,
    config: &SetConfig,
    allowed: Option<bool>,
) -> (Option<Option<String>>, Option<EventNote>) {
    let recorded = config.stamps.missing_rbac.as_deref();
    let wanted = match (needs_pod_delete(set, config), allowed) {
        (false, _) | (true, Some(true)) => None,
        (true, Some(false)) => Some(POD_DELETE),
        (true, None) => return (None, None),
    };
    if wanted == recorded {
        return (None, None);
    }
    let event = wanted.map(EventNote::missing_rbac);
    (Some(wanted.map(str::to_string)), event)
}

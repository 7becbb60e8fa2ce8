//! The rollback's write built alone, shared by the decision tests (`decisions/rollback.rs`) and the
//! simulation's (`sim/sim_rollback.rs`).

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::Value;
use sts_stepper::config::{FailedRevision, Keys, SetConfig};
use sts_stepper::plan::effects::Rollback;
use sts_stepper::plan::rollback;
use sts_stepper::plan::set_write::Changes;

/// The rollback's write alone (no status annotations, no pins of the gates) back to `template`, as the
/// plan decides it ([`rollback::write`]) and the pass sends it.
///
/// # Panics
/// If the write is not a rollback's patch.
pub fn rollback_patch(
    set: &StatefulSet,
    template: &Value,
    failed: &FailedRevision,
    keys: &Keys,
) -> json_patch::Patch {
    let config = SetConfig::parse(set, &Arc::new(keys.clone()));
    let to = (set.status.as_ref())
        .and_then(|s| s.current_revision.clone())
        .unwrap_or_default();
    let rb = Rollback {
        failed: failed.clone(),
        to,
    };
    rollback::write(&config, rb, Changes::default(), Vec::new(), Vec::new())
        .patch(set, Some(template))
        .expect("a rollback")
}

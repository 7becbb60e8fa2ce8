//! `pause` and `resume` as JSON Patches on a StatefulSet's annotations (pure): a person's
//! `kubectl rollout pause/resume` for a staged rollout.
//!
//! Pause sets `<prefix>/paused: "true"` and `<prefix>/paused-reason`; resume removes both and the
//! Prometheus check's counts (`<prefix>/prometheus-check`), so a check that paused the rollout at its
//! `failure-limit` starts over instead of pausing again at once, and that pause's
//! `<prefix>/degraded-reason` (`FailureLimit: …`), so GitOps tools stop reporting it Degraded.

use json_patch::Patch;
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;
use sts_safe_rollout_rules::annotations::{self as names, TRUE};

use crate::config::SetConfig;
use crate::plan::degraded;
use crate::plan::patch::{annotation_ops, annotation_patch, ptr, test};

/// The pause patch: `paused: "true"` and `paused-reason: <who>: <reason>` (an existing reason is
/// replaced). When the set has no annotations yet, the map is added under a `test` of the
/// `resourceVersion` read, so a concurrent writer's annotations are never replaced.
pub fn pause_patch(set: &StatefulSet, config: &SetConfig, who: &str, reason: &str) -> Patch {
    let keys = &config.keys;
    annotation_patch(
        set,
        &[
            (keys.of(names::PAUSED).to_string(), Some(TRUE.to_string())),
            (
                keys.of(names::PAUSED_REASON).to_string(),
                Some(format!("{reason} (paused by {who})")),
            ),
        ],
    )
    .unwrap_or_default()
}

/// The resume patch, or `None` when the set is neither paused nor carries a pause reason or check
/// counts (nothing to resume). Each annotation removed is first `test`ed against the value read, so a
/// pause set or a check counted after the read makes the patch fail (HTTP 422) instead of being lost.
/// A `degraded-reason` of kind `FailureLimit` goes with the pause; another kind stays (its condition
/// is not the pause).
pub fn resume_patch(set: &StatefulSet, config: &SetConfig) -> Option<Patch> {
    resume_or_retry(set, config, false)
}

/// `resume --retry`: the resume patch ([`resume_patch`]) that also forgets the rollback's record —
/// `failed-revision` and a `degraded-reason` of kind `RolledBack` — so the revision the stepper rolled
/// back may be stepped again (gate `FailedRevision` passes). `None` when there is nothing to remove.
pub fn retry_patch(set: &StatefulSet, config: &SetConfig) -> Option<Patch> {
    resume_or_retry(set, config, true)
}

fn resume_or_retry(set: &StatefulSet, config: &SetConfig, retry: bool) -> Option<Patch> {
    let keys = &config.keys;
    let annotations = set.metadata.annotations.as_ref()?;
    // A failure's pause record goes with the pause, the rollback's with `--retry`
    // (`plan::degraded::next`).
    let degraded = degraded::next(config, &[degraded::Claim::Resume { retry }]).keyed(config);
    // `paused`, `paused-reason` and the checks' counts: the `reset_by_resume` rows of the declared
    // table.
    let mut removed: Vec<String> = names::reset_by_resume().map(|n| keys.full(n)).collect();
    if retry {
        removed.push(keys.of(names::FAILED_REVISION).to_string());
    }
    if let Some((key, None)) = &degraded {
        removed.push(key.clone());
    }
    let mut ops: Vec<_> = removed
        .iter()
        .filter_map(|k| {
            let value = annotations.get(k.as_str())?;
            Some(test(ptr(&["metadata", "annotations", k]), json!(value)))
        })
        .collect();
    if ops.is_empty() {
        return None;
    }
    let changes: Vec<_> = removed.iter().map(|k| (k.clone(), None)).collect();
    ops.extend(annotation_ops(&set.metadata, &changes));
    Some(Patch(ops))
}

//! JSON Patch builders (Kubernetes `application/json-patch+json`): the step and annotation changes.
//!
//! Every patch is pinned by `test` ops, so a concurrent writer's change is never overwritten.

use jiff::{SignedDuration, Timestamp};
use json_patch::jsonptr::PointerBuf;
use json_patch::{
    AddOperation, Patch, PatchOperation, RemoveOperation, ReplaceOperation, TestOperation,
};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::config::SetConfig;
use crate::gates::approval::PodWrite;
use crate::gates::throttle;
use crate::plan::{degraded, rejected};

/// The JSON Pointer of `tokens` (escaped: `/` in an annotation key becomes `~1`).
pub fn ptr(tokens: &[&str]) -> PointerBuf {
    PointerBuf::from_tokens(tokens.iter().copied())
}

/// A `test` op: the patch applies only while `path` holds `value`.
pub fn test(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Test(TestOperation { path, value })
}

/// Ops that apply annotation `changes` (`Some(value)` sets, `None` removes) to the observed
/// annotations of an object with metadata `meta` (a StatefulSet; a pod, for the approval requests). When `metadata.annotations` is absent the whole map is added, guarded by a `test` op on
/// `metadata.resourceVersion` so that a concurrent writer's annotations are never replaced. Removing a
/// key that is absent is skipped.
pub fn annotation_ops(
    meta: &ObjectMeta,
    changes: &[(String, Option<String>)],
) -> Vec<PatchOperation> {
    let mut ops = Vec::new();
    match &meta.annotations {
        None => {
            let map: serde_json::Map<String, Value> = changes
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), Value::String(v.clone()?))))
                .collect();
            if map.is_empty() {
                return ops;
            }
            if let Some(rv) = &meta.resource_version {
                ops.push(test(ptr(&["metadata", "resourceVersion"]), json!(rv)));
            }
            ops.push(PatchOperation::Add(AddOperation {
                path: ptr(&["metadata", "annotations"]),
                value: Value::Object(map),
            }));
        }
        Some(existing) => {
            for (key, value) in changes {
                let path = ptr(&["metadata", "annotations", key]);
                match value {
                    Some(v) => ops.push(PatchOperation::Add(AddOperation {
                        path,
                        value: json!(v),
                    })),
                    None if existing.contains_key(key) => {
                        ops.push(PatchOperation::Remove(RemoveOperation { path }))
                    }
                    None => {}
                }
            }
        }
    }
    ops
}

/// A metadata-only JSON Patch applying annotation `changes`, or `None` when it would be empty.
pub fn annotation_patch(set: &StatefulSet, changes: &[(String, Option<String>)]) -> Option<Patch> {
    let ops = annotation_ops(&set.metadata, changes);
    (!ops.is_empty()).then_some(Patch(ops))
}

/// The `<prefix>/last-partition-update` value for a step at `now`: RFC 3339 UTC to the second
/// (`2026-11-23T01:10:42Z`). If that equals the value already on the set (two steps within one second),
/// the full sub-second precision is used, because the admission policy lets a lowered partition through
/// only when the same request changes this annotation.
pub fn stamp(config: &SetConfig, now: Timestamp) -> String {
    let seconds = Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string();
    if config.stamps.last_partition_update_raw.as_deref() == Some(seconds.as_str()) {
        now.to_string()
    } else {
        seconds
    }
}

/// The step: ONE JSON Patch on the StatefulSet (Kubernetes `application/json-patch+json`):
///
/// 1. `test /spec/updateStrategy/rollingUpdate/partition == from` and `test /status/updateRevision ==
///    update_revision` — the observation the verdict was made on; if either changed (another stepper
///    stepped, a new revision was staged) the API server answers 422 and nothing is written;
/// 2. `replace` the partition with `to`;
/// 3. `add /metadata/annotations/<prefix>~1last-partition-update` = [`stamp`] (the whole annotations map
///    when absent, pinned by a `test` on `resourceVersion`), which the admission policy requires of any
///    request lowering the partition;
/// 4. `remove` `<prefix>/blocked-reason`, the checks' states and `<prefix>/webhook-state` if the set
///    carries them (the rollout moved on; the next step's checks count from zero, its request is
///    new), and `<prefix>/degraded-reason` when it records a refused write
///    ([`crate::plan::rejected::cleared_by_step`]) or a check's errors ([`degraded::is_check_errors`]:
///    the check passed).
pub fn step_patch(
    set: &StatefulSet,
    config: &SetConfig,
    from: i32,
    to: i32,
    update_revision: &str,
    now: Timestamp,
) -> Patch {
    let partition = ptr(&["spec", "updateStrategy", "rollingUpdate", "partition"]);
    let mut ops = vec![
        test(partition.clone(), json!(from)),
        test(ptr(&["status", "updateRevision"]), json!(update_revision)),
        PatchOperation::Replace(ReplaceOperation {
            path: partition,
            value: json!(to),
        }),
    ];
    let mut changes = vec![
        (
            config.keys.last_partition_update.clone(),
            Some(stamp(config, now)),
        ),
        (config.keys.blocked_reason.clone(), None),
        (config.keys.prometheus_check.clone(), None),
        (config.keys.http_check_state.clone(), None),
        (config.keys.webhook_state.clone(), None),
        (config.keys.approval_pending.clone(), None),
    ];
    let degraded_now = config.stamps.degraded_reason.as_deref();
    if rejected::cleared_by_step(degraded_now) || degraded::is_check_errors(degraded_now) {
        changes.push((config.keys.degraded_reason.clone(), None));
    }
    ops.extend(annotation_ops(&set.metadata, &changes));
    Patch(ops)
}

/// Adds to a step patch the op recording this step in `<prefix>/recent-steps` (the pruned list plus
/// the step's [`stamp`]); used with `--max-steps-per-minute`.
pub fn record_recent_step(
    set: &StatefulSet,
    config: &SetConfig,
    now: Timestamp,
    patch: &mut Patch,
) {
    let since = now - SignedDuration::from_secs(60);
    let mut list: Vec<String> = throttle::recent_steps(config, since)
        .into_iter()
        .map(|t| t.to_string())
        .collect();
    list.push(stamp(config, now));
    fold_annotations(
        set,
        &[(config.keys.recent_steps.clone(), Some(list.join(",")))],
        patch,
    );
}

/// Adds annotation `changes` to a step patch (which has already added the annotations map when the set
/// had none), so the step and its bookkeeping are one write.
pub fn fold_annotations(
    set: &StatefulSet,
    changes: &[(String, Option<String>)],
    patch: &mut Patch,
) {
    patch
        .0
        .extend(annotation_ops(&with_annotations(set).metadata, changes));
}

/// `set` with an (empty) annotations map when it has none: the step patch has already added the map,
/// so later ops add keys to it.
fn with_annotations(set: &StatefulSet) -> StatefulSet {
    let mut s = set.clone();
    s.metadata.annotations.get_or_insert_with(Default::default);
    s
}

/// The JSON Patch of one pod write of the approval handshake: a `test` op pinning the pod's uid (a pod
/// recreated since the read fails the test: a lost race, re-read next pass), then its annotation
/// changes ([`annotation_ops`] over the pod as read).
pub fn pod_patch(write: &PodWrite) -> Patch {
    // The keys it removes were on the pod as read (`approval::pod_writes` removes only those).
    let present = || {
        write
            .changes
            .iter()
            .filter(|(_, v)| v.is_none())
            .map(|(k, _)| (k.clone(), String::new()))
            .collect()
    };
    let meta = ObjectMeta {
        annotations: write.annotated.then(present),
        resource_version: Some(write.resource_version.clone()),
        ..ObjectMeta::default()
    };
    let mut ops = vec![test(ptr(&["metadata", "uid"]), json!(write.uid))];
    ops.extend(annotation_ops(&meta, &write.changes));
    Patch(ops)
}

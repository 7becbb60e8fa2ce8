//! JSON Patch builders (Kubernetes `application/json-patch+json`): the step and annotation changes.
//!
//! Every patch is pinned by `test` ops, so a concurrent writer's change is never overwritten.

use jiff::{SignedDuration, Timestamp};
use json_patch::jsonptr::PointerBuf;
use json_patch::{AddOperation, Patch, PatchOperation, RemoveOperation, TestOperation};
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};

use crate::config::SetConfig;
use crate::gates::approval::PodWrite;
use sts_safe_rollout_rules::annotations as names;

use crate::gates::throttle;
use crate::model::set;

/// The JSON Pointer of `tokens` (escaped: `/` in an annotation key becomes `~1`).
pub fn ptr(tokens: &[&str]) -> PointerBuf {
    PointerBuf::from_tokens(tokens.iter().copied())
}

/// A `test` op: the patch applies only while `path` holds `value`.
pub fn test(path: PointerBuf, value: Value) -> PatchOperation {
    PatchOperation::Test(TestOperation { path, value })
}

/// Ops that apply annotation `changes` (`Some(value)` sets, `None` removes) to the observed
/// annotations of an object with metadata `meta` (a StatefulSet; a pod, for the approval requests): one
/// op per key, so no key but those named is ever touched. Removing a key that is absent is skipped.
///
/// When `metadata.annotations` is absent the map itself must be added (a JSON Patch cannot add a key
/// under a missing member), and adding a member replaces whatever is there; so that op is pinned by a
/// `test` of `metadata.resourceVersion` as read: at that version the object had no annotations, and a
/// client that added one since changed the version, failing the test (HTTP 422, nothing written). A
/// read without a `resourceVersion` is tested against `""`, which no stored object has: never an
/// unpinned whole map. The reads this is built on keep the map's presence exactly (`watch`'s caches
/// keep the map, even empty, when the object has one: `cluster::cached`).
pub fn annotation_ops(
    meta: &ObjectMeta,
    changes: &[(String, Option<String>)],
) -> Vec<PatchOperation> {
    match &meta.annotations {
        None => new_map_op(changes).map_or_else(Vec::new, |add| {
            let rv = meta.resource_version.as_deref().unwrap_or("");
            vec![test(ptr(&["metadata", "resourceVersion"]), json!(rv)), add]
        }),
        Some(existing) => key_ops(|k| existing.contains_key(k), changes),
    }
}

/// One op per changed key of an annotations map that exists: `add` sets (or replaces) the key's value;
/// `remove` only for a key `present` says is there (a missing key would fail the whole patch).
fn key_ops(
    present: impl Fn(&str) -> bool,
    changes: &[(String, Option<String>)],
) -> Vec<PatchOperation> {
    changes
        .iter()
        .filter_map(|(key, value)| {
            let path = ptr(&["metadata", "annotations", key]);
            match value {
                Some(v) => Some(PatchOperation::Add(AddOperation {
                    path,
                    value: json!(v),
                })),
                None if present(key) => Some(PatchOperation::Remove(RemoveOperation { path })),
                None => None,
            }
        })
        .collect()
}

/// The op adding an annotations map holding the keys `changes` sets, for an object read without one;
/// `None` when nothing is set. Only ever sent pinned to the `resourceVersion` read ([`annotation_ops`],
/// [`pod_patch`]).
fn new_map_op(changes: &[(String, Option<String>)]) -> Option<PatchOperation> {
    let map: serde_json::Map<String, Value> = changes
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), Value::String(v.clone()?))))
        .collect();
    (!map.is_empty()).then(|| {
        PatchOperation::Add(AddOperation {
            path: ptr(&["metadata", "annotations"]),
            value: Value::Object(map),
        })
    })
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

/// The step's own annotation changes ([`crate::plan::set_write::SpecWrite::Step`] writes the partition,
/// pinned to `from` and `update_revision`: the observation the verdict was made on; if either changed —
/// another stepper stepped, a new revision was staged — the API server answers 422 and nothing is
/// written):
///
/// 1. `<prefix>/last-partition-update` = [`stamp`], which the admission policy requires of any request
///    lowering the partition;
/// 2. the removal of what a step resets — `<prefix>/blocked-reason`, `approval-pending`, the checks'
///    states and `<prefix>/webhook-state` (the `reset_by_step` rows of the declared table: the rollout
///    moved on; the next step's checks count from zero, its request is new) — and of `failed-revision`
///    when the step is a new revision's ([`ends_rollback`]); what the step does to
///    `<prefix>/degraded-reason` is `plan::degraded::next`'s (`Claim::Step`), joined with the status
///    annotations.
pub fn step_changes(
    set: &StatefulSet,
    config: &SetConfig,
    update_revision: &str,
    now: Timestamp,
) -> Vec<(String, Option<String>)> {
    let mut changes = vec![(
        config.keys.of(names::LAST_PARTITION_UPDATE).to_string(),
        Some(stamp(config, now)),
    )];
    changes.extend(names::reset_by_step().map(|n| (config.keys.full(n), None)));
    if ends_rollback(set, config, update_revision) {
        changes.push((config.keys.of(names::FAILED_REVISION).to_string(), None));
    }
    changes
}

/// True when a step of `update_revision` ends a rollback's record (`failed-revision`, and its
/// `degraded-reason: RolledBack: …`): a revision other than the failed one and other than the one the
/// set was rolled back to (`status.currentRevision`) — a new template, applied by a person or a sync.
/// The steps back to the last good revision keep it (a re-apply of the failed template stays held).
pub fn ends_rollback(set: &StatefulSet, config: &SetConfig, update_revision: &str) -> bool {
    config.stamps.failed_revision_raw.is_some()
        && config
            .stamps
            .failed_revision
            .as_ref()
            .is_none_or(|f| f.revision != update_revision)
        && update_revision != set::current_revision(set)
}

/// The change recording a step at `now` in `<prefix>/recent-steps` (the list pruned to the last 60
/// seconds, plus the step's [`stamp`]); a step carries it with `--max-steps-per-minute`.
pub fn recent_step(config: &SetConfig, now: Timestamp) -> (String, Option<String>) {
    let since = now - SignedDuration::from_secs(60);
    let mut list: Vec<String> = throttle::recent_steps(config, since)
        .into_iter()
        .map(|t| t.to_string())
        .collect();
    list.push(stamp(config, now));
    (
        config.keys.of(names::RECENT_STEPS).to_string(),
        Some(list.join(",")),
    )
}

/// The JSON Patch of one pod write of the approval handshake: `test` ops pinning the pod's uid and
/// its `resourceVersion` as read, a `test` of each answer it removes at the value read
/// ([`PodWrite::tests`]), then one op per annotation it sets or removes ([`annotation_ops`]).
/// A pod recreated or changed since the read — the application answered, another writer (or another
/// stepper) wrote, a cache was behind — fails a test (HTTP 422): nothing is written and the next pass
/// decides on a newer read. So a request is never written twice from a read that missed the first
/// (its `update-requested-at`, the start of the approval deadline, stands), and no key another client
/// wrote is removed or overwritten.
pub fn pod_patch(write: &PodWrite) -> Patch {
    let mut ops = vec![
        test(ptr(&["metadata", "uid"]), json!(write.uid)),
        test(
            ptr(&["metadata", "resourceVersion"]),
            json!(write.resource_version),
        ),
    ];
    ops.extend(
        write
            .tests
            .iter()
            .map(|(key, value)| test(ptr(&["metadata", "annotations", key]), json!(value))),
    );
    if write.annotated {
        // The keys it removes were on the pod as read (`approval::pod_writes` removes only those).
        let removes = |k: &str| write.changes.iter().any(|(c, v)| c == k && v.is_none());
        ops.extend(key_ops(removes, &write.changes));
    } else {
        // Pinned already: the map is added only to the pod as read, which had none.
        ops.extend(new_map_op(&write.changes));
    }
    Patch(ops)
}

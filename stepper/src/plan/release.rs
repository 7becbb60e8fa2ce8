//! `release`: a StatefulSet handed back to the native rolling update (pure), as the last step of an
//! uninstall (docs/install.md, "Uninstall": the policy, then `wait` until nothing is staged, then the
//! stepper, then `release`).
//!
//! Two things are undone: the partition the policy holds (set to 0, so the StatefulSet controller
//! rolls the next template change natively) and the annotations the stepper and the policy wrote (their
//! state, never your configuration). An idle set's partition goes to 0 at once: nothing rolls. A set with
//! an update staged behind its partition is released only when forced, because then the controller
//! replaces its remaining pods at once, without the gates; [`ReleasePlan`] says which.
//!
//! The writes are JSON Patches that change only the keys they mean to:
//! - [`lower_patch`]: `test` the partition and `updateRevision` read (so what was promised to roll is
//!   what rolls), `replace` the partition with 0, and change `<prefix>/last-partition-update`, because
//!   the policy, when still installed (a scope narrowed, a policy not yet deleted), lets a lowered
//!   partition through only with a new stamp (docs/design.md's row `Stepped`; without it row `PartitionRestored` puts the partition back);
//! - [`cleanup_patch`]: each annotation removed one by one, each `remove` after a `test` of the value
//!   read, never a replacement of the annotations map: a key another writer changed meanwhile fails the
//!   patch (HTTP 422) instead of being lost. Separate from the step: removing the stamp in the same
//!   request would make the policy restore the partition.

use jiff::Timestamp;
use json_patch::{Patch, PatchOperation, RemoveOperation, ReplaceOperation};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;

use sts_safe_rollout_rules::annotations as names;

use crate::config::{Keys, SetConfig};
use crate::model::{pods, set};
use crate::plan::patch::{annotation_ops, ptr, stamp, test};
use crate::rollout::staged::is_staged;

/// The partition, and what lowering it to 0 rolls.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lower {
    /// The partition read (> 0).
    pub from: i32,
    /// `status.updateRevision` read (pinned by a `test` op).
    pub update_revision: String,
    /// `None` for an idle set (nothing rolls); else the pods the controller then replaces, natively
    /// and without the gates, in words: `web-2, web-1, web-0 (3 pods) onto web-7d7598bf9d`.
    pub rolls: Option<String>,
}

/// What `release` does to one set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReleasePlan {
    /// Nothing to undo: no partition above 0 and none of the annotations the stepper or the policy
    /// writes.
    Nothing,
    /// Not released: an update is staged ([`is_staged`]) and `--force` was not given; the message says
    /// what `--force` would roll.
    NeedsForce(String),
    /// Released: lower the partition first (when `lower`), then remove `annotations` (key and the
    /// value read).
    Release {
        /// The partition to lower to 0, if any.
        lower: Option<Lower>,
        /// The annotations to remove, as read (full key, value).
        annotations: Vec<(String, String)>,
    },
}

/// The annotations the stepper and the policy write (docs/annotations.md, "set by" stepper or policy):
/// their state, removed by `release`, full keys in declaration order (derived:
/// [`sts_safe_rollout_rules::annotations::released`], never kept by hand). `paused` is yours too; it goes
/// only with `paused-reason`, which the stepper (or `pause`) writes beside it. Your configuration (`step`,
/// `pause-at`, the checks) stays: a GitOps tool may own it.
pub fn written_by_us(keys: &Keys) -> Vec<String> {
    names::released().map(|name| keys.full(name)).collect()
}

/// What releasing `set` (its annotations read into `config`) does, `force`d or not. The partition is
/// lowered only on a set the policy marked (`<prefix>/guarded`): an unmarked set's partition is a
/// person's or a tool's, and `release` removes only what the stepper and the policy wrote.
pub fn release_plan(set: &StatefulSet, config: &SetConfig, force: bool) -> ReleasePlan {
    let annotations = removed(set, &config.keys);
    let partition = set::partition(set).unwrap_or(0);
    // Only a partition the policy holds (the set carries its mark) is ours to lower: a person's canary
    // keeps its own.
    let lower = (partition > 0 && set::is_rolling_update(set) && config.marked).then(|| {
        // The rule `wait` without a name waits on: a set it let go is one released unforced.
        let staged = is_staged(set, config);
        Lower {
            from: partition,
            update_revision: set::update_revision(set).to_string(),
            rolls: staged.then(|| rolls(set, partition)),
        }
    });
    match lower {
        Some(Lower {
            rolls: Some(what), ..
        }) if !force => ReleasePlan::NeedsForce(format!(
            "an update is staged behind partition {partition}: release --force lets the StatefulSet \
             controller replace {what} at once, natively, without the gates"
        )),
        None if annotations.is_empty() => ReleasePlan::Nothing,
        lower => ReleasePlan::Release { lower, annotations },
    }
}

/// The annotations of ours on `set`, with their values, in [`written_by_us`] order; `paused` with
/// `paused-reason`.
fn removed(set: &StatefulSet, keys: &Keys) -> Vec<(String, String)> {
    let Some(map) = set.metadata.annotations.as_ref() else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = written_by_us(keys)
        .into_iter()
        .filter_map(|k| {
            let value = map.get(&k)?.clone();
            Some((k, value))
        })
        .collect();
    if map.contains_key(keys.of(names::PAUSED_REASON))
        && let Some(paused) = map.get(keys.of(names::PAUSED))
    {
        out.push((keys.of(names::PAUSED).to_string(), paused.clone()));
    }
    out
}

/// The pods below `partition` the controller replaces once it is 0, highest ordinal first (its order),
/// at most five named.
fn rolls(set: &StatefulSet, partition: i32) -> String {
    let start = pods::start_ordinal(set) as i64;
    let count = i64::from(partition.min(set::replicas(set)).max(0));
    let name = set::name(set);
    let mut names: Vec<String> = (start..start + count)
        .rev()
        .take(5)
        .map(|o| format!("{name}-{o}"))
        .collect();
    if count > 5 {
        names.push("…".into());
    }
    format!(
        "{} ({count} pods) onto {}",
        names.join(", "),
        set::update_revision(set)
    )
}

/// The patch lowering the partition `lower.from` → 0: pinned by `test` ops on the partition and
/// `updateRevision` read (when the controller reported one), with a new `last-partition-update` stamp at `now` (the policy's condition for
/// a lowered partition).
pub fn lower_patch(set: &StatefulSet, config: &SetConfig, lower: &Lower, now: Timestamp) -> Patch {
    let partition = ptr(&["spec", "updateStrategy", "rollingUpdate", "partition"]);
    let mut ops = vec![test(partition.clone(), json!(lower.from))];
    // A set the controller has not reported on yet has no revision to pin.
    if !lower.update_revision.is_empty() {
        ops.push(test(
            ptr(&["status", "updateRevision"]),
            json!(lower.update_revision),
        ));
    }
    ops.push(PatchOperation::Replace(ReplaceOperation {
        path: partition,
        value: json!(0),
    }));
    ops.extend(annotation_ops(
        &set.metadata,
        &[(
            config.keys.of(names::LAST_PARTITION_UPDATE).to_string(),
            Some(stamp(config, now)),
        )],
    ));
    Patch(ops)
}

/// The patch removing the annotations of ours ([`written_by_us`]) from `set` as read (the LIST, or the
/// object a [`lower_patch`] returned), each `remove` after a `test` of the value read; `None` when it
/// carries none.
pub fn cleanup_patch(set: &StatefulSet, keys: &Keys) -> Option<Patch> {
    let mut ops = Vec::new();
    for (key, value) in removed(set, keys) {
        let path = ptr(&["metadata", "annotations", &key]);
        ops.push(test(path.clone(), json!(value)));
        ops.push(PatchOperation::Remove(RemoveOperation { path }));
    }
    (!ops.is_empty()).then_some(Patch(ops))
}

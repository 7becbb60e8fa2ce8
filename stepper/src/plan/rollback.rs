//! The rollback of `on-failure: rollback` (issue 36) as one JSON Patch, pure: the pod template of the
//! ControllerRevision to go back to ([`template_of`]) written over `.spec.template`, pinned to what was
//! read, with the record `failed-revision` ([`rollback_patch`]).
//!
//! It is what `kubectl rollout undo` does to a StatefulSet (kubectl `pkg/polymorphichelpers/rollback.go`,
//! `StatefulSetRollbacker.Rollback`: the revision's `data` sent as a strategic merge patch), written as
//! a JSON Patch so that `test` ops pin it. The policy then sees a template change like any other and
//! stages it (decision table row 6: partition = replicas); the StatefulSet controller finds the old
//! revision equal to the template and makes it the update revision again, with the next `.revision`
//! (`getStatefulSetRevisions`, `history.FindEqualRevisions`); the stepper steps it back, gate by gate.

use json_patch::{Patch, PatchOperation, ReplaceOperation};
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use serde_json::{Value, json};
use sts_safe_rollout_rules::annotations as names;
use sts_safe_rollout_rules::field_error::json_type;

use crate::config::{FailedRevision, Keys, SetConfig};
use crate::gates::StateKey;
use crate::model::degraded::{DegradedKind, Record};
use crate::model::fields::{Field, set};
use crate::plan::effects::Rollback;
use crate::plan::patch::{annotation_ops, fold_annotations, ptr, test};

/// What [`rollback_patch`] reads of a set (besides its identity, `metadata.resourceVersion` among it,
/// which every reader reads): the generation and both revisions it pins, and its annotations under the
/// prefix (whether the map exists, for the record's op).
pub const READS: &[Field] = &[
    set("metadata.generation"),
    set("status.currentRevision"),
    set("status.updateRevision"),
    set("metadata.annotations.~own"),
];

/// Why a ControllerRevision holds no pod template to roll back to ([`template_of`]). Each names the
/// revision (`metadata.name`, empty when it has none) and what a StatefulSet's revision holds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RollbackError {
    /// No `data` at all.
    #[error(
        "controllerrevision {name}: no data; expected data.spec.template, the pod template a \
         StatefulSet's revision holds"
    )]
    NoData {
        /// The revision's name.
        name: String,
    },
    /// `data` without `spec.template` (not a StatefulSet's revision: a DaemonSet's holds the same
    /// shape; anything else does not).
    #[error(
        "controllerrevision {name}: data has no spec.template; expected \
         {{\"spec\":{{\"template\":{{…}}}}}}, the pod template a StatefulSet's revision holds"
    )]
    NoTemplate {
        /// The revision's name.
        name: String,
    },
    /// `data.spec.template` is not a JSON object.
    #[error(
        "controllerrevision {name}: data.spec.template is {found}; expected an object, a pod template"
    )]
    NotAnObject {
        /// The revision's name.
        name: String,
        /// What it is instead: `null`, a boolean, a number, a string, an array.
        found: &'static str,
    },
}

/// The pod template ControllerRevision `revision` holds: its `data.spec.template` without the `$patch`
/// key. The StatefulSet controller stores a revision's `data` as the strategic merge patch that would
/// restore it — `{"spec":{"template":{…,"$patch":"replace"}}}` (upstream `getPatch` in
/// `stateful_set_utils.go`; `fixtures/api/*-controllerrevisions.json`) — with `$patch` at the top of the
/// template only: what is left is the template as the set held it, defaults included.
///
/// # Errors
/// [`RollbackError`]: no `data`, no `data.spec.template`, or one that is not an object.
pub fn template_of(revision: &ControllerRevision) -> Result<Value, RollbackError> {
    let name = || revision.metadata.name.clone().unwrap_or_default();
    let data = revision
        .data
        .as_ref()
        .ok_or_else(|| RollbackError::NoData { name: name() })?;
    let template = data
        .0
        .pointer("/spec/template")
        .ok_or_else(|| RollbackError::NoTemplate { name: name() })?;
    let Value::Object(map) = template else {
        return Err(RollbackError::NotAnObject {
            name: name(),
            found: json_type(template),
        });
    };
    let mut map = map.clone();
    map.remove("$patch");
    Ok(Value::Object(map))
}

/// The rollback: ONE JSON Patch on StatefulSet `set` (as read) writing back `template` (from
/// [`template_of`] of the ControllerRevision `status.currentRevision` names) and recording `failed`
/// (its `revision` the `status.updateRevision` read):
///
/// 1. `test` `/metadata/generation`, `/status/currentRevision` and `/status/updateRevision` as read (a
///    field the set lacked is pinned to `null`): a rollback never writes over a newer apply. The
///    revisions change only once the controller has synced a new template; the generation at once, on
///    any change of `.spec` — an apply since the read fails the patch (HTTP 422, nothing written), and
///    the next pass decides on a fresh read;
/// 2. `replace /spec/template` with `template`;
/// 3. `add /metadata/annotations/<prefix>~1failed-revision` = [`FailedRevision::to_annotation`], key by
///    key ([`annotation_ops`]: the whole map only for a set read without one, pinned to its
///    `resourceVersion`).
///
/// `degraded-reason`, the Event and whatever else the trigger writes are the caller's: fold them into
/// the same patch with [`crate::plan::patch::fold_annotations`] (the map exists by then).
pub fn rollback_patch(
    set: &StatefulSet,
    template: &Value,
    failed: &FailedRevision,
    keys: &Keys,
) -> Patch {
    let status = set.status.as_ref();
    let current = status.and_then(|s| s.current_revision.as_deref());
    let update = status.and_then(|s| s.update_revision.as_deref());
    let mut ops = vec![
        test(
            ptr(&["metadata", "generation"]),
            json!(set.metadata.generation),
        ),
        test(ptr(&["status", "currentRevision"]), json!(current)),
        test(ptr(&["status", "updateRevision"]), json!(update)),
        PatchOperation::Replace(ReplaceOperation {
            path: ptr(&["spec", "template"]),
            value: template.clone(),
        }),
    ];
    ops.extend(annotation_ops(
        &set.metadata,
        &[(
            keys.of(names::FAILED_REVISION).to_string(),
            Some(failed.to_annotation()),
        )],
    ));
    Patch(ops)
}

/// The `degraded-reason` record of a rollback: `RolledBack: revision web-7d… failed (FailureLimit: …);
/// back to revision web-6d…` (kept while `failed-revision` is recorded; `plan::degraded::next` writes
/// it, `Claim::RolledBack`).
pub fn record(rb: &Rollback) -> Record {
    Record::new(
        DegradedKind::RolledBack,
        format!(
            "revision {} failed ({}); back to revision {}",
            rb.failed.revision, rb.failed.reason, rb.to
        ),
    )
}

/// The whole rollback write of `rb` on `set` (annotations read into `config`): [`rollback_patch`] with
/// `template` (read by the pass from the ControllerRevision `rb.to`), the pass's status annotations
/// (`status`: its `degraded-reason` is the rollback's [`record`] already) and the gates' state
/// removed (a new rollout's checks count from zero), all pinned first to the set's `resourceVersion`
/// as read: a person's pause or resume since the read (an annotation: no new generation) makes it fail,
/// and the next pass decides on what they did. One write: the pass only sends it.
pub fn write(
    set: &StatefulSet,
    config: &SetConfig,
    status: Option<&Patch>,
    template: &Value,
    rb: &Rollback,
) -> Patch {
    let keys = &config.keys;
    let mut patch = rollback_patch(set, template, &rb.failed, keys);
    if let Some(status) = status {
        patch.0.extend(status.0.iter().cloned());
    }
    let cleared: Vec<(String, Option<String>)> =
        StateKey::all().map(|k| (k.key(keys), None)).collect();
    fold_annotations(set, &cleared, &mut patch);
    if let Some(rv) = &set.metadata.resource_version {
        patch
            .0
            .insert(0, test(ptr(&["metadata", "resourceVersion"]), json!(rv)));
    }
    patch
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::runtime::RawExtension;

    fn revision(data: Option<Value>) -> ControllerRevision {
        let mut r = ControllerRevision::default();
        r.metadata.name = Some("web-6d".into());
        r.data = data.map(RawExtension);
        r
    }

    #[test]
    fn the_template_is_the_data_without_its_patch_directive() {
        let tpl = json!({"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "app", "image": "v1"}]}});
        let mut stored = tpl.clone();
        stored["$patch"] = json!("replace");
        let got = template_of(&revision(Some(json!({"spec": {"template": stored}}))));
        assert_eq!(got, Ok(tpl));
    }

    #[test]
    fn a_revision_without_a_template_says_what_is_missing() {
        let cases = [
            (
                None,
                "controllerrevision web-6d: no data; expected data.spec.template",
            ),
            (
                Some(json!({"spec": {"replicas": 3}})),
                "controllerrevision web-6d: data has no spec.template; expected \
                 {\"spec\":{\"template\":{…}}}",
            ),
            (
                Some(json!({"spec": {"template": "v1"}})),
                "controllerrevision web-6d: data.spec.template is a string; expected an object",
            ),
            (
                Some(json!([1])),
                "controllerrevision web-6d: data has no spec.template",
            ),
        ];
        for (data, message) in cases {
            let e = template_of(&revision(data.clone())).expect_err("no template");
            assert!(e.to_string().starts_with(message), "{data:?}: {e}");
        }
    }

    fn set_with(annotations: Option<Value>) -> StatefulSet {
        let mut v = json!({
            "metadata": {"name": "web", "namespace": "demo", "resourceVersion": "41", "generation": 7},
            "spec": {"selector": {}, "serviceName": "web", "template": {"spec": {"containers": []}}},
            "status": {"replicas": 3, "currentRevision": "web-6d", "updateRevision": "web-7d"},
        });
        if let Some(a) = annotations {
            v["metadata"]["annotations"] = a;
        }
        serde_json::from_value(v).expect("set")
    }

    #[test]
    fn the_patch_pins_what_was_read_and_writes_the_template_and_the_record_key_by_key() {
        let failed = FailedRevision {
            revision: "web-7d".into(),
            reason: "FailureLimit: 3 of 3".into(),
        };
        let tpl = json!({"spec": {"containers": [{"name": "app", "image": "v1"}]}});
        let keys = Keys::default();
        let annotated = set_with(Some(json!({"team": "db"})));
        let got = serde_json::to_value(rollback_patch(&annotated, &tpl, &failed, &keys));
        assert_eq!(
            got.expect("json"),
            json!([
                {"op": "test", "path": "/metadata/generation", "value": 7},
                {"op": "test", "path": "/status/currentRevision", "value": "web-6d"},
                {"op": "test", "path": "/status/updateRevision", "value": "web-7d"},
                {"op": "replace", "path": "/spec/template", "value": tpl},
                {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1failed-revision",
                 "value": "web-7d: FailureLimit: 3 of 3"},
            ])
        );
        // No annotations map: added whole, pinned to the resourceVersion read.
        let bare = serde_json::to_value(rollback_patch(&set_with(None), &tpl, &failed, &keys));
        let bare = bare.expect("json");
        assert_eq!(
            bare[4],
            json!({"op": "test", "path": "/metadata/resourceVersion", "value": "41"})
        );
        assert_eq!(
            bare[5],
            json!({"op": "add", "path": "/metadata/annotations",
                   "value": {"safe-rollout.dev/failed-revision": "web-7d: FailureLimit: 3 of 3"}})
        );
    }
}

//! The rollback of `on-failure: rollback` (issue 36) as one JSON Patch, pure: the pod template of the
//! ControllerRevision to go back to ([`template_of`]) written over `.spec.template`, pinned to what was
//! read, with the record `failed-revision` ([`write()`]).
//!
//! It is what `kubectl rollout undo` does to a StatefulSet (kubectl `pkg/polymorphichelpers/rollback.go`,
//! `StatefulSetRollbacker.Rollback`: the revision's `data` sent as a strategic merge patch), written as
//! a JSON Patch so that `test` ops pin it. The policy then sees a template change like any other and
//! stages it (decision table row 6: partition = replicas); the StatefulSet controller finds the old
//! revision equal to the template and makes it the update revision again, with the next `.revision`
//! (`getStatefulSetRevisions`, `history.FindEqualRevisions`); the stepper steps it back, gate by gate.

use json_patch::PatchOperation;
use k8s_openapi::api::apps::v1::ControllerRevision;
use serde_json::Value;
use sts_safe_rollout_rules::annotations as names;
use sts_safe_rollout_rules::field_error::json_type;

use crate::config::SetConfig;
use crate::gates::StateKey;
use crate::model::degraded::{DegradedKind, Record};
use crate::model::fields::{Field, set};
use crate::plan::effects::Rollback;
use crate::plan::events::EventNote;
use crate::plan::set_write::{Changes, SetWrite, SpecWrite};

/// What the rollback's write ([`write()`]) reads of a set (besides its identity, `metadata.resourceVersion` among it,
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

/// The whole rollback write of `rb` (annotations read into `config`): ONE JSON Patch
/// ([`SetWrite::patch`] with the template the pass read from the ControllerRevision `rb.to`) that pins
/// the set as read ([`SpecWrite::RollBack`]), replaces `.spec.template`, records `failed-revision` =
/// [`crate::config::FailedRevision::to_annotation`], carries the pass's status annotations (`status`: its
/// `degraded-reason` is the rollback's [`record`] already; `pins`, its guards) and removes the gates'
/// state (a new rollout's checks count from zero); then the Warning `RolledBack` Event after the
/// pass's. One write: the pass only fetches the template and sends it.
pub fn write(
    config: &SetConfig,
    rb: Rollback,
    status: Changes,
    pins: Vec<PatchOperation>,
    mut events: Vec<EventNote>,
) -> SetWrite {
    let keys = &config.keys;
    let mut annotations: Changes = [(
        keys.of(names::FAILED_REVISION).to_string(),
        Some(rb.failed.to_annotation()),
    )]
    .into_iter()
    .collect();
    annotations.extend(status.as_slice().iter().cloned());
    annotations.extend(StateKey::all().map(|k| (k.key(keys), None)));
    events.push(rb.event());
    SetWrite {
        spec: SpecWrite::RollBack(rb),
        pins,
        annotations,
        events,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::FailedRevision;
    use k8s_openapi::api::apps::v1::StatefulSet;
    use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
    use serde_json::json;

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
        let config = SetConfig::parse(&set_with(None), &Default::default());
        let rb = Rollback {
            failed,
            to: "web-6d".into(),
        };
        let w = write(&config, rb, Changes::default(), Vec::new(), Vec::new());
        assert_eq!(w.events.len(), 1, "RolledBack");
        let annotated = set_with(Some(json!({"team": "db"})));
        let got = serde_json::to_value(w.patch(&annotated, Some(&tpl)));
        assert_eq!(
            got.expect("json"),
            json!([
                {"op": "test", "path": "/metadata/resourceVersion", "value": "41"},
                {"op": "test", "path": "/metadata/generation", "value": 7},
                {"op": "test", "path": "/status/currentRevision", "value": "web-6d"},
                {"op": "test", "path": "/status/updateRevision", "value": "web-7d"},
                {"op": "replace", "path": "/spec/template", "value": tpl},
                {"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1failed-revision",
                 "value": "web-7d: FailureLimit: 3 of 3"},
            ])
        );
        assert_eq!(w.patch(&annotated, None), None, "no template, no rollback");
        // No annotations map: added whole, pinned to the resourceVersion read.
        let bare = serde_json::to_value(w.patch(&set_with(None), Some(&tpl)));
        let bare = bare.expect("json");
        assert_eq!(
            bare[5],
            json!({"op": "test", "path": "/metadata/resourceVersion", "value": "41"})
        );
        assert_eq!(
            bare[6],
            json!({"op": "add", "path": "/metadata/annotations",
                   "value": {"safe-rollout.dev/failed-revision": "web-7d: FailureLimit: 3 of 3"}})
        );
    }
}

//! The one write a pass makes on a StatefulSet ([`SetWrite`]), decided by `plan/` as typed parts — what
//! it does to the spec ([`SpecWrite`]: nothing, a step, a rollback), the `test` pins, the annotation
//! changes (each key once, [`Changes`]) and the Events announcing it — and built into its one JSON Patch
//! only when sent ([`SetWrite::patch`]). The pass fetches what a rollback needs (the ControllerRevision's
//! template) and sends; it decides nothing.
//!
//! The patch, in order: the spec's pins (a step's `partition` and `updateRevision`; a rollback's
//! `resourceVersion`, `generation` and revisions), the write's own pins, the spec's change, then one op
//! per annotation changed ([`annotation_ops`]: a missing map added only pinned to the `resourceVersion`
//! read). A write of annotations alone that changes none is no write.

use json_patch::{Patch, PatchOperation, ReplaceOperation};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};

use crate::plan::effects::Rollback;
use crate::plan::events::EventNote;
use crate::plan::patch::{annotation_ops, ptr, test};

/// Annotation changes by full key, each key once, in the order decided: `Some` sets, `None` removes. A
/// key changed again takes its new value in its first place (the API server's patch never sees one key
/// twice).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Changes(Vec<(String, Option<String>)>);

impl Changes {
    /// Sets (`Some`) or removes (`None`) `key`.
    pub fn set(&mut self, key: String, value: Option<String>) {
        match self.0.iter_mut().find(|(k, _)| *k == key) {
            Some(slot) => slot.1 = value,
            None => self.0.push((key, value)),
        }
    }

    /// The change of `key`, if any (`Some(None)`: removed).
    pub fn get(&self, key: &str) -> Option<Option<&str>> {
        (self.0.iter())
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_deref())
    }

    /// The changes, in order.
    pub fn as_slice(&self) -> &[(String, Option<String>)] {
        &self.0
    }

    /// True without a change.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Extend<(String, Option<String>)> for Changes {
    fn extend<I: IntoIterator<Item = (String, Option<String>)>>(&mut self, changes: I) {
        for (key, value) in changes {
            self.set(key, value);
        }
    }
}

impl FromIterator<(String, Option<String>)> for Changes {
    fn from_iter<I: IntoIterator<Item = (String, Option<String>)>>(changes: I) -> Self {
        let mut c = Changes::default();
        c.extend(changes);
        c
    }
}

/// What a write does to the set besides its annotations.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SpecWrite {
    /// Nothing: the status annotations alone.
    #[default]
    Annotations,
    /// The step: `.spec.updateStrategy.rollingUpdate.partition` from `from` to `to` (counts of pods),
    /// pinned to both and to `status.updateRevision` = `update_revision` as read.
    Step {
        /// The partition read.
        from: i32,
        /// The partition written.
        to: i32,
        /// `status.updateRevision` read.
        update_revision: String,
    },
    /// The rollback (`on-failure: rollback`): `.spec.template` back to the template of the
    /// ControllerRevision `Rollback::to` (fetched by the pass), pinned to the set as read: its
    /// `resourceVersion`, `generation` and both revisions.
    RollBack(Rollback),
}

/// The one write of a set a pass decides.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SetWrite {
    /// What it does to the spec.
    pub spec: SpecWrite,
    /// `test` ops the write holds on besides the spec's own: a gate's state as read, the canary plan's
    /// record (so two steppers never both count one period's check or both write one pause).
    pub pins: Vec<PatchOperation>,
    /// The annotation changes.
    pub annotations: Changes,
    /// The Events to publish once it is written, in order.
    pub events: Vec<EventNote>,
}

impl SetWrite {
    /// True for a step.
    pub fn is_step(&self) -> bool {
        matches!(self.spec, SpecWrite::Step { .. })
    }

    /// The rollback it writes, if it is one.
    pub fn rollback(&self) -> Option<&Rollback> {
        match &self.spec {
            SpecWrite::RollBack(rb) => Some(rb),
            _ => None,
        }
    }

    /// True when it writes anything on `set` (as read): a spec change, or an annotation op.
    pub fn writes(&self, set: &StatefulSet) -> bool {
        self.spec != SpecWrite::Annotations
            || !annotation_ops(&set.metadata, self.annotations.as_slice()).is_empty()
    }

    /// Its JSON Patch on `set` (as read), `template` the rollback's (the ControllerRevision's
    /// `data.spec.template`, [`crate::plan::rollback::template_of`]); `None` when it writes nothing, and
    /// for a rollback without its template.
    pub fn patch(&self, set: &StatefulSet, template: Option<&Value>) -> Option<Patch> {
        let annotations = annotation_ops(&set.metadata, self.annotations.as_slice());
        let (spec_pins, spec_op) = match &self.spec {
            SpecWrite::Annotations if annotations.is_empty() => return None,
            SpecWrite::Annotations => (Vec::new(), None),
            SpecWrite::Step {
                from,
                to,
                update_revision,
            } => {
                let partition = ptr(&["spec", "updateStrategy", "rollingUpdate", "partition"]);
                (
                    vec![
                        test(partition.clone(), json!(from)),
                        test(ptr(&["status", "updateRevision"]), json!(update_revision)),
                    ],
                    Some(PatchOperation::Replace(ReplaceOperation {
                        path: partition,
                        value: json!(to),
                    })),
                )
            }
            SpecWrite::RollBack(_) => (
                rollback_pins(set),
                Some(PatchOperation::Replace(ReplaceOperation {
                    path: ptr(&["spec", "template"]),
                    value: template?.clone(),
                })),
            ),
        };
        let mut ops = spec_pins;
        ops.extend(self.pins.iter().cloned());
        ops.extend(spec_op);
        ops.extend(annotations);
        Some(Patch(ops))
    }
}

/// The pins of a rollback's patch on `set` as read ([`SpecWrite::RollBack`]; `plan::rollback`): `test`
/// `/metadata/resourceVersion` (when read: a person's pause or resume since the read — an annotation,
/// no new generation — makes it fail, and the next pass decides on what they did), then
/// `/metadata/generation`, `/status/currentRevision` and `/status/updateRevision` as read (a field the
/// set lacked pinned to `null`): a rollback never writes over a newer apply. The revisions change only
/// once the controller has synced a new template; the generation at once, on any change of `.spec` — an
/// apply since the read fails the patch (HTTP 422, nothing written).
fn rollback_pins(set: &StatefulSet) -> Vec<PatchOperation> {
    let status = set.status.as_ref();
    let current = status.and_then(|s| s.current_revision.as_deref());
    let update = status.and_then(|s| s.update_revision.as_deref());
    let mut pins = Vec::with_capacity(4);
    if let Some(rv) = &set.metadata.resource_version {
        pins.push(test(ptr(&["metadata", "resourceVersion"]), json!(rv)));
    }
    pins.extend([
        test(
            ptr(&["metadata", "generation"]),
            json!(set.metadata.generation),
        ),
        test(ptr(&["status", "currentRevision"]), json!(current)),
        test(ptr(&["status", "updateRevision"]), json!(update)),
    ]);
    pins
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_changed_once_in_its_first_place() {
        let mut c = Changes::default();
        c.set("a".into(), Some("1".into()));
        c.set("b".into(), None);
        c.set("a".into(), None);
        assert_eq!(
            c.as_slice(),
            [("a".to_string(), None), ("b".to_string(), None)]
        );
        assert_eq!(c.get("a"), Some(None));
        assert_eq!(c.get("c"), None);
    }

    fn set_with(annotations: serde_json::Value) -> StatefulSet {
        serde_json::from_value(json!({
            "metadata": {"name": "web", "resourceVersion": "7", "annotations": annotations},
            "status": {"updateRevision": "web-b"}
        }))
        .expect("set")
    }

    #[test]
    fn annotations_alone_that_change_nothing_are_no_write() {
        let set = set_with(json!({"p/x": "1"}));
        let mut w = SetWrite::default();
        w.annotations.set("p/y".into(), None);
        assert!(!w.writes(&set));
        assert_eq!(w.patch(&set, None), None);
        w.annotations.set("p/x".into(), None);
        assert!(w.writes(&set));
        let patch = serde_json::to_value(w.patch(&set, None)).expect("json");
        assert_eq!(
            patch,
            json!([{"op": "remove", "path": "/metadata/annotations/p~1x"}])
        );
    }

    #[test]
    fn a_step_is_pinned_then_written_then_annotated() {
        let set = set_with(json!({}));
        let w = SetWrite {
            spec: SpecWrite::Step {
                from: 3,
                to: 2,
                update_revision: "web-b".into(),
            },
            pins: vec![test(ptr(&["metadata", "annotations", "p/z"]), json!("0"))],
            annotations: [("p/x".to_string(), Some("1".to_string()))]
                .into_iter()
                .collect(),
            events: Vec::new(),
        };
        let path = "/spec/updateStrategy/rollingUpdate/partition";
        assert_eq!(
            serde_json::to_value(w.patch(&set, None)).expect("json"),
            json!([
                {"op": "test", "path": path, "value": 3},
                {"op": "test", "path": "/status/updateRevision", "value": "web-b"},
                {"op": "test", "path": "/metadata/annotations/p~1z", "value": "0"},
                {"op": "replace", "path": path, "value": 2},
                {"op": "add", "path": "/metadata/annotations/p~1x", "value": "1"},
            ])
        );
    }
}

//! The policy's decision table (DESIGN.md, "The policy: decision table") as a pure function.
//!
//! Reading is typed (k8s-openapi's `StatefulSet`); writing edits the request's raw JSON object, so the
//! mutated object differs from the request's in the partition (and the `initialized` stamp) only, and no
//! field unknown to k8s-openapi is lost.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Map, Value};

use crate::annotations;
use crate::request::AdmissionRequest;
use crate::statefulset as sts;

/// Which row of the decision table applied. Stable names, used in logs and tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Row {
    /// Not an `apps/v1 StatefulSet`: a mis-scoped policy must not break the cluster.
    NotAStatefulSet,
    /// A subresource (`status`, `scale`): never carries a template change.
    Subresource,
    /// DELETE or CONNECT.
    NotCreateOrUpdate,
    /// Annotated `<prefix>/force-rolling-update: "true"`: partition removed (native rolling update).
    Forced,
    /// `updateStrategy.type: OnDelete`: nothing to stage.
    OnDelete,
    /// CREATE of a guarded set: partition = `spec.replicas`.
    StagedOnCreate,
    /// `.spec` changed on a set none of whose pods ever became Ready: partition removed, so a broken first
    /// deployment is fixed by a plain re-apply.
    NotInitialized,
    /// `.spec` changed on an initialized set: partition = new `spec.replicas` (and the `initialized` stamp
    /// when the old object was fully Ready).
    StagedOnUpdate,
    /// Only the partition changed, and it was raised.
    PartitionRaised,
    /// Only the partition changed, lowered by a request that also changes `<prefix>/last-partition-update`
    /// (the stepper's step, or `sts-stepper step`).
    Stepped,
    /// Only the partition changed, lowered on a set that was never initialized.
    LoweredBeforeInitialized,
    /// Only the partition changed, lowered without the step stamp on an initialized set (a GitOps or
    /// `kubectl apply` re-apply of `partition: 0`, a hand edit): the old partition is restored.
    PartitionRestored,
    /// Neither `.spec` nor the partition changed (metadata-only update).
    MetadataOnly,
}

/// What to do with the object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Leave the object as it is.
    None,
    /// Set `.spec.updateStrategy.rollingUpdate.partition` to this count of pods; optionally also stamp
    /// `<prefix>/initialized: "true"`.
    SetPartition {
        /// The new partition (an ordinal: pods with ordinal ≥ partition get `updateRevision`).
        partition: i32,
        /// Also add the `<prefix>/initialized: "true"` annotation.
        stamp_initialized: bool,
    },
    /// Remove `.spec.updateStrategy.rollingUpdate.partition`.
    RemovePartition,
}

/// The decision for one admission request: the table row and the change it calls for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The row of the decision table that applied.
    pub row: Row,
    /// The change to make to `request.object`.
    pub change: Change,
}

impl Decision {
    fn unchanged(row: Row) -> Self {
        Decision {
            row,
            change: Change::None,
        }
    }
}

/// The answer to an admission request, before it is encoded for Kubewarden.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Accept the object unchanged.
    Accept(Row),
    /// Accept with this mutated object (differs from `request.object`).
    Mutate(Row, Value),
    /// Reject with this message, which names the offending field.
    Reject(String),
}

/// Decides one admission request: parses what it needs, applies the table, and returns the mutated object
/// only when it differs from `request.object`. Never panics.
///
/// `prefix` is the annotation prefix (settings `annotationPrefix`). `dryRun` does not change the answer.
pub fn evaluate(request: AdmissionRequest, prefix: &str) -> Verdict {
    if !request.is_statefulset_main_resource() {
        let row = if request.sub_resource.as_deref().unwrap_or("").is_empty() {
            Row::NotAStatefulSet
        } else {
            Row::Subresource
        };
        return Verdict::Accept(row);
    }
    let operation = match request.operation.as_deref() {
        Some("CREATE") => Operation::Create,
        Some("UPDATE") => Operation::Update,
        _ => return Verdict::Accept(Row::NotCreateOrUpdate),
    };
    let Some(mut object) = request.object else {
        return Verdict::Reject("request.object: required for CREATE and UPDATE, got null".into());
    };
    let new = match parse_statefulset(&object, "request.object") {
        Ok(s) => s,
        Err(e) => return Verdict::Reject(e),
    };
    let old = match (operation, request.old_object.as_ref()) {
        (Operation::Create, _) => None,
        (Operation::Update, None) => {
            return Verdict::Reject("request.oldObject: required for UPDATE, got null".into());
        }
        (Operation::Update, Some(raw)) => match parse_statefulset(raw, "request.oldObject") {
            Ok(s) => Some((s, raw)),
            Err(e) => return Verdict::Reject(e),
        },
    };
    let old_ref = old.as_ref().map(|(s, raw)| (s, *raw));
    let decision = match decide(&new, &object, old_ref, prefix) {
        Ok(d) => d,
        Err(e) => return Verdict::Reject(e),
    };
    if apply(&decision.change, &mut object, prefix) {
        Verdict::Mutate(decision.row, object)
    } else {
        Verdict::Accept(decision.row)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Operation {
    Create,
    Update,
}

fn parse_statefulset(raw: &Value, field: &str) -> Result<StatefulSet, String> {
    if !raw.is_object() {
        return Err(format!(
            "{field}: expected a StatefulSet object, got {}",
            json_type(raw)
        ));
    }
    match raw.get("metadata") {
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(format!(
                "{field}.metadata: expected an object with name and namespace, got {}",
                json_type(other)
            ));
        }
        None => return Err(format!("{field}.metadata: required, got nothing")),
    }
    serde_path_to_error::deserialize(&decision_view(raw)).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("{field}: {}", e.inner())
        } else {
            format!("{field}.{path}: {}", e.inner())
        }
    })
}

/// The parts of a raw StatefulSet the decision reads: `metadata` without `managedFields`, `spec` with an
/// empty `template` and no `volumeClaimTemplates`, and `status`. The bulky parts are never read, so the
/// typed parse skips them (they are most of the object: the admission path stays cheap). Field paths in
/// parse errors are unchanged.
fn decision_view(raw: &Value) -> Value {
    let Value::Object(object) = raw else {
        return raw.clone();
    };
    let without = |map: &Map<String, Value>, skip: &[&str]| -> Map<String, Value> {
        map.iter()
            .filter(|(k, _)| !skip.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    };
    let mut view = Map::new();
    for (key, value) in object {
        let slim = match (key.as_str(), value) {
            ("metadata", Value::Object(meta)) => Value::Object(without(meta, &["managedFields"])),
            ("spec", Value::Object(spec)) => {
                let mut spec = without(spec, &["template", "volumeClaimTemplates"]);
                spec.insert("template".into(), Value::Object(Map::new()));
                Value::Object(spec)
            }
            ("metadata" | "spec" | "status", other) => other.clone(),
            _ => continue,
        };
        view.insert(key.clone(), slim);
    }
    Value::Object(view)
}

/// "an array", "a string", … for messages.
pub(crate) fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The decision table for an apps/v1 StatefulSet CREATE (`old` is `None`) or UPDATE (`old` is the stored
/// object, typed and raw). `new_raw`/`old_raw` are the raw objects, used only to compare `.spec` without
/// the partition.
///
/// # Errors
/// Values the API server's validation refuses anyway (negative `spec.replicas` or partition) are refused
/// with the API server's wording, naming the field.
pub fn decide(
    new: &StatefulSet,
    new_raw: &Value,
    old: Option<(&StatefulSet, &Value)>,
    prefix: &str,
) -> Result<Decision, String> {
    // Forced comes first: a person asked for the native, ungated rolling update.
    if sts::is_forced(new, prefix) {
        let change = if sts::partition(new).is_some() {
            Change::RemovePartition
        } else {
            Change::None
        };
        return Ok(Decision {
            row: Row::Forced,
            change,
        });
    }
    if !sts::is_rolling_update(new) {
        return Ok(Decision::unchanged(Row::OnDelete));
    }
    let replicas = sts::replicas(new);
    if replicas < 0 {
        return Err(format!(
            "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
        ));
    }
    let new_partition = sts::partition(new);
    if let Some(p) = new_partition.filter(|p| *p < 0) {
        return Err(format!(
            "spec.updateStrategy.rollingUpdate.partition: Invalid value: {p}: must be greater than or equal to 0"
        ));
    }
    let Some((old, old_raw)) = old else {
        return Ok(Decision {
            row: Row::StagedOnCreate,
            change: Change::SetPartition {
                partition: replicas,
                stamp_initialized: false,
            },
        });
    };

    let initialized = sts::is_initialized(old, prefix);
    if !spec_equal_ignoring_partition(new_raw.get("spec"), old_raw.get("spec")) {
        if !initialized {
            return Ok(Decision {
                row: Row::NotInitialized,
                change: Change::RemovePartition,
            });
        }
        // A set scaled to 0 is trivially "fully Ready" but no pod of it ever was: not initialized.
        let stamp_initialized = sts::replicas(old) > 0
            && sts::is_fully_ready(old)
            && !sts::is_annotation_true(new, prefix, annotations::INITIALIZED);
        return Ok(Decision {
            row: Row::StagedOnUpdate,
            change: Change::SetPartition {
                partition: replicas,
                stamp_initialized,
            },
        });
    }

    let old_partition = sts::partition(old).unwrap_or(0);
    let new_partition = new_partition.unwrap_or(0);
    if new_partition == old_partition {
        return Ok(Decision::unchanged(Row::MetadataOnly));
    }
    if new_partition > old_partition {
        return Ok(Decision::unchanged(Row::PartitionRaised));
    }
    if is_step_stamp_changed(new, old, prefix) {
        return Ok(Decision::unchanged(Row::Stepped));
    }
    if !initialized {
        return Ok(Decision::unchanged(Row::LoweredBeforeInitialized));
    }
    Ok(Decision {
        row: Row::PartitionRestored,
        change: Change::SetPartition {
            partition: old_partition,
            stamp_initialized: false,
        },
    })
}

/// True when the request sets `<prefix>/last-partition-update` to a value other than the stored one (the
/// mark of a step; removing the annotation does not count).
fn is_step_stamp_changed(new: &StatefulSet, old: &StatefulSet, prefix: &str) -> bool {
    let key = annotations::LAST_PARTITION_UPDATE;
    match sts::annotation(new, prefix, key) {
        Some(value) => sts::annotation(old, prefix, key) != Some(value),
        None => false,
    }
}

const PARTITION_PATH: [&str; 3] = ["updateStrategy", "rollingUpdate", "partition"];

/// True when two raw `.spec` values are equal once `updateStrategy.rollingUpdate.partition` is ignored in
/// both; an absent `updateStrategy` or `rollingUpdate` counts as an empty object. Compares in place,
/// without cloning the pod template.
pub fn spec_equal_ignoring_partition(a: Option<&Value>, b: Option<&Value>) -> bool {
    equal_ignoring(a, b, &PARTITION_PATH)
}

static EMPTY_MAP: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);

/// A JSON object view of `v`: absent and `null` are the empty object; `None` for any other non-object.
fn as_map(v: Option<&Value>) -> Option<&Map<String, Value>> {
    match v {
        None | Some(Value::Null) => Some(&EMPTY_MAP),
        Some(Value::Object(m)) => Some(m),
        Some(_) => None,
    }
}

fn equal_ignoring(a: Option<&Value>, b: Option<&Value>, path: &[&str]) -> bool {
    let Some((head, rest)) = path.split_first() else {
        return a == b;
    };
    let (Some(ma), Some(mb)) = (as_map(a), as_map(b)) else {
        return a == b;
    };
    let keys_equal = ma
        .iter()
        .filter(|(k, _)| k.as_str() != *head)
        .all(|(k, v)| mb.get(k) == Some(v))
        && mb
            .keys()
            .filter(|k| k.as_str() != *head)
            .all(|k| ma.contains_key(k));
    if !keys_equal {
        return false;
    }
    if rest.is_empty() {
        true
    } else {
        equal_ignoring(ma.get(*head), mb.get(*head), rest)
    }
}

/// Applies `change` to the raw object. Returns true when the object changed (so an unchanged object is
/// never sent back as a mutation). Creates `spec.updateStrategy.rollingUpdate` or `metadata.annotations`
/// when absent; touches nothing else.
pub fn apply(change: &Change, object: &mut Value, prefix: &str) -> bool {
    match change {
        Change::None => false,
        Change::RemovePartition => {
            let rolling = object
                .get_mut("spec")
                .and_then(|s| s.get_mut("updateStrategy"))
                .and_then(|u| u.get_mut("rollingUpdate"))
                .and_then(Value::as_object_mut);
            rolling.is_some_and(|r| r.remove("partition").is_some())
        }
        Change::SetPartition {
            partition,
            stamp_initialized,
        } => {
            let mut changed = false;
            if let Some(slot) = object_path(object, &["spec", "updateStrategy", "rollingUpdate"]) {
                let new = Value::from(*partition);
                if slot.get("partition") != Some(&new) {
                    slot.insert("partition".into(), new);
                    changed = true;
                }
            }
            if *stamp_initialized {
                let key = annotations::key(prefix, annotations::INITIALIZED);
                if let Some(ann) = object_path(object, &["metadata", "annotations"])
                    && ann.get(&key).and_then(Value::as_str) != Some(annotations::TRUE)
                {
                    ann.insert(key, Value::from(annotations::TRUE));
                    changed = true;
                }
            }
            changed
        }
    }
}

/// The object at `path`, creating empty objects for absent or `null` steps. `None` when a step exists but
/// is not an object (the typed parse refuses such input before this is reached).
fn object_path<'a>(root: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut cur = root;
    for step in path {
        let map = cur.as_object_mut()?;
        let next = map
            .entry(step.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        if next.is_null() {
            *next = Value::Object(Map::new());
        }
        cur = next;
    }
    cur.as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    const P: &str = "safe-rollout.dev";

    /// A StatefulSet object as the API server sends it, with the given parts.
    fn object(
        replicas: Option<i32>,
        partition: Option<i32>,
        image: &str,
        annotations: Value,
    ) -> Value {
        let mut spec = json!({
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                         "spec": {"containers": [{"name": "nginx", "image": image}]}},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {}},
            "x-unknown-field": {"kept": true},
        });
        if let Some(r) = replicas {
            spec["replicas"] = json!(r);
        }
        if let Some(p) = partition {
            spec["updateStrategy"]["rollingUpdate"]["partition"] = json!(p);
        }
        json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
               "metadata": {"name": "web", "namespace": "demo", "generation": 4, "annotations": annotations},
               "spec": spec})
    }

    fn with_status(mut o: Value, ready: i32, observed: i64) -> Value {
        o["status"] = json!({"replicas": 3, "readyReplicas": ready, "availableReplicas": ready,
            "observedGeneration": observed, "currentRevision": "a", "updateRevision": "a", "updatedReplicas": 3});
        o
    }

    fn request(op: &str, object: Option<Value>, old: Option<Value>) -> AdmissionRequest {
        let payload = json!({"request": {
            "uid": "u", "operation": op,
            "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"},
            "object": object, "oldObject": old}});
        crate::request::parse_payload(payload.to_string().as_bytes())
            .unwrap()
            .request
    }

    fn patch_of(req: AdmissionRequest) -> (Option<Row>, Value) {
        let before = req.object.clone().unwrap_or(Value::Null);
        match evaluate(req, P) {
            Verdict::Accept(row) => (Some(row), json!([])),
            Verdict::Mutate(row, after) => (
                Some(row),
                serde_json::to_value(json_patch::diff(&before, &after)).unwrap(),
            ),
            Verdict::Reject(m) => (None, json!(m)),
        }
    }

    fn replace_partition(p: i32) -> Value {
        json!({"op": "replace", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": p})
    }
    fn add_partition(p: i32) -> Value {
        json!({"op": "add", "path": "/spec/updateStrategy/rollingUpdate/partition", "value": p})
    }
    fn remove_partition() -> Value {
        json!({"op": "remove", "path": "/spec/updateStrategy/rollingUpdate/partition"})
    }
    fn stamp() -> Value {
        json!({"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1initialized", "value": "true"})
    }

    fn ann(pairs: &[(&str, &str)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), json!(v)))
                .collect(),
        )
    }

    const FORCE: (&str, &str) = ("safe-rollout.dev/force-rolling-update", "true");
    const INIT: (&str, &str) = ("safe-rollout.dev/initialized", "true");
    const STAMP1: (&str, &str) = (
        "safe-rollout.dev/last-partition-update",
        "2026-11-23T00:00:00Z",
    );
    const STAMP2: (&str, &str) = (
        "safe-rollout.dev/last-partition-update",
        "2026-11-23T00:05:00Z",
    );

    #[rstest]
    // CREATE
    #[case::create_sets_partition_to_replicas(
        request("CREATE", Some(object(Some(3), Some(0), "v1", json!({}))), None),
        Some(Row::StagedOnCreate), json!([replace_partition(3)]))]
    #[case::create_without_replicas_uses_1(
        request("CREATE", Some(object(None, None, "v1", json!({}))), None),
        Some(Row::StagedOnCreate), json!([add_partition(1)]))]
    #[case::create_with_partition_already_replicas_is_unchanged(
        request("CREATE", Some(object(Some(3), Some(3), "v1", json!({}))), None),
        Some(Row::StagedOnCreate), json!([]))]
    #[case::create_with_partition_above_replicas_is_lowered_to_replicas(
        request("CREATE", Some(object(Some(3), Some(7), "v1", json!({}))), None),
        Some(Row::StagedOnCreate), json!([replace_partition(3)]))]
    #[case::create_twelve_replicas(
        request("CREATE", Some(object(Some(12), Some(0), "v1", json!({}))), None),
        Some(Row::StagedOnCreate), json!([replace_partition(12)]))]
    #[case::create_zero_replicas(
        request("CREATE", Some(object(Some(0), Some(0), "v1", json!({}))), None),
        Some(Row::StagedOnCreate), json!([]))]
    #[case::create_forced_strips_partition(
        request("CREATE", Some(object(Some(3), Some(2), "v1", ann(&[FORCE]))), None),
        Some(Row::Forced), json!([remove_partition()]))]
    #[case::create_forced_without_partition_is_unchanged(
        request("CREATE", Some(object(Some(3), None, "v1", ann(&[FORCE]))), None),
        Some(Row::Forced), json!([]))]
    #[case::create_force_value_other_than_true_is_guarded(
        request("CREATE", Some(object(Some(3), Some(0), "v1", ann(&[("safe-rollout.dev/force-rolling-update", "True")]))), None),
        Some(Row::StagedOnCreate), json!([replace_partition(3)]))]
    #[case::create_force_of_another_prefix_is_guarded(
        request("CREATE", Some(object(Some(3), Some(0), "v1", ann(&[("moco.cybozu.com/force-rolling-update", "true")]))), None),
        Some(Row::StagedOnCreate), json!([replace_partition(3)]))]
    // UPDATE, template changed
    #[case::update_initialized_stages_and_stamps(
        request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(3), Some(0), "v1", json!({})), 3, 4))),
        Some(Row::StagedOnUpdate), json!([stamp(), replace_partition(3)]))]
    #[case::update_not_fully_ready_stages_without_stamp(
        request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(3), Some(0), "v1", json!({})), 2, 4))),
        Some(Row::StagedOnUpdate), json!([replace_partition(3)]))]
    #[case::update_stale_observed_generation_stages_without_stamp(
        request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(3), Some(0), "v1", json!({})), 3, 3))),
        Some(Row::StagedOnUpdate), json!([replace_partition(3)]))]
    #[case::update_already_stamped_only_sets_partition(
        request("UPDATE", Some(object(Some(3), Some(0), "v2", ann(&[INIT]))), Some(with_status(object(Some(3), Some(0), "v1", ann(&[INIT])), 3, 4))),
        Some(Row::StagedOnUpdate), json!([replace_partition(3)]))]
    #[case::update_partition_equal_replicas_only_stamps(
        request("UPDATE", Some(object(Some(3), Some(3), "v2", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::StagedOnUpdate), json!([stamp()]))]
    #[case::update_initialized_by_annotation_without_ready_pods(
        request("UPDATE", Some(object(Some(3), Some(0), "v2", ann(&[INIT]))), Some(with_status(object(Some(3), Some(0), "v1", ann(&[INIT])), 0, 4))),
        Some(Row::StagedOnUpdate), json!([replace_partition(3)]))]
    #[case::update_scale_in_spec_stages_at_new_replicas(
        request("UPDATE", Some(object(Some(5), Some(3), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::StagedOnUpdate), json!([stamp(), replace_partition(5)]))]
    #[case::update_mid_rollout_template_change_resets_partition(
        request("UPDATE", Some(object(Some(3), Some(1), "v3", ann(&[INIT]))), Some(with_status(object(Some(3), Some(1), "v2", ann(&[INIT])), 3, 4))),
        Some(Row::StagedOnUpdate), json!([replace_partition(3)]))]
    #[case::update_from_zero_replicas_is_not_stamped(
        request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(0), Some(0), "v1", json!({})), 1, 4))),
        Some(Row::StagedOnUpdate), json!([replace_partition(3)]))]
    #[case::update_twelve_replicas(
        request("UPDATE", Some(object(Some(12), Some(0), "v2", ann(&[INIT]))), Some(with_status(object(Some(12), Some(0), "v1", ann(&[INIT])), 12, 4))),
        Some(Row::StagedOnUpdate), json!([replace_partition(12)]))]
    #[case::update_not_initialized_removes_partition(
        request("UPDATE", Some(object(Some(3), Some(3), "v2", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 0, 4))),
        Some(Row::NotInitialized), json!([remove_partition()]))]
    #[case::update_not_initialized_no_status_without_partition(
        request("UPDATE", Some(object(Some(3), None, "v2", json!({}))), Some(object(Some(3), None, "v1", json!({})))),
        Some(Row::NotInitialized), json!([]))]
    #[case::update_forced_strips_partition(
        request("UPDATE", Some(object(Some(3), Some(3), "v2", ann(&[FORCE]))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::Forced), json!([remove_partition()]))]
    // UPDATE, only the partition changed
    #[case::partition_raised_is_accepted(
        request("UPDATE", Some(object(Some(3), Some(3), "v1", json!({}))), Some(with_status(object(Some(3), Some(2), "v1", json!({})), 3, 4))),
        Some(Row::PartitionRaised), json!([]))]
    #[case::partition_raised_above_replicas_is_accepted(
        request("UPDATE", Some(object(Some(3), Some(9), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::PartitionRaised), json!([]))]
    #[case::partition_lowered_with_new_stamp_is_a_step(
        request("UPDATE", Some(object(Some(3), Some(2), "v1", ann(&[STAMP2]))), Some(with_status(object(Some(3), Some(3), "v1", ann(&[STAMP1])), 3, 4))),
        Some(Row::Stepped), json!([]))]
    #[case::partition_lowered_with_first_stamp_is_a_step(
        request("UPDATE", Some(object(Some(3), Some(2), "v1", ann(&[STAMP1]))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::Stepped), json!([]))]
    #[case::partition_lowered_with_unchanged_stamp_is_restored(
        request("UPDATE", Some(object(Some(3), Some(0), "v1", ann(&[STAMP1]))), Some(with_status(object(Some(3), Some(3), "v1", ann(&[STAMP1])), 3, 4))),
        Some(Row::PartitionRestored), json!([replace_partition(3)]))]
    #[case::partition_lowered_with_stamp_removed_is_restored(
        request("UPDATE", Some(object(Some(3), Some(0), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", ann(&[STAMP1])), 3, 4))),
        Some(Row::PartitionRestored), json!([replace_partition(3)]))]
    #[case::partition_removed_is_restored(
        request("UPDATE", Some(object(Some(3), None, "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::PartitionRestored), json!([add_partition(3)]))]
    #[case::partition_lowered_while_a_pod_is_not_ready_is_restored(
        request("UPDATE", Some(object(Some(3), Some(2), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 2, 4))),
        Some(Row::PartitionRestored), json!([replace_partition(3)]))]
    #[case::partition_lowered_on_never_ready_set_is_accepted(
        request("UPDATE", Some(object(Some(3), Some(0), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 0, 4))),
        Some(Row::LoweredBeforeInitialized), json!([]))]
    #[case::partition_lowered_on_forced_set_is_accepted_as_forced(
        request("UPDATE", Some(object(Some(3), Some(0), "v1", ann(&[FORCE]))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::Forced), json!([remove_partition()]))]
    #[case::metadata_only(
        request("UPDATE", Some(object(Some(3), Some(3), "v1", ann(&[("example.com/owner", "a")]))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
        Some(Row::MetadataOnly), json!([]))]
    // OnDelete, out of scope
    #[case::on_delete_create(
        request("CREATE", Some(json!({"metadata": {"name": "w"}, "spec": {"selector": {}, "template": {}, "updateStrategy": {"type": "OnDelete"}}})), None),
        Some(Row::OnDelete), json!([]))]
    #[case::delete(
        request("DELETE", None, Some(object(Some(3), Some(3), "v1", json!({})))),
        Some(Row::NotCreateOrUpdate), json!([]))]
    #[case::connect(
        request("CONNECT", Some(object(Some(3), Some(0), "v1", json!({}))), None),
        Some(Row::NotCreateOrUpdate), json!([]))]
    fn decision_table(
        #[case] req: AdmissionRequest,
        #[case] row: Option<Row>,
        #[case] patch: Value,
    ) {
        assert_eq!(patch_of(req), (row, patch));
    }

    #[rstest]
    #[case::negative_partition(
        request("UPDATE", Some(object(Some(3), Some(-1), "v1", json!({}))), Some(with_status(object(Some(3), Some(5), "v1", json!({})), 3, 4))),
        "spec.updateStrategy.rollingUpdate.partition: Invalid value: -1")]
    #[case::negative_replicas(
        request("CREATE", Some(object(Some(-2), Some(0), "v1", json!({}))), None),
        "spec.replicas: Invalid value: -2")]
    #[case::replicas_as_string(
        request("CREATE", Some(json!({"metadata": {"name": "w"}, "spec": {"replicas": "3", "selector": {}, "template": {}}})), None),
        "request.object.spec.replicas: invalid type: string \"3\"")]
    #[case::metadata_null(
        request("CREATE", Some(json!({"metadata": null, "spec": {"selector": {}, "template": {}}})), None),
        "request.object.metadata: expected an object with name and namespace, got null")]
    #[case::object_is_an_array(
        request("CREATE", Some(json!([1, 2])), None),
        "request.object: expected a StatefulSet object, got an array")]
    #[case::object_missing(
        request("CREATE", None, None),
        "request.object: required for CREATE and UPDATE, got null"
    )]
    #[case::old_object_missing_on_update(
        request("UPDATE", Some(object(Some(3), Some(0), "v1", json!({}))), None),
        "request.oldObject: required for UPDATE, got null")]
    #[case::old_object_malformed(
        request("UPDATE", Some(object(Some(3), Some(0), "v1", json!({}))), Some(json!({"metadata": {"annotations": {"a": 1}}}))),
        "request.oldObject.metadata.annotations.a: invalid type: integer")]
    #[case::annotation_value_not_a_string(
        request("CREATE", Some(object(Some(3), Some(0), "v1", json!({"x": true}))), None),
        "request.object.metadata.annotations.x: invalid type: boolean")]
    fn malformed_requests_are_rejected_naming_the_field(
        #[case] req: AdmissionRequest,
        #[case] needle: &str,
    ) {
        match evaluate(req, P) {
            Verdict::Reject(m) => assert!(
                m.starts_with(needle),
                "{m:?} does not start with {needle:?}"
            ),
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[test]
    fn other_kinds_and_subresources_pass_unchanged() {
        let pod = json!({"request": {"operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "object": {"metadata": null}}});
        let req = crate::request::parse_payload(pod.to_string().as_bytes())
            .unwrap()
            .request;
        assert_eq!(evaluate(req, P), Verdict::Accept(Row::NotAStatefulSet));
        let scale = json!({"request": {"operation": "UPDATE", "subResource": "scale",
            "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "object": {"spec": {"replicas": 5}}}});
        let req = crate::request::parse_payload(scale.to_string().as_bytes())
            .unwrap()
            .request;
        assert_eq!(evaluate(req, P), Verdict::Accept(Row::Subresource));
        let status = json!({"request": {"operation": "UPDATE", "subResource": "status",
            "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"}, "object": [1]}});
        let req = crate::request::parse_payload(status.to_string().as_bytes())
            .unwrap()
            .request;
        assert_eq!(evaluate(req, P), Verdict::Accept(Row::Subresource));
    }

    #[test]
    fn the_prefix_setting_selects_the_annotations() {
        let o = object(
            Some(3),
            Some(2),
            "v1",
            ann(&[("moco.cybozu.com/force-rolling-update", "true")]),
        );
        let req = request("CREATE", Some(o), None);
        let Verdict::Mutate(row, after) = evaluate(req, "moco.cybozu.com") else {
            panic!("must mutate")
        };
        assert_eq!(row, Row::Forced);
        assert!(
            after["spec"]["updateStrategy"]["rollingUpdate"]
                .get("partition")
                .is_none()
        );
    }

    #[test]
    fn dry_run_gets_the_same_answer() {
        let o = object(Some(3), Some(0), "v1", json!({}));
        let mut dry = request("CREATE", Some(o.clone()), None);
        dry.dry_run = Some(true);
        assert_eq!(
            evaluate(dry, P),
            evaluate(request("CREATE", Some(o), None), P)
        );
    }

    #[test]
    fn mutation_keeps_unknown_fields_and_touches_only_the_partition() {
        let o = object(Some(3), Some(0), "v1", json!({}));
        let Verdict::Mutate(_, after) = evaluate(request("CREATE", Some(o.clone()), None), P)
        else {
            panic!()
        };
        assert_eq!(after["spec"]["x-unknown-field"], json!({"kept": true}));
        let mut expected = o;
        expected["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
        assert_eq!(after, expected);
    }

    #[test]
    fn missing_update_strategy_and_annotations_are_created() {
        let o = json!({"metadata": {"name": "w", "generation": 1}, "spec": {"replicas": 2, "selector": {}, "template": {"spec": {"containers": []}}}});
        let mut old = o.clone();
        old["spec"]["template"]["spec"]["hostname"] = json!("x");
        old["status"] = json!({"replicas": 2, "readyReplicas": 2, "observedGeneration": 1});
        let Verdict::Mutate(row, after) = evaluate(request("UPDATE", Some(o), Some(old)), P) else {
            panic!()
        };
        assert_eq!(row, Row::StagedOnUpdate);
        assert_eq!(
            after["spec"]["updateStrategy"],
            json!({"rollingUpdate": {"partition": 2}})
        );
        assert_eq!(
            after["metadata"]["annotations"],
            json!({"safe-rollout.dev/initialized": "true"})
        );
    }

    #[rstest]
    #[case::identical(json!({"a": 1}), json!({"a": 1}), true)]
    #[case::partition_only(json!({"updateStrategy": {"rollingUpdate": {"partition": 1}}}), json!({"updateStrategy": {"rollingUpdate": {"partition": 3}}}), true)]
    #[case::partition_vs_absent_rolling_update(json!({"updateStrategy": {"rollingUpdate": {"partition": 1}}}), json!({"updateStrategy": {}}), true)]
    #[case::partition_vs_absent_strategy(json!({"updateStrategy": {"rollingUpdate": {"partition": 1}}, "x": 1}), json!({"x": 1}), true)]
    #[case::max_unavailable_differs(json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 1}}}), json!({"updateStrategy": {"rollingUpdate": {"maxUnavailable": 2}}}), false)]
    #[case::type_differs(json!({"updateStrategy": {"type": "OnDelete"}}), json!({"updateStrategy": {"type": "RollingUpdate"}}), false)]
    #[case::template_differs(json!({"template": {"a": 1}}), json!({"template": {"a": 2}}), false)]
    #[case::extra_key(json!({"a": 1}), json!({"a": 1, "b": 2}), false)]
    #[case::missing_key(json!({"a": 1, "b": 2}), json!({"a": 1}), false)]
    #[case::strategy_not_an_object(json!({"updateStrategy": 1}), json!({"updateStrategy": {}}), false)]
    fn spec_comparison_ignores_only_the_partition(
        #[case] a: Value,
        #[case] b: Value,
        #[case] equal: bool,
    ) {
        assert_eq!(spec_equal_ignoring_partition(Some(&a), Some(&b)), equal);
        assert_eq!(
            spec_equal_ignoring_partition(Some(&b), Some(&a)),
            equal,
            "symmetric"
        );
    }
}

//! The decision table (docs/design.md, "The policy: decision table") row by row through
//! [`response::evaluate`]: each case is a request built from a template StatefulSet, its expected row and
//! the JSON Patch between the request's object and the answer's; then malformed requests and the rules
//! around the table (prefix, dryRun, untouched unknown fields).

use rstest::rstest;
use serde_json::{Value, json};
use sts_safe_rollout::decision::Row;
use sts_safe_rollout::request::AdmissionRequest;
use sts_safe_rollout::response::{Response, evaluate};

const P: &str = "safe-rollout.dev";

/// A StatefulSet object as the API server sends it, with the given parts.
fn object(replicas: Option<i32>, partition: Option<i32>, image: &str, annotations: Value) -> Value {
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
    sts_safe_rollout::request::parse_payload(payload.to_string().as_bytes())
        .unwrap()
        .request
}

fn patch_of(req: AdmissionRequest) -> (Option<Row>, Value) {
    let before = req.object.clone().unwrap_or(Value::Null);
    match evaluate(req, P) {
        Response::Accept(row) => (Some(row), json!([])),
        Response::Mutate(row, after) => (
            Some(row),
            serde_json::to_value(json_patch::diff(&before, &after)).unwrap(),
        ),
        Response::Reject(m) => (None, json!(m)),
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
/// The guarded mark, written with every partition the policy sets or restores.
fn mark() -> Value {
    json!({"op": "add", "path": "/metadata/annotations/safe-rollout.dev~1guarded", "value": "true"})
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
    Some(Row::StagedOnCreate), json!([mark(), replace_partition(3)]))]
#[case::create_without_replicas_uses_1(
    request("CREATE", Some(object(None, None, "v1", json!({}))), None),
    Some(Row::StagedOnCreate), json!([mark(), add_partition(1)]))]
#[case::create_with_partition_already_replicas_is_only_marked(
    request("CREATE", Some(object(Some(3), Some(3), "v1", json!({}))), None),
    Some(Row::StagedOnCreate), json!([mark()]))]
#[case::create_with_partition_above_replicas_is_lowered_to_replicas(
    request("CREATE", Some(object(Some(3), Some(7), "v1", json!({}))), None),
    Some(Row::StagedOnCreate), json!([mark(), replace_partition(3)]))]
#[case::create_twelve_replicas(
    request("CREATE", Some(object(Some(12), Some(0), "v1", json!({}))), None),
    Some(Row::StagedOnCreate), json!([mark(), replace_partition(12)]))]
#[case::create_zero_replicas_is_only_marked(
    request("CREATE", Some(object(Some(0), Some(0), "v1", json!({}))), None),
    Some(Row::StagedOnCreate), json!([mark()]))]
#[case::create_forced_strips_partition(
    request("CREATE", Some(object(Some(3), Some(2), "v1", ann(&[FORCE]))), None),
    Some(Row::Forced), json!([remove_partition()]))]
#[case::create_forced_without_partition_is_unchanged(
    request("CREATE", Some(object(Some(3), None, "v1", ann(&[FORCE]))), None),
    Some(Row::Forced), json!([]))]
#[case::create_force_value_other_than_true_is_guarded(
    request("CREATE", Some(object(Some(3), Some(0), "v1", ann(&[("safe-rollout.dev/force-rolling-update", "True")]))), None),
    Some(Row::StagedOnCreate), json!([mark(), replace_partition(3)]))]
#[case::create_force_of_another_prefix_is_guarded(
    request("CREATE", Some(object(Some(3), Some(0), "v1", ann(&[("moco.cybozu.com/force-rolling-update", "true")]))), None),
    Some(Row::StagedOnCreate), json!([mark(), replace_partition(3)]))]
// UPDATE, template changed
#[case::update_initialized_stages_and_stamps(
    request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(3), Some(0), "v1", json!({})), 3, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), stamp(), replace_partition(3)]))]
#[case::update_not_fully_ready_stages_without_stamp(
    request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(3), Some(0), "v1", json!({})), 2, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(3)]))]
#[case::update_stale_observed_generation_stages_without_stamp(
    request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(3), Some(0), "v1", json!({})), 3, 3))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(3)]))]
#[case::update_already_stamped_marks_and_sets_partition(
    request("UPDATE", Some(object(Some(3), Some(0), "v2", ann(&[INIT]))), Some(with_status(object(Some(3), Some(0), "v1", ann(&[INIT])), 3, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(3)]))]
#[case::update_partition_equal_replicas_only_marks_and_stamps(
    request("UPDATE", Some(object(Some(3), Some(3), "v2", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), stamp()]))]
#[case::update_initialized_by_annotation_without_ready_pods(
    request("UPDATE", Some(object(Some(3), Some(0), "v2", ann(&[INIT]))), Some(with_status(object(Some(3), Some(0), "v1", ann(&[INIT])), 0, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(3)]))]
#[case::update_scale_in_spec_stages_at_new_replicas(
    request("UPDATE", Some(object(Some(5), Some(3), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), stamp(), replace_partition(5)]))]
#[case::update_mid_rollout_template_change_resets_partition(
    request("UPDATE", Some(object(Some(3), Some(1), "v3", ann(&[INIT]))), Some(with_status(object(Some(3), Some(1), "v2", ann(&[INIT])), 3, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(3)]))]
#[case::update_from_zero_replicas_is_not_stamped(
    request("UPDATE", Some(object(Some(3), Some(0), "v2", json!({}))), Some(with_status(object(Some(0), Some(0), "v1", json!({})), 1, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(3)]))]
#[case::update_twelve_replicas(
    request("UPDATE", Some(object(Some(12), Some(0), "v2", ann(&[INIT]))), Some(with_status(object(Some(12), Some(0), "v1", ann(&[INIT])), 12, 4))),
    Some(Row::StagedOnUpdate), json!([mark(), replace_partition(12)]))]
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
    Some(Row::PartitionRestored), json!([mark(), replace_partition(3)]))]
#[case::partition_lowered_with_stamp_removed_is_restored(
    request("UPDATE", Some(object(Some(3), Some(0), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", ann(&[STAMP1])), 3, 4))),
    Some(Row::PartitionRestored), json!([mark(), replace_partition(3)]))]
#[case::partition_removed_is_restored(
    request("UPDATE", Some(object(Some(3), None, "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 3, 4))),
    Some(Row::PartitionRestored), json!([mark(), add_partition(3)]))]
#[case::partition_lowered_while_a_pod_is_not_ready_is_restored(
    request("UPDATE", Some(object(Some(3), Some(2), "v1", json!({}))), Some(with_status(object(Some(3), Some(3), "v1", json!({})), 2, 4))),
    Some(Row::PartitionRestored), json!([mark(), replace_partition(3)]))]
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
fn decision_table(#[case] req: AdmissionRequest, #[case] row: Option<Row>, #[case] patch: Value) {
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
        Response::Reject(m) => assert!(
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
    let req = sts_safe_rollout::request::parse_payload(pod.to_string().as_bytes())
        .unwrap()
        .request;
    assert_eq!(evaluate(req, P), Response::Accept(Row::NotAStatefulSet));
    let scale = json!({"request": {"operation": "UPDATE", "subResource": "scale",
        "kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"}, "object": {"spec": {"replicas": 5}}}});
    let req = sts_safe_rollout::request::parse_payload(scale.to_string().as_bytes())
        .unwrap()
        .request;
    assert_eq!(evaluate(req, P), Response::Accept(Row::Subresource));
    let status = json!({"request": {"operation": "UPDATE", "subResource": "status",
        "kind": {"group": "apps", "version": "v1", "kind": "StatefulSet"}, "object": [1]}});
    let req = sts_safe_rollout::request::parse_payload(status.to_string().as_bytes())
        .unwrap()
        .request;
    assert_eq!(evaluate(req, P), Response::Accept(Row::Subresource));
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
    let Response::Mutate(row, after) = evaluate(req, "moco.cybozu.com") else {
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
fn mutation_keeps_unknown_fields_and_touches_only_the_partition_and_the_mark() {
    let o = object(Some(3), Some(0), "v1", json!({}));
    let Response::Mutate(_, after) = evaluate(request("CREATE", Some(o.clone()), None), P) else {
        panic!()
    };
    assert_eq!(after["spec"]["x-unknown-field"], json!({"kept": true}));
    let mut expected = o;
    expected["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    expected["metadata"]["annotations"]["safe-rollout.dev/guarded"] = json!("true");
    assert_eq!(after, expected);
}

#[test]
fn missing_update_strategy_and_annotations_are_created() {
    let o = json!({"metadata": {"name": "w", "generation": 1}, "spec": {"replicas": 2, "selector": {}, "template": {"spec": {"containers": []}}}});
    let mut old = o.clone();
    old["spec"]["template"]["spec"]["hostname"] = json!("x");
    old["status"] = json!({"replicas": 2, "readyReplicas": 2, "observedGeneration": 1});
    let Response::Mutate(row, after) = evaluate(request("UPDATE", Some(o), Some(old)), P) else {
        panic!()
    };
    assert_eq!(row, Row::StagedOnUpdate);
    assert_eq!(
        after["spec"]["updateStrategy"],
        json!({"rollingUpdate": {"partition": 2}})
    );
    assert_eq!(
        after["metadata"]["annotations"],
        json!({"safe-rollout.dev/guarded": "true", "safe-rollout.dev/initialized": "true"})
    );
}

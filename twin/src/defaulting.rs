//! API server defaulting of a StatefulSet's update strategy, the part the decision table reads and writes.
//!
//! Kubernetes `pkg/apis/apps/v1/defaults.go`, `SetDefaults_StatefulSet`: an empty `updateStrategy.type`
//! becomes `RollingUpdate` and gets an empty `rollingUpdate`; a `RollingUpdate` strategy whose
//! `rollingUpdate` is present gets `partition: 0` when it has none. An explicit `type: RollingUpdate` without
//! `rollingUpdate` keeps none. The API server applies this to `object` and `oldObject` before admission and
//! again after a mutation (docs/design.md: "a `remove` of the partition is re-defaulted to 0").
//!
//! Only the update strategy is defaulted here (`replicas` 1, `podManagementPolicy`, `revisionHistoryLimit`
//! and the rest are left as they are): both the policy and the twin read absent `replicas` as 1, and the
//! other defaults are not read by either.

use serde_json::{Map, Value};

/// Defaults `spec.updateStrategy` of a raw StatefulSet in place, as the API server does. Anything that is not
/// a JSON object at `spec` (or a non-object `updateStrategy`/`rollingUpdate`) is left untouched: the typed
/// decoding of a real API server would refuse it before admission, and the policies must still see it as is.
pub fn default_update_strategy(statefulset: &mut Value) {
    let Some(spec) = statefulset.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let strategy = spec
        .entry("updateStrategy")
        .or_insert_with(|| Value::Object(Map::new()));
    let Some(strategy) = strategy.as_object_mut() else {
        return;
    };
    let type_is_empty = match strategy.get("type") {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if type_is_empty {
        strategy.insert("type".into(), Value::from("RollingUpdate"));
        if strategy.get("rollingUpdate").is_none_or(Value::is_null) {
            strategy.insert("rollingUpdate".into(), Value::Object(Map::new()));
        }
    }
    if strategy.get("type").and_then(Value::as_str) != Some("RollingUpdate") {
        return;
    }
    if let Some(rolling) = strategy
        .get_mut("rollingUpdate")
        .and_then(Value::as_object_mut)
        && rolling.get("partition").is_none_or(Value::is_null)
    {
        rolling.insert("partition".into(), Value::from(0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn defaulted(spec: Value) -> Value {
        let mut sts = json!({"metadata": {"name": "web"}, "spec": spec});
        default_update_strategy(&mut sts);
        sts["spec"].clone()
    }

    #[test]
    fn an_absent_strategy_becomes_rolling_update_with_partition_0() {
        assert_eq!(
            defaulted(json!({"replicas": 3})),
            json!({"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}})
        );
    }

    #[test]
    fn an_explicit_rolling_update_without_rolling_update_keeps_none() {
        assert_eq!(
            defaulted(json!({"updateStrategy": {"type": "RollingUpdate"}})),
            json!({"updateStrategy": {"type": "RollingUpdate"}})
        );
    }

    #[test]
    fn a_removed_partition_is_zero_again_and_a_set_one_is_kept() {
        assert_eq!(
            defaulted(json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {}}})),
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}})
        );
        assert_eq!(
            defaulted(
                json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}})
            ),
            json!({"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}})
        );
    }

    #[test]
    fn on_delete_gets_no_partition_and_non_objects_are_left_alone() {
        assert_eq!(
            defaulted(json!({"updateStrategy": {"type": "OnDelete"}})),
            json!({"updateStrategy": {"type": "OnDelete"}})
        );
        assert_eq!(
            defaulted(json!({"updateStrategy": "fast"})),
            json!({"updateStrategy": "fast"})
        );
        let mut not_an_object = json!({"spec": 3});
        default_update_strategy(&mut not_an_object);
        assert_eq!(not_an_object, json!({"spec": 3}));
    }
}

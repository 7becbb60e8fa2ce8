//! Comparing two raw `.spec` values with the rolling-update partition left out, in place.
//!
//! The decision table tells a template (or any other `.spec`) change from a partition-only change; the
//! request's own JSON is compared, so no second parse and no clone of the pod template is needed.

use std::sync::LazyLock;

use serde_json::{Map, Value};

/// Where the partition sits inside `.spec`.
const PARTITION_PATH: [&str; 3] = ["updateStrategy", "rollingUpdate", "partition"];

/// True when two raw `.spec` values are equal once `updateStrategy.rollingUpdate.partition` is ignored in
/// both; an absent or `null` `.spec`, `updateStrategy` or `rollingUpdate` counts as an empty object.
/// JSON equality: key order and number spelling do not matter.
pub fn spec_equal_ignoring_partition(a: Option<&Value>, b: Option<&Value>) -> bool {
    equal_ignoring(a, b, &PARTITION_PATH)
}

static EMPTY_MAP: LazyLock<Map<String, Value>> = LazyLock::new(Map::new);

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

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

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

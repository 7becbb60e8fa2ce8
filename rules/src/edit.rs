//! JSON editing: the decision's [`Change`] applied to the request's raw object.
//!
//! The object is edited in place, never round-tripped through a typed struct, so the mutated object
//! differs from the request's in the partition and two annotations only (the `guarded` mark, the
//! `initialized` stamp), and no field unknown to this policy is lost (docs/design.md: "Mutate the raw
//! JSON, not a typed round-trip").

use serde_json::{Map, Value};

use crate::annotations;
use crate::decision::Change;

/// Applies `change` to the raw object. Returns true when the object changed (so an unchanged object is
/// never sent back as a mutation). [`Change::SetPartition`] also writes `<prefix>/guarded: "true"` (and
/// `<prefix>/initialized: "true"` when asked) where it is not already so. Creates
/// `spec.updateStrategy.rollingUpdate` or `metadata.annotations` when absent or `null`; touches nothing
/// else.
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
            // The guarded mark on every set whose partition this policy holds; `initialized` when asked.
            let stamps = [
                Some(annotations::GUARDED),
                stamp_initialized.then_some(annotations::INITIALIZED),
            ];
            for name in stamps.into_iter().flatten() {
                let key = annotations::key(prefix, name);
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
/// is not an object (the read refuses such input before this is reached).
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
    use serde_json::json;

    const P: &str = "safe-rollout.dev";

    #[test]
    fn set_partition_creates_missing_objects_and_reports_a_change() {
        let mut o = json!({"metadata": {"annotations": null}, "spec": {}});
        let change = Change::SetPartition {
            partition: 2,
            stamp_initialized: true,
        };
        assert!(apply(&change, &mut o, P));
        assert_eq!(o["spec"]["updateStrategy"]["rollingUpdate"]["partition"], 2);
        assert_eq!(
            o["metadata"]["annotations"]["safe-rollout.dev/initialized"],
            "true"
        );
        assert_eq!(
            o["metadata"]["annotations"]["safe-rollout.dev/guarded"],
            "true"
        );
        assert!(
            !apply(&change, &mut o, P),
            "a second application changes nothing"
        );
    }

    #[test]
    fn the_guarded_mark_alone_is_a_change_and_a_wrong_value_is_corrected() {
        let staged = |annotations| {
            json!({"metadata": {"annotations": annotations},
                   "spec": {"updateStrategy": {"rollingUpdate": {"partition": 3}}}})
        };
        let change = Change::SetPartition {
            partition: 3,
            stamp_initialized: false,
        };
        let mut unmarked = staged(json!({}));
        assert!(
            apply(&change, &mut unmarked, P),
            "the partition is right, the mark missing"
        );
        assert_eq!(
            unmarked,
            staged(json!({"safe-rollout.dev/guarded": "true"}))
        );
        let mut wrong = staged(json!({"safe-rollout.dev/guarded": "yes"}));
        assert!(apply(&change, &mut wrong, P));
        assert_eq!(wrong, staged(json!({"safe-rollout.dev/guarded": "true"})));
        let mut marked = staged(json!({"safe-rollout.dev/guarded": "true"}));
        assert!(!apply(&change, &mut marked, P));
        let mut other_prefix = staged(json!({}));
        assert!(apply(&change, &mut other_prefix, "moco.cybozu.com"));
        assert_eq!(
            other_prefix,
            staged(json!({"moco.cybozu.com/guarded": "true"}))
        );
    }

    #[test]
    fn remove_partition_reports_whether_there_was_one() {
        let mut o = json!({"spec": {"updateStrategy": {"rollingUpdate": {"partition": 3, "maxUnavailable": 1}}}});
        assert!(apply(&Change::RemovePartition, &mut o, P));
        assert_eq!(
            o["spec"]["updateStrategy"]["rollingUpdate"],
            json!({"maxUnavailable": 1})
        );
        assert!(!apply(&Change::RemovePartition, &mut o, P));
        assert!(!apply(&Change::None, &mut o, P));
    }
}

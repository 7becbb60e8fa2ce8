//! Which fields of the API objects a decision reads: declared once, beside each reader (a gate, the
//! annotations' parse, recovery, the figures), so that `watch`'s caches can keep exactly their union
//! (`cluster::cached`) and a test can hold every reader to its declaration (`stepper/tests/decisions/fields.rs`:
//! each decision made on the objects cut down to what its reader declares — [`project`] — equals the
//! decision made on the whole objects; the caches keep every declared field).
//!
//! A [`Field`] is a path from the object's root, segments separated by `.`:
//! - `name`: a member (the last segment keeps the member's whole value);
//! - `name[]`: a list member, every item (the rest of the path applies to each item);
//! - `name[key=value]`: a list member, only the items whose `key` is `value` (kept with that key);
//! - `*`: every member of a map;
//! - `~own`: the members of a map whose key is the stepper's (`<prefix>/…` under
//!   `--annotation-prefix`, decided by the caller: no prefix below `config`).
//!
//! A map or list on the way is kept (empty if nothing in it is declared) when the object has it: an
//! absent `metadata.annotations` is not an empty one (`plan::patch::annotation_ops`).

use serde_json::{Map, Value};

/// The kind of API object a field belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Object {
    /// `apps/v1` StatefulSet.
    StatefulSet,
    /// `v1` Pod.
    Pod,
    /// `policy/v1` PodDisruptionBudget.
    PodDisruptionBudget,
}

/// One field a reader reads: the object's kind and the path (module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Field {
    /// The kind.
    pub object: Object,
    /// The path.
    pub path: &'static str,
}

/// A StatefulSet's field at `path`.
pub const fn set(path: &'static str) -> Field {
    Field {
        object: Object::StatefulSet,
        path,
    }
}

/// A pod's field at `path`.
pub const fn pod(path: &'static str) -> Field {
    Field {
        object: Object::Pod,
        path,
    }
}

/// A PodDisruptionBudget's field at `path`.
pub const fn pdb(path: &'static str) -> Field {
    Field {
        object: Object::PodDisruptionBudget,
        path,
    }
}

/// One reader and what it reads of the objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reader {
    /// Who reads (a module, a gate).
    pub name: &'static str,
    /// What it reads.
    pub fields: &'static [Field],
}

/// What every reader needs of every object: the identity a pass keys it by and pins its writes to
/// (name, namespace, uid, resourceVersion: Event references, `test` ops, delete preconditions).
pub const IDENTITY: Reader = Reader {
    name: "identity (every reader)",
    fields: &[
        set("metadata.name"),
        set("metadata.namespace"),
        set("metadata.uid"),
        set("metadata.resourceVersion"),
        pod("metadata.name"),
        pod("metadata.namespace"),
        pod("metadata.uid"),
        pod("metadata.resourceVersion"),
        pdb("metadata.name"),
        pdb("metadata.namespace"),
        pdb("metadata.uid"),
        pdb("metadata.resourceVersion"),
    ],
};

/// A pod's owner, by which a pass groups pods by their controller StatefulSet
/// (`model::pods::pods_by_ordinal`, `controller_uid`; `watch`'s index and early passes).
pub const OWNERSHIP: Reader = Reader {
    name: "model::pods (ownership)",
    fields: &[
        pod("metadata.ownerReferences[kind=StatefulSet].name"),
        pod("metadata.ownerReferences[kind=StatefulSet].uid"),
        pod("metadata.ownerReferences[kind=StatefulSet].controller"),
    ],
};

/// `value` (an API object's JSON, of kind `object`) cut down to the `fields` of that kind (module doc
/// for the paths); `own` tells the stepper's annotation keys (`~own`).
pub fn project(
    value: &Value,
    object: Object,
    fields: &[Field],
    own: &dyn Fn(&str) -> bool,
) -> Value {
    let mut out = Value::Object(Map::new());
    for f in fields.iter().filter(|f| f.object == object) {
        let segments: Vec<&str> = f.path.split('.').collect();
        keep(value, &segments, &mut out, own);
    }
    out
}

/// Copies into `out` what `segments` select of `value` (both objects at the same place).
fn keep(value: &Value, segments: &[&str], out: &mut Value, own: &dyn Fn(&str) -> bool) {
    let (Some((segment, rest)), Some(from)) = (segments.split_first(), value.as_object()) else {
        return;
    };
    let Some(into) = out.as_object_mut() else {
        return;
    };
    let members: Vec<(&String, &Value)> = match *segment {
        "*" => from.iter().collect(),
        "~own" => from.iter().filter(|(k, _)| own(k)).collect(),
        s => {
            let (name, filter) = split_list(s);
            let Some((k, v)) = from.get_key_value(name) else {
                return;
            };
            if let Some(filter) = filter {
                keep_items(name, v, filter, rest, into, own);
                return;
            }
            vec![(k, v)]
        }
    };
    for (k, v) in members {
        if rest.is_empty() {
            into.insert(k.clone(), v.clone());
        } else if v.is_object() {
            let slot = into
                .entry(k.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            keep(v, rest, slot, own);
        }
    }
}

/// `name[…]` → (`name`, the filter: `""` for every item, `key=value` for some); a plain name → no filter.
fn split_list(segment: &str) -> (&str, Option<&str>) {
    match segment.strip_suffix(']').and_then(|s| s.split_once('[')) {
        Some((name, filter)) => (name, Some(filter)),
        None => (segment, None),
    }
}

/// Keeps in `into[name]` (a list) the items of `list` the `filter` selects, each cut down to `rest`
/// (and its filter key). Items kept by an earlier path are merged by position among the selected ones.
fn keep_items(
    name: &str,
    list: &Value,
    filter: &str,
    rest: &[&str],
    into: &mut Map<String, Value>,
    own: &dyn Fn(&str) -> bool,
) {
    let Some(items) = list.as_array() else {
        return;
    };
    let selected: Vec<&Value> = items
        .iter()
        .filter(|item| match filter.split_once('=') {
            Some((k, v)) => item.get(k).and_then(Value::as_str) == Some(v),
            None => true,
        })
        .collect();
    let slot = into
        .entry(name.to_string())
        .or_insert_with(|| Value::Array(vec![Value::Object(Map::new()); selected.len()]));
    let Some(kept) = slot.as_array_mut() else {
        return;
    };
    for (item, out) in selected.into_iter().zip(kept.iter_mut()) {
        if let Some((k, _)) = filter.split_once('=')
            && let (Some(v), Some(o)) = (item.get(k), out.as_object_mut())
        {
            o.insert(k.to_string(), v.clone());
        }
        if rest.is_empty() {
            *out = item.clone();
        } else {
            keep(item, rest, out, own);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn own(k: &str) -> bool {
        k.starts_with("safe-rollout.dev/")
    }

    #[test]
    fn keeps_the_declared_paths_and_the_maps_on_the_way() {
        let podj = json!({
            "metadata": {"name": "web-0", "labels": {"app": "web", "role": "primary"},
                         "annotations": {"safe-rollout.dev/update-requested": "r",
                                         "example.com/x": "y"},
                         "ownerReferences": [{"kind": "Node", "uid": "n"},
                                             {"kind": "StatefulSet", "uid": "s", "name": "web",
                                              "controller": true, "apiVersion": "apps/v1"}]},
            "spec": {"containers": []},
            "status": {"phase": "Running", "podIP": "10.0.0.1",
                       "conditions": [{"type": "PodScheduled", "status": "True"},
                                      {"type": "Ready", "status": "False", "reason": "R",
                                       "message": "m"}]}});
        let fields = [
            pod("metadata.name"),
            pod("metadata.labels.*"),
            pod("metadata.annotations.~own"),
            pod("metadata.ownerReferences[kind=StatefulSet].uid"),
            pod("metadata.ownerReferences[kind=StatefulSet].controller"),
            pod("status.phase"),
            pod("status.conditions[type=Ready].status"),
            pod("status.conditions[type=Ready].reason"),
            set("spec"),
        ];
        let want = json!({
            "metadata": {"name": "web-0", "labels": {"app": "web", "role": "primary"},
                         "annotations": {"safe-rollout.dev/update-requested": "r"},
                         "ownerReferences": [{"kind": "StatefulSet", "uid": "s", "controller": true}]},
            "status": {"phase": "Running",
                       "conditions": [{"type": "Ready", "status": "False", "reason": "R"}]}});
        assert_eq!(project(&podj, Object::Pod, &fields, &own), want);
    }

    #[test]
    fn an_absent_map_stays_absent_and_a_foreign_one_stays_a_map() {
        let fields = [
            pod("metadata.annotations.~own"),
            pod("status.conditions[type=Ready].status"),
        ];
        assert_eq!(
            project(&json!({"metadata": {}}), Object::Pod, &fields, &own),
            json!({"metadata": {}})
        );
        assert_eq!(
            project(
                &json!({"metadata": {"annotations": {"a": "b"}}, "status": {"conditions": []}}),
                Object::Pod,
                &fields,
                &own
            ),
            json!({"metadata": {"annotations": {}}, "status": {"conditions": []}})
        );
    }

    #[test]
    fn a_whole_member_and_a_whole_list() {
        let setj = json!({"status": {"replicas": 3, "conditions": [{"type": "x"}]},
                          "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {}},
                          "metadata": {"ownerReferences": [{"uid": "o", "kind": "X"}]}});
        let fields = [
            set("status"),
            set("spec.selector"),
            set("metadata.ownerReferences[].uid"),
        ];
        assert_eq!(
            project(&setj, Object::StatefulSet, &fields, &own),
            json!({"status": {"replicas": 3, "conditions": [{"type": "x"}]},
                   "spec": {"selector": {"matchLabels": {"app": "web"}}},
                   "metadata": {"ownerReferences": [{"uid": "o"}]}})
        );
    }
}

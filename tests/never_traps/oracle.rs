//! An independent oracle for the fuzz soak: docs/design.md's decision table written a second, plain way.
//!
//! It reads the StatefulSets with k8s-openapi's typed structs (as the policy did before it read the JSON
//! directly), compares `.spec` by cloning both and deleting the partition, and applies the change with JSON
//! Pointers. It answers only for requests it can fully read; for everything else the fuzz test checks that
//! the answer is well formed.

use k8s_openapi::api::apps::v1::StatefulSet;
use serde::Deserialize;
use serde_json::{Value, json};

/// What the table demands for a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Expected {
    /// Accept; the object as it must be returned (`None`: unchanged, no mutation), and the row's name.
    Answer(&'static str, Option<Value>),
    /// Reject (a malformed request, or a count the API server refuses).
    Rejected,
    /// Not decidable by this oracle (a field it cannot read): only well-formedness is checked.
    Unknown,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Request {
    kind: Option<Gvk>,
    sub_resource: Option<String>,
    operation: Option<String>,
    object: Option<Value>,
    old_object: Option<Value>,
    #[allow(dead_code)]
    uid: Option<String>,
    #[allow(dead_code)]
    dry_run: Option<bool>,
}

#[derive(Deserialize)]
struct Gvk {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
}

/// The table's answer for a whole validation payload `{"request": …, "settings": …}`.
pub fn expected(payload: &Value) -> Expected {
    let Value::Object(top) = payload else {
        return Expected::Unknown;
    };
    let prefix = match top.get("settings") {
        None | Some(Value::Null) => "safe-rollout.dev".to_string(),
        Some(Value::Object(s)) if s.is_empty() => "safe-rollout.dev".to_string(),
        Some(Value::Object(s)) if s.len() == 1 => match s.get("annotationPrefix") {
            Some(Value::String(p)) if is_dns_subdomain(p) => p.clone(),
            _ => return Expected::Rejected,
        },
        _ => return Expected::Rejected,
    };
    let request: Request = match top.get("request") {
        None => return Expected::Answer("NotAStatefulSet", None),
        Some(Value::Object(r)) if r.get("kind").is_none_or(|k| k.is_object() || k.is_null()) => {
            match serde_json::from_value(Value::Object(r.clone())) {
                Ok(r) => r,
                Err(_) => return Expected::Rejected,
            }
        }
        // Arrays and other shapes serde may read as structs: not this oracle's business.
        Some(_) => return Expected::Unknown,
    };
    let gvk = request.kind.as_ref();
    let is_sts = gvk.is_some_and(|k| {
        k.group.as_deref() == Some("apps")
            && k.version.as_deref() == Some("v1")
            && k.kind.as_deref() == Some("StatefulSet")
    });
    let sub = request.sub_resource.as_deref().unwrap_or("");
    if !sub.is_empty() {
        return Expected::Answer("Subresource", None);
    }
    if !is_sts {
        return Expected::Answer("NotAStatefulSet", None);
    }
    let update = match request.operation.as_deref() {
        Some("CREATE") => false,
        Some("UPDATE") => true,
        _ => return Expected::Answer("NotCreateOrUpdate", None),
    };
    let Some(object) = request.object else {
        return Expected::Rejected;
    };
    let Some(new) = typed(&object) else {
        return shape_or_unknown(&object);
    };
    let old = match (update, &request.old_object) {
        (false, _) => None,
        (true, None) => return Expected::Rejected,
        (true, Some(raw)) => match typed(raw) {
            Some(t) => Some((t, raw)),
            None => return shape_or_unknown(raw),
        },
    };
    table(
        &new,
        &object,
        old.as_ref().map(|(t, raw)| (t, *raw)),
        &prefix,
    )
}

/// A StatefulSet the policy must refuse for its shape alone, or one this oracle cannot judge.
fn shape_or_unknown(raw: &Value) -> Expected {
    match raw {
        Value::Object(o) if matches!(o.get("metadata"), Some(Value::Object(_))) => {
            Expected::Unknown
        }
        _ => Expected::Rejected,
    }
}

/// The object read as k8s-openapi reads it (its `metadata`, `spec` and `status`), when that succeeds.
fn typed(raw: &Value) -> Option<StatefulSet> {
    let Value::Object(o) = raw else { return None };
    if !matches!(o.get("metadata"), Some(Value::Object(_))) {
        return None;
    }
    let parts: serde_json::Map<String, Value> = o
        .iter()
        .filter(|(k, _)| ["metadata", "spec", "status"].contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    serde_json::from_value(Value::Object(parts)).ok()
}

fn annotation<'a>(s: &'a StatefulSet, prefix: &str, name: &str) -> Option<&'a str> {
    let key = format!("{prefix}/{name}");
    s.metadata
        .annotations
        .as_ref()?
        .get(&key)
        .map(String::as_str)
}

fn replicas(s: &StatefulSet) -> i32 {
    s.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

fn partition(s: &StatefulSet) -> Option<i32> {
    let strategy = s.spec.as_ref()?.update_strategy.as_ref()?;
    strategy.rolling_update.as_ref()?.partition
}

/// `.spec` with the partition deleted and absent strategy objects made empty.
fn spec_without_partition(raw: &Value) -> Value {
    let mut spec = match raw.get("spec") {
        None | Some(Value::Null) => json!({}),
        Some(s) => s.clone(),
    };
    if let Some(s) = spec.as_object_mut() {
        let strategy = s.entry("updateStrategy").or_insert(json!({}));
        if strategy.is_null() {
            *strategy = json!({});
        }
        if let Some(st) = strategy.as_object_mut() {
            let rolling = st.entry("rollingUpdate").or_insert(json!({}));
            if rolling.is_null() {
                *rolling = json!({});
            }
            if let Some(r) = rolling.as_object_mut() {
                r.remove("partition");
            }
        }
    }
    spec
}

/// docs/design.md's table, top to bottom, as a chain of ifs.
fn table(
    new: &StatefulSet,
    raw: &Value,
    old: Option<(&StatefulSet, &Value)>,
    prefix: &str,
) -> Expected {
    let with_partition = |p: Option<i32>, stamp: bool| {
        let mut o = raw.clone();
        if let Some(p) = p {
            o["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p);
            // Every partition the policy sets or restores carries the guarded mark.
            o["metadata"]["annotations"][format!("{prefix}/guarded")] = json!("true");
        } else if let Some(r) = o
            .pointer_mut("/spec/updateStrategy/rollingUpdate")
            .and_then(Value::as_object_mut)
        {
            r.remove("partition");
        }
        if stamp {
            o["metadata"]["annotations"][format!("{prefix}/initialized")] = json!("true");
        }
        (o != *raw).then_some(o)
    };
    if annotation(new, prefix, "force-rolling-update") == Some("true") {
        // "accept unchanged if absent": a `null` partition is absent.
        let change = partition(new).and_then(|_| with_partition(None, false));
        return Expected::Answer("Forced", change);
    }
    let strategy = new.spec.as_ref().and_then(|s| s.update_strategy.as_ref());
    let kind = strategy.and_then(|s| s.type_.as_deref());
    if kind.is_some_and(|t| t != "RollingUpdate") {
        return Expected::Answer("OnDelete", None);
    }
    if replicas(new) < 0 || partition(new).is_some_and(|p| p < 0) {
        return Expected::Rejected;
    }
    let Some((old, old_raw)) = old else {
        return Expected::Answer("StagedOnCreate", with_partition(Some(replicas(new)), false));
    };
    let status = old.status.as_ref();
    let ready = status.and_then(|s| s.ready_replicas).unwrap_or(0);
    let initialized = annotation(old, prefix, "initialized") == Some("true") || ready >= 1;
    if spec_without_partition(raw) != spec_without_partition(old_raw) {
        if !initialized {
            return Expected::Answer("NotInitialized", with_partition(None, false));
        }
        let min_ready = old
            .spec
            .as_ref()
            .and_then(|s| s.min_ready_seconds)
            .unwrap_or(0);
        let fully_ready = status.is_some_and(|s| {
            s.observed_generation.is_some()
                && s.observed_generation == old.metadata.generation
                && ready == replicas(old)
                && (min_ready == 0 || s.available_replicas.unwrap_or(0) == replicas(old))
        });
        let stamp = replicas(old) > 0
            && fully_ready
            && annotation(new, prefix, "initialized") != Some("true");
        return Expected::Answer("StagedOnUpdate", with_partition(Some(replicas(new)), stamp));
    }
    let (before, after) = (partition(old).unwrap_or(0), partition(new).unwrap_or(0));
    let stamp = annotation(new, prefix, "last-partition-update");
    if after == before {
        Expected::Answer("MetadataOnly", None)
    } else if after > before {
        Expected::Answer("PartitionRaised", None)
    } else if stamp.is_some() && stamp != annotation(old, prefix, "last-partition-update") {
        Expected::Answer("Stepped", None)
    } else if !initialized {
        Expected::Answer("LoweredBeforeInitialized", None)
    } else {
        Expected::Answer("PartitionRestored", with_partition(Some(before), false))
    }
}

/// RFC 1123 subdomain, as Kubernetes' `IsDNS1123Subdomain`.
fn is_dns_subdomain(p: &str) -> bool {
    p.len() <= 253
        && p.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

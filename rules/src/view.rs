//! What the decision table reads from one StatefulSet, borrowed straight from the request's JSON.
//!
//! No typed `StatefulSet` is built: the decision reads a dozen fields, so only those are looked up and
//! type-checked (absent and `null` are the Kubernetes defaults), and `.spec` stays the request's own JSON
//! for the comparison. A field of the wrong type is refused naming it, with serde's wording, in the order a
//! typed read meets them (keys sorted: `metadata`, `spec`, `status`, each's fields alphabetically).

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::Error;
use crate::annotations::{self, TRUE};
use crate::field_error::{self, optional, optional_object, optional_str};

/// The fields of an `apps/v1` StatefulSet the decision reads. Counts are pods; `None` is absent or `null`.
#[derive(Debug, Clone, Copy)]
pub struct StatefulSetView<'a> {
    /// `metadata.annotations`; every value has been checked to be a string.
    pub annotations: Option<&'a Map<String, Value>>,
    /// `metadata.generation`.
    pub generation: Option<i64>,
    /// `spec.minReadySeconds`, seconds.
    pub min_ready_seconds: Option<i32>,
    /// `spec.replicas`.
    pub replicas: Option<i32>,
    /// `spec.updateStrategy.rollingUpdate.partition`, an ordinal.
    pub partition: Option<i32>,
    /// `spec.updateStrategy.type`.
    pub update_strategy_type: Option<&'a str>,
    /// `status.availableReplicas`.
    pub available_replicas: Option<i32>,
    /// `status.observedGeneration`.
    pub observed_generation: Option<i64>,
    /// `status.readyReplicas`.
    pub ready_replicas: Option<i32>,
    /// `status` is present (an object).
    pub has_status: bool,
    /// The raw `.spec`, for comparing two objects without the partition.
    pub spec: Option<&'a Value>,
}

impl<'a> StatefulSetView<'a> {
    /// Reads `raw`, the object at `field` (`request.object` or `request.oldObject`).
    ///
    /// # Errors
    /// `<field>: expected a StatefulSet object, got an array`; `<field>.metadata: required, got nothing`;
    /// `<field>.spec.replicas: invalid type: string "3", expected i32`; …
    pub fn read(raw: &'a Value, field: &str) -> Result<Self, Error> {
        let Value::Object(object) = raw else {
            let got = format!(
                "expected a StatefulSet object, got {}",
                field_error::json_type(raw)
            );
            return Err(Error::field(field, got));
        };
        let metadata = match object.get("metadata") {
            Some(Value::Object(m)) => m,
            Some(other) => {
                let got = field_error::json_type(other);
                let problem = format!("expected an object with name and namespace, got {got}");
                return Err(Error::field(&format!("{field}.metadata"), problem));
            }
            None => {
                return Err(Error::field(
                    &format!("{field}.metadata"),
                    "required, got nothing",
                ));
            }
        };
        let at = |path: &'static str| move || format!("{field}.{path}");
        let annotations = read_annotations(metadata.get("annotations"), field)?;
        let generation = optional(metadata.get("generation"), at("metadata.generation"))?;

        let spec_raw = object.get("spec");
        let spec = optional_object(spec_raw, "StatefulSetSpec", at("spec"))?;
        let get = |map: Option<&'a Map<String, Value>>, key: &str| map.and_then(|m| m.get(key));
        let min_ready_seconds = optional(get(spec, "minReadySeconds"), at("spec.minReadySeconds"))?;
        let replicas = optional(get(spec, "replicas"), at("spec.replicas"))?;
        let strategy = optional_object(
            get(spec, "updateStrategy"),
            "StatefulSetUpdateStrategy",
            at("spec.updateStrategy"),
        )?;
        let rolling = optional_object(
            get(strategy, "rollingUpdate"),
            "RollingUpdateStatefulSetStrategy",
            at("spec.updateStrategy.rollingUpdate"),
        )?;
        let partition = optional(
            get(rolling, "partition"),
            at("spec.updateStrategy.rollingUpdate.partition"),
        )?;
        let update_strategy_type =
            optional_str(get(strategy, "type"), at("spec.updateStrategy.type"))?;

        let status = optional_object(object.get("status"), "StatefulSetStatus", at("status"))?;
        let available_replicas = optional(
            get(status, "availableReplicas"),
            at("status.availableReplicas"),
        )?;
        let observed_generation = optional(
            get(status, "observedGeneration"),
            at("status.observedGeneration"),
        )?;
        let ready_replicas = optional(get(status, "readyReplicas"), at("status.readyReplicas"))?;
        Ok(StatefulSetView {
            annotations,
            generation,
            min_ready_seconds,
            replicas,
            partition,
            update_strategy_type,
            available_replicas,
            observed_generation,
            ready_replicas,
            has_status: status.is_some(),
            spec: spec.and(spec_raw),
        })
    }

    /// `spec.replicas`, or 1 when absent (Kubernetes API defaulting for `apps/v1` StatefulSets).
    pub fn replicas(&self) -> i32 {
        self.replicas.unwrap_or(1)
    }

    /// The annotation `<prefix>/<name>`, if present.
    pub fn annotation(&self, prefix: &str, name: &str) -> Option<&'a str> {
        self.annotations?
            .get(&annotations::key(prefix, name))?
            .as_str()
    }

    /// True when the annotation `<prefix>/<name>` is exactly `"true"`.
    pub fn is_annotation_true(&self, prefix: &str, name: &str) -> bool {
        self.annotation(prefix, name) == Some(TRUE)
    }

    /// True when annotated `<prefix>/force-rolling-update: "true"`: native, ungated rolling update.
    pub fn is_forced(&self, prefix: &str) -> bool {
        self.is_annotation_true(prefix, annotations::FORCE_ROLLING_UPDATE)
    }

    /// True when `spec.updateStrategy.type` is `RollingUpdate` or absent (the Kubernetes default); any other
    /// type (`OnDelete`) means the controller never replaces pods by itself, so there is nothing to stage.
    pub fn is_rolling_update(&self) -> bool {
        matches!(self.update_strategy_type, None | Some("RollingUpdate"))
    }

    /// True when some pod of the set ever became Ready: the sticky `<prefix>/initialized: "true"`
    /// annotation, or `status.readyReplicas >= 1`.
    pub fn is_initialized(&self, prefix: &str) -> bool {
        self.is_annotation_true(prefix, annotations::INITIALIZED)
            || self.ready_replicas.unwrap_or(0) >= 1
    }

    /// True when the controller has seen the current spec and every replica is Ready:
    /// `status.observedGeneration == metadata.generation` and `status.readyReplicas == spec.replicas`, and
    /// also `status.availableReplicas == spec.replicas` when `minReadySeconds > 0`. No status: false.
    pub fn is_fully_ready(&self) -> bool {
        let want = self.replicas();
        let observed =
            self.observed_generation.is_some() && self.observed_generation == self.generation;
        let ready = self.ready_replicas.unwrap_or(0) == want;
        let available = self.min_ready_seconds.unwrap_or(0) == 0
            || self.available_replicas.unwrap_or(0) == want;
        self.has_status && observed && ready && available
    }
}

/// `metadata.annotations`: a map of strings, or absent/`null`.
fn read_annotations<'a>(
    value: Option<&'a Value>,
    field: &str,
) -> Result<Option<&'a Map<String, Value>>, Error> {
    let Some(Value::Object(map)) = value else {
        let field = || format!("{field}.metadata.annotations");
        return optional::<std::collections::BTreeMap<String, String>>(value, field).map(|_| None);
    };
    for (key, v) in map {
        if !v.is_string()
            && let Err(e) = String::deserialize(v)
        {
            return Err(Error::field(
                &format!("{field}.metadata.annotations.{key}"),
                e,
            ));
        }
    }
    Ok(Some(map))
}

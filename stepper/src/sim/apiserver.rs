//! The simulated API server's writes: defaulting, admission, `scale`, pod DELETE with preconditions.
//!
//! Defaulting runs on every request. Every StatefulSet write goes through `admit`, the one place that
//! calls the policy's pure decision (`sts_safe_rollout_rules::decision`), as the mutating webhook would; the
//! `scale` subresource bypasses it. A pod DELETE checks `uid`/`resourceVersion` preconditions.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;
use serde_json::{Value, json};
use sts_safe_rollout_rules::decision::{self, Row};

use super::kubelet::SimPod;
use super::world::World;

/// API server defaulting (Kubernetes `SetDefaults_StatefulSet`): `updateStrategy.type` RollingUpdate
/// with `rollingUpdate.partition` 0 when absent. Runs on every request before admission and on read.
pub fn apply_defaults(set: &mut Value) {
    let Some(spec) = set.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let strategy = spec
        .entry("updateStrategy")
        .or_insert_with(|| json!({"type": "RollingUpdate"}));
    if strategy.get("type").is_none() {
        strategy["type"] = json!("RollingUpdate");
    }
    if strategy.get("type") == Some(&json!("RollingUpdate")) {
        if strategy.get("rollingUpdate").is_none_or(Value::is_null) {
            strategy["rollingUpdate"] = json!({});
        }
        if strategy["rollingUpdate"].get("partition").is_none() {
            strategy["rollingUpdate"]["partition"] = json!(0);
        }
    }
}

/// The admission policy on one StatefulSet request, as the mutating webhook runs it: the policy's
/// decision on (`new`, `old`: `None` for a CREATE), its change applied to `new`. Returns the
/// decision-table row that applied.
///
/// # Errors
/// The policy's rejection (a malformed object names its field).
pub(super) fn admit(new: &mut Value, old: Option<&Value>, prefix: &str) -> Result<Row, String> {
    let d = decision::decide(new, old, prefix).map_err(|e| e.to_string())?;
    decision::apply(&d.change, new, prefix);
    Ok(d.row)
}

/// An API server refusal: the `Status` body's `code`, `reason` and `message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// HTTP status code (404, 409).
    pub code: u16,
    /// `reason` (`NotFound`, `Conflict`).
    pub reason: &'static str,
    /// `message`, worded as the real API server words it.
    pub message: String,
}

impl World {
    /// A write to the main resource (`kubectl apply`, `rollout undo`, a PATCH): defaulting, then the
    /// admission policy on (new, stored) when enabled, then storage. `status` cannot be changed this way
    /// (the main resource ignores it); `generation` is bumped when `.spec` changed; `resourceVersion`
    /// when anything changed. `source` names the request in [`World::admissions`].
    ///
    /// # Errors
    /// The policy's rejection (the object is not stored).
    pub fn write(&mut self, mut new: Value, source: &str) -> Result<(), String> {
        let old = self.set.clone();
        new["status"] = old["status"].clone();
        new["metadata"]["generation"] = old["metadata"]["generation"].clone();
        new["metadata"]["uid"] = old["metadata"]["uid"].clone();
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"].clone();
        apply_defaults(&mut new);
        let mut row = None;
        if self.policy {
            let applied = admit(&mut new, Some(&old), &self.prefix)?;
            apply_defaults(&mut new);
            self.admissions.push((self.t, source.to_string(), applied));
            row = Some(applied);
        }
        if new == old {
            return Ok(());
        }
        let old_partition = self.partition();
        if new["spec"] != old["spec"] {
            let generation = old["metadata"]["generation"].as_i64().unwrap_or(0);
            new["metadata"]["generation"] = json!(generation + 1);
        }
        let witness = self.witness_write(&new);
        self.set = new;
        self.bump_resource_version();
        // A step: the policy's `Stepped` row (the partition lowered with a new step stamp).
        if self.partition() < old_partition && row == Some(Row::Stepped) {
            self.note_step(old_partition, witness);
        }
        Ok(())
    }

    /// A `kubectl scale` through the `scale` subresource: the policy never sees it (docs/design.md).
    pub fn scale_subresource(&mut self, replicas: i32) {
        if self.replicas() == replicas {
            return;
        }
        self.set["spec"]["replicas"] = json!(replicas);
        let generation = self.set["metadata"]["generation"].as_i64().unwrap_or(0);
        self.set["metadata"]["generation"] = json!(generation + 1);
        self.bump_resource_version();
    }

    /// A new `metadata.resourceVersion` for the stored StatefulSet (a counter as a string).
    pub(super) fn bump_resource_version(&mut self) {
        let rv = self.set["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0);
        self.set["metadata"]["resourceVersion"] = json!((rv + 1).to_string());
    }

    /// A pod DELETE with no precondition (the StatefulSet controller's `DeleteStatefulPod`, `kubectl
    /// delete pod`): the pod at `ordinal` gets its `deletionTimestamp` and starts terminating. Returns
    /// false when there is no such pod or it is terminating already.
    pub fn delete_pod(&mut self, ordinal: u32) -> bool {
        if self.pods.get(&ordinal).is_none_or(SimPod::terminating) {
            return false;
        }
        let (t, version) = (self.t, self.next_pod_version());
        if let Some(p) = self.pods.get_mut(&ordinal) {
            p.deleted_at = Some(t);
            p.ready_since = None;
            p.stamp(t, version);
        }
        true
    }

    /// `DELETE /api/v1/namespaces/{namespace}/pods/{name}` with `DeleteOptions.preconditions`, checked
    /// as the API server checks them before a graceful deletion (`rest.BeforeDelete` in
    /// `k8s.io/apiserver/pkg/registry/rest/delete.go`): a `uid`, then a `resourceVersion`, that differs
    /// from the stored pod's is a 409 Conflict and nothing changes. A pod terminating already stays as
    /// it is (the DELETE succeeds). Once the pod is gone, the StatefulSet controller recreates the
    /// ordinal from the revision it should run ([`World::sync`]).
    ///
    /// # Errors
    /// [`Refusal`] 404 `NotFound` (no such pod in this namespace), 409 `Conflict` (a precondition
    /// failed).
    pub fn delete_pod_with_preconditions(
        &mut self,
        namespace: &str,
        name: &str,
        preconditions: &Preconditions,
    ) -> Result<(), Refusal> {
        let not_found = || Refusal {
            code: 404,
            reason: "NotFound",
            message: format!("pods \"{name}\" not found"),
        };
        if namespace != self.namespace() {
            return Err(not_found());
        }
        let ordinal = self.ordinal_of(name).ok_or_else(not_found)?;
        let pod = self.pods.get(&ordinal).ok_or_else(not_found)?;
        let stored_version = pod.resource_version.to_string();
        let conflict = |why: String| Refusal {
            code: 409,
            reason: "Conflict",
            message: format!("Operation cannot be fulfilled on Pod \"{name}\": {why}"),
        };
        if let Some(uid) = preconditions.uid.as_ref().filter(|u| **u != pod.uid) {
            return Err(conflict(format!(
                "the UID in the precondition ({uid}) does not match the UID in record ({}). \
                 The object might have been deleted and then recreated",
                pod.uid
            )));
        }
        if let Some(rv) = preconditions
            .resource_version
            .as_ref()
            .filter(|rv| **rv != stored_version)
        {
            return Err(conflict(format!(
                "the ResourceVersion in the precondition ({rv}) does not match the ResourceVersion \
                 in record ({stored_version}). The object might have been modified"
            )));
        }
        // A Ready pod deleted is replaced as a step would replace it: judged by the same oracle (a
        // stuck pod, never Ready, is recovery's and asks no one).
        if pod.running_and_ready() {
            self.note_replacement(ordinal);
        }
        self.delete_pod(ordinal);
        let t = self.t;
        self.writes
            .push((t, format!("DELETE pods {namespace}/{name}")));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::kubelet::Timing;
    use crate::sim::world::SetShape;

    fn world() -> World {
        let shape = SetShape {
            name: "web".into(),
            namespace: "demo".into(),
            replicas: 3,
            pod_management_policy: "OrderedReady".into(),
            min_ready_seconds: 0,
            image: "v1".into(),
        };
        World::new(&shape, Timing::default(), false, "safe-rollout.dev", 1).expect("create")
    }

    /// The `uid` and `resourceVersion` a LIST serves for pod `name`.
    fn served(world: &World, name: &str) -> (String, String) {
        let pod = world
            .typed_pods()
            .into_iter()
            .find(|p| p.metadata.name.as_deref() == Some(name))
            .expect("listed");
        let meta = pod.metadata;
        (
            meta.uid.expect("uid"),
            meta.resource_version.expect("resourceVersion"),
        )
    }

    fn preconditions(uid: &str, resource_version: &str) -> Preconditions {
        Preconditions {
            uid: Some(uid.into()),
            resource_version: Some(resource_version.into()),
        }
    }

    #[test]
    fn a_pod_resource_version_changes_exactly_when_what_is_served_changes() {
        let mut w = world();
        let (_, at_0) = served(&w, "web-1");
        w.tick(1);
        assert_eq!(served(&w, "web-1").1, at_0, "nothing changed");
        if let Some(p) = w.pods.get_mut(&1) {
            p.node_down = Some((2, 50));
        }
        w.tick(2);
        let at_2 = served(&w, "web-1").1;
        assert_ne!(at_2, at_0, "NotReady (NodeNotReady) is a new version");
        w.tick(3);
        assert_eq!(served(&w, "web-1").1, at_2);
    }

    #[test]
    fn a_delete_with_a_stale_uid_or_resource_version_is_a_409_and_deletes_nothing() {
        let mut w = world();
        let (uid, rv) = served(&w, "web-1");
        let stale_uid = w
            .delete_pod_with_preconditions("demo", "web-1", &preconditions("pod-uid-99", &rv))
            .expect_err("stale uid");
        assert_eq!((stale_uid.code, stale_uid.reason), (409, "Conflict"));
        assert_eq!(
            stale_uid.message,
            format!(
                "Operation cannot be fulfilled on Pod \"web-1\": the UID in the precondition \
                 (pod-uid-99) does not match the UID in record ({uid}). The object might have \
                 been deleted and then recreated"
            )
        );
        let stale_rv = w
            .delete_pod_with_preconditions("demo", "web-1", &preconditions(&uid, "0"))
            .expect_err("stale resourceVersion");
        assert_eq!(stale_rv.code, 409);
        assert!(
            stale_rv.message.contains(&format!(
                "the ResourceVersion in the precondition (0) does not match the ResourceVersion \
                 in record ({rv})"
            )),
            "{}",
            stale_rv.message
        );
        assert!(w.pods.values().all(|p| !p.terminating()), "nothing deleted");
    }

    #[test]
    fn a_delete_of_a_pod_that_is_not_there_is_a_404() {
        let mut w = world();
        let (uid, rv) = served(&w, "web-1");
        for (namespace, name) in [("other", "web-1"), ("demo", "web-7"), ("demo", "db-1")] {
            let e = w
                .delete_pod_with_preconditions(namespace, name, &preconditions(&uid, &rv))
                .expect_err("not found");
            assert_eq!((e.code, e.reason), (404, "NotFound"), "{namespace}/{name}");
            assert_eq!(e.message, format!("pods \"{name}\" not found"));
        }
    }

    #[test]
    fn a_delete_with_matching_preconditions_terminates_the_pod_and_the_controller_recreates_it() {
        let mut w = world();
        let (uid, rv) = served(&w, "web-1");
        w.delete_pod_with_preconditions("demo", "web-1", &preconditions(&uid, &rv))
            .expect("deleted");
        assert!(w.pods[&1].terminating());
        assert_ne!(
            served(&w, "web-1").1,
            rv,
            "deletionTimestamp is a new version"
        );
        for t in 1..=20 {
            w.tick(t);
        }
        let recreated = &w.pods[&1];
        assert_ne!(recreated.uid, uid, "a new incarnation");
        assert!(recreated.running_and_ready());
        assert_eq!(recreated.revision, w.status_str("updateRevision"));
    }
}

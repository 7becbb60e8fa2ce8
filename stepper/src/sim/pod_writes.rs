//! The simulated API server's pod writes through [`SimCluster`]: DELETE with uid and resourceVersion
//! preconditions (stuck-pod recovery) and the JSON Patch of the approval handshake's requests.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;
use serde_json::json;

use super::cluster::{Call, SimCluster, lock};
use super::world::World;
use crate::cluster::{ClusterError, PodPatched};

impl SimCluster {
    /// `DELETE` of pod `namespace/name` with uid and resourceVersion preconditions, through the faults,
    /// then [`World::delete_pod_with_preconditions`]; `Cluster::delete_pod` makes 404/409 a Conflict.
    ///
    /// # Errors
    /// [`ClusterError::Api`]: 404 no such pod, 409 a precondition failed or an injected conflict, 500.
    pub fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> Result<(), ClusterError> {
        let action = format!("delete pod {namespace}/{name}");
        if let Some(kind) = self.fault(Call::DeletePod) {
            return Err(Self::error(&action, kind));
        }
        let preconditions = Preconditions {
            uid: Some(uid.to_string()),
            resource_version: Some(resource_version.to_string()),
        };
        self.world()
            .delete_pod_with_preconditions(namespace, name, &preconditions)
            .map_err(|refusal| {
                if refusal.code == 409 {
                    lock(&self.counters).conflicts += 1;
                }
                ClusterError::Api {
                    action,
                    code: refusal.code,
                    message: refusal.message,
                }
            })
    }

    /// `PATCH` of pod `namespace/name` with a JSON Patch ([`World::patch_pod`]): a failed `test` op or
    /// a gone pod is [`PodPatched::Conflict`], as the API server's 422 / 404 are.
    ///
    /// # Errors
    /// An injected fault ([`Call::PatchPod`]): 409 or 500; a patch writing an annotation twice: 400.
    pub(super) fn do_patch_pod(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PodPatched, ClusterError> {
        if let Some(kind) = self.fault(Call::PatchPod) {
            return Err(Self::error(&format!("patch pod {namespace}/{name}"), kind));
        }
        if let Some(key) = super::cluster::twice_written(patch) {
            return Err(ClusterError::Api {
                action: format!("patch pod {namespace}/{name}"),
                message: format!(
                    "the patch writes annotation {key} twice: a write decides each key once"
                ),
                code: 400,
            });
        }
        Ok(match self.world().patch_pod(namespace, name, patch) {
            Ok(()) => PodPatched::Applied,
            Err(why) => PodPatched::Conflict(why),
        })
    }
}

impl World {
    /// Applies `patch` to pod `namespace/name`'s metadata (`uid`, `resourceVersion`, `annotations`:
    /// what the handshake's patches test and change); the pod gets a new `resourceVersion`.
    ///
    /// # Errors
    /// No such pod, a failed `test` op, or a change outside the annotations: the message.
    pub fn patch_pod(
        &mut self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<(), String> {
        let ordinal = (namespace == self.namespace())
            .then(|| self.ordinal_of(name))
            .flatten()
            .filter(|o| self.pods.contains_key(o))
            .ok_or_else(|| format!("pods \"{name}\" not found"))?;
        let pod = &self.pods[&ordinal];
        let mut meta = json!({"metadata": {
            "uid": pod.uid,
            "resourceVersion": pod.resource_version.to_string(),
        }});
        if !pod.annotations.is_empty() {
            meta["metadata"]["annotations"] = json!(pod.annotations);
        }
        let before = meta.clone();
        json_patch::patch(&mut meta, patch).map_err(|e| e.to_string())?;
        if meta["metadata"]["uid"] != before["metadata"]["uid"]
            || meta["metadata"]["resourceVersion"] != before["metadata"]["resourceVersion"]
        {
            return Err("only metadata.annotations may change".into());
        }
        let annotations =
            serde_json::from_value(meta["metadata"]["annotations"].take()).unwrap_or_default();
        let (t, version) = (self.t, self.next_pod_version());
        let pod = self.pods.get_mut(&ordinal).expect("pod");
        self.questions
            .note_stepper_write(&pod.uid, &self.prefix, &pod.annotations, &annotations);
        pod.annotations = annotations;
        pod.stamp(t, version);
        let line = format!(
            "PATCH pods {namespace}/{name} {}",
            super::cluster::json_text(patch)
        );
        self.writes.push((t, line));
        Ok(())
    }
}

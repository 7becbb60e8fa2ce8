//! The StatefulSet controller: one sync after upstream `stateful_set_control.go`.
//!
//! Upstream file: `pkg/controller/statefulset/stateful_set_control.go` (`updateStatefulSet`,
//! `processReplica`, `processCondemned`, `updateStatefulSetStatus`).
//!
//! Written from upstream's behaviour, not copied; each function names the one it follows. What is not
//! modelled (PVCs, `Failed`/`Succeeded` pods, `spec.ordinals.start`, the `MaxUnavailableStatefulSet`
//! feature gate) is listed in [`super`].
//!
//! With the default `podManagementPolicy: OrderedReady` (upstream "monotonic"), `processReplica` stops
//! the whole sync at the first pod in `[0, replicas)` that is terminating or not Running and Ready,
//! before the rolling update is reached. A pod left on a bad revision that never becomes Ready therefore
//! stops the controller for good, even after the template is fixed or rolled back: Kubernetes issue
//! #67250, whose documented remedy ("forced rollback") is to delete that pod. Deleted, it is recreated
//! by `newVersionedStatefulSetPod` from the revision its ordinal should run.

use serde_json::{Value, json};

use super::world::World;

impl World {
    /// One sync of the StatefulSet controller (`defaultStatefulSetControl.UpdateStatefulSet`):
    ///
    /// 1. revisions (`getStatefulSetRevisions`);
    /// 2. pods (`updateStatefulSet`): replicas, condemned pods, the rolling update;
    /// 3. status (`updateStatefulSetStatus`).
    pub fn sync(&mut self) {
        let (current, update) = self.get_stateful_set_revisions();
        self.update_stateful_set(&current, &update);
        self.update_stateful_set_status(current, &update);
    }

    /// `getStatefulSetRevisions`: update = the template's revision (created, or an old one renumbered
    /// on a rollback), current = `status.currentRevision` (the update revision when none).
    /// Returns (current, update) names.
    fn get_stateful_set_revisions(&mut self) -> (String, String) {
        let update = self.update_revision_for_template();
        let mut current = self.status_str("currentRevision");
        if self.revision(&current).is_none() {
            current = update.clone();
        }
        (current, update)
    }

    /// `updateStatefulSet` with the `MaxUnavailableStatefulSet` feature gate off (its default):
    /// [`World::process_replicas`], then [`World::process_condemned`], then — unless `OnDelete` — the
    /// rolling update ([`World::roll_one_pod`]). Monotonic (`OrderedReady`, `!allowsBurst`): each
    /// stage may end the sync.
    fn update_stateful_set(&mut self, current: &str, update: &str) {
        let monotonic = !self.allows_burst();
        if self.process_replicas(current, update, monotonic) || self.process_condemned(monotonic) {
            return;
        }
        // "for the OnDelete strategy we short circuit. Pods will be updated when they are manually
        // deleted."
        if self
            .set
            .pointer("/spec/updateStrategy/type")
            .and_then(Value::as_str)
            == Some("OnDelete")
        {
            return;
        }
        self.roll_one_pod(update);
    }

    /// `processReplica` for each ordinal in `[0, replicas)`, in order (`runForAll`): a missing pod is
    /// created ([`World::create_pod`]); monotonic, the sync stops right after a creation, and at a pod
    /// that is terminating ("waiting for Pod to Terminate"), not Running and Ready ("waiting for Pod to
    /// be Running and Ready") or not available ("waiting for Pod to be Available"). That wait has no
    /// end for a pod that never becomes Ready, whatever its revision (Kubernetes issue #67250).
    /// Burst (`Parallel`): never stops. Returns true when the sync stops here.
    fn process_replicas(&mut self, current: &str, update: &str, monotonic: bool) -> bool {
        let (t, min_ready) = (self.t, self.min_ready());
        for o in 0..u32::try_from(self.replicas()).unwrap_or(0) {
            if !self.pods.contains_key(&o) {
                self.create_pod(o, current, update);
                if monotonic {
                    return true;
                }
            }
            let Some(p) = self.pods.get(&o) else {
                continue;
            };
            if monotonic && (p.terminating() || !p.available(min_ready, t)) {
                return true;
            }
        }
        false
    }

    /// `processCondemned` for the pods at ordinals ≥ `spec.replicas`, highest first: monotonic, wait
    /// for a terminating one, and delete a not-available one only when it is the first unhealthy pod
    /// of the set (`firstUnavailablePod`); one deletion per sync. Burst: delete them all at once.
    /// Returns true when the sync stops here.
    fn process_condemned(&mut self, monotonic: bool) -> bool {
        let (t, min_ready) = (self.t, self.min_ready());
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        let condemned: Vec<u32> = self
            .pods
            .keys()
            .rev()
            .copied()
            .filter(|o| *o >= replicas)
            .collect();
        let first_unhealthy = (0..replicas)
            .chain(condemned.iter().rev().copied())
            .find(|o| self.pods.get(o).is_none_or(|p| p.unavailable(min_ready, t)));
        for o in condemned {
            let Some(p) = self.pods.get(&o) else {
                continue;
            };
            if p.terminating() {
                if monotonic {
                    return true;
                }
                continue;
            }
            if monotonic && !p.available(min_ready, t) && first_unhealthy != Some(o) {
                return true;
            }
            self.delete_pod(o);
            if monotonic {
                return true;
            }
        }
        false
    }

    /// The rolling update, `updateStatefulSet`'s last loop: from the highest ordinal down to the
    /// partition, delete the first pod not on the update revision and not terminating, and stop; stop
    /// as well at a pod that is unavailable (`isUnavailable`). It waits only on pods it has already
    /// passed, never on lower ordinals. The harm oracle sees each deletion first
    /// ([`World::note_restart`]).
    fn roll_one_pod(&mut self, update: &str) {
        let (t, min_ready) = (self.t, self.min_ready());
        let partition = u32::try_from(self.partition()).unwrap_or(0);
        let replicas = u32::try_from(self.replicas()).unwrap_or(0);
        for o in (partition..replicas).rev() {
            let Some(p) = self.pods.get(&o) else {
                return;
            };
            if p.revision != update && !p.terminating() {
                self.note_restart(o);
                self.delete_pod(o);
                return;
            }
            if p.unavailable(min_ready, t) {
                return;
            }
        }
    }

    /// `newVersionedStatefulSetPod` (`stateful_set_utils.go`): the pod for `ordinal` from the current
    /// revision when `ordinal < partition`, else from the update revision; the kubelet then starts it
    /// ([`World::start_pod`]). (Upstream's other case, no `rollingUpdate` and `ordinal <
    /// currentReplicas`, cannot occur: defaulting always sets `rollingUpdate.partition`.)
    fn create_pod(&mut self, ordinal: u32, current: &str, update: &str) {
        let partition = u32::try_from(self.partition()).unwrap_or(0);
        let revision = if ordinal < partition { current } else { update };
        self.start_pod(ordinal, revision);
    }

    /// `updateStatus`/`computeReplicaStatus` over every pod of the set (condemned included): replicas =
    /// created, ready = `isRunningAndReady`, available = `isRunningAndAvailable`, current/updated = not
    /// terminating and labelled with that revision; then `completeRollingUpdate` (all updated and Ready:
    /// the update revision becomes current) and `observedGeneration`. Like `updateStatefulSetStatus`
    /// (`inconsistentStatus`), the status is written, and `resourceVersion` bumped, only when it differs
    /// from the stored one.
    fn update_stateful_set_status(&mut self, mut current: String, update: &str) {
        let (t, min_ready) = (self.t, self.min_ready());
        let generation = self.set["metadata"]["generation"].clone();
        let (mut n, mut ready, mut available, mut cur, mut upd) = (0, 0, 0, 0, 0);
        for p in self.pods.values() {
            n += 1;
            if p.running_and_ready() {
                ready += 1;
                if p.available(min_ready, t) {
                    available += 1;
                }
            }
            if !p.terminating() {
                if p.revision == current {
                    cur += 1;
                }
                if p.revision == update {
                    upd += 1;
                }
            }
        }
        if upd == n && ready == n {
            current = update.to_string();
            cur = upd;
        }
        let status = json!({
            "observedGeneration": generation,
            "replicas": n, "readyReplicas": ready, "availableReplicas": available,
            "currentReplicas": cur, "updatedReplicas": upd,
            "currentRevision": current, "updateRevision": update,
            "collisionCount": 0,
        });
        if self.set["status"] != status {
            self.set["status"] = status;
            self.bump_resource_version();
        }
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Preconditions;

    use crate::sim::history::template;
    use crate::sim::kubelet::Timing;
    use crate::sim::world::{SetShape, World};

    /// A native `web` (no policy: partition 0) of 3 pods on v1, rolled out to v2 — whose pods never
    /// become Ready — until web-2 is stuck on v2, then rolled back to v1 (`kubectl rollout undo`).
    /// Returns the world at the second after the rollback, and web-2's stuck uid.
    fn rolled_back_with_web_2_stuck(pod_management_policy: &str) -> (World, String) {
        let shape = SetShape {
            name: "web".into(),
            namespace: "demo".into(),
            replicas: 3,
            pod_management_policy: pod_management_policy.into(),
            min_ready_seconds: 0,
            image: "v1".into(),
        };
        let mut w =
            World::new(&shape, Timing::default(), false, "safe-rollout.dev", 1).expect("new");
        w.bad_images.push("v2".into());
        let (v1, mut v2) = (w.set.clone(), w.set.clone());
        v2["spec"]["template"] = template("web", "v2");
        w.write(v2, "apply").expect("apply v2");
        for t in 1..=30 {
            w.tick(t);
        }
        let stuck = w.pods[&2].clone();
        assert!(w.revision_is_bad(&stuck.revision) && !stuck.running_and_ready());
        w.write(v1, "undo").expect("undo");
        w.tick(31);
        (w, stuck.uid)
    }

    #[test]
    fn ordered_ready_waits_forever_on_a_not_ready_pod_of_a_superseded_revision() {
        let (mut w, stuck) = rolled_back_with_web_2_stuck("OrderedReady");
        let update = w.status_str("updateRevision");
        assert_ne!(
            w.pods[&2].revision, update,
            "web-2 runs a superseded revision"
        );
        let restarts = w.restarts.len();
        for t in 32..=3600 {
            w.tick(t);
        }
        assert_eq!(
            w.pods[&2].uid, stuck,
            "never replaced (Kubernetes issue #67250)"
        );
        assert!(!w.pods[&2].terminating() && !w.pods[&2].running_and_ready());
        assert_eq!(
            w.restarts.len(),
            restarts,
            "the rolling update is never reached"
        );
        assert!(!w.rollout_complete());
    }

    #[test]
    fn deleting_the_stuck_pod_lets_ordered_ready_recreate_it_from_the_right_revision() {
        let (mut w, stuck) = rolled_back_with_web_2_stuck("OrderedReady");
        let rv = w.pods[&2].resource_version.to_string();
        let preconditions = Preconditions {
            uid: Some(stuck),
            resource_version: Some(rv),
        };
        w.delete_pod_with_preconditions("demo", "web-2", &preconditions)
            .expect("delete web-2");
        for t in 32..=60 {
            w.tick(t);
            assert!(
                w.down_ordinals().len() <= 1,
                "t={t}: {:?}",
                w.down_ordinals()
            );
        }
        assert_eq!(w.pods[&2].revision, w.status_str("updateRevision"));
        assert!(w.rollout_complete());
    }

    #[test]
    fn parallel_replaces_the_pod_stuck_on_a_superseded_revision_by_itself() {
        let (mut w, stuck) = rolled_back_with_web_2_stuck("Parallel");
        for t in 32..=60 {
            w.tick(t);
        }
        assert_ne!(w.pods[&2].uid, stuck);
        assert!(w.rollout_complete());
    }
}

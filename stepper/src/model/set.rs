//! Typed reads of one StatefulSet's spec and status: replicas, partition, revisions, readiness.
//!
//! No annotation is read here. Total: absent fields take the Kubernetes defaults, never panic.

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::ObjectReference;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

/// `spec.replicas`, or 1 when absent (Kubernetes API defaulting for `apps/v1` StatefulSets). A count of pods.
pub fn replicas(set: &StatefulSet) -> i32 {
    set.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1)
}

/// `spec.updateStrategy.rollingUpdate.partition`, `None` when absent (Kubernetes then treats it as 0).
pub fn partition(set: &StatefulSet) -> Option<i32> {
    set.spec
        .as_ref()?
        .update_strategy
        .as_ref()?
        .rolling_update
        .as_ref()?
        .partition
}

/// `spec.minReadySeconds` in seconds, 0 when absent.
pub fn min_ready_seconds(set: &StatefulSet) -> i32 {
    set.spec
        .as_ref()
        .and_then(|s| s.min_ready_seconds)
        .unwrap_or(0)
}

/// True when `spec.podManagementPolicy` is `OrderedReady` (or absent, its default): the StatefulSet
/// controller then creates, deletes and updates one pod at a time and waits for each to be Running and
/// Ready — it never replaces a pod that is not (kubernetes#67250).
pub fn is_ordered_ready(set: &StatefulSet) -> bool {
    matches!(
        set.spec
            .as_ref()
            .and_then(|s| s.pod_management_policy.as_deref()),
        None | Some("OrderedReady")
    )
}

/// True when `spec.updateStrategy.type` is `OnDelete`: the controller never replaces pods by itself, so
/// there is nothing to stage (Kubernetes `OnDeleteStatefulSetStrategyType`).
pub fn is_on_delete(set: &StatefulSet) -> bool {
    update_strategy_type(set) == Some("OnDelete")
}

/// True when `spec.updateStrategy.type` is `RollingUpdate` or absent (the Kubernetes default).
pub fn is_rolling_update(set: &StatefulSet) -> bool {
    matches!(update_strategy_type(set), None | Some("RollingUpdate"))
}

fn update_strategy_type(set: &StatefulSet) -> Option<&str> {
    set.spec
        .as_ref()?
        .update_strategy
        .as_ref()?
        .type_
        .as_deref()
}

/// True when the controller has seen the current spec and every replica is Ready:
/// `status.observedGeneration == metadata.generation` and `status.readyReplicas == spec.replicas`, and also
/// `status.availableReplicas == spec.replicas` when `minReadySeconds > 0`. No status: false.
pub fn is_fully_ready(set: &StatefulSet) -> bool {
    let Some(status) = set.status.as_ref() else {
        return false;
    };
    let want = replicas(set);
    let observed = status.observed_generation.is_some()
        && status.observed_generation == set.metadata.generation;
    let ready = status.ready_replicas.unwrap_or(0) == want;
    let available = min_ready_seconds(set) == 0 || status.available_replicas.unwrap_or(0) == want;
    observed && ready && available
}

/// True when an update is staged: `status.updateRevision != status.currentRevision`, or
/// `status.updatedReplicas < spec.replicas` (a rollback leaves equal revisions with pods still to replace).
/// No status: false (the controller has not reported yet).
pub fn has_staged_update(set: &StatefulSet) -> bool {
    let Some(status) = set.status.as_ref() else {
        return false;
    };
    status.update_revision != status.current_revision
        || status.updated_replicas.unwrap_or(0) < replicas(set)
}

/// `status.updateRevision`, `""` before the controller reported one.
pub fn update_revision(set: &StatefulSet) -> &str {
    set.status
        .as_ref()
        .and_then(|s| s.update_revision.as_deref())
        .unwrap_or_default()
}

/// `status.currentRevision` (the revision of the pods below the partition: the last good one), `""`
/// before the controller reported one.
pub fn current_revision(set: &StatefulSet) -> &str {
    set.status
        .as_ref()
        .and_then(|s| s.current_revision.as_deref())
        .unwrap_or_default()
}

/// True when the StatefulSet controller has seen the set's generation (`status.observedGeneration >=
/// metadata.generation`) and reported `status.updateRevision` (gate `NotObserved` says why not).
pub fn observed(set: &StatefulSet) -> bool {
    set.status.as_ref().is_some_and(|s| {
        s.observed_generation.unwrap_or(0) >= set.metadata.generation.unwrap_or(0)
            && s.update_revision.is_some()
    })
}

/// The annotation `key` (a full key, `<prefix>/<name>`) of `set`, if present.
pub fn annotation<'a>(set: &'a StatefulSet, key: &str) -> Option<&'a str> {
    set.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

/// `metadata.name`, `<unnamed>` when absent (for messages).
pub fn name(set: &StatefulSet) -> &str {
    set.metadata.name.as_deref().unwrap_or("<unnamed>")
}

/// The set's controller ownerReference (`controller: true`), if any.
pub fn controller_owner(set: &StatefulSet) -> Option<&OwnerReference> {
    set.metadata
        .owner_references
        .as_ref()?
        .iter()
        .find(|r| r.controller == Some(true))
}

/// True when the set's staged rollout has started: the partition (absent = 0) is below
/// `spec.replicas`, so some pod is already meant to run `updateRevision`.
pub fn rollout_started(set: &StatefulSet) -> bool {
    partition(set).unwrap_or(0) < replicas(set)
}

/// The ObjectReference Events point at (`apps/v1`, kind, namespace, name, uid, resourceVersion).
pub fn reference(set: &StatefulSet) -> ObjectReference {
    ObjectReference {
        api_version: Some("apps/v1".into()),
        kind: Some("StatefulSet".into()),
        namespace: set.metadata.namespace.clone(),
        name: set.metadata.name.clone(),
        uid: set.metadata.uid.clone(),
        resource_version: set.metadata.resource_version.clone(),
        ..ObjectReference::default()
    }
}

/// The label on every pod the StatefulSet controller creates (`statefulset.kubernetes.io/pod-name`:
/// the pod's name); Kubernetes StatefulSet controller, `getPodName`/`updateIdentity`.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";

/// The label selector that reads the set's pods: its `spec.selector` (required and non-empty for
/// `apps/v1`; the controller adopts only pods it matches); when that cannot be written as a selector
/// (absent, an unknown operator), every StatefulSet pod of the namespace ([`POD_NAME_LABEL`] exists).
/// Either way the pass keeps only pods the set controls (`ownerReferences`).
pub fn pod_selector(set: &StatefulSet) -> kube::core::Selector {
    set.spec
        .as_ref()
        .and_then(|s| kube::core::Selector::try_from(s.selector.clone()).ok())
        .filter(|s| !s.selects_all())
        .unwrap_or_else(|| kube::core::Expression::Exists(POD_NAME_LABEL.into()).into())
}

/// What differs between the set as the pass read it (`read`) and as read again (`fresh`) that makes the
/// pass's I/O reads stale: `status.updateRevision` (a check's state and the webhook's answer are about
/// one revision), the partition and `spec.replicas` (the webhook approved replacing the pods of one
/// step), the uid (another set of that name). `None`: the same step.
pub fn step_changed(read: &StatefulSet, fresh: &StatefulSet) -> Option<String> {
    let facts = |s: &StatefulSet| {
        (
            update_revision(s).to_string(),
            partition(s),
            replicas(s),
            s.metadata.uid.clone(),
        )
    };
    let (a, b) = (facts(read), facts(fresh));
    (a != b).then(|| {
        format!(
            "{} changed since it was read (updateRevision {} → {}, partition {:?} → {:?}, replicas {} \
             → {}): decided again next pass",
            name(fresh),
            a.0,
            b.0,
            a.1,
            b.1,
            a.2,
            b.2
        )
    })
}

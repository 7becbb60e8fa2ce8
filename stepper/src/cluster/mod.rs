//! The cluster interface: everything a pass needs from the world, and nothing more.
//!
//! A pass reads the StatefulSet list, then only its candidates' pods and their namespaces' PDBs, writes
//! with JSON Patches on StatefulSets, publishes Events, and (stuck-pod recovery, opt-in) deletes a pod;
//! any other object it reads by a typed GET or LIST of its kind ([`Cluster::get`], [`Cluster::list`]).
//! [`crate::cluster::kube::KubeCluster`] implements it against a real API server; a simulated
//! StatefulSet controller with a virtual clock can implement it too (time is never read here: the
//! caller passes `now`).
//!
//! Layer `cluster` (I/O): the [`Cluster`] trait and its kube-rs implementation ([`kube`]), the
//! checks' outbound reads behind one [`Probe`] trait ([`probe`]) with a client per kind of read
//! ([`prometheus`], [`http_check`], [`webhook`]) and the clients the flags configure ([`Checks`]),
//! `watch`'s reflector caches ([`caches`], what they keep of each object: [`cached`], their pods by
//! controller: [`pod_index`]), a cluster in front of another ([`wrapper`]), the kinds a typed read
//! returns ([`object`]), the API server's errors as it means them ([`api_error`]) and a failed
//! request as a [`ClusterError`] with a stable reason ([`error`]). The only code that talks to the
//! world. May import `plan`, `rollout`, `gates`, `config`, `model` (ARCHITECTURE.md, "Layers").

pub mod access_review;
pub mod answerer;
pub mod api_error;
mod ca_bundle;
pub mod cache_feed;
pub mod cached;
pub mod cached_pod;
pub mod caches;
mod checks;
pub mod endpoint_client;
mod endpoint_tls;
pub mod error;
pub mod http_check;
pub mod kube;
pub mod kube_client;
mod kube_error;
pub mod object;
pub mod pod_index;
pub mod pod_news;
pub mod probe;
pub mod prometheus;
pub mod read_buffer;
pub mod read_pacing;
pub mod set_list;
pub mod webhook;
pub mod wrapper;

use std::future::Future;
use std::sync::Arc;

use ::kube::core::{PartialObjectMeta, Selector, SelectorExt};
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{Namespace, ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;

use crate::cluster::object::Object;
use crate::config::{Keys, SetConfig};
use crate::plan::events::EventNote;

pub use checks::{AllProbes, Checks};
pub use error::ClusterError;
pub use probe::{Kind, Probe};

/// What became of a JSON Patch on a StatefulSet.
#[derive(Clone, Debug, PartialEq)]
pub enum PatchOutcome {
    /// The API server applied it; the object as stored afterwards (admission mutations included).
    Applied(Box<StatefulSet>),
    /// A `test` op failed or the object changed underneath (HTTP 422 Unprocessable Entity or 409
    /// Conflict), or the object is gone (404): nothing was written. Not an error: the set is re-read
    /// next pass. The string is the API server's message.
    Conflict(String),
}

/// What became of a pod DELETE with uid and resourceVersion preconditions.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeleteOutcome {
    /// The API server accepted it (the pod is terminating or gone).
    Deleted,
    /// A precondition failed (HTTP 409: the pod was recreated or changed since the snapshot) or the pod
    /// is gone (404): nothing was deleted. Not an error; the string is the API server's message.
    Conflict(String),
}

/// What became of a pod PATCH pinned by a `test` op on the pod's uid (the approval handshake's
/// requests, [`Cluster::patch_pod`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PodPatched {
    /// The API server applied it.
    Applied,
    /// The pod is gone or changed since the read (404, 409, a failed `test` op): nothing was written;
    /// re-read next pass. The string is the API server's message.
    Conflict(String),
}

/// A listed StatefulSet and its annotations parsed ([`Cluster::list_parsed_statefulsets`]), both
/// shared.
pub type ParsedSet = (Arc<StatefulSet>, Arc<SetConfig>);

/// Everything a pass does to the cluster. Implementations hold the scope (namespaces, label selector)
/// themselves, so each LIST is one request per namespace in scope (one in all): the number of requests
/// per pass never grows with the number of objects, only the writes do.
///
/// Implemented by the clusters that talk to the world: [`kube::KubeCluster`], and the simulation's
/// `SimCluster` and `Fleet`. A cluster in front of another (`watch`'s caches, the leader's gate)
/// implements [`wrapper::Wrapper`] instead and states only what it changes. The methods come in three
/// groups: the snapshot reads a pass decides on, which `watch`'s caches may answer
/// (`list_statefulsets` … `list_namespace_pdbs`, `cached`); the reads that always go to the API server
/// (the fresh reads before a step, [`Cluster::get`] and [`Cluster::list`] of any kind, the owner,
/// [`Cluster::can_i`]); the writes, each of which a wrapper's [`wrapper::Wrapper::before_write`] may
/// refuse. A new read is a [`Cluster::get`] or [`Cluster::list`] at its caller, or a provided method
/// here written over them (as [`Cluster::get_controller_revision`], [`Cluster::list_namespaces`],
/// [`Cluster::may_delete_pods`]): no implementation and no wrapper changes. Every other method is
/// also forwarded in `wrapper.rs`: a required one because the compiler asks for it, one with a default
/// because the default answers for a cluster that talks to the world (`can_i`'s yes, `patch_pod`'s
/// refusal, `get_statefulset` found in the snapshot list) and a wrapper must pass the call on instead.
pub trait Cluster: Sync {
    /// LIST StatefulSets in scope. Shared (`Arc`): `watch`'s caches hand out the objects they built
    /// once per watch event, not a copy per pass.
    fn list_statefulsets(
        &self,
    ) -> impl Future<Output = Result<Vec<Arc<StatefulSet>>, ClusterError>> + Send;

    /// [`Cluster::list_statefulsets`] with each set's annotations parsed under `keys`
    /// ([`SetConfig::parse`]), in the same order: what a pass reads first. The default parses each set;
    /// `watch`'s caches hand out what they parsed once per watch event.
    fn list_parsed_statefulsets(
        &self,
        keys: &Arc<Keys>,
    ) -> impl Future<Output = Result<Vec<ParsedSet>, ClusterError>> + Send {
        async move {
            let sets = self.list_statefulsets().await?;
            Ok(sets
                .into_iter()
                .map(|s| {
                    let config = Arc::new(SetConfig::parse(&s, keys));
                    (s, config)
                })
                .collect())
        }
    }

    /// LIST Pods in the scope's namespaces (the label selector applies to StatefulSets only): every
    /// pod in scope, for `status` over the whole scope only; a pass reads [`Cluster::list_set_pods`].
    fn list_pods(&self) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send;

    /// LIST the Pods of one StatefulSet: in `namespace`, with `labelSelector` = `selector` (the set's
    /// `spec.selector`). A consistent read (no `resourceVersion`: the API server answers as of now), so
    /// a step is never decided on a stale pod. `owners` are the uids of the StatefulSets whose pods the
    /// caller wants (those with this namespace and selector): a pass keeps only the pods a StatefulSet
    /// controls (`model::pods::controller_uid`), so an implementation may leave out pods none of
    /// `owners` controls — `watch`'s caches answer from their index by controller; the API server's
    /// LIST cannot filter by owner and returns them all. The default filters [`Cluster::list_pods`].
    fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        let _ = owners;
        async move {
            let pods = self.list_pods().await?;
            Ok(pods
                .into_iter()
                .filter(|p| {
                    p.metadata.namespace.as_deref() == Some(namespace)
                        && selector
                            .matches(p.metadata.labels.as_ref().unwrap_or(&Default::default()))
                })
                .collect())
        }
    }

    /// True when the reads above come from caches (`watch`'s reflector stores): then a step is written
    /// only after a fresh consistent read of its set and pods ([`Cluster::get_statefulset`],
    /// [`Cluster::list_set_pods_consistent`]) confirms it.
    fn cached(&self) -> bool {
        false
    }

    /// GET StatefulSet `namespace/name` as of now (a consistent read); `Ok(None)` when it is gone. The
    /// default finds it in [`Cluster::list_statefulsets`].
    fn get_statefulset(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<StatefulSet>, ClusterError>> + Send {
        async move {
            Ok(self
                .list_statefulsets()
                .await?
                .into_iter()
                .find(|s| {
                    s.metadata.namespace.as_deref() == Some(namespace)
                        && s.metadata.name.as_deref() == Some(name)
                })
                .map(Arc::unwrap_or_clone))
        }
    }

    /// [`Cluster::list_set_pods`] as a consistent read even when the reads are cached. The default is
    /// [`Cluster::list_set_pods`].
    fn list_set_pods_consistent(
        &self,
        namespace: &str,
        selector: &Selector,
        owners: &[String],
    ) -> impl Future<Output = Result<Vec<Pod>, ClusterError>> + Send {
        self.list_set_pods(namespace, selector, owners)
    }

    /// LIST PodDisruptionBudgets in the scope's namespaces.
    fn list_pdbs(
        &self,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send;

    /// LIST the PodDisruptionBudgets of one namespace (a consistent read, as [`Cluster::list_set_pods`]).
    /// The default filters [`Cluster::list_pdbs`].
    fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<Vec<PodDisruptionBudget>, ClusterError>> + Send {
        async move {
            let pdbs = self.list_pdbs().await?;
            Ok(pdbs
                .into_iter()
                .filter(|p| p.metadata.namespace.as_deref() == Some(namespace))
                .collect())
        }
    }

    /// PATCH StatefulSet `namespace/name` with a JSON Patch (`application/json-patch+json`).
    fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PatchOutcome, ClusterError>> + Send;

    /// GET the object `owner` references in `namespace` (any group/version/kind: the
    /// `OwnerNotHealthy` gate's read), as JSON; `Ok(None)` when it does not exist (HTTP 404).
    fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> impl Future<Output = Result<Option<serde_json::Value>, ClusterError>> + Send;

    /// GET the object of kind `K` named `name` in `namespace` (ignored for a cluster-scoped kind) as of
    /// now, always from the API server: a consistent read (no `resourceVersion`), which `watch`'s
    /// caches never answer. `Ok(None)` when it does not exist (HTTP 404). Any kind k8s-openapi types
    /// ([`Object`]: kube-rs' `Api<K>`); an error's action names it as kubectl does (`get
    /// controllerrevision demo/web-6d4b`), and a 403 the rule the stepper lacks
    /// ([`api_error::classify`]). Needs `get` on the kind.
    fn get<K: Object>(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<K>, ClusterError>> + Send;

    /// LIST the objects of kind `K` in `namespace` (`None`: every namespace; ignored for a
    /// cluster-scoped kind) whose labels match `labels` (kubectl's `-l` form, sent as the
    /// `labelSelector`; `None`: every object), as of now from the API server: consistent, never
    /// cached, and not limited to the scope the pass's own LISTs cover. Needs `list` on the kind.
    fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> impl Future<Output = Result<Vec<K>, ClusterError>> + Send;

    /// GET ControllerRevision `namespace/name` (`apps/v1` `controllerrevisions`) as of now, always from
    /// the API server ([`Cluster::get`]): `watch`'s caches keep no ControllerRevision (a rollback reads
    /// one, rarely; a template is large). The rollback of `on-failure: rollback` reads the one
    /// `status.currentRevision` names and writes back its `data.spec.template`
    /// ([`crate::plan::rollback::template_of`]), as `kubectl rollout undo` does. `Ok(None)` when it
    /// does not exist (HTTP 404; e.g. pruned past `spec.revisionHistoryLimit`). Needs `get` on `apps`
    /// `controllerrevisions` (`deploy/stepper/base/rbac.yaml`); a 403 says so.
    fn get_controller_revision(
        &self,
        namespace: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<ControllerRevision>, ClusterError>> + Send {
        async move {
            self.get(namespace, name).await.map_err(|e| {
                e.if_forbidden(
                    "on-failure: rollback reads the ControllerRevision to roll back to: the \
                     stepper's ClusterRole needs get on apps controllerrevisions \
                     (deploy/stepper/base/rbac.yaml)",
                )
            })
        }
    }

    /// The names of the namespaces whose labels match `selector` (kubectl's `-l` form; the API server
    /// applies it): the namespace-label scope (`--namespace-selector`), listed every pass, their
    /// metadata only ([`Cluster::list`] of `PartialObjectMeta<Namespace>`). Needs `list` on namespaces
    /// (`deploy/scope/namespace-label/`). The simulation stores no namespace (and never runs with that
    /// scope): it lists none.
    fn list_namespaces(
        &self,
        selector: &str,
    ) -> impl Future<Output = Result<Vec<String>, ClusterError>> + Send {
        async move {
            let namespaces = self
                .list::<PartialObjectMeta<Namespace>>(None, Some(selector))
                .await?;
            Ok(namespaces
                .into_iter()
                .filter_map(|n| n.metadata.name)
                .collect())
        }
    }

    /// Whether the stepper may `verb` (`delete`, `patch`, …) objects of kind `K` in `namespace`, as
    /// `kubectl auth can-i` asks: a SelfSubjectAccessReview against the API server, which every
    /// authenticated user may create, so a set can say which opt-in rule it lacks before a write needs
    /// it ([`crate::plan::rbac`]). The default answers yes (the simulation's stepper may everything).
    fn can_i<K: Object>(
        &self,
        verb: &str,
        namespace: &str,
    ) -> impl Future<Output = Result<bool, ClusterError>> + Send {
        let _ = (verb, namespace);
        async { Ok(true) }
    }

    /// Whether the stepper may delete pods in `namespace` (the RBAC the return of a pod stuck on a failed
    /// revision needs, [`crate::plan::rbac`]): [`Cluster::can_i`] `delete` pods.
    fn may_delete_pods(
        &self,
        namespace: &str,
    ) -> impl Future<Output = Result<bool, ClusterError>> + Send {
        self.can_i::<Pod>("delete", namespace)
    }

    /// DELETE pod `namespace/name` with preconditions `uid` and `resource_version` (`DeleteOptions`
    /// `preconditions`), so a pod recreated or changed since the snapshot is never deleted: stuck-pod
    /// recovery ([`crate::gates::recovery`]).
    fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> impl Future<Output = Result<DeleteOutcome, ClusterError>> + Send;

    /// PATCH pod `namespace/name` with a JSON Patch pinned to its uid and resourceVersion (the approval handshake's
    /// requests, [`crate::plan::patch::pod_patch`]); needs `patch` on pods, which only the opt-in RBAC
    /// of `deploy/stepper/approvals/` grants. The default writes nothing and fails: a cluster that
    /// cannot write pods (the simulation, for now) never lets a handshake pass.
    fn patch_pod(
        &self,
        namespace: &str,
        name: &str,
        _patch: &json_patch::Patch,
    ) -> impl Future<Output = Result<PodPatched, ClusterError>> + Send {
        let e = ClusterError::Refused {
            action: format!("patch pod {namespace}/{name}"),
            code: 405,
            message: "this cluster does not write pods".into(),
        };
        async move { Err(e) }
    }

    /// Publish an Event regarding `object`.
    fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> impl Future<Output = Result<(), ClusterError>> + Send;
}

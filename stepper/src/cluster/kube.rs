//! [`Cluster`] over a real API server with kube-rs: the only code in the stepper that talks to it.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{ObjectReference, Pod};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::api::{
    Api, ApiResource, DeleteParams, DynamicObject, ListParams, Patch, PatchParams, Preconditions,
};
use kube::core::{GroupVersionKind, Selector};
use kube::discovery::{self, ApiCapabilities};
use kube::runtime::events::{Event, EventType as KubeEventType, Recorder, Reporter};
use kube::{Client, Resource};
use serde::de::DeserializeOwned;

use crate::cluster::access_review::AccessAnswers;
use crate::cluster::api_error;
use crate::cluster::kube_error::{error, one_line};
use crate::cluster::object::{Object, Placement};
use crate::cluster::{Cluster, ClusterError, DeleteOutcome, PatchOutcome, PodPatched};
use crate::plan::events::{EventNote, EventType};

/// The field manager and Event reporting controller name.
pub const MANAGER: &str = "sts-stepper";

/// Which objects a pass looks at.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Scope {
    /// Namespaces to LIST in, one request each per kind; empty = all namespaces (one request per kind).
    pub namespaces: Vec<String>,
    /// Label selector for StatefulSets (`--selector`, e.g. `tier=db`); pods and PDBs are not filtered.
    pub label_selector: Option<String>,
    /// Field selector for StatefulSets (`metadata.name=web` for the single-set subcommands).
    pub field_selector: Option<String>,
}

/// A [`Cluster`] backed by a kube-rs [`Client`]. LISTs are consistent reads (no `resourceVersion=0`):
/// the gates judge pod health on them and `wait` must never see an older StatefulSet than the one just
/// applied; Kubernetes ≥ 1.31 serves them from the watch cache.
#[derive(Clone)]
pub struct KubeCluster {
    client: Client,
    scope: Scope,
    recorder: Recorder,
    /// Discovery answers for owner kinds (`OwnerNotHealthy`), so each kind costs one discovery request
    /// per process. Caches API shape only, never rollout state.
    resources: Arc<Mutex<HashMap<GroupVersionKind, (ApiResource, ApiCapabilities)>>>,
    /// The access reviews' answers ([`AccessAnswers`]), kept a few minutes per question.
    access: AccessAnswers,
}

impl KubeCluster {
    /// A cluster over `client`, limited to `scope`. Events are reported by controller `sts-stepper`,
    /// instance `instance` (the pod name, when known).
    pub fn new(client: Client, scope: Scope, instance: Option<String>) -> Self {
        let reporter = Reporter {
            controller: MANAGER.into(),
            instance,
        };
        KubeCluster {
            recorder: Recorder::new(client.clone(), reporter),
            client,
            scope,
            resources: Arc::default(),
            access: AccessAnswers::default(),
        }
    }

    /// The scope this cluster lists.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// The kube-rs client (for the watcher in `watch`).
    pub fn client(&self) -> &Client {
        &self.client
    }

    /// The API resource of `gvk` (its plural and scope), by API discovery of its group/version.
    async fn resource(
        &self,
        gvk: &GroupVersionKind,
    ) -> Result<(ApiResource, ApiCapabilities), ClusterError> {
        if let Some(found) = self
            .resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(gvk)
        {
            return Ok(found.clone());
        }
        let found = discovery::pinned_kind(&self.client, gvk)
            .await
            .map_err(|e| {
                error(
                    format!("discover {} {}/{}", gvk.kind, gvk.group, gvk.version),
                    e,
                )
            })?;
        self.resources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(gvk.clone(), found.clone());
        Ok(found)
    }

    async fn list<K>(&self, kind: &str, params: &ListParams) -> Result<Vec<K>, ClusterError>
    where
        K: Resource<Scope = k8s_openapi::NamespaceResourceScope>
            + Clone
            + DeserializeOwned
            + std::fmt::Debug,
        K::DynamicType: Default,
    {
        if self.scope.namespaces.is_empty() {
            let api: Api<K> = Api::all(self.client.clone());
            let list = api
                .list(params)
                .await
                .map_err(|e| error(format!("list {kind} in all namespaces"), e))?;
            return Ok(list.items);
        }
        let mut items = Vec::new();
        for ns in &self.scope.namespaces {
            let api: Api<K> = Api::namespaced(self.client.clone(), ns);
            let list = api
                .list(params)
                .await
                .map_err(|e| error(format!("list {kind} in namespace {ns}"), e))?;
            items.extend(list.items);
        }
        Ok(items)
    }
}

impl Cluster for KubeCluster {
    async fn list_statefulsets(&self) -> Result<Vec<Arc<StatefulSet>>, ClusterError> {
        let mut params = ListParams::default();
        if let Some(labels) = &self.scope.label_selector {
            params = params.labels(labels);
        }
        if let Some(fields) = &self.scope.field_selector {
            params = params.fields(fields);
        }
        let sets: Vec<StatefulSet> = self.list("statefulsets", &params).await?;
        Ok(sets.into_iter().map(Arc::new).collect())
    }

    async fn list_pods(&self) -> Result<Vec<Pod>, ClusterError> {
        self.list("pods", &ListParams::default()).await
    }

    /// One LIST by `selector`: the API server cannot filter by owner, so `owners` is not sent.
    async fn list_set_pods(
        &self,
        namespace: &str,
        selector: &Selector,
        _owners: &[String],
    ) -> Result<Vec<Pod>, ClusterError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = ListParams::default().labels_from(selector);
        api.list(&params).await.map(|l| l.items).map_err(|e| {
            error(
                format!("list pods in namespace {namespace} ({selector})"),
                e,
            )
        })
    }

    async fn get_statefulset(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<StatefulSet>, ClusterError> {
        let api: Api<StatefulSet> = Api::namespaced(self.client.clone(), namespace);
        api.get_opt(name)
            .await
            .map_err(|e| error(format!("get statefulset {namespace}/{name}"), e))
    }

    async fn list_pdbs(&self) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        self.list("poddisruptionbudgets", &ListParams::default())
            .await
    }

    async fn list_namespace_pdbs(
        &self,
        namespace: &str,
    ) -> Result<Vec<PodDisruptionBudget>, ClusterError> {
        let api: Api<PodDisruptionBudget> = Api::namespaced(self.client.clone(), namespace);
        api.list(&ListParams::default())
            .await
            .map(|l| l.items)
            .map_err(|e| {
                error(
                    format!("list poddisruptionbudgets in namespace {namespace}"),
                    e,
                )
            })
    }

    async fn patch_statefulset(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PatchOutcome, ClusterError> {
        let api: Api<StatefulSet> = Api::namespaced(self.client.clone(), namespace);
        let params = PatchParams {
            field_manager: Some(MANAGER.into()),
            ..PatchParams::default()
        };
        match api
            .patch(name, &params, &Patch::Json::<()>(patch.clone()))
            .await
        {
            Ok(set) => Ok(PatchOutcome::Applied(Box::new(set))),
            // A lost race or a gone set is re-read next pass; a rejected write is an error.
            Err(kube::Error::Api(status))
                if api_error::classify(&status).is_retried_next_pass() =>
            {
                Ok(PatchOutcome::Conflict(one_line(&status.message)))
            }
            Err(e) => Err(error(format!("patch statefulset {namespace}/{name}"), e)),
        }
    }

    async fn get_owner(
        &self,
        namespace: &str,
        owner: &OwnerReference,
    ) -> Result<Option<serde_json::Value>, ClusterError> {
        let (group, version) = owner
            .api_version
            .split_once('/')
            .unwrap_or(("", owner.api_version.as_str()));
        let gvk = GroupVersionKind::gvk(group, version, &owner.kind);
        let (resource, caps) = self.resource(&gvk).await?;
        let api: Api<DynamicObject> = match caps.scope {
            discovery::Scope::Namespaced => {
                Api::namespaced_with(self.client.clone(), namespace, &resource)
            }
            discovery::Scope::Cluster => Api::all_with(self.client.clone(), &resource),
        };
        let action = || format!("get {} {namespace}/{}", resource.plural, owner.name);
        match api.get_opt(&owner.name).await {
            Ok(Some(object)) => {
                serde_json::to_value(object)
                    .map(Some)
                    .map_err(|e| ClusterError::Transport {
                        action: action(),
                        message: e.to_string(),
                    })
            }
            Ok(None) => Ok(None),
            Err(e) => Err(error(action(), e)),
        }
    }

    /// One GET through kube-rs' `Api<K>`, in `namespace` for a namespaced kind.
    async fn get<K: Object>(&self, namespace: &str, name: &str) -> Result<Option<K>, ClusterError> {
        let api: Api<K> = <K::Scope as Placement>::api(self.client.clone(), Some(namespace));
        api.get_opt(name)
            .await
            .map_err(|e| error(format!("get {}", K::named(namespace, name)), e))
    }

    /// One LIST through kube-rs' `Api<K>`; `PartialObjectMeta<K>` asks for the metadata only.
    async fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<K>, ClusterError> {
        let api: Api<K> = <K::Scope as Placement>::api(self.client.clone(), namespace);
        let mut params = ListParams::default();
        if let Some(labels) = labels {
            params = params.labels(labels);
        }
        api.list(&params)
            .await
            .map(|l| l.items)
            .map_err(|e| error(format!("list {}", K::listed(namespace, labels)), e))
    }

    async fn can_i<K: Object>(&self, verb: &str, namespace: &str) -> Result<bool, ClusterError> {
        self.access.may::<K>(&self.client, verb, namespace).await
    }

    async fn delete_pod(
        &self,
        namespace: &str,
        name: &str,
        uid: &str,
        resource_version: &str,
    ) -> Result<DeleteOutcome, ClusterError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = DeleteParams {
            preconditions: Some(Preconditions {
                uid: Some(uid.into()),
                resource_version: Some(resource_version.into()),
            }),
            ..DeleteParams::default()
        };
        let action = || format!("delete pod {namespace}/{name}");
        match api.delete(name, &params).await {
            Ok(_) => Ok(DeleteOutcome::Deleted),
            Err(kube::Error::Api(status))
                if api_error::classify(&status).is_retried_next_pass() =>
            {
                Ok(DeleteOutcome::Conflict(one_line(&status.message)))
            }
            Err(kube::Error::Api(status)) if status.code == 403 => Err(ClusterError::Refused {
                action: action(),
                code: 403,
                message: format!(
                    "{}; stuck-pod recovery needs pod delete: apply the opt-in kustomize Component \
                     deploy/stepper/recovery/, or run without --recover-stuck-pods",
                    one_line(&api_error::classify(&status))
                ),
            }),
            Err(e) => Err(error(action(), e)),
        }
    }

    async fn patch_pod(
        &self,
        namespace: &str,
        name: &str,
        patch: &json_patch::Patch,
    ) -> Result<PodPatched, ClusterError> {
        let api: Api<Pod> = Api::namespaced(self.client.clone(), namespace);
        let params = PatchParams {
            field_manager: Some(MANAGER.into()),
            ..PatchParams::default()
        };
        let action = || format!("patch pod {namespace}/{name}");
        match api
            .patch(name, &params, &Patch::Json::<()>(patch.clone()))
            .await
        {
            Ok(_) => Ok(PodPatched::Applied),
            Err(kube::Error::Api(status))
                if api_error::classify(&status).is_retried_next_pass() =>
            {
                Ok(PodPatched::Conflict(one_line(&status.message)))
            }
            Err(kube::Error::Api(status)) if status.code == 403 => Err(ClusterError::Refused {
                action: action(),
                code: 403,
                message: format!(
                    "{}; the approval handshake (pre-update-approval) needs pod patch: apply the \
                     opt-in kustomize Component deploy/stepper/approvals/",
                    one_line(&api_error::classify(&status))
                ),
            }),
            Err(e) => Err(error(action(), e)),
        }
    }

    async fn publish_event(
        &self,
        object: &ObjectReference,
        event: &EventNote,
    ) -> Result<(), ClusterError> {
        let ev = Event {
            type_: match event.type_ {
                EventType::Normal => KubeEventType::Normal,
                EventType::Warning => KubeEventType::Warning,
            },
            reason: event.reason.clone(),
            note: Some(event.note.clone()),
            action: event.action.clone(),
            secondary: None,
        };
        self.recorder.publish(&ev, object).await.map_err(|e| {
            error(
                format!(
                    "publish event {} on statefulset {}/{}",
                    event.reason,
                    object.namespace.as_deref().unwrap_or(""),
                    object.name.as_deref().unwrap_or("")
                ),
                e,
            )
        })
    }
}

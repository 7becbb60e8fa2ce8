//! What a typed read returns ([`Object`]): any kind k8s-openapi types — or its metadata alone,
//! `kube::core::PartialObjectMeta<K>`, which kube-rs asks for with the metadata-only `Accept` header —
//! addressed within a namespace or cluster-wide as the kind's scope says ([`Placement`]), and named in
//! messages as kubectl names it ([`Object::named`], [`Object::listed`]).
//!
//! The model is kube-rs' own typed access, `Api<K>` for `K: Resource`: one GET and one LIST for every
//! kind ([`crate::cluster::Cluster::get`], [`crate::cluster::Cluster::list`]), so a read of a kind
//! the stepper has not read before needs no new method.

use std::fmt::Debug;

use k8s_openapi::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Api, Client, Resource};
use serde::de::DeserializeOwned;

/// Where the objects of a kind live: in a namespace (`NamespaceResourceScope`) or cluster-wide
/// (`ClusterResourceScope`), the scope k8s-openapi gives each kind.
pub trait Placement {
    /// True for a namespaced kind.
    const NAMESPACED: bool;

    /// The kube-rs `Api` of `K`: in `namespace` (a namespaced kind; `None`: every namespace, which
    /// can only LIST), or cluster-wide (a cluster-scoped kind; `namespace` is ignored).
    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>;
}

impl Placement for NamespaceResourceScope {
    const NAMESPACED: bool = true;

    fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>,
    {
        match namespace {
            Some(ns) => Api::namespaced(client, ns),
            None => Api::all(client),
        }
    }
}

impl Placement for ClusterResourceScope {
    const NAMESPACED: bool = false;

    fn api<K>(client: Client, _namespace: Option<&str>) -> Api<K>
    where
        K: Resource<Scope = Self, DynamicType = ()>,
    {
        Api::all(client)
    }
}

/// A kind a typed GET or LIST returns: its group, version, kind and plural known at compile time
/// (every k8s-openapi type, and `PartialObjectMeta` of one), decoded from the API server's JSON.
pub trait Object:
    Resource<DynamicType = (), Scope: Placement>
    + Clone
    + Debug
    + DeserializeOwned
    + Send
    + Sync
    + 'static
{
    /// `apiVersion` and `kind` as an object of this kind carries them: (`apps/v1`,
    /// `ControllerRevision`).
    fn api_version_and_kind() -> (String, String) {
        (
            Self::api_version(&()).into_owned(),
            Self::kind(&()).into_owned(),
        )
    }

    /// True for a namespaced kind.
    fn namespaced() -> bool {
        <Self::Scope as Placement>::NAMESPACED
    }

    /// One object as a GET's action names it: `controllerrevision demo/web-6d4b`, `namespace db` (a
    /// cluster-scoped kind has no namespace).
    fn named(namespace: &str, name: &str) -> String {
        let kind = Self::kind(&()).to_lowercase();
        if Self::namespaced() {
            format!("{kind} {namespace}/{name}")
        } else {
            format!("{kind} {name}")
        }
    }

    /// A LIST as its action names it: `poddisruptionbudgets in namespace demo`, `pods in all
    /// namespaces`, `namespaces`, followed by ` (<labels>)` when a label selector is sent.
    fn listed(namespace: Option<&str>, labels: Option<&str>) -> String {
        let plural = Self::plural(&());
        let mut text = match (Self::namespaced(), namespace) {
            (true, Some(ns)) => format!("{plural} in namespace {ns}"),
            (true, None) => format!("{plural} in all namespaces"),
            (false, _) => plural.into_owned(),
        };
        if let Some(labels) = labels {
            text.push_str(&format!(" ({labels})"));
        }
        text
    }
}

impl<K> Object for K where
    K: Resource<DynamicType = (), Scope: Placement>
        + Clone
        + Debug
        + DeserializeOwned
        + Send
        + Sync
        + 'static
{
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::apps::v1::ControllerRevision;
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    use kube::core::PartialObjectMeta;

    use super::*;

    #[test]
    fn kinds_are_named_as_kubectl_names_them_with_their_scope() {
        assert_eq!(
            ControllerRevision::named("demo", "web-6d4b"),
            "controllerrevision demo/web-6d4b"
        );
        assert_eq!(Namespace::named("", "db"), "namespace db");
        assert_eq!(
            Pod::listed(Some("demo"), Some("app=web")),
            "pods in namespace demo (app=web)"
        );
        assert_eq!(Pod::listed(None, None), "pods in all namespaces");
        type NamespaceMeta = PartialObjectMeta<Namespace>;
        assert_eq!(
            NamespaceMeta::listed(None, Some("guard=true")),
            "namespaces (guard=true)"
        );
        assert_eq!(
            NamespaceMeta::api_version_and_kind(),
            ("v1".to_string(), "Namespace".to_string())
        );
        assert!(Pod::namespaced() && !Namespace::namespaced());
        assert_eq!(
            ControllerRevision::api_version_and_kind().0,
            "apps/v1",
            "the group's version"
        );
    }
}

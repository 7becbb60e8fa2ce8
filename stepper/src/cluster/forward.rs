//! One way to wrap a [`Cluster`](super::Cluster): [`forward_cluster!`] writes the methods a wrapper
//! passes through to the cluster it wraps, so a wrapper states only what it changes.

/// Inside an `impl Cluster for W` block: each named [`Cluster`](crate::cluster::Cluster) method
/// forwarded unchanged to `self.<field>` (a field holding a `&impl Cluster`).
///
/// ```text
/// impl<C: Cluster> Cluster for LeaderCluster<'_, C> {
///     forward_cluster!(inner => list_statefulsets, list_pods, get_owner);
///     async fn patch_statefulset(/* … */) { /* check, then forward */ }
/// }
/// ```
///
/// Every method of the trait can be named; the signatures are the trait's, so a change of the trait
/// is a change here only.
macro_rules! forward_cluster {
    ($field:ident => $($method:ident),+ $(,)?) => {
        $( $crate::cluster::forward::forward_cluster!(@one $field $method); )+
    };
    (@one $field:ident list_statefulsets) => {
        fn list_statefulsets(
            &self,
        ) -> impl ::std::future::Future<
            Output = Result<
                Vec<::std::sync::Arc<::k8s_openapi::api::apps::v1::StatefulSet>>,
                $crate::cluster::ClusterError,
            >,
        > + Send {
            self.$field.list_statefulsets()
        }
    };
    (@one $field:ident list_parsed_statefulsets) => {
        fn list_parsed_statefulsets(
            &self,
            keys: &::std::sync::Arc<$crate::config::Keys>,
        ) -> impl ::std::future::Future<
            Output = Result<Vec<$crate::cluster::ParsedSet>, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.list_parsed_statefulsets(keys)
        }
    };
    (@one $field:ident list_pods) => {
        fn list_pods(
            &self,
        ) -> impl ::std::future::Future<
            Output = Result<Vec<::k8s_openapi::api::core::v1::Pod>, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.list_pods()
        }
    };
    (@one $field:ident list_set_pods) => {
        fn list_set_pods(
            &self,
            namespace: &str,
            selector: &::kube::core::Selector,
            owners: &[String],
        ) -> impl ::std::future::Future<
            Output = Result<Vec<::k8s_openapi::api::core::v1::Pod>, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.list_set_pods(namespace, selector, owners)
        }
    };
    (@one $field:ident cached) => {
        fn cached(&self) -> bool {
            self.$field.cached()
        }
    };
    (@one $field:ident get_statefulset) => {
        fn get_statefulset(
            &self,
            namespace: &str,
            name: &str,
        ) -> impl ::std::future::Future<
            Output = Result<
                Option<::k8s_openapi::api::apps::v1::StatefulSet>,
                $crate::cluster::ClusterError,
            >,
        > + Send {
            self.$field.get_statefulset(namespace, name)
        }
    };
    (@one $field:ident list_set_pods_consistent) => {
        fn list_set_pods_consistent(
            &self,
            namespace: &str,
            selector: &::kube::core::Selector,
            owners: &[String],
        ) -> impl ::std::future::Future<
            Output = Result<Vec<::k8s_openapi::api::core::v1::Pod>, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.list_set_pods_consistent(namespace, selector, owners)
        }
    };
    (@one $field:ident list_pdbs) => {
        fn list_pdbs(
            &self,
        ) -> impl ::std::future::Future<
            Output = Result<
                Vec<::k8s_openapi::api::policy::v1::PodDisruptionBudget>,
                $crate::cluster::ClusterError,
            >,
        > + Send {
            self.$field.list_pdbs()
        }
    };
    (@one $field:ident list_namespace_pdbs) => {
        fn list_namespace_pdbs(
            &self,
            namespace: &str,
        ) -> impl ::std::future::Future<
            Output = Result<
                Vec<::k8s_openapi::api::policy::v1::PodDisruptionBudget>,
                $crate::cluster::ClusterError,
            >,
        > + Send {
            self.$field.list_namespace_pdbs(namespace)
        }
    };
    (@one $field:ident patch_statefulset) => {
        fn patch_statefulset(
            &self,
            namespace: &str,
            name: &str,
            patch: &::json_patch::Patch,
        ) -> impl ::std::future::Future<
            Output = Result<$crate::cluster::PatchOutcome, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.patch_statefulset(namespace, name, patch)
        }
    };
    (@one $field:ident get_owner) => {
        fn get_owner(
            &self,
            namespace: &str,
            owner: &::k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference,
        ) -> impl ::std::future::Future<
            Output = Result<Option<::serde_json::Value>, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.get_owner(namespace, owner)
        }
    };
    (@one $field:ident get_controller_revision) => {
        fn get_controller_revision(
            &self,
            namespace: &str,
            name: &str,
        ) -> impl ::std::future::Future<
            Output = Result<
                Option<::k8s_openapi::api::apps::v1::ControllerRevision>,
                $crate::cluster::ClusterError,
            >,
        > + Send {
            self.$field.get_controller_revision(namespace, name)
        }
    };
    (@one $field:ident list_namespaces) => {
        fn list_namespaces(
            &self,
            selector: &str,
        ) -> impl ::std::future::Future<Output = Result<Vec<String>, $crate::cluster::ClusterError>>
        + Send {
            self.$field.list_namespaces(selector)
        }
    };
    (@one $field:ident may_delete_pods) => {
        fn may_delete_pods(
            &self,
            namespace: &str,
        ) -> impl ::std::future::Future<Output = Result<bool, $crate::cluster::ClusterError>> + Send
        {
            self.$field.may_delete_pods(namespace)
        }
    };
    (@one $field:ident delete_pod) => {
        fn delete_pod(
            &self,
            namespace: &str,
            name: &str,
            uid: &str,
            resource_version: &str,
        ) -> impl ::std::future::Future<
            Output = Result<$crate::cluster::DeleteOutcome, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.delete_pod(namespace, name, uid, resource_version)
        }
    };
    (@one $field:ident patch_pod) => {
        fn patch_pod(
            &self,
            namespace: &str,
            name: &str,
            patch: &::json_patch::Patch,
        ) -> impl ::std::future::Future<
            Output = Result<$crate::cluster::PodPatched, $crate::cluster::ClusterError>,
        > + Send {
            self.$field.patch_pod(namespace, name, patch)
        }
    };
    (@one $field:ident publish_event) => {
        fn publish_event(
            &self,
            object: &::k8s_openapi::api::core::v1::ObjectReference,
            event: &$crate::plan::events::EventNote,
        ) -> impl ::std::future::Future<Output = Result<(), $crate::cluster::ClusterError>> + Send {
            self.$field.publish_event(object, event)
        }
    };
}

pub(crate) use forward_cluster;

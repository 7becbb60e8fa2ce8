//! The simulated API server's typed GET and LIST of any kind ([`Cluster::get`], [`Cluster::list`]):
//! the objects the world stores of that kind ([`World::stored`]), found by namespace, name and labels
//! and decoded as the kind, after an injected fault on any call (`Call::Any`).
//!
//! [`Cluster::get`]: crate::cluster::Cluster::get
//! [`Cluster::list`]: crate::cluster::Cluster::list

use std::collections::BTreeMap;

use kube::core::{Selector, SelectorExt};
use serde_json::Value;

use super::cluster::{Call, SimCluster};
use super::world::World;
use crate::cluster::ClusterError;
use crate::cluster::object::Object;
use crate::config::approval::parse_selector;

impl World {
    /// The stored objects of kind `K` (JSON) in `namespace` (`None`, or a cluster-scoped kind: in any),
    /// named `name` (`None`: any name), whose labels `selector` matches (`None`: any labels).
    pub fn find<K: Object>(
        &self,
        namespace: Option<&str>,
        name: Option<&str>,
        selector: Option<&Selector>,
    ) -> Vec<Value> {
        let (api_version, kind) = K::api_version_and_kind();
        let mut found = self.stored(&api_version, &kind);
        found.retain(|o| {
            let meta = &o["metadata"];
            let labels = || -> BTreeMap<String, String> {
                serde_json::from_value(meta["labels"].clone()).unwrap_or_default()
            };
            (!K::namespaced() || namespace.is_none_or(|ns| meta["namespace"] == ns))
                && name.is_none_or(|n| meta["name"] == n)
                && selector.is_none_or(|s| s.matches(&labels()))
        });
        found
    }
}

/// `object` as a `K`; an object that does not decode is a bug in the simulation, answered 500.
fn decode<K: Object>(action: &str, object: Value) -> Result<K, ClusterError> {
    serde_json::from_value(object).map_err(|e| ClusterError::Api {
        action: action.to_string(),
        code: 500,
        message: format!("the stored object does not decode: {e}"),
    })
}

impl SimCluster {
    /// [`crate::cluster::Cluster::get`] on the world.
    pub(super) fn do_get<K: Object>(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<K>, ClusterError> {
        let action = format!("get {}", K::named(namespace, name));
        if let Some(kind) = self.fault(Call::Any) {
            return Err(Self::error(&action, kind));
        }
        let found = self.world().find::<K>(Some(namespace), Some(name), None);
        found
            .into_iter()
            .next()
            .map(|o| decode(&action, o))
            .transpose()
    }

    /// [`crate::cluster::Cluster::list`] on the world; a selector that does not parse is a 400, as
    /// the API server answers it.
    pub(super) fn do_list<K: Object>(
        &self,
        namespace: Option<&str>,
        labels: Option<&str>,
    ) -> Result<Vec<K>, ClusterError> {
        let action = format!("list {}", K::listed(namespace, labels));
        if let Some(kind) = self.fault(Call::Any) {
            return Err(Self::error(&action, kind));
        }
        let selector = match labels.map(parse_selector).transpose() {
            Ok(s) => s,
            Err(message) => {
                return Err(ClusterError::Api {
                    action,
                    code: 400,
                    message,
                });
            }
        };
        let found = self.world().find::<K>(namespace, None, selector.as_ref());
        found.into_iter().map(|o| decode(&action, o)).collect()
    }
}

#[cfg(test)]
mod tests {
    use futures::executor::block_on;
    use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    use k8s_openapi::api::policy::v1::PodDisruptionBudget;

    use super::*;
    use crate::cluster::Cluster;
    use crate::sim::kubelet::Timing;
    use crate::sim::world::SetShape;

    fn web() -> SimCluster {
        let shape = SetShape {
            name: "web".into(),
            namespace: "demo".into(),
            replicas: 3,
            pod_management_policy: "OrderedReady".into(),
            min_ready_seconds: 0,
            image: "v1".into(),
        };
        let mut world =
            World::new(&shape, Timing::default(), false, "safe-rollout.dev", 1).expect("world");
        world.pdb_max_unavailable = Some(1);
        SimCluster::new(world)
    }

    #[test]
    fn each_kind_the_world_stores_is_read_by_kind_and_any_other_is_absent() {
        let sim = web();
        let get = |name: &str| block_on(sim.get::<Pod>("demo", name)).expect("get");
        assert_eq!(
            get("web-1").and_then(|p| p.metadata.name).as_deref(),
            Some("web-1")
        );
        assert_eq!(get("web-9"), None);
        assert_eq!(
            block_on(sim.get::<Pod>("other", "web-1")),
            Ok(None),
            "namespaced"
        );
        let set = block_on(sim.get::<StatefulSet>("demo", "web")).expect("get");
        assert_eq!(set.and_then(|s| s.spec).map(|s| s.replicas), Some(Some(3)));
        let pdbs = block_on(sim.list::<PodDisruptionBudget>(Some("demo"), None)).expect("list");
        assert_eq!(pdbs.len(), 1);
        let current = sim.world().status_str("currentRevision");
        let revisions = block_on(sim.list::<ControllerRevision>(None, None)).expect("list");
        let names: Vec<_> = revisions
            .iter()
            .filter_map(|r| r.metadata.name.clone())
            .collect();
        assert_eq!(names, vec![current]);
        // Labels: the pods carry `app=web`.
        let pods = |labels| block_on(sim.list::<Pod>(Some("demo"), Some(labels))).expect("list");
        assert_eq!(pods("app=web").len(), 3);
        assert!(pods("app=db").is_empty());
        // No namespace is stored: none listed, none found.
        assert!(
            block_on(sim.list::<Namespace>(None, Some("guard=true")))
                .expect("list")
                .is_empty()
        );
        assert_eq!(block_on(sim.get::<Namespace>("", "demo")), Ok(None));
        assert_eq!(block_on(sim.list_namespaces("guard=true")), Ok(vec![]));
    }

    #[test]
    fn a_selector_that_does_not_parse_is_a_400_naming_the_list() {
        let sim = web();
        let Err(e) = block_on(sim.list::<Pod>(Some("demo"), Some("app in (web"))) else {
            panic!("parsed");
        };
        assert_eq!(e.code(), Some(400));
        assert_eq!(e.action(), "list pods in namespace demo (app in (web)");
    }
}

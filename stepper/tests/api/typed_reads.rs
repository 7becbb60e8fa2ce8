//! The typed reads of any kind (issue 44 item 6): `Cluster::get::<K>` and `Cluster::list::<K>` through
//! kube-rs against a mocked API server — one request at the kind's own URL (a namespaced kind in its
//! namespace, a cluster-scoped one without), the label selector sent as written, the answer decoded as
//! the kind; a 404 is `None`; a 403 is `Refused` naming the read and the missing rule, another error
//! status an `ApiStatus` error; an access question (`can_i`) names the kind's group and resource.

use crate::mock_api::*;
use http::Method;
use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use serde_json::json;
use sts_stepper::cluster::kube::Scope;
use sts_stepper::cluster::{Cluster, ClusterError};

fn body(value: serde_json::Value) -> Vec<u8> {
    serde_json::to_vec(&value).expect("json")
}

#[tokio::test]
async fn a_kind_never_read_before_is_one_get_at_its_own_url() {
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "sts-stepper", "namespace": "sts-safe-rollout"},
        "spec": {"holderIdentity": "replica-a"}});
    let namespace = json!({"apiVersion": "v1", "kind": "Namespace",
        "metadata": {"name": "db", "labels": {"guard": "true"}}});
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![
            get(
                "/apis/coordination.k8s.io/v1/namespaces/sts-safe-rollout/leases/sts-stepper",
                body(lease),
            ),
            get("/api/v1/namespaces/db", body(namespace)),
        ],
    );
    let lease = cluster
        .get::<Lease>("sts-safe-rollout", "sts-stepper")
        .await
        .expect("read")
        .expect("found");
    // A cluster-scoped kind: the namespace is not part of its URL.
    let ns = cluster
        .get::<Namespace>("ignored", "db")
        .await
        .expect("read")
        .expect("found");
    drop(cluster);
    assert_eq!(server.await.expect("script: two GETs").len(), 2);
    let holder = lease.spec.and_then(|s| s.holder_identity);
    assert_eq!(holder.as_deref(), Some("replica-a"));
    assert_eq!(ns.metadata.name.as_deref(), Some("db"));
}

#[tokio::test]
async fn a_list_sends_its_namespace_and_label_selector_and_returns_the_items() {
    let maps = json!({"apiVersion": "v1", "kind": "ConfigMapList", "metadata": {}, "items": [
        {"metadata": {"name": "web-config", "namespace": "demo", "labels": {"app": "web"}},
         "data": {"mode": "primary"}}]});
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![
            get(
                "/api/v1/namespaces/demo/configmaps?&labelSelector=app%3Dweb",
                body(maps),
            ),
            get(PODS_ALL, empty_list("PodList")),
        ],
    );
    let maps = cluster
        .list::<ConfigMap>(Some("demo"), Some("app=web"))
        .await
        .expect("list");
    let pods = cluster.list::<Pod>(None, None).await.expect("list");
    drop(cluster);
    assert_eq!(server.await.expect("script: two LISTs").len(), 2);
    assert_eq!(maps.len(), 1);
    let data = maps[0].data.as_ref().expect("data");
    assert_eq!(data.get("mode").map(String::as_str), Some("primary"));
    assert!(pods.is_empty());
}

#[tokio::test]
async fn errors_are_classified_and_name_the_read() {
    let forbidden = status_body(
        403,
        "Forbidden",
        "configmaps is forbidden: User \"system:serviceaccount:sts-safe-rollout:sts-stepper\" \
         cannot list resource \"configmaps\" in API group \"\" in the namespace \"demo\"",
    );
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![
            expect(
                Method::GET,
                "/api/v1/namespaces/demo/configmaps?&labelSelector=app%3Dweb",
                403,
                forbidden,
            ),
            expect(
                Method::GET,
                "/api/v1/namespaces/demo/configmaps/gone",
                404,
                status_body(404, "NotFound", "configmaps \"gone\" not found"),
            ),
            expect(
                Method::GET,
                "/api/v1/namespaces/demo/configmaps/web",
                500,
                status_body(500, "InternalError", "etcdserver: request timed out"),
            ),
        ],
    );
    let refused = cluster
        .list::<ConfigMap>(Some("demo"), Some("app=web"))
        .await;
    let gone = cluster.get::<ConfigMap>("demo", "gone").await;
    let failed = cluster.get::<ConfigMap>("demo", "web").await;
    drop(cluster);
    server.await.expect("script");
    let Err(e @ ClusterError::Refused { code: 403, .. }) = &refused else {
        panic!("{refused:?}");
    };
    let text = e.to_string();
    assert!(
        text.starts_with("list configmaps in namespace demo (app=web): "),
        "{text}"
    );
    assert!(
        text.contains(r#"missing RBAC rule: verb "list", resource "configmaps""#),
        "{text}"
    );
    assert_eq!(gone, Ok(None));
    let Err(e) = failed else { panic!("{failed:?}") };
    assert_eq!((e.reason(), e.code()), ("ApiStatus", Some(500)));
    assert_eq!(e.action(), "get configmap demo/web");
}

#[tokio::test]
async fn an_access_question_names_the_kind_s_group_and_resource_and_is_asked_once() {
    const SSAR: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?";
    let review = |allowed: bool| {
        body(
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {}, "status": {"allowed": allowed}}),
        )
    };
    let (cluster, server) = mock_cluster(
        Scope::default(),
        vec![
            expect(Method::POST, SSAR, 201, review(true)),
            expect(Method::POST, SSAR, 201, review(false)),
        ],
    );
    let patch_sets = cluster.can_i::<StatefulSet>("patch", "demo").await;
    let again = cluster.can_i::<StatefulSet>("patch", "demo").await;
    // Another question (verb and kind): asked anew.
    let delete_pods = cluster.may_delete_pods("demo").await;
    drop(cluster);
    let seen = server
        .await
        .expect("script: two reviews, the repeated one kept");
    assert_eq!(
        (patch_sets, again, delete_pods),
        (Ok(true), Ok(true), Ok(false))
    );
    assert_eq!(
        seen[0].body["spec"]["resourceAttributes"],
        json!({"namespace": "demo", "verb": "patch", "group": "apps", "resource": "statefulsets"})
    );
    assert_eq!(
        seen[1].body["spec"]["resourceAttributes"],
        json!({"namespace": "demo", "verb": "delete", "resource": "pods"}),
        "the core group is sent as none"
    );
}

//! Pod ordinal ↔ member: what a rollout's replay looks up when the controller replaces a pod.

use crate::systems::StatefulSetMap;

#[test]
fn a_pod_maps_to_the_member_of_its_ordinal_and_back() {
    let map = StatefulSetMap::new("pg", vec!["pg-0".into(), "pg-1".into(), "pg-2".into()]);
    assert_eq!(map.pod(2), "pg-2");
    assert_eq!(map.member_of_pod("pg-1"), Some("pg-1"));
    assert_eq!(map.ordinal("pg-2"), Some(2));
    // Not this set's pods: another set's, an ordinal past the replicas, a prefix that only looks alike.
    assert_eq!(map.ordinal("web-1"), None);
    assert_eq!(map.ordinal("pg-3"), None);
    assert_eq!(map.ordinal("pgx-1"), None);
    // A simulated set named otherwise keeps the members.
    let web = map.renamed("web");
    assert_eq!(web.member_of_pod("web-0"), Some("pg-0"));
    assert_eq!(web.pod_of_member("pg-2").as_deref(), Some("web-2"));
    assert_eq!(web.member_of_pod("pg-0"), None);
}

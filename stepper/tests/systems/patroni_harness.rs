//! The Patroni cluster: how it comes up, maintenance mode, the REST API's basic auth, a lagging replica.

use std::time::Duration;

use reqwest::Method;
use serde_json::json;

use crate::systems::net::call;
use crate::systems::patroni::Patroni;
use crate::systems::shared::{self, FIRST_REVISION};
use crate::{print_startups, until};

/// Seconds the cluster may take to have every replica streaming again.
pub const HEALTHY: Duration = Duration::from_secs(90);

/// The replicas, in name order.
pub async fn replicas(pg: &Patroni) -> Vec<String> {
    let members = pg.members().await.unwrap();
    members
        .into_iter()
        .filter(|m| m.role != "leader")
        .map(|m| m.name)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_comes_up_with_one_leader_and_two_streaming_replicas() {
    let Some(pg) = shared::patroni().await else {
        return;
    };
    print_startups();
    pg.wait_healthy(HEALTHY).await.unwrap();
    let members = pg.members().await.unwrap();
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["pg-0", "pg-1", "pg-2"], "{members:?}");
    let leader = pg.leader().await.unwrap().unwrap();
    let mut streaming = pg.streaming(&leader).await.unwrap();
    streaming.sort();
    let mut expected = replicas(&pg).await;
    expected.sort();
    assert_eq!(streaming, expected);
    assert_eq!(expected.len(), 2);
    for m in &members {
        assert_eq!(m.state, "running", "{m:?}");
        // Tag `revision`: the first revision, or the one another test restarted the member as.
        assert!(m.revision.is_some(), "{m:?}");
        if m.revision.as_deref() != Some(FIRST_REVISION) {
            assert_eq!(
                m.revision.as_deref(),
                Some(pg.revision(&m.name).as_str()),
                "{m:?}"
            );
        }
    }
    // Each member's PostgreSQL answers on its own port; only the leader accepts writes.
    for m in &members {
        let rows = pg.sql(&m.name, "SELECT pg_is_in_recovery()").await.unwrap();
        let recovering = rows[0][0].as_deref() == Some("t");
        assert_eq!(recovering, m.name != leader, "{m:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_pause_shows_in_cluster_and_needs_the_credentials() {
    let Some(pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    // Without credentials the unsafe endpoint refuses; GET /cluster needs none.
    let url = format!("{}/config", pg.rest_url("pg-0"));
    let (status, text) = call(Method::PATCH, &url, Some(&json!({"pause": true})), &None)
        .await
        .unwrap();
    assert_eq!((status, text.as_str()), (401, "no auth header received"));
    let wrong = Some(("harness".to_string(), "wrong".to_string()));
    let (status, _) = call(Method::PATCH, &url, Some(&json!({"pause": true})), &wrong)
        .await
        .unwrap();
    assert_eq!(status, 401);
    assert_eq!(pg.cluster().await.unwrap().get("pause"), None);
    pg.pause(true).await.unwrap();
    let paused = pg.cluster().await.unwrap();
    pg.pause(false).await.unwrap();
    assert_eq!(paused["pause"], json!(true), "{paused}");
    assert_eq!(pg.cluster().await.unwrap().get("pause"), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_a_replica_whose_wal_receiver_is_stopped_lags_past_the_failover_limit_until_released()
 {
    let Some(pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    let leader = pg.leader().await.unwrap().unwrap();
    let lagging = replicas(&pg).await.remove(0);
    let lag = pg.make_lag(&lagging).unwrap();
    // About 3.5 MB of WAL, past maximum_lag_on_failover (1 MiB).
    pg.sql(&leader, "CREATE TABLE IF NOT EXISTS harness_filler (n int); INSERT INTO harness_filler SELECT generate_series(1, 100000)")
        .await
        .unwrap();
    let lag_of = |name: String| {
        let pg = &pg;
        async move {
            let members = pg.members().await?;
            let m = members.iter().find(|m| m.name == name).ok_or("gone")?;
            Ok::<_, String>((m.lag, m.clone()))
        }
    };
    // The leader publishes its position once a loop (loop_wait 2 s).
    let (behind, took) = until(
        "the replica's lag to pass 1 MiB",
        Duration::from_secs(20),
        || async {
            match lag_of(lagging.clone()).await? {
                (Some(l), _) if l > 1 << 20 => Ok(l),
                (_, m) => Err(format!("{m:?}")),
            }
        },
    )
    .await;
    eprintln!(
        "patroni: {lagging} {behind} bytes behind, seen after {:.1} s",
        took.as_secs_f64()
    );
    // Still a running replica: lag, not state, is what tells.
    let (_, m) = lag_of(lagging.clone()).await.unwrap();
    assert_eq!((m.role.as_str(), m.state.as_str()), ("replica", "running"));
    lag.release();
    until(
        "the replica to catch up",
        Duration::from_secs(60),
        || async {
            match lag_of(lagging.clone()).await? {
                (Some(0), _) => Ok(()),
                (_, m) => Err(format!("{m:?}")),
            }
        },
    )
    .await;
    pg.sql(&leader, "DROP TABLE harness_filler").await.unwrap();
}

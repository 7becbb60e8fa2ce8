//! The built-in Patroni answerer asked directly, against the real cluster: maintenance mode denies, a
//! lagging replica holds the next pod, an unreachable cluster is an error — never an approval.

use std::time::Duration;

use serde_json::{Value, json};
use sts_stepper::cluster::answerer::{Answerers, file};
use sts_stepper::gates::approval::webhook::answer::{Decision, WebhookAnswer};

use crate::patroni_harness::{HEALTHY, replicas};
use crate::patroni_rollout::config;
use crate::systems::{Replace, shared};
use crate::until;

/// An `Update` question about pod `pod` (ordinal `ordinal`) of set `pg` (3 replicas).
pub fn update(pod: &str, ordinal: u32) -> Value {
    json!({
        "apiVersion": "safe-rollout.dev/v1alpha1", "kind": "UpdateApprovalRequest",
        "requestId": "00000000000000aa", "phase": "Update",
        "statefulSet": {"namespace": "db", "name": "pg", "uid": "u", "serviceName": "pg", "startOrdinal": 0},
        "pods": [{"name": pod, "uid": "p", "ordinal": ordinal, "labels": {}, "primary": false}],
        "currentRevision": "a", "updateRevision": "b", "partition": {"from": ordinal + 1, "to": ordinal},
        "replicas": 3, "updatedReplicas": 0, "readyReplicas": 3, "deadline": "2026-11-23T01:30:00Z"
    })
}

fn decision(answer: &WebhookAnswer) -> Option<(Decision, String)> {
    match answer {
        WebhookAnswer::Decided(a) => Some((a.decision, a.reason.clone())),
        WebhookAnswer::Error(_) => None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_answerer_denies_in_maintenance_mode_and_holds_for_a_lagging_replica() {
    let Some(pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    let dir = std::env::temp_dir().join(format!("sts-patroni-ask-{}", std::process::id()));
    let answerers = Answerers::new(file::parse(&config(&pg, &dir)).unwrap());
    let leader = pg.leader().await.unwrap().unwrap();
    let mut others = replicas(&pg).await;
    let (asked, lagging) = (others.remove(0), others.remove(0));
    let ordinal = |m: &str| u32::try_from(pg.pods().ordinal(m).unwrap()).unwrap();
    let question = update(&asked, ordinal(&asked));
    // Healthy: the replica may go (once GET /cluster shows every lag, which the leader publishes once a
    // loop: a cluster just started or just healed may still say "unknown" for a moment).
    until(
        "an Approve of a healthy cluster",
        Duration::from_secs(20),
        || async {
            let a = answerers.answer("pg-main", &question).await;
            match decision(&a) {
                Some((Decision::Approve, _)) => Ok(()),
                _ => Err(format!("{a:?}")),
            }
        },
    )
    .await;
    // Maintenance mode: a denial that says so.
    pg.pause(true).await.unwrap();
    let (answer, _) = until(
        "Patroni to show the pause",
        Duration::from_secs(10),
        || async {
            let a = answerers.answer("pg-main", &question).await;
            match decision(&a) {
                Some((Decision::Deny, why)) => Ok(why),
                _ => Err(format!("{a:?}")),
            }
        },
    )
    .await;
    pg.pause(false).await.unwrap();
    assert!(answer.contains("maintenance mode"), "{answer}");
    // The other replica lagging past 1 MiB holds this one, naming it.
    let lag = pg.make_lag(&lagging).unwrap();
    pg.sql(&leader, "CREATE TABLE IF NOT EXISTS harness_filler (n int); INSERT INTO harness_filler SELECT generate_series(1, 100000)")
        .await
        .unwrap();
    let (why, _) = until(
        "the answer to name the lag",
        Duration::from_secs(30),
        || async {
            let a = answerers.answer("pg-main", &question).await;
            match decision(&a) {
                Some((Decision::Wait, why)) if why.contains(&format!("{lagging} lags")) => Ok(why),
                _ => Err(format!("{a:?}")),
            }
        },
    )
    .await;
    lag.release();
    assert!(why.contains("limit 1048576"), "{why}");
    pg.wait_healthy(HEALTHY).await.unwrap();
    std::fs::remove_dir_all(&dir).ok();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_answerer_with_no_member_reachable_is_an_error_not_an_approval() {
    let text = "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\nanswerers:\n  - name: pg-main\n    serves: [\"db/*\"]\n    timeoutSeconds: 1\n    patroni:\n      address: \"http://127.0.0.1:9\"\n";
    let answerers = Answerers::new(file::parse(text).unwrap());
    match answerers.answer("pg-main", &update("pg-2", 2)).await {
        WebhookAnswer::Error(e) => {
            assert!(
                e.starts_with(
                    "Patroni: no member answered GET /cluster: pg-0 (http://127.0.0.1:9/cluster): "
                ),
                "{e}"
            );
            assert!(e.contains("pg-1") && e.contains("pg-0"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}

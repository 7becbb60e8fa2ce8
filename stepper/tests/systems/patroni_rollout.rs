//! A PostgreSQL StatefulSet run by Patroni rolled out with the built-in Patroni answerer (issue 45, "Done
//! means"): only an annotation on the set and an entry of `--answerer-config`. The leader's pod goes last
//! and only after a switchover, no pod is replaced while its member leads, and a writer loop against the
//! leader loses no acknowledged row.

use std::time::Duration;

use reqwest::Method;

use sts_stepper::cluster::answerer::{Answerers, file};

use crate::patroni_harness::HEALTHY;
use crate::rollout::{Cadence, Led, Mode, roll, roll_with};
use crate::systems::net::call;
use crate::systems::patroni::Patroni;
use crate::systems::{Replace, next_run, shared};

/// The whole rollout's bound: three members restarted, one switchover, each replica caught up.
const LIMIT: Duration = Duration::from_secs(240);

impl Led for Patroni {
    async fn leader(&self) -> Result<Option<String>, String> {
        Patroni::leader(self).await
    }
}

/// The `--answerer-config` text for `pg`: entry `pg-main`, each pod's REST API given by hand (the
/// members listen on 127.0.0.1 ports), the REST API's credentials from files under `dir`.
pub fn config(pg: &Patroni, dir: &std::path::Path) -> String {
    let mut members = String::new();
    for i in 0..pg.pods().len() {
        let name = pg.pods().member(i).expect("member").to_string();
        members.push_str(&format!(
            "        {}: \"{}\"\n",
            pg.pods().pod(i),
            pg.rest_url(&name)
        ));
    }
    let mut auth = String::new();
    if let Some((user, password)) = pg.rest_auth() {
        std::fs::create_dir_all(dir).expect("dir");
        std::fs::write(dir.join("username"), user).expect("username");
        std::fs::write(dir.join("password"), password).expect("password");
        auth = format!(
            "      auth:\n        basic:\n          usernameFile: {}\n          passwordFile: {}\n",
            dir.join("username").display(),
            dir.join("password").display()
        );
    }
    format!(
        "apiVersion: safe-rollout.dev/v1alpha1\nkind: AnswererConfig\nanswerers:\n  - name: pg-main\n    serves: [\"db/*\"]\n    patroni:\n      switchoverTimeoutSeconds: 40\n{auth}      members:\n{members}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_a_rollout_with_the_answerer_replaces_the_leader_last_after_a_switchover() {
    rollout_in(Mode::Once, Cadence::default()).await;
}

/// From `watch`'s caches, the leader killed mid-switchover (the pass cut off once Patroni names the
/// new leader) and the next pass after each switchover 5 s later (issue 52): the switchover is one
/// synchronous call, nothing is left for a later pass.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_the_same_rollout_from_watchs_caches_killed_mid_switchover() {
    let cadence = Cadence {
        after_move: Duration::from_secs(5),
        kill_on_move: true,
    };
    rollout_in(Mode::Watch, cadence).await;
}

/// The rollout with the stepper in `mode` at `cadence`, judged.
async fn rollout_in(mode: Mode, cadence: Cadence) {
    let Some(mut pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    let dir = std::env::temp_dir().join(format!(
        "sts-patroni-answerer-{}-{mode:?}",
        std::process::id()
    ));
    let config = config(&pg, &dir);
    let (run, writer) = pg.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let revision = format!("rollout-{}", next_run());
    let answerers = Answerers::new(file::parse(&config).expect("--answerer-config"));
    let rollout = roll_with(
        &mut *pg, mode, answerers, "pg-main", &revision, LIMIT, cadence,
    )
    .await;
    pg.wait_healthy(HEALTHY).await.unwrap();
    let report = writer.stop().await;
    let present = pg.present(run).await.unwrap();
    let members = |o: u32| pg.pods().member(o as usize).map(String::from);
    eprintln!(
        "patroni rollout ({mode:?}, {cadence:?}, killed {}): {:.1} s, {} passes, {} answerer calls for {} steps, replaced {:?}, leaders {:?}; writes: {}",
        rollout.killed,
        rollout.seconds,
        rollout.passes,
        rollout.calls,
        rollout.steps,
        rollout.replaced,
        rollout.leaders,
        report.summary()
    );
    assert_eq!(
        rollout.killed,
        u32::from(cadence.kill_on_move),
        "{rollout:?}"
    );
    assert_eq!(
        rollout.leaders_replaced(members),
        Vec::<String>::new(),
        "{rollout:?}"
    );
    assert_eq!(
        rollout.replaced.iter().map(|r| r.0).collect::<Vec<_>>(),
        [2, 1, 0],
        "every pod replaced once, highest ordinal first: {rollout:?}"
    );
    // One switchover; two when the first leader's pod is replaced first (no member is on the new
    // revision yet, so the role must move again when its new pod's turn comes).
    let first = rollout
        .leaders
        .first()
        .and_then(|l| pg.pods().pod_of_member(l));
    let last_pod = pg.pods().pod(pg.pods().len() - 1);
    let most = if first.as_deref() == Some(last_pod.as_str()) {
        3
    } else {
        2
    };
    assert!(
        (2..=most).contains(&rollout.leaders.len()),
        "switchovers only, none needless: {rollout:?}"
    );
    for i in 0..pg.pods().len() {
        let name = pg.pods().member(i).unwrap().to_string();
        assert_eq!(
            pg.revision(&name),
            revision,
            "{name} restarted as the new revision"
        );
    }
    assert_eq!(
        report.lost(&present),
        Vec::<u64>::new(),
        "{}",
        report.summary()
    );
    std::fs::remove_dir_all(&dir).ok();
}

/// The same cluster under the native rolling update (no policy, no stepper: pods Ready 2 s after they
/// are created, as a readiness probe that does not wait for replication allows), for the numbers in
/// BENCHMARKS.md. It always replaces a member while it leads: the first leader's pod, or, after the
/// failover that caused, the next leader's when its turn comes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn patroni_the_native_rolling_update_replaces_a_leader_without_a_switchover() {
    let Some(mut pg) = shared::patroni().await else {
        return;
    };
    pg.wait_healthy(HEALTHY).await.unwrap();
    let (run, writer) = pg.writer(20);
    writer
        .wait_acknowledged(10, Duration::from_secs(10))
        .await
        .unwrap();
    let revision = format!("native-{}", next_run());
    let rollout = roll(
        &mut *pg,
        Mode::Native,
        Answerers::default(),
        "pg-main",
        &revision,
        LIMIT,
    )
    .await;
    let report = writer.stop().await;
    let present = pg.present(run).await.unwrap();
    let members = |o: u32| pg.pods().member(o as usize).map(String::from);
    let led = rollout.leaders_replaced(members);
    let reinitialized = repair(&pg, &led).await;
    eprintln!(
        "patroni rollout (Native): {:.1} s, replaced {:?}, leaders {:?}, members replaced while leading {led:?}, reinitialized after it {reinitialized:?}; writes: {}; lost {}",
        rollout.seconds,
        rollout.replaced,
        rollout.leaders,
        report.summary(),
        report.lost(&present).len()
    );
    assert!(!led.is_empty(), "{rollout:?}");
    assert_eq!(rollout.replaced.len(), 3, "{rollout:?}");
}

/// Makes the cluster whole again for the next test: every member in `restarted_leading` (restarted
/// while it led, without a switchover) that does not lead now is reinitialized (`POST /reinitialize`: a
/// fresh copy of the leader) — its WAL may have diverged from the new leader's, and `pg_rewind` does not
/// always bring it back (seen: `invalid record length … waiting for WAL`, streaming for a moment, then
/// not) —, then every member must stream, twice 5 s apart. Returns the members reinitialized.
async fn repair(pg: &Patroni, restarted_leading: &[String]) -> Vec<String> {
    pg.wait_healthy(HEALTHY).await.ok();
    let leader = pg.leader().await.unwrap().expect("a leader");
    let reinit: Vec<String> = restarted_leading
        .iter()
        .filter(|m| **m != leader)
        .cloned()
        .collect();
    for m in &reinit {
        let url = format!("{}/reinitialize", pg.rest_url(m));
        let body = serde_json::json!({"force": true});
        let (status, text) = call(Method::POST, &url, Some(&body), pg.rest_auth())
            .await
            .unwrap();
        assert_eq!(status, 200, "reinitialize {m}: {text}");
    }
    pg.wait_healthy(HEALTHY).await.unwrap();
    tokio::time::sleep(Duration::from_secs(5)).await;
    pg.wait_healthy(HEALTHY).await.unwrap();
    reinit
}

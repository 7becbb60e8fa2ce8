//! The real LIST responses of `fixtures/api/` (four moments of one rollout on a real API server,
//! captured before the policy wrote the guarded mark): the stepper, the Lua and the CEL agree on every
//! StatefulSet in them, as captured (no mark: the built-in rule's verdict, Healthy / Current from the
//! first moment, as Argo CD's and Flux's own rules say) and with the mark the policy writes now (this
//! project's verdict: Progressing / InProgress until the rollout is complete).

mod common;

use gitops_health::flux::FluxStatus;
use rstest::rstest;
use serde_json::{Value, json};

use common::{GUARDED, Renderings, fixture, fixture_set, marked};

const UNMARKED: &str = "unguarded (no safe-rollout.dev/guarded mark)";

/// Every StatefulSet of `moment`, with `edit` applied, has this verdict.
fn assert_moment(moment: &str, edit: fn(Value) -> Value, want: (&str, &str, FluxStatus)) {
    let r = Renderings::shipped();
    let list = fixture(&format!("{moment}-statefulsets.json"));
    let items = list["items"].as_array().expect("items");
    assert!(!items.is_empty(), "{moment}: no StatefulSet");
    for (i, item) in items.iter().enumerate() {
        let agreed = r.check(&format!("{moment} item {i}"), &edit(item.clone()));
        let got = (
            agreed.health.status.as_str(),
            agreed.health.message.as_str(),
        );
        assert_eq!(got, (want.0, want.1), "{moment} item {i}");
        assert_eq!(agreed.flux, Ok(want.2), "{moment} item {i}");
    }
}

#[rstest]
#[case::staged("1-staged", "Healthy", "5 of 5 pods Ready", FluxStatus::Current)]
#[case::stepped("2-stepped-4", "Healthy", "5 of 5 pods Ready", FluxStatus::Current)]
#[case::pod_not_ready(
    "3-web1-notready",
    "Progressing",
    "4 of 5 pods Ready",
    FluxStatus::InProgress
)]
#[case::complete("4-complete", "Healthy", "5 of 5 pods Ready", FluxStatus::Current)]
fn as_captured_without_the_mark_the_builtin_rule(
    #[case] moment: &str,
    #[case] status: &str,
    #[case] detail: &str,
    #[case] flux: FluxStatus,
) {
    let unmarked = |object: Value| {
        assert!(object["metadata"]["annotations"].get(GUARDED).is_none());
        object
    };
    let message = format!("{UNMARKED}: {detail}");
    assert_moment(moment, unmarked, (status, &message, flux));
}

#[rstest]
#[case::staged(
    "1-staged",
    "Progressing",
    "staged, waiting for the stepper: 0 of 5 pods on web-7d7598bf9d",
    FluxStatus::InProgress
)]
#[case::stepped(
    "2-stepped-4",
    "Progressing",
    "stepping: 1 of 5 pods on web-7d7598bf9d, partition 4",
    FluxStatus::InProgress
)]
#[case::pod_not_ready(
    "3-web1-notready",
    "Progressing",
    "stepping: 1 of 5 pods on web-7d7598bf9d, partition 4",
    FluxStatus::InProgress
)]
#[case::complete(
    "4-complete",
    "Healthy",
    "rollout complete: 5 pods on web-7d7598bf9d, all Ready",
    FluxStatus::Current
)]
fn with_the_mark_the_policy_writes_this_projects_rule(
    #[case] moment: &str,
    #[case] status: &str,
    #[case] message: &str,
    #[case] flux: FluxStatus,
) {
    assert_moment(moment, marked, (status, message, flux));
}

/// A person's manual canary on a set the policy never staged (a namespace it excludes, a cluster
/// without it): the rollout done, then `partition: 3` set by hand. Upstream says Healthy (gitops-engine
/// `health_statefulset.go`: "partitioned roll out complete") and Current (kstatus `stsConditions`:
/// "Partition rollout complete"); so do the stepper, the Lua and the CEL. With the mark it would be
/// this project's set, and complete too: nothing is staged.
#[test]
fn an_unmarked_set_with_a_hand_set_partition_is_healthy_as_upstream_says() {
    let r = Renderings::shipped();
    let mut hand = fixture_set("4-complete");
    hand["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    let agreed = r.check("4-complete, partition 3 by hand", &hand);
    assert_eq!(
        (
            agreed.health.status.as_str(),
            agreed.health.message.as_str()
        ),
        ("Healthy", &*format!("{UNMARKED}: 5 of 5 pods Ready"))
    );
    assert_eq!(agreed.flux, Ok(FluxStatus::Current));

    // The same hand-set partition 3 while the person's new template reaches pods 3 and 4: the
    // built-in rule waits for those two pods only, then says Healthy with pods 0–2 on the old revision.
    let mut canary = fixture_set("2-stepped-4");
    canary["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(3);
    let agreed = r.check("2-stepped-4, partition 3 by hand", &canary);
    assert_eq!(
        (
            agreed.health.status.as_str(),
            agreed.health.message.as_str()
        ),
        (
            "Progressing",
            &*format!("{UNMARKED}: 1 of 2 pods on web-7d7598bf9d")
        )
    );
    canary["status"]["updatedReplicas"] = json!(2);
    let agreed = r.check("2-stepped-4, partition 3 by hand, pod 3 updated", &canary);
    assert_eq!(agreed.health.status, "Healthy");
    assert_eq!(agreed.flux, Ok(FluxStatus::Current));
    // Marked, that canary is a staged rollout the stepper has not finished.
    let agreed = r.check("the canary, marked", &marked(canary));
    assert_eq!(
        agreed.health.message,
        "stepping: 2 of 5 pods on web-7d7598bf9d, partition 3"
    );
    assert_eq!(agreed.flux, Ok(FluxStatus::InProgress));
}

/// The objects a real v1.36.2 API server stored around an automatic rollback (`fixtures/rollback/`):
/// rolled back by the stepper, then the failed manifest applied again client-side and server-side (held
/// by gate `FailedRevision`). Each is Degraded for Argo CD and Failed for Flux, with the stepper's
/// `RolledBack` record as the message, at every moment until a fix is applied (docs/gitops.md, "After
/// a rollback").
#[rstest]
#[case::rolled_back("1-rolled-back-by-stepper")]
#[case::reapplied_client_side("2-failed-template-reapplied-client-side")]
#[case::reapplied_server_side("3-failed-template-reapplied-server-side")]
fn a_rolled_back_set_is_degraded_until_a_fix_is_applied(#[case] file: &str) {
    let r = Renderings::shipped();
    let path = gitops_health::manifests::repo_root().join(format!("fixtures/rollback/{file}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let object: Value = serde_json::from_str(&text).expect("JSON");
    let reason = object["metadata"]["annotations"]["safe-rollout.dev/degraded-reason"]
        .as_str()
        .expect("the RolledBack record");
    assert!(
        reason.starts_with("RolledBack: revision pd-684bddd448 failed"),
        "{reason}"
    );
    let agreed = r.check(file, &object);
    assert_eq!(
        (
            agreed.health.status.as_str(),
            agreed.health.message.as_str()
        ),
        ("Degraded", reason),
        "{file}"
    );
    assert_eq!(agreed.flux, Ok(FluxStatus::Failed), "{file}");
}

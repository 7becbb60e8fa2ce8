//! The real LIST responses of `fixtures/api/` (four moments of one rollout on a real API
//! server): the stepper, the Lua and the CEL agree on every StatefulSet in them, and say what this
//! table says (where Argo CD's and Flux's built-in rules say Healthy / Current from the first moment).

mod common;

use gitops_health::flux::FluxStatus;
use rstest::rstest;

use common::{Renderings, fixture};

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
fn every_statefulset_of_a_moment(
    #[case] moment: &str,
    #[case] status: &str,
    #[case] message: &str,
    #[case] flux: FluxStatus,
) {
    let r = Renderings::shipped();
    let list = fixture(&format!("{moment}-statefulsets.json"));
    let items = list["items"].as_array().expect("items");
    assert!(!items.is_empty(), "{moment}: no StatefulSet");
    for (i, item) in items.iter().enumerate() {
        let agreed = r.check(&format!("{moment} item {i}"), item);
        assert!(agreed.typed, "{moment} item {i} is a real StatefulSet");
        assert_eq!(
            (
                agreed.health.status.as_str(),
                agreed.health.message.as_str()
            ),
            (status, message),
            "{moment} item {i}"
        );
        assert_eq!(agreed.flux, Ok(flux), "{moment} item {i}");
    }
}

//! `release`'s patches through the policy's own decision table (`rules`' `decide`, the code
//! `policy.wasm` runs), because an uninstall releases the sets while the policy is still installed: the
//! lowered partition gets through (row `Stepped`, with its new stamp), the annotations' removal is a
//! metadata-only update, and the one-patch alternative — the stamp removed with the partition lowered —
//! would have the partition restored (row `PartitionRestored`), which is why there are two.

use std::sync::Arc;

use crate::common::*;
use json_patch::{Patch, patch};
use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::{Value, json};
use sts_safe_rollout_rules::decision::{Change, Row, decide};
use sts_stepper::config::{Keys, SetConfig};
use sts_stepper::plan::release::{ReleasePlan, cleanup_patch, lower_patch, release_plan};

const PREFIX: &str = "safe-rollout.dev";

/// Moment 4's set, guarded and stamped by the policy and the stepper, held back at partition 5.
fn guarded_idle() -> Value {
    let list: Value =
        serde_json::from_slice(&fixture_body("4-complete-statefulsets.json")).expect("json");
    let mut s = list["items"][0].clone();
    let a = &mut s["metadata"]["annotations"];
    a["safe-rollout.dev/guarded"] = json!("true");
    a["safe-rollout.dev/initialized"] = json!("true");
    a["safe-rollout.dev/last-partition-update"] = json!("2026-11-23T01:10:42Z");
    s["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(5);
    s
}

fn applied(old: &Value, p: &Patch) -> Value {
    let mut new = old.clone();
    patch(&mut new, p).expect("the patch applies to the object it was built from");
    new
}

#[test]
fn the_policy_lets_the_lowered_partition_through_then_the_metadata_only_cleanup() {
    let old = guarded_idle();
    let set: StatefulSet = serde_json::from_value(old.clone()).expect("set");
    let keys = Arc::new(Keys::default());
    let config = SetConfig::parse(&set, &keys);
    let ReleasePlan::Release {
        lower: Some(lower), ..
    } = release_plan(&set, &config, false)
    else {
        panic!("an idle set is released at once")
    };
    let lowered = applied(&old, &lower_patch(&set, &config, &lower, now()));
    let d = decide(&lowered, Some(&old), PREFIX).expect("decided");
    assert_eq!((d.row, d.change), (Row::Stepped, Change::None));
    assert_eq!(
        lowered["spec"]["updateStrategy"]["rollingUpdate"]["partition"],
        0
    );

    let stored: StatefulSet = serde_json::from_value(lowered.clone()).expect("set");
    let cleaned = applied(
        &lowered,
        &cleanup_patch(&stored, &keys).expect("annotations to remove"),
    );
    let d = decide(&cleaned, Some(&lowered), PREFIX).expect("decided");
    assert_eq!((d.row, d.change), (Row::MetadataOnly, Change::None));
    let left = cleaned["metadata"]["annotations"].as_object().expect("map");
    assert!(
        left.keys().all(|k| !k.starts_with("safe-rollout.dev/")),
        "{left:?}"
    );
    // Only our keys went: kubectl's own annotation is still there.
    assert!(left.contains_key("kubectl.kubernetes.io/last-applied-configuration"));
}

#[test]
fn one_patch_removing_the_stamp_with_the_partition_would_be_undone_by_the_policy() {
    let old = guarded_idle();
    let mut new = old.clone();
    new["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(0);
    new["metadata"]["annotations"]
        .as_object_mut()
        .expect("map")
        .remove("safe-rollout.dev/last-partition-update");
    let d = decide(&new, Some(&old), PREFIX).expect("decided");
    assert_eq!(d.row, Row::PartitionRestored);
    assert_eq!(
        d.change,
        Change::SetPartition {
            partition: 5,
            stamp_initialized: false
        }
    );
}

/// A person's canary — moment 2 as captured (partition 4, an update staged, no guarded mark) — is not
/// the project's: `release` never lowers its partition, forced or not (issue 43: nothing forced by
/// surprise); marked, the same set needs `--force`.
#[test]
fn an_unmarked_partition_is_never_released() {
    let list: Value =
        serde_json::from_slice(&raw_fixture_body("2-stepped-4-statefulsets.json")).expect("json");
    let canary: StatefulSet = serde_json::from_value(list["items"][0].clone()).expect("set");
    let config = SetConfig::parse(&canary, &Arc::new(Keys::new(PREFIX)));
    for force in [false, true] {
        assert_eq!(release_plan(&canary, &config, force), ReleasePlan::Nothing);
    }
    let marked: StatefulSet =
        serde_json::from_slice(&fixture_body("2-stepped-4-statefulsets.json"))
            .map(|l: Value| serde_json::from_value(l["items"][0].clone()).expect("set"))
            .expect("json");
    let config = SetConfig::parse(&marked, &Arc::new(Keys::new(PREFIX)));
    assert!(matches!(
        release_plan(&marked, &config, false),
        ReleasePlan::NeedsForce(_)
    ));
}

//! The gates over the set alone, as pure functions (`gates/on_set.rs`): `Paused` (only on exactly
//! "true", before every other gate, under the annotation prefix), `NotObserved`, `Settling`, and
//! `InvalidAnnotation` for an unreadable annotation.

use crate::common::verdicts::*;
use crate::common::*;
use std::sync::Arc;

use rstest::rstest;
use serde_json::json;
use sts_stepper::config::Keys;
use sts_stepper::gates::{GateOptions, Verdict};
use sts_stepper::model::reasons::{Blocked, Reason};

// ---- Paused, NotObserved ---------------------------------------------------------------------------

#[rstest]
#[case("true", true)]
#[case("True", false)]
#[case("false", false)]
#[case("", false)]
fn paused_only_on_exact_true(#[case] value: &str, #[case] paused: bool) {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!(value);
    let got = decide_one(&set_from(v), &pods("web", 5, 4));
    if paused {
        assert_eq!(
            got,
            blocked(Reason::Paused, "web: safe-rollout.dev/paused is \"true\"")
        );
    } else {
        assert_eq!(got, step(4, 3, "b"));
    }
}

#[test]
fn paused_comes_before_every_other_gate() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/paused"] = json!("true");
    v["metadata"]["annotations"]["safe-rollout.dev/step"] = json!("bogus");
    v["status"]["observedGeneration"] = json!(1);
    let got = decide_one(&set_from(v), &[]);
    assert!(
        matches!(
            got,
            Verdict::Blocked(Blocked {
                reason: Reason::Paused,
                ..
            })
        ),
        "{got:?}"
    );
}

#[test]
fn the_annotation_prefix_is_honoured() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["moco.cybozu.com/paused"] = json!("true");
    v["metadata"]["annotations"]["moco.cybozu.com/guarded"] = json!("true");
    let s = set_from(v);
    assert_eq!(decide_one(&s, &pods("web", 5, 4)), step(4, 3, "b"));
    let moco = GateOptions {
        keys: Arc::new(Keys::new("moco.cybozu.com")),
        ..GateOptions::default()
    };
    let got = decide_with(&s, &pods("web", 5, 4), &[], &moco, now());
    assert!(matches!(
        got,
        Verdict::Blocked(Blocked {
            reason: Reason::Paused,
            ..
        })
    ));
}

#[rstest]
#[case::behind(1, 2, Some("web: observedGeneration 1 < generation 2"))]
#[case::equal(2, 2, None)]
#[case::ahead(3, 2, None)]
fn not_observed_edge(#[case] observed: i64, #[case] generation: i64, #[case] want: Option<&str>) {
    let mut v = set_json("web", 5, Some(4), 1);
    v["status"]["observedGeneration"] = json!(observed);
    v["metadata"]["generation"] = json!(generation);
    // Not-observed comes before the pods: even with no pods at all it is the reason.
    let p = if want.is_some() {
        vec![]
    } else {
        pods("web", 5, 4)
    };
    let got = decide_one(&set_from(v), &p);
    match want {
        Some(d) => assert_eq!(got, blocked(Reason::NotObserved, d)),
        None => assert_eq!(got, step(4, 3, "b")),
    }
}

#[test]
fn no_update_revision_is_not_observed() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["status"]
        .as_object_mut()
        .expect("status")
        .remove("updateRevision");
    assert_eq!(
        decide_one(&set_from(v), &pods("web", 5, 4)),
        blocked(
            Reason::NotObserved,
            "web: no status.updateRevision reported yet"
        )
    );
}

// ---- Settling ------------------------------------------------------------------------------------------

#[rstest]
#[case::no_delay(None, Some("2026-11-23T01:19:59Z"), None)]
#[case::never_stepped(Some("60"), None, None)]
#[case::one_second_short(
    Some("60"),
    Some("2026-11-23T01:19:01Z"),
    Some("web: 1s of initial-delay-seconds 60 left since the last step at 2026-11-23T01:19:01Z")
)]
#[case::exactly_elapsed(Some("60"), Some("2026-11-23T01:19:00Z"), None)]
#[case::zero(Some("0"), Some("2026-11-23T01:20:00Z"), None)]
fn settling_edge(
    #[case] delay: Option<&str>,
    #[case] last: Option<&str>,
    #[case] want: Option<&str>,
) {
    let mut v = set_json("web", 5, Some(4), 1);
    if let Some(d) = delay {
        v["metadata"]["annotations"]["safe-rollout.dev/initial-delay-seconds"] = json!(d);
    }
    if let Some(l) = last {
        v["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] = json!(l);
    }
    let got = decide_one(&set_from(v), &pods("web", 5, 4));
    match want {
        None => assert_eq!(got, step(4, 3, "b")),
        Some(d) => assert_eq!(got, blocked(Reason::Settling, d)),
    }
}

// ---- InvalidAnnotation -----------------------------------------------------------------------------------

#[rstest]
#[case(
    "safe-rollout.dev/step",
    "abc",
    "safe-rollout.dev/step: \"abc\" is not a step size"
)]
#[case(
    "safe-rollout.dev/initial-delay-seconds",
    "-5",
    "safe-rollout.dev/initial-delay-seconds: \"-5\" is not a delay"
)]
#[case(
    "safe-rollout.dev/initial-delay-seconds",
    "1m",
    "safe-rollout.dev/initial-delay-seconds: \"1m\" is not a delay"
)]
fn invalid_annotations_block(#[case] key: &str, #[case] value: &str, #[case] starts: &str) {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"][key] = json!(value);
    match decide_one(&set_from(v), &pods("web", 5, 4)) {
        Verdict::Blocked(b) => {
            assert_eq!(b.reason, Reason::InvalidAnnotation);
            assert!(b.detail.starts_with(starts), "{}", b.detail);
        }
        other => panic!("expected InvalidAnnotation, got {other:?}"),
    }
}

#[test]
fn unreadable_last_partition_update_blocks_only_with_a_delay() {
    let mut v = set_json("web", 5, Some(4), 1);
    v["metadata"]["annotations"]["safe-rollout.dev/last-partition-update"] = json!("yesterday");
    assert_eq!(
        decide_one(&set_from(v.clone()), &pods("web", 5, 4)),
        step(4, 3, "b")
    );
    v["metadata"]["annotations"]["safe-rollout.dev/initial-delay-seconds"] = json!("30");
    match decide_one(&set_from(v), &pods("web", 5, 4)) {
        Verdict::Blocked(b) => {
            assert_eq!(b.reason, Reason::InvalidAnnotation);
            assert!(b.detail.contains("last-partition-update"), "{}", b.detail);
        }
        other => panic!("expected InvalidAnnotation, got {other:?}"),
    }
}

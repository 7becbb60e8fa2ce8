//! The canary plan on the simulated controller, played as issue 19's trial on a real API server asks
//! (`pause-at: 1,60%:20` on 5 replicas: held after 1 pod until `resume`, again at 3 pods for 20 s, and
//! started over by `kubectl rollout undo`), and a rollback while the set is held at a point.

use sts_stepper::sim::scenario::{self, Action, ApplySpec, Event, Run, Scenario};

/// `scenarios/canary-pause-points.yaml` with plan `plan` and `events` instead of its own.
fn canary_scenario(plan: &str, events: Vec<Event>, duration: i64) -> Scenario {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios/canary-pause-points.yaml");
    let mut s = Scenario::from_yaml(&std::fs::read_to_string(path).expect("read")).expect("parse");
    s.set.annotations.insert("pause-at".into(), plan.into());
    s.events = events;
    s.duration = duration;
    s
}

fn at(at: i64, action: Action) -> Event {
    Event { at, action }
}

fn apply(image: &str) -> Action {
    Action::Apply(ApplySpec {
        image: Some(image.into()),
        ..ApplySpec::default()
    })
}

/// (second, pods at or above the partition after the step, revision letter of the rollout).
fn steps_of(run: &Run) -> Vec<(i64, i32, char)> {
    (run.steps.iter())
        .map(|s| (s.t, s.replicas - s.to, run.world.letter(&s.update_revision)))
        .collect()
}

#[test]
fn the_real_server_trial_plays_in_the_simulation() {
    // Issue 19's trial: `pause-at: 1,60%:20` on 5 replicas stops after 1 pod until `resume`, stops
    // again at 3 pods and goes on by itself 20 s later, and starts over after `kubectl rollout undo`.
    let events = vec![
        at(10, apply("v2")),
        at(60, Action::Resume {}),
        at(200, Action::Undo {}),
        at(260, Action::Resume {}),
    ];
    let run = scenario::run(&canary_scenario("1,60%:20", events, 500), false, 1).expect("run");
    let steps = steps_of(&run);
    let pods: Vec<(i32, char)> = steps.iter().map(|s| (s.1, s.2)).collect();
    assert_eq!(
        pods,
        [
            (1, 'B'),
            (2, 'B'),
            (3, 'B'),
            (4, 'B'),
            (5, 'B'),
            (1, 'A'),
            (2, 'A'),
            (3, 'A'),
            (4, 'A'),
            (5, 'A')
        ],
        "{steps:?}"
    );
    let t = |i: usize| steps[i].0;
    assert!(
        t(0) < 60 && t(1) >= 60,
        "held at 1 pod until the resume: {steps:?}"
    );
    assert!(
        t(3) >= t(2) + 20 && t(3) <= t(2) + 30,
        "baked 20 s at 3 pods: {steps:?}"
    );
    assert!(
        t(5) >= 200 && t(5) < 260 && t(6) >= 260,
        "started over: {steps:?}"
    );
    assert!(t(8) >= t(7) + 20, "baked again: {steps:?}");
    assert!(run.summary.rollout_completed.is_some_and(|d| d > t(9)));
}

#[test]
fn a_rollback_while_held_lifts_the_old_pause_and_holds_at_the_first_point_again() {
    let events = vec![at(10, apply("v2")), at(40, Action::Undo {})];
    let run = scenario::run(&canary_scenario("1,60%:20", events, 400), false, 1).expect("run");
    // Pod 4 to v2 and held; the rollback lifts that pause, puts pod 4 back on v1 (its first point),
    // and as every pod then runs v1 the plan's new pause is lifted too: nothing is left to hold.
    let steps = steps_of(&run);
    assert_eq!(
        steps.iter().map(|s| (s.1, s.2)).collect::<Vec<_>>(),
        [(1, 'B'), (1, 'A')],
        "{steps:?}"
    );
    assert!(steps[1].0 >= 40, "{steps:?}");
    let said: Vec<String> = (run.world.events.iter())
        .filter(|e| e.1.starts_with("RolloutPaused") || e.1.starts_with("RolloutResumed"))
        .map(|e| format!("{}: {}", e.1, e.2.split(" (was").next().unwrap_or("")))
        .collect();
    let rev = |letter: char| {
        (run.world.revisions.iter())
            .find(|r| r.letter == letter)
            .map(|r| r.name.clone())
            .expect("revision")
    };
    assert_eq!(
        said,
        [
            format!("RolloutPaused: pause point 1 of 2: 1 of 5 pods on {}; `resume` to go on", rev('B')),
            format!(
                "RolloutResumed: resumed by the stepper: a new rollout (updateRevision {}) starts the \
                 pause plan over",
                rev('A')
            ),
            format!("RolloutPaused: pause point 1 of 2: 1 of 5 pods on {}; `resume` to go on", rev('A')),
            "RolloutResumed: resumed by the stepper: every pod runs updateRevision, nothing is left to \
             hold"
                .to_string(),
        ]
    );
    let annotations = &run.world.set["metadata"]["annotations"];
    assert!(
        annotations.get("safe-rollout.dev/paused").is_none(),
        "{annotations}"
    );
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
}

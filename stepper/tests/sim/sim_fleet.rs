//! Several sets on the simulated StatefulSet controller (`stepper/src/sim/fleet.rs`): a rollout group
//! rolls one set at a time in name order (without it, all at once), and `--max-steps-per-minute` /
//! `--max-steps-per-pass` spread a fleet upgrade over time.
use sts_stepper::gates::GateOptions;
use sts_stepper::sim::fleet::{FleetRun, FleetSpec, run_fleet};

fn fleet(names: &[&str], annotations: &[(&str, &str)], gates: GateOptions) -> FleetRun {
    run_fleet(&FleetSpec {
        names: names.iter().map(|n| (*n).to_string()).collect(),
        replicas: 3,
        annotations: annotations
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect(),
        gates,
        interval_seconds: 5,
        duration: 1200,
    })
    .expect("fleet run")
}

#[test]
fn a_rollout_group_of_three_rolls_one_set_at_a_time_in_name_order() {
    let run = fleet(
        &["kafka-c", "kafka-a", "kafka-b"],
        &[("rollout-group", "kafka")],
        GateOptions::default(),
    );
    assert_eq!(run.max_members_down_at_once(), 1, "{:?}", run.down);
    let done = |name: &str| {
        run.completed
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, d)| *d)
            .unwrap_or_else(|| panic!("{name} did not complete: {:?}", run.completed))
    };
    let (a, b, c) = (done("kafka-a"), done("kafka-b"), done("kafka-c"));
    assert!(a < b && b < c, "completion order a={a} b={b} c={c}");
    // b's first step comes after a completed; c's after b's.
    let first_step = |name: &str| run.steps.iter().find(|s| s.1 == name).map(|s| s.0);
    assert!(first_step("kafka-b").is_some_and(|t| t >= a));
    assert!(first_step("kafka-c").is_some_and(|t| t >= b));
    assert!(
        run.fleet_blocks
            .iter()
            .any(|(_, name, outcome)| name == "kafka-c"
                && outcome.contains("GroupBusy rollout-group kafka: kafka-a rolls out first"))
    );
}

#[test]
fn without_a_group_the_same_three_sets_roll_at_once() {
    let run = fleet(
        &["kafka-a", "kafka-b", "kafka-c"],
        &[],
        GateOptions::default(),
    );
    assert_eq!(
        run.max_members_down_at_once(),
        3,
        "the contrast the group exists for"
    );
    assert!(run.completed.iter().all(|(_, d)| d.is_some()));
}

#[test]
fn max_steps_per_minute_spreads_a_fleet_upgrade_over_time() {
    let names = ["db-1", "db-2", "db-3", "db-4", "db-5", "db-6"];
    let free = fleet(&names, &[], GateOptions::default());
    assert!(free.max_steps_per_minute() > 2, "{:?}", free.steps);
    let throttled = fleet(
        &names,
        &[],
        GateOptions {
            max_steps_per_minute: Some(2),
            ..GateOptions::default()
        },
    );
    assert!(
        throttled.max_steps_per_minute() <= 2,
        "{:?}",
        throttled.steps
    );
    assert_eq!(
        throttled.steps.len(),
        free.steps.len(),
        "every step still lands"
    );
    assert!(
        throttled.completed.iter().all(|(_, d)| d.is_some()),
        "{:?}",
        throttled.completed
    );
    assert!(
        throttled
            .fleet_blocks
            .iter()
            .any(|(_, _, o)| o.contains("Throttled --max-steps-per-minute 2"))
    );
}

#[test]
fn max_steps_per_pass_limits_each_pass() {
    let names = ["db-1", "db-2", "db-3", "db-4"];
    let run = fleet(
        &names,
        &[],
        GateOptions {
            max_steps_per_pass: Some(1),
            ..GateOptions::default()
        },
    );
    let mut per_pass: std::collections::BTreeMap<i64, usize> = Default::default();
    for (t, ..) in &run.steps {
        *per_pass.entry(*t).or_default() += 1;
    }
    assert!(per_pass.values().all(|n| *n == 1), "{per_pass:?}");
    assert!(run.completed.iter().all(|(_, d)| d.is_some()));
}

//! The headline scenarios of `scenarios/`, played on the simulated StatefulSet controller with the real
//! policy decision and the real stepper pass, native and guarded, with what each must show asserted.

use std::path::PathBuf;

use sts_stepper::gates::GateOptions;
use sts_stepper::sim::cluster::{Call, FaultKind};
use sts_stepper::sim::fleet::{FleetRun, FleetSpec, run_fleet};
use sts_stepper::sim::scenario::{self, Action, Event, Player, Run, Scenario};

fn load(name: &str) -> Scenario {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../scenarios")
        .join(format!("{name}.yaml"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    Scenario::from_yaml(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

fn play(s: &Scenario, native: bool) -> Run {
    scenario::run(s, native, 1).unwrap_or_else(|e| panic!("{}: {e}", s.name))
}

/// Ordinals the controller deleted for the update, in order.
fn restarted(run: &Run) -> Vec<u32> {
    run.world.restarts.iter().map(|r| r.1).collect()
}

/// Every pod in `[0, replicas)` runs the image `tag`.
fn all_on(run: &Run, tag: &str) -> bool {
    let update = run.world.status_str("updateRevision");
    let image = run
        .world
        .revision(&update)
        .and_then(|r| sts_stepper::sim::history::template_image(&r.template).map(str::to_string));
    image.as_deref() == Some(tag)
        && run
            .world
            .pods
            .values()
            .all(|p| p.revision == update && p.running_and_ready())
        && run.world.pods.len() == usize::try_from(run.world.replicas()).unwrap_or(0)
}

fn assert_guarded_invariants(run: &Run) {
    let s = &run.summary;
    assert_eq!(
        s.steps_while_gate_failed, 0,
        "{}: a step while a gate failed",
        run.name
    );
    assert_eq!(s.steps_unobserved, 0, "{}: a double step", run.name);
    assert_eq!(s.harmful_restarts, 0, "{}: restart while down", run.name);
    for w in run.steps.windows(2) {
        assert!(w[1].from >= w[0].to, "{}: steps {:?}", run.name, w);
    }
    for step in &run.steps {
        assert_eq!(
            step.from.min(step.replicas) - 1,
            step.to,
            "{}: step {step:?} is not one pod",
            run.name
        );
    }
    for f in &run.frames {
        assert!(
            f.down <= f.fault_down + 1,
            "{} t={}: {} down, {} by faults",
            run.name,
            f.t,
            f.down,
            f.fault_down
        );
    }
}

#[test]
fn a_healthy_rollout_of_5_completes_one_pod_at_a_time() {
    let s = load("healthy-5");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v2"));
    assert_eq!(run.summary.max_down, 1);
    assert_eq!(run.summary.steps, 5);
    assert_eq!(restarted(&run), vec![4, 3, 2, 1, 0]);
    // One pod at a time: never two pods on the way at once.
    assert!(run.frames.iter().all(|f| f.down <= 1));
}

#[test]
fn moco_incident_native_takes_two_pods_down_at_once() {
    let run = play(&load("moco-incident"), true);
    assert_eq!(run.summary.max_down, 2, "{:?}", run.summary);
    assert!(run.summary.restarts_while_down >= 2, "{:?}", run.summary);
    assert!(run.summary.harmful_restarts >= 2, "{:?}", run.summary);
    // The controller replaced pods 2 and 1 while pod 0's node was down (t = 5 … 95).
    let while_down: Vec<u32> = run
        .world
        .restarts
        .iter()
        .filter(|r| r.0 < 95)
        .map(|r| r.1)
        .collect();
    assert_eq!(while_down[..2], [2, 1]);
}

#[test]
fn moco_incident_guarded_never_adds_a_second_pod_down_and_resumes_by_itself() {
    let run = play(&load("moco-incident"), false);
    assert_guarded_invariants(&run);
    assert_eq!(run.summary.max_down, 1, "{:?}", run.summary);
    assert_eq!(run.summary.restarts_while_down, 0);
    assert_eq!(run.summary.harmful_restarts, 0);
    // Nothing is stepped while pod 0 is down; the first step comes once its node is back (t = 95).
    let first = run.steps.first().map(|s| s.t);
    assert!(first.is_some_and(|t| t >= 95), "first step at {first:?}");
    assert!(run.summary.rollout_completed.is_some());
    assert!(all_on(&run, "v2"));
    let blocked = run
        .frames
        .iter()
        .filter(|f| (10..95).contains(&f.t))
        .flat_map(|f| f.notes.iter())
        .any(|n| n.contains("Blocked PodNotReady web-0"));
    assert!(blocked, "the timeline names the pod it waits for");
}

#[test]
fn a_bad_revision_halts_after_one_pod_and_a_fix_rolls_forward() {
    let s = load("bad-revision");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    let before_fix: Vec<_> = run.steps.iter().filter(|st| st.t < 60).collect();
    assert_eq!(before_fix.len(), 1, "halted after one pod: {:?}", run.steps);
    assert_eq!(run.summary.max_down, 1);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v3"));
}

#[test]
fn the_fix_replaces_the_pod_stuck_on_the_bad_revision_first_without_a_delete() {
    // The pod stuck on v2 sits below the partition the fix staged; its step is allowed because it is
    // the only pod that step replaces and it is down already: nothing more goes down.
    let s = load("bad-revision");
    assert!(
        !s.events
            .iter()
            .any(|e| matches!(e.action, Action::DeletePod(_))),
        "the scenario must not need a person's delete"
    );
    let run = play(&s, false);
    let after_fix: Vec<_> = run.steps.iter().filter(|st| st.t >= 60).collect();
    assert_eq!(
        (after_fix[0].from, after_fix[0].to),
        (3, 2),
        "{:?}",
        run.steps
    );
    assert!(
        after_fix.iter().all(|st| st.failing_gate.is_none()),
        "{:?}",
        run.steps
    );
    assert_eq!(run.summary.harmful_restarts, 0);
    assert_eq!(run.summary.max_down, 1);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
}

#[test]
fn with_ordered_ready_the_controller_itself_waits_for_the_bad_pod_until_a_person_deletes_it() {
    // Upstream updateStatefulSet (monotonic): an OrderedReady set waits for every pod to be Running and
    // Ready, so a pod stuck on a bad revision stops the controller too; Kubernetes' documented "forced
    // rollback" is to delete it. The stepper's step goes through either way.
    let mut s = load("bad-revision");
    s.set.pod_management_policy = "OrderedReady".into();
    let stuck = play(&s, false);
    assert!(
        stuck.summary.rollout_completed.is_none(),
        "{:?}",
        stuck.summary
    );
    let mut with_delete = s.clone();
    let delete: Scenario = Scenario::from_yaml(
        "name: d\nset: {replicas: 3}\nduration: 1\nevents:\n  - at: 70\n    deletePod: 2\n",
    )
    .expect("parse");
    with_delete.events.extend(delete.events);
    let run = play(&with_delete, false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v3"));
}

#[test]
fn ordered_ready_waits_forever_on_the_pod_stuck_on_a_rolled_back_revision() {
    // Kubernetes issue #67250: with OrderedReady, upstream processReplica stops every sync at web-2
    // (not Running and Ready) before the rolling update, so the rollback never replaces it.
    let s = load("stuck-rollout");
    for native in [true, false] {
        let run = play(&s, native);
        let w = &run.world;
        assert!(run.summary.rollout_completed.is_none(), "{:?}", run.summary);
        assert_eq!(run.summary.ended, s.duration, "played to the end");
        let stuck = &w.pods[&2];
        assert!(w.revision_is_bad(&stuck.revision) && !stuck.running_and_ready());
        assert_ne!(stuck.revision, w.status_str("updateRevision"), "superseded");
        assert_eq!(
            restarted(&run),
            vec![2],
            "deleted once, for v2, never after the rollback"
        );
        assert_eq!(run.summary.max_down, 1);
        // From shortly after the rollback to the end, nothing moves.
        let last = run.frames.last().expect("frames");
        assert!(
            run.frames
                .iter()
                .filter(|f| f.t >= 70)
                .all(|f| f.pods == last.pods && f.partition == last.partition),
            "native={native}"
        );
    }
}

#[test]
fn deleting_the_stuck_pod_with_preconditions_lets_the_rollout_finish_with_at_most_one_pod_down() {
    let s = load("stuck-rollout");
    for native in [true, false] {
        let mut player = Player::new(&s, native, 1).expect("create");
        while player.next_second() <= 120 {
            player.play_second();
        }
        let (uid, rv) = {
            let pods = player.cluster().world().typed_pods();
            let pod = pods
                .iter()
                .find(|p| p.metadata.name.as_deref() == Some("web-2"))
                .expect("web-2 listed");
            (
                pod.metadata.uid.clone().expect("uid"),
                pod.metadata
                    .resource_version
                    .clone()
                    .expect("resourceVersion"),
            )
        };
        let stale = player
            .cluster()
            .delete_pod("demo", "web-2", &uid, "0")
            .expect_err("a stale resourceVersion");
        assert_eq!(stale.code(), Some(409), "{stale}");
        assert!(
            !player.cluster().world().pods[&2].terminating(),
            "nothing deleted"
        );
        player
            .cluster()
            .delete_pod("demo", "web-2", &uid, &rv)
            .expect("delete web-2");
        while player.next_second() <= s.duration && !player.play_second() {}
        let run = player.finish();
        let done = run.summary.rollout_completed;
        assert!(
            done.is_some_and(|t| t > 120),
            "native={native}: {:?}",
            run.summary
        );
        assert!(all_on(&run, "v1"), "native={native}");
        assert_eq!(run.summary.max_down, 1, "native={native}");
        assert!(run.frames.iter().all(|f| f.down <= 1));
        if !native {
            assert_guarded_invariants(&run);
        }
    }
}

#[test]
fn a_bad_revision_natively_also_halts_after_one_pod() {
    let s = load("bad-revision");
    let mut s2 = s.clone();
    s2.events.retain(|e| e.at < 60);
    let run = play(&s2, true);
    assert_eq!(restarted(&run), vec![2]);
    assert!(run.summary.rollout_completed.is_none());
}

#[test]
fn a_rollback_in_the_middle_rolls_the_updated_pods_back_one_at_a_time() {
    let run = play(&load("rollback"), false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v1"));
    assert_eq!(run.summary.max_down, 1);
    // v2 reached pods 4, 3, 2; the undo then replaced them from the top again.
    assert_eq!(restarted(&run), vec![4, 3, 2, 4, 3, 2]);
    assert_eq!(
        run.world.status_str("currentRevision"),
        run.world.status_str("updateRevision")
    );
}

#[test]
fn scale_up_with_a_template_change_starts_new_pods_staged_then_rolls_all() {
    let run = play(&load("scale-up-with-template"), false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some(), "{:?}", run.summary);
    assert!(all_on(&run, "v2"));
    assert_eq!(run.world.pods.len(), 5);
    assert_eq!(restarted(&run), vec![4, 3, 2, 1, 0]);
    assert_eq!(run.summary.max_down, 1);
}

#[test]
fn twelve_replicas_roll_in_numeric_ordinal_order() {
    let run = play(&load("twelve-replicas"), false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some());
    assert_eq!(restarted(&run), (0..12).rev().collect::<Vec<u32>>());
    let froms: Vec<i32> = run.steps.iter().map(|s| s.from).collect();
    assert_eq!(froms, (1..=12).rev().collect::<Vec<i32>>());
}

#[test]
fn two_steppers_racing_and_a_killed_stepper_never_double_step() {
    let run = play(&load("racing-steppers"), false);
    assert_guarded_invariants(&run);
    assert_eq!(run.summary.steps, 4);
    assert!(run.summary.conflicts >= 1, "the loser's test op failed");
    assert!(
        run.frames
            .iter()
            .flat_map(|f| f.notes.iter())
            .any(|n| n.starts_with("killed:") && n.contains("Stepped"))
    );
    assert!(run.summary.rollout_completed.is_some());
    assert!(all_on(&run, "v2"));
}

#[test]
fn api_errors_and_conflicts_on_every_call_delay_but_never_harm() {
    let mut s = load("healthy-5");
    for (call, kind) in [
        (Call::Any, FaultKind::Error),
        (Call::Patch, FaultKind::Conflict),
    ] {
        s.events.push(Event {
            at: 1,
            action: Action::ApiFault {
                call,
                kind,
                seconds: 300,
                probability: 0.3,
            },
        });
    }
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(
        run.summary.api_errors > 0 && run.summary.conflicts > 0,
        "{:?}",
        run.summary
    );
    assert!(run.summary.rollout_completed.is_some());
    assert!(all_on(&run, "v2"));
}

#[test]
fn a_gitops_reapply_of_partition_0_mid_rollout_is_restored_by_the_policy() {
    let mut s = load("healthy-5");
    s.events.push(Event {
        at: 17,
        action: Action::Apply(scenario::ApplySpec {
            image: Some("v2".into()),
            partition: Some(0),
            ..Default::default()
        }),
    });
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    let restored = run
        .world
        .admissions
        .iter()
        .any(|(t, _, row)| *t == 17 && format!("{row:?}") == "PartitionRestored");
    assert!(restored, "{:?}", run.world.admissions);
    assert_eq!(run.summary.max_down, 1);
}

#[test]
fn the_app_unhealthy_signal_is_modelled_and_counted() {
    let mut s = load("healthy-5");
    s.events.push(Event {
        at: 1,
        action: Action::AppUnhealthy(true),
    });
    let run = play(&s, false);
    assert!(run.world.app_unhealthy);
    // The current stepper has no gate on it yet (next issue): the summary counts such steps.
    assert_eq!(run.summary.steps_while_app_unhealthy, run.summary.steps);
}

#[test]
fn every_shipped_scenario_parses_and_renders() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).expect("scenarios/") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("yaml") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        for native in [false, true] {
            let out = scenario::simulate(&text, native, 7)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(out.contains("max pods unavailable at once"), "{out}");
        }
        n += 1;
    }
    assert!(n >= 7, "{n} scenarios");
}

#[test]
fn the_simulate_subcommand_prints_the_incident_both_ways() {
    let scenario =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../scenarios/moco-incident.yaml");
    let run = |native: bool| {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_sts-stepper"));
        cmd.arg("simulate").arg("--scenario").arg(&scenario);
        if native {
            cmd.arg("--native");
        }
        let out = cmd.output().expect("run sts-stepper simulate");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let native = run(true);
    let guarded = run(false);
    let max_line = |s: &str| {
        s.lines()
            .find(|l| l.contains("max pods unavailable at once"))
            .and_then(|l| l.split_whitespace().last())
            .map(str::to_string)
    };
    assert_eq!(max_line(&native).as_deref(), Some("2"), "{native}");
    assert_eq!(max_line(&guarded).as_deref(), Some("1"), "{guarded}");
    assert!(
        guarded.contains("Blocked PodNotReady web-0: NodeNotReady"),
        "{guarded}"
    );
    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_sts-stepper"))
        .args(["simulate", "--scenario", "/nonexistent.yaml"])
        .output()
        .expect("run sts-stepper simulate");
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("read scenario"));
}

#[test]
fn natively_ordered_ready_waits_for_the_down_pod_where_parallel_does_not() {
    // Upstream processReplica (monotonic): with OrderedReady the controller stops at the first pod that
    // is not Running and Ready, so the rolling update is not reached while pod 0 is down.
    let mut s = load("moco-incident");
    s.set.pod_management_policy = "OrderedReady".into();
    let run = play(&s, true);
    assert_eq!(run.summary.max_down, 1, "{:?}", run.summary);
    assert!(
        run.world.restarts.iter().all(|r| r.0 >= 95),
        "{:?}",
        run.world.restarts
    );
    assert!(run.summary.rollout_completed.is_some());
}

#[test]
fn min_ready_seconds_holds_each_step_until_the_pod_is_available() {
    let mut s = load("healthy-5");
    s.set.min_ready_seconds = 20;
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(run.summary.rollout_completed.is_some());
    // Each later step waits for the replaced pod: terminate 2 + pending 2 + ready 5 + minReady 20.
    for w in run.steps.windows(2) {
        assert!(w[1].t - w[0].t >= 29, "{:?}", w);
    }
    assert!(
        run.frames
            .iter()
            .any(|f| f.pods.iter().any(|p| p.state == '~'))
    );
}

#[test]
fn a_pdb_that_allows_no_disruption_blocks_every_step() {
    let mut s = load("healthy-5");
    s.set.pdb_max_unavailable = Some(0);
    let run = play(&s, false);
    assert!(run.steps.is_empty(), "{:?}", run.steps);
    assert!(
        run.frames
            .iter()
            .flat_map(|f| f.notes.iter())
            .any(|n| n.contains("Blocked PdbBlocked"))
    );
    assert!(run.summary.rollout_completed.is_none());
    // Natively the controller ignores the PDB (StatefulSet updates do not go through eviction).
    let native = play(&s, true);
    assert!(native.summary.rollout_completed.is_some());
}

#[test]
fn a_pod_on_a_node_down_for_long_is_evicted_and_replaced_once_the_node_is_back() {
    let mut s = load("healthy-5");
    s.events = vec![Event {
        at: 5,
        action: Action::NodeFailure {
            pod: 1,
            seconds: 400,
        },
    }];
    s.duration = 600;
    let run = play(&s, true);
    let at = |t: i64| {
        run.frames
            .iter()
            .find(|f| f.t == t)
            .map(|f| f.pods[1].state)
    };
    assert_eq!(at(100), Some('!'), "NotReady while tolerated");
    assert_eq!(at(306), Some('x'), "evicted after 300 s, stuck terminating");
    assert_eq!(at(420), Some('+'), "recreated once the node is back");
}

/// The steps of a run as (second, from, to).
fn steps_at(run: &Run) -> Vec<(i64, i32, i32)> {
    run.steps.iter().map(|s| (s.t, s.from, s.to)).collect()
}

#[test]
fn the_canary_plan_holds_at_each_point_until_the_resume_and_the_bake_time() {
    let s = load("canary-pause-points");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert!(all_on(&run, "v2"), "{:?}", run.summary);
    // Pods at or above the partition after each step: 1 (point 1), held until the resume at t=60,
    // then 2, 3 (point 2: 60% of 5), held 30 s, then 4, 5.
    let steps = steps_at(&run);
    let released: Vec<i32> = steps.iter().map(|(_, _, to)| 5 - to).collect();
    assert_eq!(released, [1, 2, 3, 4, 5], "{steps:?}");
    assert!(
        steps[0].0 < 60 && steps[1].0 >= 60,
        "held at point 1: {steps:?}"
    );
    assert!(
        steps[3].0 >= steps[2].0 + 30,
        "baked 30 s at point 2: {steps:?}"
    );
    let said: Vec<(&str, &str)> = (run.world.events.iter())
        .filter(|(_, r, _)| r.starts_with("RolloutPaused") || r.starts_with("RolloutResumed"))
        .map(|(_, r, n)| (r.as_str(), n.split(':').next().unwrap_or("")))
        .collect();
    assert_eq!(
        said,
        [
            ("RolloutPaused", "pause point 1 of 2"),
            (
                "RolloutResumed",
                "resumed by a person; Prometheus and HTTP check counts cleared (was paused"
            ),
            ("RolloutPaused", "pause point 2 of 2"),
            ("RolloutResumed", "resumed by the stepper"),
        ]
    );
}

#[test]
fn a_failing_prometheus_check_holds_the_rollout_while_every_pod_is_ready() {
    let s = load("prometheus-gated");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert_eq!(
        run.summary.steps_while_app_unhealthy,
        0,
        "{:?}",
        steps_at(&run)
    );
    // Unhealthy during [60, 120): no step lands; after it, the check must pass twice, 10 s apart.
    assert!(
        run.steps.iter().all(|st| st.t < 60 || st.t >= 130),
        "a step inside the unhealthy window or before two passing checks: {:?}",
        steps_at(&run)
    );
    assert!(
        run.steps.iter().any(|st| st.t >= 130),
        "{:?}",
        steps_at(&run)
    );
    assert!(all_on(&run, "v2"), "the rollout resumes and completes");
    assert!(
        run.frames.iter().any(|f| f.t >= 60
            && f.t < 120
            && f.notes
                .iter()
                .any(|n| n.contains("PrometheusCheck") && n.contains("returned an empty result"))),
        "the timeline names the failing check"
    );
    // Every step waits for two passing checks at least 10 s apart after the pods are Ready.
    for w in run.steps.windows(2) {
        assert!(w[1].t - w[0].t >= 10, "steps too close: {w:?}");
    }
}

#[test]
fn an_unhealthy_owner_condition_holds_the_rollout_until_it_is_true_again() {
    let s = load("moco-owner-healthy");
    let run = play(&s, false);
    assert_guarded_invariants(&run);
    assert_eq!(run.summary.steps_while_app_unhealthy, 0);
    assert!(
        run.steps.iter().all(|st| st.t < 25 || st.t >= 85),
        "no step while Healthy is False: {:?}",
        steps_at(&run)
    );
    assert!(all_on(&run, "v2"));
    assert!(run.frames.iter().any(|f| {
        f.notes
            .iter()
            .any(|n| n.contains("OwnerNotHealthy MySQLCluster web: condition Healthy is False"))
    }));
}

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

/// Found by `sim_canary`'s property test: a step of 2 whose two pods are both already down (web-5's
/// node, web-6 being recreated after a second apply) is taken by the "replaced while down" rule;
/// restarting web-6 while web-5, exposed by the same step, is down loses nothing more, and is not a
/// harmful restart (the oracle counted it as one, so the property test failed on some seeds).
#[test]
fn pods_one_step_exposed_while_all_were_down_are_one_loss_not_a_harmful_restart() {
    let s = Scenario::from_yaml(
        r#"
name: canary-both-down
set: {replicas: 7, podManagementPolicy: Parallel, minReadySeconds: 2, annotations: {pause-at: "6", step: "2"}}
timing: {pendingSeconds: 3, readySeconds: 6, terminateSeconds: 1, jitterSeconds: 0}
stepper: {intervalSeconds: 2, pdbGate: true, recoverStuckPods: false}
duration: 700
events: [{at: 5, apply: {image: v2}}, {at: 7, nodeFailure: {pod: 5, seconds: 3}}, {at: 8, apply: {image: v3}}, {at: 155, resume: {}}, {at: 299, resume: {}}]
"#,
    )
    .expect("scenario");
    let run = scenario::run(&s, false, 0).expect("run");
    assert!(
        run.steps
            .iter()
            .any(|st| st.t == 8 && st.from == 7 && st.to == 5),
        "the step over the two pods already down: {:?}",
        run.steps
    );
    assert!(
        run.summary.restarts_while_down > 0,
        "web-6 restarted while web-5 was down"
    );
    assert_eq!(
        run.summary.harmful_restarts, 0,
        "{:?}",
        run.world.harmful_restarts
    );
    assert!(run.summary.rollout_completed.is_some());
}

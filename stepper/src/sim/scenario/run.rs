//! Plays a scenario second by second with the real stepper pass, and totals what happened.
//!
//! Each virtual second: the scenario's events due at that second (a `kubectl apply`, a node failure,
//! …), then the pods progress and the StatefulSet controller syncs once ([`World::tick`]), then — every
//! `stepper.intervalSeconds`, guarded runs only — one stepper pass ([`crate::pass::run_pass_with`], or
//! its halves [`crate::pass::decide`] and [`crate::pass::write`] when a
//! stepper is killed between its read and its write or two steppers race).

use serde_json::json;
use sts_safe_rollout_rules::annotations;

use super::frame::{Frame, pod_views};
use super::play::{Disruptions, play, stepper_pass};
use super::spec::{Action, Event, Scenario, StepperMode, key};
use crate::config::{Served, webhook};
use crate::gates::GateOptions;
use crate::pass::PassOptions;
use crate::pass::probes::ProbeOptions;
use crate::sim::application::{Application, Protocol};
use crate::sim::cluster::{SIM_OWNER_API_VERSION, SIM_OWNER_UID, SimCluster};
use crate::sim::kubelet::Timing;
use crate::sim::oracle::StepRecord;
use crate::sim::watched::Watched;
use crate::sim::world::{SetShape, World};

/// Totals over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Second of the first template change.
    pub rollout_started: Option<i64>,
    /// Second the rollout was complete after the last template change (or scale).
    pub rollout_completed: Option<i64>,
    /// Maximum slots down at once.
    pub max_down: usize,
    /// Maximum over seconds of (slots down − slots down by faults).
    pub max_down_beyond_faults: usize,
    /// Pods the controller restarted for the update while another slot was down.
    pub restarts_while_down: usize,
    /// Of those, restarts decided while the other pod was already down (see
    /// [`World::harmful_restarts`]): what the stepper must keep at 0.
    pub harmful_restarts: usize,
    /// Pods the controller restarted for the update.
    pub restarts: usize,
    /// Steps that landed.
    pub steps: usize,
    /// Steps that landed while the simulation's gate oracle saw a gate failing.
    pub steps_while_gate_failed: usize,
    /// Steps that landed on a generation the controller had not observed (a double step).
    pub steps_unobserved: usize,
    /// Steps that landed while the application-unhealthy signal was raised.
    pub steps_while_app_unhealthy: usize,
    /// Conflicts (409/422) the API answered.
    pub conflicts: u64,
    /// Errors (500) the API answered.
    pub api_errors: u64,
    /// Pods a step exposed to replacement without their approval of the update revision, while denying
    /// it, or while holding the primary role ([`World::unapproved_replacements`]): what the handshake,
    /// the webhook and the primary's selector must keep at 0.
    pub unapproved_replacements: usize,
    /// Calls the stepper made to the application's approval webhook.
    pub webhook_calls: u64,
    /// Of those, calls that got no decision (an error: a timeout, a refused connection, a status other
    /// than 2xx, a 2xx without a decision).
    pub webhook_errors: u64,
    /// Last second simulated.
    pub ended: i64,
}

/// A finished run.
#[derive(Debug)]
pub struct Run {
    /// Scenario name.
    pub name: String,
    /// Native (no policy, no stepper) or guarded.
    pub native: bool,
    /// Every second's frame.
    pub frames: Vec<Frame>,
    /// Totals.
    pub summary: Summary,
    /// The world at the end.
    pub world: World,
    /// Steps that landed.
    pub steps: Vec<StepRecord>,
}

/// A scenario being played: the simulated cluster, the events still to come, the frames so far. Tests
/// that act between seconds (e.g. a DELETE through [`Player::cluster`]) drive it themselves;
/// [`run`] plays a whole scenario.
#[derive(Debug)]
pub struct Player {
    name: String,
    native: bool,
    cluster: SimCluster,
    /// `watch`'s caches (`stepper.mode: watch`); `None`: the stepper LISTs (`once`).
    watched: Option<Watched>,
    opts: PassOptions,
    interval: i64,
    events: Vec<Event>,
    next_event: usize,
    last_event: i64,
    disruptions: Disruptions,
    last_change: Option<i64>,
    next_second: i64,
    frames: Vec<Frame>,
    summary: Summary,
}

impl Player {
    /// Creates the scenario's set (through the policy unless `native`) at second 0, nothing played yet.
    ///
    /// # Errors
    /// The initial CREATE was refused by the policy (a scenario error).
    pub fn new(scenario: &Scenario, native: bool, seed: u64) -> Result<Player, String> {
        let shape = SetShape {
            name: scenario.set.name.clone(),
            namespace: scenario.set.namespace.clone(),
            replicas: scenario.set.replicas,
            pod_management_policy: scenario.set.pod_management_policy.clone(),
            min_ready_seconds: scenario.set.min_ready_seconds,
            image: scenario.set.image.clone(),
        };
        let timing = Timing {
            pending_seconds: scenario.timing.pending_seconds,
            ready_seconds: scenario.timing.ready_seconds,
            terminate_seconds: scenario.timing.terminate_seconds,
            jitter_seconds: scenario.timing.jitter_seconds,
        };
        let mut world = World::new(&shape, timing, !native, annotations::DEFAULT_PREFIX, seed)?;
        world.pdb_max_unavailable = scenario.set.pdb_max_unavailable;
        world.bad_images = scenario.set.bad_images.clone();
        world.application = scenario.set.application.as_ref().map(|a| {
            let mut app = Application::new(a.primary, a.answer_seconds, a.switchover_seconds);
            app.protocol = a.protocol;
            app.webhook.name.clone_from(&a.webhook_name);
            app
        });
        // The stepper's `--webhook` flags: the application's webhook, when it answers through one.
        let mut served = Served::default();
        if let Some(a) =
            (scenario.set.application.as_ref()).filter(|a| a.protocol != Protocol::Handshake)
        {
            served.insert(&webhook::FLAG, vec![a.webhook_name.clone()]);
        }
        for (k, v) in &scenario.set.annotations {
            world.set["metadata"]["annotations"][key(k)] = json!(v);
        }
        if let Some(kind) = &scenario.set.owner {
            world.set["metadata"]["ownerReferences"] = json!([{
                "apiVersion": SIM_OWNER_API_VERSION,
                "kind": kind,
                "name": scenario.set.name,
                "uid": SIM_OWNER_UID,
                "controller": true,
                "blockOwnerDeletion": true,
            }]);
        }
        let opts = PassOptions {
            gates: GateOptions {
                pdb_gate: scenario.stepper.pdb_gate,
                recover_stuck_pods: scenario.stepper.recover_stuck_pods,
                served,
                ..GateOptions::default()
            },
            dry_run: false,
            // A stepper that may write calls the webhooks (`once`, `watch`).
            probes: ProbeOptions {
                call_webhooks: true,
                ..ProbeOptions::default()
            },
            ..PassOptions::default()
        };
        let mut events = scenario.events.clone();
        events.sort_by_key(|e| e.at);
        let last_event = events
            .iter()
            .map(|e| match &e.action {
                Action::NodeFailure { seconds, .. }
                | Action::ApiFault { seconds, .. }
                | Action::ConcurrentSteppers { seconds }
                | Action::WebhookErrors { seconds, .. } => e.at + seconds,
                _ => e.at,
            })
            .max()
            .unwrap_or(0);
        let watched = (!native && scenario.stepper.mode == StepperMode::Watch)
            .then(|| Watched::start(&world, &opts.gates.keys, scenario.stepper.watch_lag_seconds));
        Ok(Player {
            name: scenario.name.clone(),
            native,
            watched,
            cluster: SimCluster::new(world),
            opts,
            interval: scenario.stepper.interval_seconds.max(1),
            events,
            next_event: 0,
            last_event,
            disruptions: Disruptions::default(),
            last_change: None,
            next_second: 0,
            frames: Vec::new(),
            summary: Summary::default(),
        })
    }

    /// The simulated cluster (to read the world, or to act on it between seconds).
    pub fn cluster(&self) -> &SimCluster {
        &self.cluster
    }

    /// The frames played so far, one per second.
    pub fn frames(&self) -> &[Frame] {
        &self.frames
    }

    /// The next second [`Player::play_second`] plays.
    pub fn next_second(&self) -> i64 {
        self.next_second
    }

    /// Plays the next second: its events, the pods and the controller, the stepper's pass when due,
    /// then the frame and the running totals. Returns true once the run is over: every event played
    /// and every fault over, the rollout complete since two stepper intervals, and the approval
    /// handshake's bookkeeping done ([`World::approvals_settled`]).
    pub fn play_second(&mut self) -> bool {
        let t = self.next_second;
        self.next_second += 1;
        let mut notes = Vec::new();
        self.cluster.world().t = t;
        while self.next_event < self.events.len() && self.events[self.next_event].at <= t {
            let ev = self.events[self.next_event].clone();
            self.next_event += 1;
            let note = play(&self.cluster, &ev.action, t, &mut self.disruptions);
            if matches!(
                ev.action,
                Action::Apply(_) | Action::Undo {} | Action::Scale(_)
            ) {
                self.summary.rollout_started.get_or_insert(t);
                self.last_change = Some(t);
            }
            notes.push(note);
        }
        self.cluster.world().tick(t);
        if let Some(w) = &mut self.watched {
            if std::mem::take(&mut self.disruptions.takeover) {
                w.restart(&self.cluster.world());
            }
            w.tick(&self.cluster.world(), t);
        }
        if !self.native && t % self.interval == 0 {
            let outcome = stepper_pass(
                &self.cluster,
                self.watched.as_ref(),
                &self.opts,
                t,
                &mut self.disruptions,
            );
            notes.extend(outcome);
        }
        self.record(t, notes);
        let quiet = t > self.last_event && self.next_event >= self.events.len();
        let settled = self.summary.rollout_completed.is_some_and(|done| {
            self.last_change.is_some_and(|c| done >= c) && t > done + 2 * self.interval
        }) && self.cluster.world().approvals_settled();
        quiet && settled
    }

    /// The frame of second `t` and the totals that follow each second.
    fn record(&mut self, t: i64, notes: Vec<String>) {
        let world = self.cluster.world();
        let fault_deleted = &mut self.disruptions.fault_deleted;
        fault_deleted.retain(|o| !world.pods.get(o).is_some_and(|p| p.running_and_ready()));
        let deleted: Vec<u32> = fault_deleted.iter().copied().collect();
        let (down, fault_down) = world.down(&deleted);
        let summary = &mut self.summary;
        summary.max_down = summary.max_down.max(down);
        summary.max_down_beyond_faults = summary
            .max_down_beyond_faults
            .max(down.saturating_sub(fault_down));
        if let Some(change) = self.last_change
            && summary.rollout_completed.is_none_or(|done| done < change)
            && world.rollout_complete()
        {
            summary.rollout_completed = Some(t);
        }
        self.frames.push(Frame {
            t,
            partition: world.partition(),
            pods: pod_views(&world),
            down,
            fault_down,
            notes,
            set: world.set.clone(),
        });
        summary.ended = t;
    }

    /// Ends the run: the oracle's and the API's totals, and the world as it is now.
    pub fn finish(self) -> Run {
        let mut summary = self.summary;
        let counters = self.cluster.counters();
        let world = self.cluster.world().clone();
        summary.restarts = world.restarts.len();
        summary.restarts_while_down = world.restarts.iter().filter(|r| r.2 > 0).count();
        summary.harmful_restarts = world.harmful_restarts.len();
        summary.steps = world.steps.len();
        summary.steps_while_gate_failed = world
            .steps
            .iter()
            .filter(|s| s.failing_gate.is_some())
            .count();
        summary.steps_unobserved = world.steps.iter().filter(|s| !s.observed).count();
        summary.steps_while_app_unhealthy = world.steps.iter().filter(|s| s.app_unhealthy).count();
        summary.unapproved_replacements = world.unapproved_replacements.len();
        if let Some(app) = &world.application {
            summary.webhook_calls = app.webhook.total_calls();
            summary.webhook_errors = app.webhook.calls.get("Error").copied().unwrap_or(0);
        }
        summary.conflicts = counters.conflicts;
        summary.api_errors = counters.errors;
        let steps = world.steps.clone();
        Run {
            name: self.name,
            native: self.native,
            frames: self.frames,
            summary,
            world,
            steps,
        }
    }
}

/// Plays `scenario` (`native`: no policy, no stepper) with `seed` for `scenario.duration` seconds, or
/// until [`Player::play_second`] says the run is over, and returns the run.
///
/// # Errors
/// The initial CREATE was refused by the policy (a scenario error).
pub fn run(scenario: &Scenario, native: bool, seed: u64) -> Result<Run, String> {
    let mut player = Player::new(scenario, native, seed)?;
    for _ in 0..=scenario.duration {
        if player.play_second() {
            break;
        }
    }
    Ok(player.finish())
}

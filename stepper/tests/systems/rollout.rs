//! A whole rollout of a StatefulSet whose pods are a real system's members, stepped by the stepper with a
//! built-in answerer (issue 45): the simulated API server, StatefulSet controller and kubelet
//! (`sts_stepper::sim`) hold the set and its pods; every pass of the stepper (`once`, or `watch` over its
//! caches) asks the real system through the `--answerer-config` entry; when the controller replaces a
//! pod, the member behind it restarts as the new revision ([`Replace`]); the pods' `role` label follows
//! the system's own leader, as Patroni's Kubernetes mode writes it.
//!
//! What it judges, as it happens: the member that led when its pod was replaced (must be none), the
//! leader changes, and the writer loop's acknowledged writes that the system no longer holds.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use sts_safe_rollout_rules::annotations::DEFAULT_PREFIX;
use sts_stepper::cluster::Checks;
use sts_stepper::cluster::answerer::Answerers;
use sts_stepper::config::Keys;
use sts_stepper::gates::GateOptions;
use sts_stepper::pass::probes::ProbeOptions;
use sts_stepper::pass::{PassOptions, PassReport, run_pass_with};
use sts_stepper::sim::application::{Application, Protocol};
use sts_stepper::sim::cluster::SimCluster;
use sts_stepper::sim::history::template;
use sts_stepper::sim::kubelet::Timing;
use sts_stepper::sim::watched::Watched;
use sts_stepper::sim::world::{SetShape, World, timestamp};

use crate::systems::Replace;

/// Which stepper mode passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// `once`: every pass LISTs the simulated API server.
    Once,
    /// `watch`: passes read reflector caches fed by the world's changes.
    Watch,
    /// No policy, no stepper: the native rolling update (`force-rolling-update`), what the numbers are
    /// compared with.
    Native,
}

/// A system under a rollout: its leader, as the system itself says.
pub trait Led: Replace {
    /// The member holding the leader (master) role now; `None` while none does.
    fn leader(&self) -> impl Future<Output = Result<Option<String>, String>> + Send;
}

/// When the stepper passes, beside every 2 s of the world's clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct Cadence {
    /// After a pass during which the leader moved (or within 3 s of a call that answered `Wait`:
    /// an answerer that only asked for the move), the next pass comes this long later in real time
    /// (the system's own clock runs on, the writer writes): what a CronJob's minute between passes
    /// is to an answerer that left something for the next pass.
    pub after_move: Duration,
    /// The first pass during which the leader moves is cut off the moment the system names another
    /// leader (its future dropped, as a stepper killed mid-action): the answerer's action never
    /// finishes, and its guard alone keeps the writes.
    pub kill_on_move: bool,
}

/// What a rollout did.
#[derive(Debug, Default)]
pub struct Rollout {
    /// Pods replaced, in order: (ordinal, the member that led just before).
    pub replaced: Vec<(u32, Option<String>)>,
    /// Every leader seen, in order (a change appends).
    pub leaders: Vec<String>,
    /// The stepper's passes.
    pub passes: u32,
    /// The answerer's calls (each one `GET /cluster` or its kind's read, a switchover's POST besides).
    pub calls: u32,
    /// The steps that landed.
    pub steps: usize,
    /// The last pass's report, for the messages.
    pub last: Option<String>,
    /// Passes cut off when the leader moved ([`Cadence::kill_on_move`]).
    pub killed: u32,
    /// Seconds from the template change to the rollout complete.
    pub seconds: f64,
}

impl Rollout {
    /// The replacements of a pod whose member led at that moment (`member`: ordinal → member name).
    pub fn leaders_replaced(&self, member: impl Fn(u32) -> Option<String>) -> Vec<String> {
        self.replaced
            .iter()
            .filter_map(|(o, leader)| {
                let m = member(*o)?;
                (leader.as_deref() == Some(m.as_str())).then_some(m)
            })
            .collect()
    }
}

/// The world: set `name` (3 replicas, OrderedReady) in namespace `db`, guarded by the policy, its
/// `pre-update-webhook` naming `answerer`, `primary-selector: role=primary`, the application's primary
/// on `leader` (the `role` labels follow it).
fn world(name: &str, replicas: i32, answerer: &str, leader: Option<u32>, policy: bool) -> World {
    world_in("db", name, replicas, answerer, leader, policy)
}

/// [`world`] in `namespace`.
fn world_in(
    namespace: &str,
    name: &str,
    replicas: i32,
    answerer: &str,
    leader: Option<u32>,
    policy: bool,
) -> World {
    let shape = SetShape {
        name: name.to_string(),
        namespace: namespace.to_string(),
        replicas,
        pod_management_policy: "OrderedReady".to_string(),
        min_ready_seconds: 0,
        image: "db:v1".to_string(),
    };
    let timing = Timing {
        pending_seconds: 1,
        ready_seconds: 1,
        terminate_seconds: 1,
        jitter_seconds: 0,
    };
    let mut w = World::new(&shape, timing, policy, DEFAULT_PREFIX, 7).expect("the set is admitted");
    let key = |k: &str| format!("{DEFAULT_PREFIX}/{k}");
    w.set["metadata"]["annotations"][key("pre-update-webhook")] = json!(answerer);
    w.set["metadata"]["annotations"][key("primary-selector")] = json!("role=primary");
    w.application = Some(Application {
        protocol: Protocol::Webhook,
        ..Application::new(leader, 0, 0)
    });
    w
}

/// The stepper of these rollouts over `world` in `mode`: its checks (the built-in `answerers`), its pass
/// options (webhook calls on, the names they serve), `watch`'s caches; the world's set then staged for
/// `db:v2` (the template change, through the policy when the world has it).
fn stepper(
    world: World,
    mode: Mode,
    answerers: Answerers,
) -> (SimCluster, Checks, PassOptions, Option<Watched>) {
    let checks = Checks {
        answerers: Some(answerers),
        ..Checks::default()
    };
    let cluster = SimCluster::new(world);
    let opts = PassOptions {
        gates: GateOptions {
            served: checks.served(),
            ..GateOptions::default()
        },
        probes: ProbeOptions {
            call_webhooks: true,
            ..ProbeOptions::default()
        },
        ..PassOptions::default()
    };
    let watched = (mode == Mode::Watch)
        .then(|| Watched::start(&cluster.world(), &Arc::new(Keys::default()), 1));
    {
        let mut w = cluster.world();
        let name = w.name();
        let mut new = w.set.clone();
        new["spec"]["template"] = template(&name, "db:v2");
        w.write(new, "apply")
            .expect("the template change is admitted");
    }
    (cluster, checks, opts, watched)
}

/// Rolls set `name` (its pods ordinal `i` ↔ `system`'s member `i`) from `db:v1` to `db:v2` with the
/// stepper in `mode`, its answerers `answerers` (as an `--answerer-config` file gives them) and the
/// entry `answerer`; each replaced member restarts as `revision`. Bounded by `limit`.
///
/// # Panics
/// The system fails a read or a restart, or the rollout is not complete within `limit` (naming the
/// last pass).
pub async fn roll<S: Led + Send>(
    system: &mut S,
    mode: Mode,
    answerers: Answerers,
    answerer: &str,
    revision: &str,
    limit: Duration,
) -> Rollout {
    let cadence = Cadence::default();
    roll_with(system, mode, answerers, answerer, revision, limit, cadence).await
}

/// [`roll`] with the stepper passing at `cadence`.
pub async fn roll_with<S: Led + Send>(
    system: &mut S,
    mode: Mode,
    answerers: Answerers,
    answerer: &str,
    revision: &str,
    limit: Duration,
    cadence: Cadence,
) -> Rollout {
    let name = system.pods().name().to_string();
    let replicas = i32::try_from(system.pods().len()).expect("replicas");
    let ordinal_of = |member: &str, s: &S| {
        let pod = s.pods().pod_of_member(member)?;
        u32::try_from(s.pods().ordinal(&pod)?).ok()
    };
    let leader = system.leader().await.expect("the leader");
    let mut out = Rollout::default();
    out.leaders.extend(leader.clone());
    let first = leader.as_deref().and_then(|l| ordinal_of(l, system));
    let native = mode == Mode::Native;
    let world = world(&name, replicas, answerer, first, !native);
    let (cluster, checks, opts, mut watched) = stepper(world, mode, answerers);
    let started = Instant::now();
    let mut seen = 0;
    for t in 1.. {
        cluster.world().tick(t);
        let restarts: Vec<u32> = cluster.world().restarts[seen..]
            .iter()
            .map(|r| r.1)
            .collect();
        seen += restarts.len();
        for ordinal in restarts {
            let led = system.leader().await.expect("the leader");
            out.replaced.push((ordinal, led));
            let o = usize::try_from(ordinal).expect("ordinal");
            system
                .replace_pod(o, revision)
                .await
                .expect("the member restarts");
        }
        let leader = system.leader().await.unwrap_or(None);
        if let Some(l) = &leader
            && out.leaders.last() != Some(l)
        {
            out.leaders.push(l.clone());
        }
        let primary = leader.as_deref().and_then(|l| ordinal_of(l, system));
        cluster.world().move_primary(primary);
        if let Some(w) = &mut watched {
            w.tick(&cluster.world(), t);
        }
        if t % 2 == 0 && !native {
            let before = system.leader().await.unwrap_or(None);
            let pass = async {
                match &watched {
                    Some(w) => {
                        run_pass_with(&w.cluster(&cluster), &checks, &opts, timestamp(t)).await
                    }
                    None => run_pass_with(&cluster, &checks, &opts, timestamp(t)).await,
                }
            };
            let report = if cadence.kill_on_move && out.killed == 0 {
                tokio::select! {
                    r = pass => Some(r),
                    () = moved(&*system, before.as_ref()) => None,
                }
            } else {
                Some(pass.await)
            };
            out.passes += 1;
            let mut waited = false;
            match report {
                Some(report) => {
                    let report = report.expect("the pass");
                    waited = (report.sets.iter())
                        .any(|s| s.webhook_call.as_ref().is_some_and(|(_, r)| *r == "Wait"));
                    let calls = report
                        .sets
                        .iter()
                        .filter(|s| s.webhook_call.is_some())
                        .count();
                    out.calls += u32::try_from(calls).unwrap_or(u32::MAX);
                    out.last = Some(describe(report));
                }
                None => {
                    out.killed += 1;
                    out.last = Some("killed once the leader moved".into());
                }
            }
            if !cadence.after_move.is_zero() {
                // A leader moved during the pass, or (an answerer that only asked for the move) in
                // the 3 s after a call answered Wait: the next pass comes `after_move` later.
                let mut moved_now = system.leader().await.unwrap_or(None) != before;
                if !moved_now && waited {
                    let watched = tokio::time::timeout(
                        Duration::from_secs(3),
                        moved(&*system, before.as_ref()),
                    );
                    moved_now = watched.await.is_ok();
                }
                if moved_now {
                    tokio::time::sleep(cadence.after_move).await;
                }
            }
        }
        if cluster.world().rollout_complete() {
            break;
        }
        assert!(
            started.elapsed() < limit,
            "the rollout of {name} was not complete within {limit:?}; last pass: {:?}; replaced {:?}",
            out.last,
            out.replaced
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    out.seconds = started.elapsed().as_secs_f64();
    out.steps = cluster.world().steps.len();
    out
}

/// Set `name` (3 pods, the leader on pod 0) in `namespace`, its `pre-update-webhook` naming
/// `answerer`, staged for `db:v2` and passed over `passes` times (2 s of the world's clock apart) by the
/// stepper in `mode` with `answerers`: each pass's report of the set, and the Events published on it
/// (reason, note).
pub async fn passes_in(
    namespace: &str,
    name: &str,
    mode: Mode,
    answerers: Answerers,
    answerer: &str,
    passes: i64,
) -> (Vec<sts_stepper::pass::SetReport>, Vec<(String, String)>) {
    let world = world_in(namespace, name, 3, answerer, Some(0), true);
    let (cluster, checks, opts, mut watched) = stepper(world, mode, answerers);
    let mut out = Vec::new();
    for t in 1..=2 * passes {
        cluster.world().tick(t);
        if let Some(w) = &mut watched {
            w.tick(&cluster.world(), t);
        }
        if t % 2 == 0 {
            let report = match &watched {
                Some(w) => run_pass_with(&w.cluster(&cluster), &checks, &opts, timestamp(t)).await,
                None => run_pass_with(&cluster, &checks, &opts, timestamp(t)).await,
            };
            out.extend(report.expect("the pass").sets);
        }
    }
    let events = (cluster.world().events.iter())
        .map(|(_, reason, note)| (reason.clone(), note.clone()))
        .collect();
    (out, events)
}

/// Returns once `system` names a leader other than `before` (polled every 50 ms).
async fn moved<S: Led>(system: &S, before: Option<&String>) {
    loop {
        if let Ok(Some(now)) = system.leader().await
            && Some(&now) != before
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn describe(report: PassReport) -> String {
    report
        .sets
        .iter()
        .map(|s| format!("{:?}", s.outcome))
        .collect::<Vec<_>>()
        .join("; ")
}

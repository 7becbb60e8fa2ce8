//! A scenario's actions on the simulated cluster, and the stepper's pass each interval.
//!
//! Actions: `kubectl apply`, a node failure, API faults, …; the pass: whole, killed between its
//! read and its write, or two steppers racing.

use std::collections::BTreeSet;

use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;
use serde_json::json;

use super::spec::{Action, key};
use crate::cluster::Cluster;
use crate::config::{Keys, SetConfig};
use crate::pass::{self, Outcome, PassOptions};
use crate::plan::events::EventNote;
use crate::plan::pause::{pause_patch, resume_patch};
use crate::sim::cluster::{ApiFault, SimCluster};
use crate::sim::history::{template, template_image};
use crate::sim::watched::Watched;
use crate::sim::world::{World, timestamp};

/// What the scenario's events did to the stepper and to the pods, carried from one second to the next.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Disruptions {
    /// The next stepper pass dies between its read and its write.
    pub(super) kill_next: bool,
    /// Another replica takes over before the next pass (`watch`: its caches start anew).
    pub(super) takeover: bool,
    /// Until this second, every pass is two steppers racing.
    pub(super) concurrent_until: i64,
    /// Slots whose pod a person deleted, until a pod is Ready there again (down by a fault).
    pub(super) fault_deleted: BTreeSet<u32>,
}

impl Default for Disruptions {
    fn default() -> Self {
        Disruptions {
            kill_next: false,
            takeover: false,
            concurrent_until: i64::MIN,
            fault_deleted: BTreeSet::new(),
        }
    }
}

/// Carries out one scenario action at second `t`; returns the timeline note.
pub(super) fn play(
    cluster: &SimCluster,
    action: &Action,
    t: i64,
    disruptions: &mut Disruptions,
) -> String {
    let mut world = cluster.world();
    let name = world.name();
    let admitted = |world: &World, what: String, before: usize| -> String {
        match world.admissions.get(before..).and_then(|a| a.last()) {
            Some((_, _, row)) => {
                format!("{what} → policy {row:?}, p={}", world.partition())
            }
            None => what,
        }
    };
    match action {
        Action::Apply(spec) => {
            let mut new = world.set.clone();
            let mut what = vec![];
            if let Some(image) = &spec.image {
                new["spec"]["template"] = template(&name, image);
                what.push(format!("image {image}"));
            }
            if let Some(r) = spec.replicas {
                new["spec"]["replicas"] = json!(r);
                what.push(format!("replicas {r}"));
            }
            if let Some(p) = spec.partition {
                new["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = json!(p);
                what.push(format!("partition {p}"));
            }
            for (k, v) in &spec.annotations {
                new["metadata"]["annotations"][key(k)] = json!(v);
                what.push(format!("{k}={v}"));
            }
            let before = world.admissions.len();
            let what = format!("apply {}", what.join(", "));
            match world.write(new, "apply") {
                Ok(()) => admitted(&world, what, before),
                Err(e) => format!("{what} refused: {e}"),
            }
        }
        Action::Undo {} => {
            let Some(tpl) = world.previous_template() else {
                return "kubectl rollout undo: no previous revision".into();
            };
            let image = template_image(&tpl).unwrap_or("?").to_string();
            let mut new = world.set.clone();
            new["spec"]["template"] = tpl;
            let before = world.admissions.len();
            let what = format!("rollout undo (to image {image})");
            match world.write(new, "undo") {
                Ok(()) => admitted(&world, what, before),
                Err(e) => format!("{what} refused: {e}"),
            }
        }
        Action::Scale(r) => {
            world.scale_subresource(*r);
            format!("scale --replicas {r} (subresource: no policy)")
        }
        Action::NodeFailure { pod, seconds } => match world.pods.get_mut(pod) {
            Some(p) => {
                p.node_down = Some((t, t + seconds));
                format!("node of {name}-{pod} down for {seconds}s")
            }
            None => format!("node failure: no pod {name}-{pod}"),
        },
        Action::BadImage(image) => {
            world.bad_images.push(image.clone());
            format!("image {image} is bad: its pods never become Ready")
        }
        Action::AppUnhealthy(v) => {
            world.app_unhealthy = *v;
            format!(
                "application signal: {}",
                if *v { "unhealthy" } else { "healthy" }
            )
        }
        Action::ApiFault {
            call,
            kind,
            seconds,
            probability,
        } => {
            drop(world);
            cluster.add_fault(ApiFault {
                from: t,
                until: t + seconds,
                call: *call,
                kind: *kind,
                probability: *probability,
            });
            format!("API faults: {kind:?} on {call:?} for {seconds}s (p={probability})")
        }
        Action::Takeover {} => {
            disruptions.takeover = true;
            "another stepper replica takes over".into()
        }
        Action::KillStepper {} => {
            disruptions.kill_next = true;
            "the next stepper pass will be killed between its read and its write".into()
        }
        Action::ConcurrentSteppers { seconds } => {
            disruptions.concurrent_until = t + seconds;
            format!("two steppers race for {seconds}s")
        }
        Action::DeleteBadPods {} => {
            let bad: Vec<u32> = world
                .pods
                .values()
                .filter(|p| world.revision_is_bad(&p.revision))
                .map(|p| p.ordinal)
                .collect();
            let mut deleted = Vec::new();
            for o in bad {
                if world.delete_pod(o) {
                    disruptions.fault_deleted.insert(o);
                    deleted.push(format!("{name}-{o}"));
                }
            }
            format!(
                "kubectl delete pod (bad revision): [{}]",
                deleted.join(", ")
            )
        }
        Action::Resume {} => person_write(&mut world, "resume", |set, config| {
            let event = EventNote::resumed("a person", config.paused_reason.as_deref());
            Some((resume_patch(set, config)?, event))
        }),
        Action::Pause(reason) => person_write(&mut world, "pause", |set, config| {
            let patch = pause_patch(set, config, "a person", reason);
            Some((patch, EventNote::paused_by("a person", reason)))
        }),
        Action::DenyUpdate {
            pod,
            reason,
            seconds,
        } => match world.application.as_mut() {
            Some(app) => {
                app.denials.insert(*pod, (reason.clone(), t + seconds));
                format!(
                    "the application denies the update of {name}-{pod} for {seconds}s: {reason}"
                )
            }
            None => "denyUpdate: the scenario has no application".into(),
        },
        Action::SilentApplication(silent) => match world.application.as_mut() {
            Some(app) => {
                app.silent = *silent;
                if *silent {
                    "the application stops answering".into()
                } else {
                    "the application answers again".into()
                }
            }
            None => "silentApplication: the scenario has no application".into(),
        },
        Action::WebhookErrors { seconds, kind } => match world.application.as_mut() {
            Some(app) => {
                app.webhook.failing = Some((t + seconds, *kind));
                let how = kind.map_or_else(
                    || "timeouts, refused connections, HTTP 500s, 200s without a decision".into(),
                    |k| format!("{k:?}"),
                );
                format!("the application's webhook gives no decision for {seconds}s: {how}")
            }
            None => "webhookErrors: the scenario has no application".into(),
        },
        Action::DeletePod(o) => {
            if world.delete_pod(*o) {
                disruptions.fault_deleted.insert(*o);
                format!("kubectl delete pod {name}-{o}")
            } else {
                format!("kubectl delete pod {name}-{o}: not found")
            }
        }
    }
}

/// A person's `kubectl safe-rollout pause|resume` (`what`): the patch `make` builds from the stored set
/// and its annotations, applied straight to the stored set through admission, and its Event. `None`
/// from `make`: nothing to do.
fn person_write(
    world: &mut World,
    what: &str,
    make: impl FnOnce(&StatefulSet, &SetConfig) -> Option<(json_patch::Patch, EventNote)>,
) -> String {
    let set = match world.typed_set() {
        Ok(set) => set,
        Err(e) => return format!("kubectl safe-rollout {what}: {e}"),
    };
    let config = SetConfig::parse(&set, &Arc::new(Keys::new(&world.prefix)));
    let Some((patch, event)) = make(&set, &config) else {
        return format!("kubectl safe-rollout {what}: not paused, nothing to do");
    };
    let mut object = world.set.clone();
    if let Err(e) = json_patch::patch(&mut object, &patch) {
        return format!("kubectl safe-rollout {what} failed: {e}");
    }
    match world.write(object, what) {
        Ok(()) => {
            let t = world.t;
            world
                .events
                .push((t, event.reason.clone(), event.note.clone()));
            format!("kubectl safe-rollout {what}: {}", event.note)
        }
        Err(e) => format!("kubectl safe-rollout {what} refused: {e}"),
    }
}

fn outcome_note(outcome: &Outcome) -> String {
    outcome.to_string()
}

/// One stepper pass at `t` (or a killed one, or two racing); returns the timeline notes, then one note
/// per `RolloutPaused` / `RolloutResumed` Event the pass published (the canary plan's pauses).
pub(super) fn stepper_pass(
    cluster: &SimCluster,
    watched: Option<&Watched>,
    opts: &PassOptions,
    t: i64,
    disruptions: &mut Disruptions,
) -> Vec<String> {
    let before = cluster.world().events.len();
    // `once` reads the simulated API server; `watch` its caches of it (writes go to the server).
    let mut notes = match watched {
        Some(w) => pass_notes(&w.cluster(cluster), cluster, opts, t, disruptions),
        None => pass_notes(cluster, cluster, opts, t, disruptions),
    };
    let world = cluster.world();
    notes.extend(
        (world.events.iter().skip(before))
            .filter(|(_, reason, _)| reason.starts_with("Rollout") && reason != "RolloutComplete")
            .map(|(_, reason, note)| format!("stepper: {reason}: {note}")),
    );
    notes
}

/// [`stepper_pass`]'s outcome notes, the pass reading `cluster` and asking `sim`'s checks (its
/// [`crate::cluster::Probe`]s: the health signal for queries, the webhook).
fn pass_notes<C: Cluster>(
    cluster: &C,
    sim: &SimCluster,
    opts: &PassOptions,
    t: i64,
    disruptions: &mut Disruptions,
) -> Vec<String> {
    let now = timestamp(t);
    if disruptions.kill_next {
        disruptions.kill_next = false;
        let decided = futures::executor::block_on(pass::decide(cluster, sim, opts, now));
        return vec![match decided {
            Ok(d) => format!(
                "killed: the stepper died after its read; its decision ({}) was never written",
                (d.plans().iter())
                    .map(|p| pass::verdict_outcome(&p.verdict, false).to_string())
                    .collect::<Vec<_>>()
                    .join("; ")
            ),
            Err(e) => format!("killed: the stepper died; its read had failed: {e}"),
        }];
    }
    if t < disruptions.concurrent_until {
        // Both read and decide, then both write (each as its own pass would).
        let a = futures::executor::block_on(pass::decide(cluster, sim, opts, now));
        let b = futures::executor::block_on(pass::decide(cluster, sim, opts, now));
        let mut notes = Vec::new();
        for (who, decided) in [("stepper A", a), ("stepper B", b)] {
            match decided {
                Ok(d) => {
                    let report = futures::executor::block_on(pass::write(cluster, d, opts, now));
                    for s in &report.sets {
                        notes.push(format!("{who}: {}", outcome_note(&s.outcome)));
                    }
                }
                Err(e) => notes.push(format!("{who}: pass failed: {e}")),
            }
        }
        return notes;
    }
    match futures::executor::block_on(pass::run_pass_with(cluster, sim, opts, now)) {
        Ok(report) => (report.recoveries.iter())
            .map(|r| format!("stepper: recovery: {r}"))
            .chain((report.sets.iter()).map(|s| format!("stepper: {}", outcome_note(&s.outcome))))
            .collect(),
        Err(e) => vec![format!("stepper: pass failed: {e}")],
    }
}

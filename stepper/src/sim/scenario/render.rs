//! The timeline a person reads: one line per second that changed, then the summary.
//!
//! Each line shows the set's rollout health ([`crate::rollout::health`]: what Argo CD and Flux report
//! with `deploy/gitops/`) next to the pods.

use std::fmt::Write as _;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::StatefulSet;

use crate::config::{Keys, SetConfig};
use crate::rollout::health::health;

use super::frame::PodView;
use super::run::{Run, Summary};
use super::spec::Scenario;
use crate::sim::history::template_image;

/// Renders the timeline: a header, then one line per second whose state, health or notes differ from
/// the last line printed (pods as `<revision letter><state>`, see [`PodView`]; the health code of
/// [`frame_health`]), then the summary.
pub fn render(run: &Run, scenario: &Scenario) -> String {
    let mut out = String::new();
    let mode = if run.native {
        "native rolling update (no policy, no stepper)"
    } else {
        "guarded (sts-safe-rollout policy + stepper)"
    };
    let _ = writeln!(
        out,
        "{} — {mode}\n{} replicas, {}, minReadySeconds {}",
        scenario.name,
        scenario.set.replicas,
        scenario.set.pod_management_policy,
        scenario.set.min_ready_seconds
    );
    let revs: Vec<String> = run
        .world
        .revisions
        .iter()
        .map(|r| {
            format!(
                "{}={} ({})",
                r.letter,
                r.name,
                template_image(&r.template).unwrap_or("?")
            )
        })
        .collect();
    let _ = writeln!(out, "revisions: {}", revs.join(", "));
    let _ = writeln!(
        out,
        "pods: <revision><state>  + available  ~ Ready<minReadySeconds  . starting  ! NotReady  x terminating  _ missing"
    );
    let _ = writeln!(
        out,
        "health: what Argo CD and Flux report with deploy/gitops/ (sts-stepper status: HEALTH)"
    );
    let keys = Arc::new(Keys::default());
    let mut last: Option<(i32, Vec<PodView>, usize, &'static str)> = None;
    let mut last_routine: Vec<&str> = Vec::new();
    for f in &run.frames {
        let health = frame_health(&f.set, &keys);
        let state = (f.partition, f.pods.clone(), f.down, health);
        let routine: Vec<&str> = f
            .notes
            .iter()
            .map(String::as_str)
            .filter(|n| is_routine(n))
            .map(without_countdown)
            .collect();
        let news = f.notes.iter().any(|n| !is_routine(n))
            || (!routine.is_empty() && routine != last_routine);
        if last.as_ref() == Some(&state) && !news {
            continue;
        }
        let show_routine = routine != last_routine;
        if !routine.is_empty() {
            last_routine = routine;
        }
        let pods: Vec<String> = f
            .pods
            .iter()
            .map(|p| format!("{}{}", p.letter, p.state))
            .collect();
        let head = format!(
            "{:>5}s  p={:<2} [{}] down {}  {health:<11}",
            f.t,
            f.partition,
            pods.join(" "),
            f.down
        );
        // One note per line: the first beside the state, the others below it, aligned.
        let mut notes = f.notes.iter().filter(|n| show_routine || !is_routine(n));
        let _ = writeln!(out, "{head}  {}", notes.next().map_or("", String::as_str));
        for n in notes {
            let _ = writeln!(out, "{:width$}  {n}", "", width = head.chars().count());
        }
        last = Some(state);
    }
    out.push_str(&render_summary(&run.summary));
    out
}

/// `note` without a trailing bake countdown (` (25 s of bake left)`): a pause counting down its bake
/// time is shown once, not every pass.
fn without_countdown(note: &str) -> &str {
    match note.rsplit_once(" (") {
        Some((head, tail)) if tail.ends_with(" s of bake left)") => head,
        _ => note,
    }
}

/// The health code of a frame's StatefulSet (`set`, as stored) under the annotation `keys`, or `?`
/// when it does not parse as one.
pub fn frame_health(set: &serde_json::Value, keys: &Arc<Keys>) -> &'static str {
    match serde_json::from_value::<StatefulSet>(set.clone()) {
        Ok(s) => health(&s, &SetConfig::parse(&s, keys)).status.as_str(),
        Err(_) => "?",
    }
}

/// A stepper note that repeats every pass while nothing changes.
fn is_routine(note: &str) -> bool {
    note.starts_with("stepper") && (note.contains(": Blocked") || note.contains(": Idle"))
}

/// The summary block.
pub fn render_summary(s: &Summary) -> String {
    let duration = match (s.rollout_started, s.rollout_completed) {
        (Some(a), Some(b)) => format!("{}s (t={a}s → t={b}s)", b - a),
        (Some(a), None) => format!("NOT complete by t={}s (started t={a}s)", s.ended),
        _ => "no rollout".into(),
    };
    let webhook = if s.webhook_calls > 0 {
        format!(
            "  webhook calls (without a decision)   {} ({})\n",
            s.webhook_calls, s.webhook_errors
        )
    } else {
        String::new()
    };
    format!(
        "summary:\n  rollout duration                     {duration}\n  max pods unavailable at once         {}\n  pods restarted while another was down {}\n  steps taken (while a gate failed)    {} ({})\n  steps while the app was unhealthy    {}\n  pods replaced unapproved or primary  {}\n  API conflicts / errors answered      {} / {}\n{webhook}",
        s.max_down,
        s.restarts_while_down,
        s.steps,
        s.steps_while_gate_failed,
        s.steps_while_app_unhealthy,
        s.unapproved_replacements,
        s.conflicts,
        s.api_errors
    )
}

//! Gate `PrometheusCheck`, and the reads and annotation changes the check asks for.
//!
//! The check itself is [`crate::gates::prometheus::check_result`], over the queries the pass ran.

use sts_safe_rollout_rules::annotations::TRUE;

use super::{Evaluation, GateInput, Need};
use crate::gates::prometheus::{self, CheckConfig, CheckResult, CheckState};
use crate::model::reasons::degraded_kind::{self, CHECK_ERRORS, FAILURE_LIMIT};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// The check's config, its stored state for this observation, and its result at `input.now`; `None`
/// when the set has no check.
fn run<'a>(input: &GateInput<'a>) -> Option<(&'a CheckConfig, Option<CheckState>, CheckResult)> {
    let check = input.config.prometheus.as_ref()?;
    let revision = set::update_revision(input.set);
    let partition = input.partition();
    let stored = input.config.stamps.prometheus_check.as_deref();
    let state = prometheus::current_state(stored, partition, revision);
    let result = prometheus::check_result(
        check,
        state.as_ref(),
        input.probes.prometheus.as_deref(),
        partition,
        revision,
        input.now,
    );
    Some((check, state, result))
}

/// Gate `PrometheusCheck`: passes without a check, or when the check's result is
/// [`CheckResult::Pass`]; a due check not run yet, a wait and a pause block.
pub fn prometheus_check(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some((check, _, result)) = run(input) else {
        return Ok(());
    };
    let detail = match result {
        CheckResult::Pass { .. } => return Ok(()),
        CheckResult::Due => {
            let n = check.queries.len();
            let noun = if n == 1 { "query" } else { "queries" };
            format!("check due ({n} {noun}), not run yet")
        }
        CheckResult::Wait { detail, .. } => detail,
        CheckResult::Pause { reason } => format!("{reason}: rollout paused"),
    };
    Err(Blocked::new(
        Reason::PrometheusCheck,
        format!("{}: {detail}", set::name(input.set)),
    ))
}

/// Records in `ev` what the check asks for once the gate was reached: the queries to run when due,
/// the state to write, or the pause (`paused`, `paused-reason`, and `degraded-reason:
/// FailureLimit: …`) after `failure-limit` failures.
pub(super) fn effects(input: &GateInput<'_>, ev: &mut Evaluation) {
    let Some((check, state, result)) = run(input) else {
        return;
    };
    let keys = &input.config.keys;
    let state_key = keys.prometheus_check.clone();
    match result {
        CheckResult::Pass { state: recorded } => {
            check_errors(input, check, recorded.as_ref().or(state.as_ref()), ev);
            if let Some(s) = recorded {
                ev.changes.push((state_key, Some(s.to_annotation())));
            }
        }
        CheckResult::Due => ev.need = Some(Need::Queries(check.queries.clone())),
        CheckResult::Wait {
            state: recorded, ..
        } => {
            // The state this pass recorded, else the stored one the check waited on.
            let now = recorded.as_ref().or(state.as_ref());
            ev.expected_wait = !now.is_some_and(CheckState::last_did_not_pass);
            check_errors(input, check, now, ev);
            if let Some(s) = recorded {
                ev.changes.push((state_key, Some(s.to_annotation())));
            }
        }
        CheckResult::Pause { reason } => {
            ev.changes.push((state_key, None));
            ev.changes.push((keys.paused.clone(), Some(TRUE.into())));
            ev.changes.push((
                keys.paused_reason.clone(),
                Some(format!("{reason} (at {})", input.now)),
            ));
            // The record GitOps tools report as Degraded; `resume` removes it with the pause.
            ev.changes.push((
                keys.degraded_reason.clone(),
                Some(format!("{FAILURE_LIMIT}: {reason}")),
            ));
        }
    }
}

/// The `degraded-reason: CheckErrors: …` record ([`prometheus::degraded`]) for the check's state
/// `now`: written once when the consecutive errors reach `check-error-limit` and nothing else is
/// recorded (the value stays as first written until cleared: one `RolloutDegraded` Event per
/// outage), removed once the check got an answer again. Another kind of record is left alone.
fn check_errors(
    input: &GateInput<'_>,
    check: &CheckConfig,
    now: Option<&CheckState>,
    ev: &mut Evaluation,
) {
    let recorded = input.config.stamps.degraded_reason.as_deref();
    let key = &input.config.keys.degraded_reason;
    match now.and_then(|s| prometheus::degraded(check, s)) {
        Some(value) if recorded.is_none() => ev.changes.push((key.clone(), Some(value))),
        None if recorded.map(degraded_kind::of) == Some(CHECK_ERRORS) => {
            ev.changes.push((key.clone(), None));
        }
        _ => {}
    }
}

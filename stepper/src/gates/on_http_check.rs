//! Gate `HttpCheck`, and the read and annotation changes the check asks for.
//!
//! The check itself is [`crate::gates::http_check::check_result`], over the answer the pass read. Its
//! writes mirror the Prometheus check's ([`super::on_prometheus`]): the counts in
//! `<prefix>/http-check-state`, the pause after `failure-limit` failures, and the
//! `degraded-reason: CheckErrors: …` record after `check-error-limit` errors in a row.

use super::check_effects::{self, Reached};
use super::{Evaluation, GateInput, Need};
use crate::config::HttpCheckConfig;
use crate::gates::check::{CheckResult, CheckState, current_state};
use crate::gates::http_check::{check_result, degraded};
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What `HttpCheck` reads of the set beside its annotations: the revision its state is pinned to and its
/// queries name.
pub const READS: &[Field] = &[of_set("status.updateRevision")];

/// The check's config, its stored state for this observation, and its result at `input.now`; `None`
/// when the set has no HTTP check.
fn run<'a>(
    input: &GateInput<'a>,
) -> Option<(&'a HttpCheckConfig, Option<CheckState>, CheckResult)> {
    let check = input.config.http_check.as_ref()?;
    let revision = set::update_revision(input.set);
    let partition = input.partition();
    let stored = input.config.stamps.http_check_state.as_deref();
    let state = current_state(stored, partition, revision);
    let result = check_result(
        check,
        state.as_ref(),
        input.probes.http.as_ref(),
        partition,
        revision,
        input.now,
    );
    Some((check, state, result))
}

/// The `InvalidAnnotation` detail when the set's `http-check` names no `--http-check` of the stepper
/// (the names the flags configure, [`crate::gates::GateOptions::http_checks`]); `None` when it does,
/// or when the flags are not known.
pub fn unknown_check(input: &GateInput<'_>) -> Option<String> {
    let check = input.config.http_check.as_ref()?;
    let configured = input.opts.http_checks.as_ref()?;
    if configured.contains(&check.name) {
        return None;
    }
    let names = if configured.is_empty() {
        "none (no --http-check NAME=URL flag)".to_string()
    } else {
        configured.join(", ")
    };
    Some(format!(
        "{}: {:?} names no check configured on the stepper; configured: {names}",
        input.config.keys.http_check, check.name
    ))
}

/// Gate `HttpCheck`: passes without a check, or when the check's result is [`CheckResult::Pass`];
/// a due check not made yet, a wait and a pause block.
pub fn http_check(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some((check, _, result)) = run(input) else {
        return Ok(());
    };
    let detail = match result {
        CheckResult::Pass { .. } => return Ok(()),
        CheckResult::Due => format!("check due ({}), not run yet", check.name),
        CheckResult::Wait { detail, .. } => detail,
        CheckResult::Pause { reason } => format!("{reason}: rollout paused"),
    };
    Err(Blocked::new(
        Reason::HttpCheck,
        format!("{}: {detail}", set::name(input.set)),
    ))
}

/// Records in `ev` what the check asks for once the gate was reached ([`check_effects::record`]): the
/// GET when due, the counts, the pause after `failure-limit` failures, the `CheckErrors` record.
pub(super) fn effects(input: &GateInput<'_>, ev: &mut Evaluation) {
    let Some((check, state, result)) = run(input) else {
        return;
    };
    let reached = Reached {
        state_key: &input.config.keys.http_check_state,
        state,
        result,
        need: || Need::Http(check.name.clone()),
        degraded: |s: &CheckState| degraded(check, s),
    };
    check_effects::record(input, ev, reached);
}

//! Gate `PrometheusCheck`, and the reads and annotation changes the check asks for.
//!
//! The check itself is [`crate::gates::prometheus::check_result`], over the queries the pass ran.

use super::check_effects::{self, Reached};
use super::{Evaluation, GateInput, Need};
use crate::gates::prometheus::{self, CheckConfig, CheckResult, CheckState};
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What `PrometheusCheck` reads of the set beside its annotations: the revision its state is pinned to and its
/// queries name.
pub const READS: &[Field] = &[of_set("status.updateRevision")];

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

/// Records in `ev` what the check asks for once the gate was reached ([`check_effects::record`]): the
/// queries to run when due, the counts, the pause after `failure-limit` failures, the `CheckErrors`
/// record ([`prometheus::degraded`]).
pub(super) fn effects(input: &GateInput<'_>, ev: &mut Evaluation) {
    let Some((check, state, result)) = run(input) else {
        return;
    };
    let reached = Reached {
        state_key: &input.config.keys.prometheus_check,
        state,
        result,
        need: || Need::Queries(check.queries.clone()),
        degraded: |s: &CheckState| prometheus::degraded(check, s),
    };
    check_effects::record(input, ev, reached);
}

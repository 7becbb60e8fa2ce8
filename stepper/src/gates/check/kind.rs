//! One kind of check behind one trait ([`CheckKind`]: as Argo Rollouts adds a metric source as one
//! `Provider`): its configuration on the set, its state annotation, what the pass read for it, what that
//! measures, the read it asks for when due. The gate and its writes are written once, here, for every
//! kind ([`gate`], `effects`); the counting once in [`super::count`]; the writes once in
//! `super::effects`.
//!
//! Stepping back after a rollback no check is asked (the check that failed is not asked again about
//! the revision it failed): their `GATES` rows say so (`skipped_stepping_back`).

use super::effects::{self, Reached};
use super::{CheckResult, CheckState, Measured, count, current_state, gate_answer};
use crate::config::check::CheckLimits;
use crate::gates::effect::StateKey;
use crate::gates::input::GateInput;
use crate::gates::probes::Need;
use crate::gates::verdict::Evaluation;
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// One kind of check (Prometheus, HTTP).
pub trait CheckKind {
    /// Its configuration on a set (a field of `SetConfig`).
    type Config;
    /// What the pass read for it (a field of `Probes`).
    type Answer: ?Sized;
    /// Its gate's reason (`PrometheusCheck`): also the check's name in its messages.
    const REASON: Reason;
    /// The annotation holding its counts.
    const STATE: StateKey;

    /// The set's check of this kind; `None` without one.
    fn config<'a>(input: &GateInput<'a>) -> Option<&'a Self::Config>;
    /// What the pass read for it in this pass; `None`: not read.
    fn answer<'a>(input: &GateInput<'a>) -> Option<&'a Self::Answer>;
    /// Its `success-threshold`, `failure-limit`, `check-error-limit` and period.
    fn limits(config: &Self::Config) -> &CheckLimits;
    /// What one check found: passed, failed or errored.
    fn measure(config: &Self::Config, answer: &Self::Answer) -> Measured;
    /// The read the pass must make when the check is due.
    fn need(config: &Self::Config) -> Need;
    /// The gate's detail while the check is due and not made yet (`check due (2 queries), not run yet`).
    fn due(config: &Self::Config) -> String;
}

/// The check's config, its stored state for this observation, and its result at `input.now`; `None`
/// when the set has no check of kind `K`.
fn run<'a, K: CheckKind>(
    input: &GateInput<'a>,
) -> Option<(&'a K::Config, Option<CheckState>, CheckResult)> {
    let check = K::config(input)?;
    let revision = set::update_revision(input.set);
    let partition = input.partition();
    let state = current_state(K::STATE.stored(input.config), partition, revision);
    let measured = K::answer(input).map(|a| K::measure(check, a));
    let result = count(
        K::REASON.as_str(),
        K::limits(check),
        state.as_ref(),
        measured,
        partition,
        revision,
        input.now,
    );
    Some((check, state, result))
}

/// The gate of kind `K`: passes without a check, or when the check's result is
/// [`CheckResult::Pass`]; a due check not made yet, a wait and a pause block.
pub fn gate<K: CheckKind>(input: &GateInput<'_>) -> Result<(), Blocked> {
    let Some((check, _, result)) = run::<K>(input) else {
        return Ok(());
    };
    gate_answer(input, K::REASON, result, || K::due(check))
}

/// Records in `ev` what the check of kind `K` asks for once its gate was reached
/// ([`super::effects::record`]): the read when due, the counts, the pause after `failure-limit`
/// failures, the `CheckErrors` record ([`super::degraded`]).
pub(in crate::gates) fn effects<K: CheckKind>(input: &GateInput<'_>, ev: &mut Evaluation) {
    let Some((check, state, result)) = run::<K>(input) else {
        return;
    };
    let reached = Reached {
        state_key: K::STATE,
        state,
        result,
        need: || K::need(check),
        degraded: |s: &CheckState| super::degraded(K::REASON.as_str(), K::limits(check), s),
    };
    effects::record(input, ev, reached);
}

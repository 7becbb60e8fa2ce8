//! Gate `OutOfScope` (docs/install.md, "Which StatefulSets are guarded"): a set the policy marked
//! guarded, with an update staged, that is outside the stepper's scope now ([`StepperScope`]: its
//! labels no longer match `--selector`, or its namespace is one every scope excludes) is not stepped;
//! the gate says why, once (a Warning `Blocked` Event, `blocked-reason: OutOfScope`, the blocked
//! gauge), so the update does not sit staged unseen. A set back in scope goes on where it stopped.

use super::input::GateInput;
use crate::config::StepperScope;
use crate::model::fields::{Field, set as of_set};
use crate::model::reasons::{Blocked, Reason};
use crate::model::set;

/// What `OutOfScope` reads: the set's namespace and labels.
pub const READS: &[Field] = &[of_set("metadata.namespace"), of_set("metadata.labels.*")];

/// Gate `OutOfScope`: passes while the set is inside the stepper's scope (`GateOptions::scope`).
pub fn out_of_scope(input: &GateInput<'_>) -> Result<(), Blocked> {
    let scope: &StepperScope = &input.opts.scope;
    match scope.excludes(input.set, input.fleet.covered_namespaces) {
        None => Ok(()),
        Some(why) => Err(Blocked::new(
            Reason::OutOfScope,
            format!(
                "{}: {why}: its staged update is not stepped; label it back into the scope to go on, \
                 or `kubectl safe-rollout release {} --force` to hand it to the native rolling update",
                set::name(input.set),
                set::name(input.set)
            ),
        )),
    }
}
